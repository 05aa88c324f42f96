// Attention core for one head: O = softmax(Q K^T * scale) V, computed over key tiles with a
// running maximum and sum (online softmax), so that no Lq x Lk score matrix is ever stored:
// scratch memory depends on dk only, and the packed keys and values grow linearly with Lk.
//
// The fp32 kernel's layout: scores are Q K^T, a GEMM with K in the place of a weight matrix, so
// keys take the weight panel layout (PackGemmWeights): each 64-key panel is dk contiguous rows of
// 64 floats, which the tile kernel streams without the cache-set conflicts that a long-strided K^T
// would cause; lanes of the last panel past the last key are zeroed. Values are rows of dk floats
// with no padding between them (a head of width 4 takes 4 floats per position, not a vector's
// width), plus a zeroed tail so that a whole-vector load of the last row stays in the buffer;
// being rows, they may also be read where the caller holds them (values_as_rows).
#ifndef EDGEATTN_SIMD_ATTENTION_H_
#define EDGEATTN_SIMD_ATTENTION_H_

#include <math.h>
#include <stddef.h>

#include <vector>

#include "simd/attention_mask.h"

namespace edgeattn {
namespace simd {

// Keys scored per online-softmax step: the score tile (up to 8 rows x 256) is 8 KiB, so it
// stays in L1 between the Q K^T and P V passes, and the running rescale happens once per
// 256 keys.
inline constexpr size_t kAttentionKeyTile = 256;

// Query rows processed together: at most the tile kernel's 8 rows. Scratch is sized for this.
inline constexpr size_t kAttentionMaxBlockRows = 8;

struct AttentionHeadArgs {
  const float* q;  // [lq x dk] this head's queries, row stride ldq
  size_t ldq;
  const void* keys;  // packed by the kernel that runs (AttentionKernel::pack)
  const void* values;  // packed too, or a values_as_rows kernel's rows in place (ldv)
  size_t lk;
  size_t dk;
  float scale;  // applied to Q K^T, usually 1 / sqrt(dk)
  float* out;   // [lq x dk] this head's columns of the concat buffer, row stride ldo
  size_t ldo;

  // > 0: scaled scores s become softcap * tanh(s / softcap) before the masks.
  float softcap = 0.0f;
  // A logit that joins every row's softmax denominator with no value (an attention sink);
  // -inf: none.
  float sink = -HUGE_VALF;

  AttentionMask mask{};  // everything visible by default
  // Optional: the softmax probabilities [lq x lk], row stride ldw (need_weights).
  float* weights = nullptr;
  size_t ldw = 0;
  // A values_as_rows kernel's values: 0, packed (rows dk apart); else V's rows in place, ldv
  // floats apart, ldv >= dk (AttentionKernel::values_as_rows). Other kernels ignore it: leave
  // it 0 for them.
  size_t ldv = 0;
};

// An attention-core kernel as a descriptor, as projection kernels are (projection_kernel.h):
// its name states how it stores keys and values and computes on them
// (<kv storage>kv_<arithmetic>_<tile>, e.g. "f32kv_f32_6x4v"), it packs keys and values into
// its own layout, appending positions so that a KV cache can grow, and it runs the core for a
// range of one head's query rows on that layout.
enum class KvType {
  kF32,
  kBf16,  // attention_kv.h
  kF16,
  kI8,
};

struct AttentionKernel {
  const char* name;
  KvType kv;
  // Bytes of one head's packed keys and values for lk positions.
  size_t (*keys_bytes)(size_t lk, size_t dk);
  size_t (*values_bytes)(size_t lk, size_t dk);
  // Packs keys K [count x dk] (row stride ldk) and values V (row stride ldv) of one head into
  // slots [first, first + count) of buffers that hold keys_bytes / values_bytes for at least
  // `stored` slots, stored >= first + count: the slots holding keys after the call (more than
  // first + count when a ring's later slots are still in use). Other slots are left as they
  // are; whatever the layout keeps past slot `stored` is zeroed. values null: keys only (a
  // values_as_rows kernel).
  void (*pack)(const float* k, size_t ldk, const float* v, size_t ldv, size_t first, size_t count,
               size_t stored, size_t dk, void* keys, void* values);
  // Floats of per-thread scratch for a head of width dk (64-byte aligned).
  size_t (*scratch_floats)(size_t dk);
  // Computes query rows [q_begin, q_end) of one head. A row whose scores hold NaN or +inf is
  // written as NaN; a row whose every key is masked is written as zeros (its weights too). Key
  // tiles that the mask removes for every row of a block cost nothing: with a causal mask the
  // upper triangle is never computed. Rows are independent (any split of the query rows between
  // threads gives bit-identical results) but for one case: a NaN or infinite value at a key that
  // a row masks reaches it as 0 x NaN where another row of its block sees that key, as PyTorch's
  // masked weights multiply it (docs/usage.md).
  void (*run)(const AttentionHeadArgs& args, size_t q_begin, size_t q_end, float* scratch);
  // Whether the packed values are V's float rows as they are, dk floats apart, of which run
  // reads each row's dk floats and may read on past them, never using what it finds there, up
  // to values_bytes(0, dk) bytes past the last row's dk floats. A caller holding V as rows may
  // then skip copying them: pack with values null packs the keys alone, and run reads the
  // caller's rows in place (AttentionHeadArgs::ldv), which must be readable that far past the
  // last.
  bool values_as_rows = false;
};

// The attention kernels storing keys and values as `type` that this CPU runs, best first (those
// of the Highway target dynamic dispatch chose).
std::vector<const AttentionKernel*> AttentionKernels(KvType type);

// The kernel of that name among AttentionKernels(type), or null.
const AttentionKernel* FindAttentionKernel(KvType type, const char* name);

}  // namespace simd
}  // namespace edgeattn

#endif  // EDGEATTN_SIMD_ATTENTION_H_
