#include "bench/peak_fma.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bench/peak_fma.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "simd/amx_tiles.h"

// Highway 1.0.3's AVX3_DL target string lacks avx512vnni (as in simd/gemm_i8_vnni-inl.h) and every
// target string avx512bf16 (as in simd/gemm_bf16_dot-inl.h); no target has AVX-VNNI (as in
// simd/gemm_i8_avxvnni-inl.h).
#if HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avx512vnni,avx512bf16")
#elif HWY_TARGET == HWY_AVX2 && HWY_ARCH_X86_64
#include <immintrin.h>

#include "simd/cpu_features.h"
HWY_PUSH_ATTRIBUTES(HWY_TARGET_STR ",avxvnni")
#else
HWY_BEFORE_NAMESPACE();
#endif
namespace edgeattn {
namespace bench {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// 12 independent FMA chains: enough to cover 4-cycle latency at 2 FMAs per cycle (8) with
// margin, few enough to stay in registers on 16-register targets. Returns flops done.
double FmaLoop(size_t iterations, float* sink) {
  const hn::ScalableTag<float> d;
  const auto m = hn::Set(d, 0.999999f);
  const auto a = hn::Set(d, 1e-7f);
  // Distinct starting values, or the compiler merges the identical chains into one.
  auto c0 = hn::Set(d, 1.0f), c1 = hn::Set(d, 1.1f), c2 = hn::Set(d, 1.2f);
  auto c3 = hn::Set(d, 1.3f), c4 = hn::Set(d, 1.4f), c5 = hn::Set(d, 1.5f);
  auto c6 = hn::Set(d, 1.6f), c7 = hn::Set(d, 1.7f), c8 = hn::Set(d, 1.8f);
  auto c9 = hn::Set(d, 1.9f), c10 = hn::Set(d, 2.0f), c11 = hn::Set(d, 2.1f);
  for (size_t i = 0; i < iterations; ++i) {
    c0 = hn::MulAdd(c0, m, a);
    c1 = hn::MulAdd(c1, m, a);
    c2 = hn::MulAdd(c2, m, a);
    c3 = hn::MulAdd(c3, m, a);
    c4 = hn::MulAdd(c4, m, a);
    c5 = hn::MulAdd(c5, m, a);
    c6 = hn::MulAdd(c6, m, a);
    c7 = hn::MulAdd(c7, m, a);
    c8 = hn::MulAdd(c8, m, a);
    c9 = hn::MulAdd(c9, m, a);
    c10 = hn::MulAdd(c10, m, a);
    c11 = hn::MulAdd(c11, m, a);
  }
  const auto sum = hn::Add(hn::Add(hn::Add(c0, c1), hn::Add(c2, c3)),
                           hn::Add(hn::Add(hn::Add(c4, c5), hn::Add(c6, c7)),
                                   hn::Add(hn::Add(c8, c9), hn::Add(c10, c11))));
  *sink = hn::GetLane(sum);  // keeps the loop from being optimised away
  return 2.0 * 12 * hn::Lanes(d) * static_cast<double>(iterations);
}

// 12 independent vpdpbusd chains (64 int8 multiply-adds each; 32 on the AVX2 target's AVX-VNNI,
// where the CPU has it); returns ops done (2 per multiply-add), or 0 on other targets.
double VnniLoop(size_t iterations, int* sink) {
#if HWY_TARGET == HWY_AVX2 && HWY_ARCH_X86_64
  *sink = 0;
  if (!simd::CpuHasAvxVnni()) return 0.0;
  const __m256i a = _mm256_set1_epi8(1);
  const __m256i b = _mm256_set1_epi8(2);
  __m256i c[12];
  for (int i = 0; i < 12; ++i) c[i] = _mm256_set1_epi32(i);
  for (size_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i) c[i] = _mm256_dpbusd_avx_epi32(c[i], a, b);
  }
  __m256i sum = c[0];
  for (int i = 1; i < 12; ++i) sum = _mm256_add_epi32(sum, c[i]);
  alignas(32) int32_t lanes[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), sum);
  for (int32_t lane : lanes) *sink += lane;
  return 2.0 * 32 * 12 * static_cast<double>(iterations);
#elif HWY_TARGET == HWY_AVX3_DL
  const __m512i a = _mm512_set1_epi8(1);
  const __m512i b = _mm512_set1_epi8(2);
  __m512i c[12];
  for (int i = 0; i < 12; ++i) c[i] = _mm512_set1_epi32(i);
  for (size_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i) c[i] = _mm512_dpbusd_epi32(c[i], a, b);
  }
  __m512i sum = c[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_epi32(sum, c[i]);
  // Summed from memory: g++ 12's _mm512_reduce_add_epi32 warns of its own uninitialised
  // temporary (-Wuninitialized) in every build.
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, sum);
  int32_t total = 0;
  for (int32_t lane : lanes) total += lane;
  *sink = total;
  return 2.0 * 64 * 12 * static_cast<double>(iterations);
#else
  (void)iterations;
  *sink = 0;
  return 0.0;
#endif
}

// The VNNI kernel's step (qd8_qc8w_vnni_4x4v's group loop) `steps` times: one group's four
// weight vectors (256 bytes) and four activation rows kStepsRowBytes apart, a broadcast 4-byte
// word of each, 16 vpdpbusd into 16 named accumulators (g++ 12 spilled an array of them). Step s
// reads the group at s x 256 modulo weight_bytes and the word at s x 4 modulo a row. Returns ops
// done (2 per multiply-add), or 0 on targets without AVX512-VNNI.
double VnniInt8Steps(const uint8_t* activations, const int8_t* weights, size_t weight_bytes,
                     size_t steps) {
#if HWY_TARGET == HWY_AVX3_DL
  __m512i c00 = _mm512_setzero_si512(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00,
          c12 = c00, c13 = c00, c20 = c00, c21 = c00, c22 = c00, c23 = c00, c30 = c00, c31 = c00,
          c32 = c00, c33 = c00;
  const auto word = [&](size_t row, size_t a) {  // a broadcast from memory, as the kernel's
    int32_t bytes;
    std::memcpy(&bytes, activations + row * kStepsRowBytes + a, 4);
    return _mm512_set1_epi32(bytes);
  };
  for (size_t s = 0, w = 0, a = 0; s < steps; ++s) {
    const int8_t* group = weights + w;
    const __m512i b0 = _mm512_loadu_si512(group), b1 = _mm512_loadu_si512(group + 64);
    const __m512i b2 = _mm512_loadu_si512(group + 128), b3 = _mm512_loadu_si512(group + 192);
    __m512i x = word(0, a);
    c00 = _mm512_dpbusd_epi32(c00, x, b0), c01 = _mm512_dpbusd_epi32(c01, x, b1);
    c02 = _mm512_dpbusd_epi32(c02, x, b2), c03 = _mm512_dpbusd_epi32(c03, x, b3);
    x = word(1, a);
    c10 = _mm512_dpbusd_epi32(c10, x, b0), c11 = _mm512_dpbusd_epi32(c11, x, b1);
    c12 = _mm512_dpbusd_epi32(c12, x, b2), c13 = _mm512_dpbusd_epi32(c13, x, b3);
    x = word(2, a);
    c20 = _mm512_dpbusd_epi32(c20, x, b0), c21 = _mm512_dpbusd_epi32(c21, x, b1);
    c22 = _mm512_dpbusd_epi32(c22, x, b2), c23 = _mm512_dpbusd_epi32(c23, x, b3);
    x = word(3, a);
    c30 = _mm512_dpbusd_epi32(c30, x, b0), c31 = _mm512_dpbusd_epi32(c31, x, b1);
    c32 = _mm512_dpbusd_epi32(c32, x, b2), c33 = _mm512_dpbusd_epi32(c33, x, b3);
    // As the kernel's PinToRegister: g++ 12 otherwise moves every accumulator to a new register
    // and back each step.
    asm("" : "+v"(c00), "+v"(c01), "+v"(c02), "+v"(c03), "+v"(c10), "+v"(c11), "+v"(c12),
        "+v"(c13));  // at most 30 operands an asm, and "+" counts two
    asm("" : "+v"(c20), "+v"(c21), "+v"(c22), "+v"(c23), "+v"(c30), "+v"(c31), "+v"(c32),
        "+v"(c33));
    w = w + 256 == weight_bytes ? 0 : w + 256;
    a = a + 4 == kStepsRowBytes ? 0 : a + 4;
  }
  const auto add4 = [](__m512i p, __m512i q, __m512i r, __m512i t) {
    return _mm512_add_epi32(_mm512_add_epi32(p, q), _mm512_add_epi32(r, t));
  };
  const __m512i sum = _mm512_add_epi32(add4(c00, c01, c02, c03), add4(c10, c11, c12, c13));
  const __m512i sum2 = _mm512_add_epi32(add4(c20, c21, c22, c23), add4(c30, c31, c32, c33));
  // Stored: a result the compiler cannot see unused keeps every accumulator's chain.
  alignas(64) int32_t lanes[16];
  _mm512_store_si512(lanes, _mm512_add_epi32(sum, sum2));
  volatile int32_t sink = lanes[0];
  (void)sink;
  return 2.0 * 64 * 16 * static_cast<double>(steps);
#else
  (void)activations, (void)weights, (void)weight_bytes, (void)steps;
  return 0.0;
#endif
}

// 12 independent vdpbf16ps chains (32 bf16 multiply-adds each); returns flops done (2 per
// multiply-add), or 0 on targets without the instruction. Call only where the CPU has
// AVX512-BF16.
double Bf16DotLoop(size_t iterations, float* sink) {
#if HWY_TARGET == HWY_AVX3_DL
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3F80));  // 1.0
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3380));  // 2^-24
  __m512 c[12];
  for (int i = 0; i < 12; ++i) c[i] = _mm512_set1_ps(static_cast<float>(i));
  for (size_t it = 0; it < iterations; ++it) {
    for (int i = 0; i < 12; ++i) c[i] = _mm512_dpbf16_ps(c[i], a, b);
  }
  __m512 sum = c[0];
  for (int i = 1; i < 12; ++i) sum = _mm512_add_ps(sum, c[i]);
  *sink = _mm512_cvtss_f32(sum);  // lane 0 keeps the loop
  return 2.0 * 32 * 12 * static_cast<double>(iterations);
#else
  (void)iterations;
  *sink = 0.0f;
  return 0.0;
#endif
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace bench
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace edgeattn {
namespace bench {

HWY_EXPORT(FmaLoop);
HWY_EXPORT(VnniLoop);
HWY_EXPORT(VnniInt8Steps);
HWY_EXPORT(Bf16DotLoop);

namespace {

#if defined(__x86_64__) && (HWY_COMPILER_GCC_ACTUAL >= 1100 || HWY_COMPILER_CLANG >= 1200)
#define EDGEATTN_PEAK_AMX 1
// Palette 1 with tiles 0-6 of 16 rows x 64 bytes: 0-3 accumulators (zeroed), 4 and 5 the
// operands, loaded from `a` and `b` (6: a second weight tile for AmxInt8Steps). (The loops below
// cannot share one template: the tile intrinsics are macros that paste their tile numbers into
// the instruction.)
__attribute__((target("amx-tile"))) void StartAmxTiles(const void* a, const void* b) {
  simd::AmxTileConfig config;
  for (size_t t = 0; t < 7; ++t) config.Tile(t, 16, 64);
  simd::LoadTileConfig(config);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
}

// 4 independent tdpbf16ps accumulator tiles, each 16 x 16 fp32 += 16 x 32 by 32 x 16 bf16 (8192
// multiply-adds); returns flops done (2 per multiply-add).
__attribute__((target("amx-tile,amx-bf16"))) double AmxBf16Loop(size_t iterations, float* sink) {
  alignas(64) uint16_t a[16 * 32], b[16 * 32];
  alignas(64) float c[16 * 16];
  std::fill_n(a, 16 * 32, uint16_t{0x3F80});  // 1.0
  std::fill_n(b, 16 * 32, uint16_t{0x3380});  // 2^-24
  StartAmxTiles(a, b);
  for (size_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  *sink = c[0];
  return 2.0 * 8192 * 4 * static_cast<double>(iterations);
}

// The same with tdpbusd: 16 x 16 int32 += 16 x 64 u8 by 64 x 16 s8 (16384 multiply-adds); returns
// operations done (2 per multiply-add).
__attribute__((target("amx-tile,amx-int8"))) double AmxInt8Loop(size_t iterations, int* sink) {
  alignas(64) uint8_t a[16 * 64];
  alignas(64) int8_t b[16 * 64];
  alignas(64) int32_t c[16 * 16];
  std::fill_n(a, sizeof(a), uint8_t{1});
  std::fill_n(b, sizeof(b), int8_t{1});
  StartAmxTiles(a, b);
  for (size_t i = 0; i < iterations; ++i) {
    _tile_dpbusd(0, 4, 5);
    _tile_dpbusd(1, 4, 5);
    _tile_dpbusd(2, 4, 5);
    _tile_dpbusd(3, 4, 5);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  *sink = c[0];
  return 2.0 * 16384 * 4 * static_cast<double>(iterations);
}

// The int8 AMX kernel's tile step (its AccumulateBlock) over `steps` steps: one activation tile
// (16 rows x 64 bytes of rows kStepsRowBytes apart) and the four weight tiles of 16 groups (at
// the panels' 256-byte group stride), alternating between tiles 5 and 6 as the kernel does so
// that a load overlaps the previous product, four tdpbusd. Step s reads the 4 KiB of weights at s x 4 KiB modulo
// weight_bytes and the activations' 64 bytes at s x 64 modulo a row. Returns operations done.
__attribute__((target("amx-tile,amx-int8"))) double AmxInt8Steps(const uint8_t* activations,
                                                                 const int8_t* weights,
                                                                 size_t weight_bytes,
                                                                 size_t steps) {
  StartAmxTiles(activations, weights);
  for (size_t s = 0, w = 0, a = 0; s < steps; ++s) {
    const int8_t* group = weights + w;
    _tile_loadd(4, activations + a, kStepsRowBytes);
    _tile_loadd(5, group, 256);
    _tile_dpbusd(0, 4, 5);
    _tile_loadd(6, group + 64, 256);
    _tile_dpbusd(1, 4, 6);
    _tile_loadd(5, group + 128, 256);
    _tile_dpbusd(2, 4, 5);
    _tile_loadd(6, group + 192, 256);
    _tile_dpbusd(3, 4, 6);
    w = w + 4096 == weight_bytes ? 0 : w + 4096;
    a = a + 64 == kStepsRowBytes ? 0 : a + 64;
  }
  _tile_release();
  return 2.0 * 16384 * 4 * static_cast<double>(steps);
}
#else
#define EDGEATTN_PEAK_AMX 0
#endif

// Best rate of 5 runs of loop(iterations, sink), in billions of the operations it reports, per
// second of processor time (as Google Benchmark's rates, which the percentages divide): on a
// shared machine wall time also counts the time other processes hold the core.
template <class Loop, class Sink>
double BestRate(Loop loop, Sink sink) {
  double best = 0.0;
  for (int round = 0; round < 5; ++round) {
    const std::clock_t t0 = std::clock();
    const double ops = loop(20'000'000, &sink);
    const double s = static_cast<double>(std::clock() - t0) / CLOCKS_PER_SEC;
    best = std::max(best, ops / s * 1e-9);
  }
  return best;
}

}  // namespace

double PeakFmaGflops() {
  static const double peak = BestRate(HWY_DYNAMIC_DISPATCH(FmaLoop), 0.0f);
  return peak;
}

double PeakVnniGops() {
  static const double peak = BestRate(HWY_DYNAMIC_DISPATCH(VnniLoop), 0);
  return peak;
}

double PeakBf16DotGflops() {
  static const double peak = BestRate(HWY_DYNAMIC_DISPATCH(Bf16DotLoop), 0.0f);
  return peak;
}

double PeakAmxBf16Gflops() {
#if EDGEATTN_PEAK_AMX
  static const double peak = BestRate(&AmxBf16Loop, 0.0f);
  return peak;
#else
  return 0.0;
#endif
}

double PeakAmxInt8Gops() {
#if EDGEATTN_PEAK_AMX
  static const double peak = BestRate(&AmxInt8Loop, 0);
  return peak;
#else
  return 0.0;
#endif
}

double AmxInt8StepsOps(const std::uint8_t* activations, const std::int8_t* weights,
                       std::size_t weight_bytes, std::size_t steps) {
#if EDGEATTN_PEAK_AMX
  if (weight_bytes == 0 || weight_bytes % 4096 != 0) return 0.0;  // no whole step to cycle
  return AmxInt8Steps(activations, weights, weight_bytes, steps);
#else
  (void)activations, (void)weights, (void)weight_bytes, (void)steps;
  return 0.0;
#endif
}

double VnniInt8StepsOps(const std::uint8_t* activations, const std::int8_t* weights,
                        std::size_t weight_bytes, std::size_t steps) {
  if (weight_bytes == 0 || weight_bytes % 256 != 0) return 0.0;  // no whole group to cycle
  return HWY_DYNAMIC_DISPATCH(VnniInt8Steps)(activations, weights, weight_bytes, steps);
}

}  // namespace bench
}  // namespace edgeattn
#endif  // HWY_ONCE
