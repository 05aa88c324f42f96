// edgeattn: multi-head attention for CPUs, as PyTorch's
// nn.MultiheadAttention(d_model, num_heads, bias=True, batch_first=True) computes it in inference.
//
//   Q = Xq Wq^T + bq,  K = Xk Wk^T + bk,  V = Xv Wv^T + bv
//   head_i = softmax(Q_i K_g(i)^T / sqrt(head_dim) + mask) V_g(i)
//   Y = Concat(head_1 .. head_h) Wo^T + bo
//
// with g(i) = i for multi-head attention, or i / (num_heads / num_kv_heads) for grouped-query
// (and, with one key/value head, multi-query) attention.
//
// All tensors are row-major float32. Errors are thrown as edgeattn::Error with a message that
// names the argument, what was expected and what came; a buffer the system cannot give (weights,
// a cache, a context's scratch memory) as std::bad_alloc whose what() names it and its bytes.
#ifndef EDGEATTN_EDGEATTN_HPP_
#define EDGEATTN_EDGEATTN_HPP_

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "edgeattn/export.hpp"
#include "edgeattn/executor.hpp"
#include "edgeattn/version.h"

namespace edgeattn {

// The version of the library linked, "MAJOR.MINOR.PATCH"; EDGEATTN_VERSION_STRING is the version
// of the headers compiled against.
EDGEATTN_API const char* Version();

class EDGEATTN_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest d_model, sequence length and batch accepted: far beyond any edge model, small
// enough that no buffer size computed from them can overflow.
inline constexpr std::size_t kMaxModelDim = 16384;
inline constexpr std::size_t kMaxSequenceLength = 1 << 20;
inline constexpr std::size_t kMaxBatch = 1 << 16;

// The format of the four projections' weights (the attention core, Q K^T, softmax and P V, is
// the attention kernel's business: Config::attention_kernel).
// fp32: every step in float. int8: the projections run on int8 weights (symmetric, one scale
// per output channel, quantized once when the operator is built) and int8 activations
// (quantized at run time with one scale per row and per block of int8_block values).
// bf16, fp16: the weights are held as 16-bit floats (rounded to nearest even when the operator
// is built from float weights; F16/BF16 safetensors tensors are packed as they are), half the
// memory of fp32; the kernel says how activations meet them (docs/precision.md).
// auto: what AutoChoiceForThisCpu() picks, resolved when the operator is built (config()
// reports the resolved format).
enum class Precision { kFp32, kInt8, kBf16, kFp16, kAuto };

// "fp32", "int8", "bf16", "fp16" or "auto"; "unknown" for a value outside the enum.
EDGEATTN_API const char* PrecisionName(Precision precision);

// Values per activation scale in int8 mode: a multiple of 4. Smaller blocks follow outlier
// channels more closely; larger ones are faster. See docs/int8.md.
inline constexpr std::size_t kDefaultInt8Block = 256;
// Largest int8_block: whole rows of the largest d_model, and far more than accuracy allows.
inline constexpr std::size_t kMaxInt8Block = 65536;

// How the keys are laid out for rotary position embeddings (docs/decoding.md).
enum class RotaryLayout {
  kNone,         // no rotary embedding
  kHalves,       // dims i and i + rotary_dim / 2 form a pair (Llama, NeoX, Qwen, Gemma)
  kInterleaved,  // dims 2i and 2i + 1 form a pair (GPT-J)
};

// Largest window, rotary positions: positions stay exact in float.
inline constexpr std::size_t kMaxPosition = std::size_t{1} << 24;

// What the attention step computes besides softmax(Q K^T / sqrt(head_dim) + mask) V; everything
// is off by default. Per head, in this order: Q and K are projected, RMS-normalised
// (qk_norm), rotated (rotary), scored (score_scale), soft-capped (softcap), masked (the call's
// masks and the window) and soft-maxed together with the head's sink logit
// (WeightsView::sinks). docs/decoding.md explains each with the models that use it.
struct AttentionMath {
  // Multiplies Q K^T in place of 1 / sqrt(head_dim) (Gemma's query_pre_attn_scalar^-0.5,
  // T5's 1.0). 0: 1 / sqrt(head_dim).
  float score_scale = 0.0f;
  // > 0: each score s becomes softcap * tanh(s / softcap) before the masks (Gemma 2). 0: off.
  float softcap = 0.0f;
  // > 0: sliding-window attention: the query at position i sees keys at positions j with
  // |i - j| < window (and j <= i when causal, as Mistral and Gemma decode). A KvCache made for
  // the operator keeps only the window's keys and values. 0: every key.
  std::size_t window = 0;
  // RMS norm of each head's Q and K rows with the learned WeightsView::q_norm_weight and
  // k_norm_weight (Qwen3, Gemma 3): x / sqrt(mean(x^2) + qk_norm_eps) * weight.
  bool qk_norm = false;
  float qk_norm_eps = 1e-6f;
  // Rotary position embedding of Q and K (after the norm): pairs of the first rotary_dim dims
  // of each head (0: all of head_dim; even) are rotated by position / rotary_scaling *
  // rotary_base^(-2i / rotary_dim). Keys are cached rotated.
  RotaryLayout rotary = RotaryLayout::kNone;
  std::size_t rotary_dim = 0;
  float rotary_base = 10000.0f;
  float rotary_scaling = 1.0f;  // linear position interpolation: positions / rotary_scaling
};

// How keys and values are stored for the attention core: a forward call's (Config::kv_format)
// and a KvCache's (docs/decoding.md, "Cache formats"; docs/precision.md). fp32: as computed.
// bf16, fp16: rounded to nearest even (half the bytes; a projected key or value past fp16's
// 65504 makes the call throw edgeattn::Error before anything is stored, leaving a cache as it
// was).
// int8: one fp32 scale per position and key/value head (max |x| / 127), about a quarter of the
// bytes; the decode step quantizes each query row the same way and scores in integers.
// Keys are stored rotated (AttentionMath::rotary) in every format. auto: what
// AutoChoiceForThisCpu() picks for forward calls (Config::kv_format, resolved when the operator
// is built) or for a cache (KvCacheOptions::format, resolved when the cache is made).
enum class KvFormat { kFp32, kBf16, kFp16, kInt8, kAuto };

// "fp32", "bf16", "fp16", "int8" or "auto"; "unknown" for a value outside the enum.
EDGEATTN_API const char* KvFormatName(KvFormat format);

// What the auto formats resolve to on this CPU: the fastest combination that meets the accuracy
// bounds, by the rule and measurements in docs/precision.md ("auto"). Each format's kernel is
// then the best this CPU runs for it (ProjectionKernels / AttentionKernels, best first).
struct AutoChoice {
  Precision precision;  // Precision::kAuto
  KvFormat kv_format;   // Config::kv_format = kAuto: a forward call's keys and values
  KvFormat cache_format;  // KvCacheOptions::format = kAuto: a decode cache's
};
EDGEATTN_API AutoChoice AutoChoiceForThisCpu();

struct Config {
  std::size_t d_model = 0;
  std::size_t num_heads = 0;
  Precision precision = Precision::kFp32;
  std::size_t int8_block = kDefaultInt8Block;
  // Key/value heads, dividing num_heads (grouped-query attention; 1 = multi-query).
  // 0 means num_heads: plain multi-head attention.
  std::size_t num_kv_heads = 0;
  // The projection kernel, by name (e.g. "qd8_qc8w_i16"); empty: the best this CPU runs for the
  // precision. `edgeattn info` lists the kernels of this CPU; one it cannot run is an error.
  std::string projection_kernel = "";
  // The attention-core kernel, by name (e.g. "f32kv_f32_6x4v"); empty: the best this CPU runs
  // for kv_format. A named kernel must store keys and values as kv_format does
  // (AttentionKernels(kv_format) lists them); one of another format is an error.
  std::string attention_kernel = "";
  AttentionMath math{};
  // How Forward packs each call's keys and values for the attention core, and the format of a
  // KvCache made for the operator without KvCacheOptions (docs/precision.md). fp32 by default;
  // kAuto: AutoChoiceForThisCpu().kv_format, as config() then reports.
  KvFormat kv_format = KvFormat::kFp32;
};

// An array and its element count (checked against the shape it must have).
template <class T>
struct Span {
  T* data = nullptr;
  std::size_t size = 0;
};
using FloatSpan = Span<const float>;

// Weights named as in PyTorch's state_dict. A null bias (data == nullptr) means no bias, as
// with bias=False. The input projections come either packed (in_proj_weight, as
// nn.MultiheadAttention stores them) or separately (q/k/v_proj_weight, as Llama-style models
// and grouped-query attention store them; set in_proj_weight to null). kv_dim below is
// num_kv_heads * d_model / num_heads.
struct WeightsView {
  FloatSpan in_proj_weight{};   // [3 * d_model, d_model]: rows of Wq, then Wk, then Wv
  FloatSpan in_proj_bias{};     // [3 * d_model] (grouped-query: [d_model + 2 * kv_dim])
  FloatSpan out_proj_weight{};  // [d_model, d_model]  (state_dict name: out_proj.weight)
  FloatSpan out_proj_bias{};    // [d_model]           (state_dict name: out_proj.bias)
  FloatSpan q_proj_weight{};    // [d_model, d_model]
  FloatSpan k_proj_weight{};    // [kv_dim, d_model]
  FloatSpan v_proj_weight{};    // [kv_dim, d_model]
  // Separate biases, each optional (or one in_proj_bias [d_model + 2 * kv_dim]).
  FloatSpan q_proj_bias{};      // [d_model]
  FloatSpan k_proj_bias{};      // [kv_dim]
  FloatSpan v_proj_bias{};      // [kv_dim]
  // Per-head learned parts of the attention step (AttentionMath), each optional:
  FloatSpan sinks{};          // [num_heads]: a logit per head that joins the softmax (gpt-oss)
  FloatSpan q_norm_weight{};  // [head_dim]: with AttentionMath::qk_norm
  FloatSpan k_norm_weight{};  // [head_dim]
};

// A [batch, length, features] row-major tensor (an [length, features] one has batch = 1).
struct ConstTensor {
  const float* data = nullptr;
  std::size_t batch = 0;
  std::size_t length = 0;
  std::size_t features = 0;
};

struct Tensor {
  float* data = nullptr;
  std::size_t batch = 0;
  std::size_t length = 0;
  std::size_t features = 0;
};

// Attention weights returned on request (PyTorch's need_weights / average_attn_weights).
enum class AttentionWeights { kNone, kPerHead, kAveraged };

// What a forward call may add to plain attention; everything is off by default. Masks follow
// PyTorch's nn.MultiheadAttention. A query row whose every key is masked gets zeros from that
// head (so with every head masked the row's output is out_proj.bias) and zero weights, where
// PyTorch returns NaN.
struct ForwardOptions {
  // Query row i attends keys j <= i only (torch.tril(ones(Lq, Lk)), as is_causal in
  // PyTorch's scaled_dot_product_attention). Tiles above the diagonal cost nothing.
  bool is_causal = false;
  // [batch, Lk]: true = ignore this key (PyTorch's key_padding_mask).
  Span<const bool> key_padding_mask{};
  // Added to the scaled scores: [Lq, Lk] for every batch item and head, or
  // [batch * num_heads, Lq, Lk] indexed b * num_heads + h (PyTorch's 3-D attn_mask). -inf
  // removes a key; a boolean mask becomes 0 / -inf.
  FloatSpan attn_mask{};
  // A padded batch's valid lengths, one per batch item, in [0, Lq] and [0, Lk]: query rows
  // past query_lengths[b] are not computed and their output rows are zeros; keys past
  // key_lengths[b] are ignored and not projected. Self-attention: key_lengths defaults to
  // query_lengths.
  Span<const std::size_t> query_lengths{};
  Span<const std::size_t> key_lengths{};
  // kPerHead: attn_weights is [batch, num_heads, Lq, Lk]; kAveraged: [batch, Lq, Lk], the mean
  // over heads. Rows past a query length and columns past a key length are zeros.
  AttentionWeights need_weights = AttentionWeights::kNone;
  Span<float> attn_weights{};
  // Rotary positions of the query rows [Lq] and of the keys [Lk] (each below kMaxPosition),
  // shared by the batch items; absent: 0, 1, ... Only with AttentionMath::rotary.
  Span<const std::size_t> positions{};
  Span<const std::size_t> key_positions{};
};

// How MultiheadAttention::Load finds and checks one attention layer in a safetensors file
// (the rules in full: docs/weights.md). The defaults load a file written from one
// nn.MultiheadAttention's state_dict with strict checks.
struct LoadOptions {
  // Float files do not record the number of heads, so it is required for them. int8 files
  // written by SaveInt8 record it: 0 takes it from the file, anything else must match.
  std::size_t num_heads = 0;
  // Float files: kInt8 quantizes the projections while loading; kBf16 / kFp16 keep F16 / BF16
  // weight tensors of that format as they are (no float copy) and round other dtypes once.
  // int8 files always run int8.
  Precision precision = Precision::kFp32;
  std::size_t int8_block = kDefaultInt8Block;
  // Where the layer's tensors start in a whole-model checkpoint, e.g.
  // "model.encoder.layers.3.self_attn." or "bert.encoder.layer.3.attention." (a final '.' is
  // added if missing). Empty: the names are at the top level. Names are matched against the
  // naming schemes of PyTorch nn.MultiheadAttention (in_proj_weight, out_proj.weight), Hugging
  // Face BERT/MiniLM (self.query.weight, ..., output.dense.weight), Whisper/BART (q_proj.weight,
  // ..., out_proj.weight) and Llama/Mistral/Qwen2/Gemma (q_proj.weight, ..., o_proj.weight).
  std::string prefix;
  // As PyTorch's load_state_dict(strict=True): every tensor under the prefix must be one the
  // layer's scheme uses, or a part of the family's attention block that is not attention
  // (BERT's output.LayerNorm, Llama's rotary_emb.inv_freq), and the biases present must be a
  // set the family has (PyTorch: both or neither; Whisper: no k_proj bias; Qwen2: q/k/v only;
  // Llama: none). Misspelled, half-present and foreign tensors are errors that name them.
  // false: unknown tensors are ignored and missing biases are zeros (PyTorch's initial
  // value); missing weights are still errors.
  bool strict = true;
  // bias=False: the layer has no biases. Strict, any bias tensor in the file is an error;
  // non-strict, the file's biases are ignored.
  bool no_bias = false;
  // As Config::projection_kernel and Config::attention_kernel: kernels by name, or empty for
  // the best this CPU runs.
  std::string projection_kernel = "";
  std::string attention_kernel = "";
  // As Config::kv_format (not recorded in files).
  KvFormat kv_format = KvFormat::kFp32;
  // As Config::math. A Llama-family layer's learned `sinks` (gpt-oss) are used when present;
  // its `q_norm.weight` and `k_norm.weight` (Qwen3) with math.qk_norm (strict loading refuses
  // them without). int8 files hold neither.
  AttentionMath math{};
};

// The projection kernels this CPU runs for `precision`, best first: the names
// Config::projection_kernel accepts.
EDGEATTN_API std::vector<std::string> ProjectionKernels(Precision precision);
// The fp32 attention-core kernels this CPU runs, best first: AttentionKernels(KvFormat::kFp32).
EDGEATTN_API std::vector<std::string> AttentionKernels();

// The attention-core kernels this CPU runs on keys and values stored as `format`, best first:
// the names Config::attention_kernel (with that kv_format) and KvCacheOptions::attention_kernel
// accept.
EDGEATTN_API std::vector<std::string> AttentionKernels(KvFormat format);

struct KvCacheOptions {
  KvFormat format = KvFormat::kFp32;
  // The attention kernel of the cache's decode steps, by name (one of AttentionKernels(format));
  // empty: the operator's own when its Config named one for this format, else the format's
  // fastest for a step's few rows (bf16: the kernel widening to fp32, not the AMX one).
  std::string attention_kernel = "";
};

class MultiheadAttention;
class SafetensorsFile;

// Keys and values of earlier positions for incremental decoding with
// MultiheadAttention::Decode: room for max_length positions of `batch` sequences, allocated
// once (packed for the attention core in the operator's Config::kv_format, or that of
// KvCacheOptions). Each sequence has its own length (a ragged batch; docs/decoding.md). For an operator with a window (AttentionMath::window) it holds only
// the last slots() positions of each sequence as a ring, whatever max_length is: a step may add
// at most slots() - window + 1 positions once the ring is full, and Truncate rolls back only as
// far as the ring still holds every key the next step needs. One call at a time: a Decode,
// Truncate, Reorder or Clear while another thread's call uses the cache throws edgeattn::Error.
// length() may be read on any thread meanwhile: it gives the lengths the last of those left.
// It holds one layer's keys and values: Decode by an operator with other key/value projections
// (another layer's, or another precision's) throws; one of the same weights that attends
// differently (window, softcap, sinks, kernels) may share it. A moved-from cache throws on every
// call.
class EDGEATTN_API KvCache {
 public:
  KvCache(const MultiheadAttention& mha, std::size_t max_length, std::size_t batch = 1);
  KvCache(const MultiheadAttention& mha, std::size_t max_length, std::size_t batch,
          const KvCacheOptions& options);
  ~KvCache();
  KvCache(KvCache&&) noexcept;
  KvCache& operator=(KvCache&&) noexcept;

  std::size_t length() const;  // positions cached: the longest sequence's
  std::size_t length(std::size_t item) const;  // positions cached of sequence `item`
  std::size_t max_length() const;
  std::size_t batch() const;
  std::size_t bytes() const;
  // Bytes per position of one sequence (every key/value head, keys and values), rounded up:
  // bytes() / (batch() * slots()).
  std::size_t bytes_per_position() const;
  KvFormat format() const;
  // The attention kernel its decode steps run (KvCacheOptions::attention_kernel).
  const char* attention_kernel() const;
  // Positions held: max_length, or the ring's size for a windowed operator's cache.
  std::size_t slots() const;
  void Clear();  // back to length 0; keeps the memory
  // Keeps at most the first `length` positions (<= length()) of every sequence, e.g. to roll
  // back rejected tokens.
  void Truncate(std::size_t length);
  // Keeps the first lengths[b] positions of sequence b (one value per sequence, each at most
  // length(b)): speculative decoding's accepted prefixes, per sequence.
  void Truncate(Span<const std::size_t> lengths);
  // Sequence b becomes what sequence indices[b] was (keys, values and length), as beam search
  // keeps its best beams: one index per sequence, each < batch(); an index may repeat (a beam
  // that forks) or be left out (a beam dropped). Done in place; nothing allocated after the
  // first call.
  void Reorder(Span<const std::size_t> indices);

  struct State;

 private:
  friend class MultiheadAttention;
  std::unique_ptr<State> state_;
};

// An encoder output's keys and values for cross-attention, projected once by one operator's key
// and value projections (MultiheadAttention::ProjectMemory) and attended to by every decoder
// step and every beam (MultiheadAttention::DecodeCross) without projecting the frames again
// (Whisper, T5, Marian; docs/decoding.md). Room for max_length frames of `batch` encoder outputs,
// allocated once, in the layout of the operator's attention kernel; only the operator it was
// made for may use it. Any number of DecodeCross calls may read one memory at once from several
// threads; ProjectMemory while any other call uses it throws edgeattn::Error.
class EDGEATTN_API CrossAttentionMemory {
 public:
  CrossAttentionMemory(const MultiheadAttention& mha, std::size_t max_length,
                       std::size_t batch = 1);
  ~CrossAttentionMemory();
  CrossAttentionMemory(CrossAttentionMemory&&) noexcept;
  CrossAttentionMemory& operator=(CrossAttentionMemory&&) noexcept;

  std::size_t length() const;  // frames of the last encoder output projected (0: none yet)
  std::size_t length(std::size_t item) const;  // its valid frames in item `item`
  std::size_t max_length() const;
  std::size_t batch() const;
  std::size_t bytes() const;

  struct State;

 private:
  friend class MultiheadAttention;
  std::unique_ptr<State> state_;
};

// Where a forward call runs and the scratch memory it reuses. One context per calling thread:
// a call on a context that another thread's call is using throws edgeattn::Error (it would
// share the scratch memory). A built operator may be shared by any number of contexts at once.
class EDGEATTN_API Context {
 public:
  // threads = 0: one per hardware thread, else at most kMaxThreads (edgeattn::Error beyond).
  // Runs on a oneTBB arena of that size (builds without oneTBB: MakeThreadPoolExecutor's pool).
  explicit Context(std::size_t threads = 0);
  // Runs on an executor the application owns (1 to kMaxThreads workers); it must outlive the
  // context. The executor may be shared with the application's own work; a call made from
  // inside one of that executor's jobs must not wait for the executor (edgeattn's thread pool
  // then runs the call's phases on the calling thread).
  explicit Context(Executor& executor);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  std::size_t threads() const;
  // The executor calls run on (its kind() and spins() say which pool and how it waits).
  const Executor& executor() const;
  // Scratch memory held for forward calls: grows to the largest call seen, then stays.
  std::size_t workspace_bytes() const;

  struct State;

 private:
  friend class MultiheadAttention;
  std::unique_ptr<State> state_;
};

class EDGEATTN_API MultiheadAttention {
 public:
  // Validates the configuration and the weights, then packs the weights; the views may be
  // released afterwards.
  MultiheadAttention(const Config& config, const WeightsView& weights);
  // Loads one attention layer from a safetensors file: one written by
  // safetensors.torch.save_file(mha.state_dict(), path), a whole-model checkpoint (with
  // options.prefix), or an int8 file written by SaveInt8. The file is memory-mapped, not read
  // into a heap copy; F32 tensors are packed straight from the mapping (peak memory: the file
  // plus the packed weights), F16, BF16 and F64 ones through float32 copies made first, except
  // F16 / BF16 weights loaded as Precision::kFp16 / kBf16, packed straight from the mapping.
  static MultiheadAttention Load(const std::string& path, const LoadOptions& options);
  // Load(path, {num_heads, precision, int8_block}): a top-level layer, strict.
  static MultiheadAttention Load(const std::string& path, std::size_t num_heads,
                                 Precision precision = Precision::kFp32,
                                 std::size_t int8_block = kDefaultInt8Block);
  // The same from a safetensors file in memory (an Android AAssetManager buffer, iOS bundle
  // data): size bytes at data, read while this call runs and never after. The weights are
  // packed into the operator, so the buffer may be freed when the call returns.
  static MultiheadAttention LoadFromMemory(const void* data, std::size_t size,
                                           const LoadOptions& options);

  // int8 operators only: writes the quantized weights (I8 tensors and F32 scales; names and
  // metadata in docs/int8.md, "int8 weight files"), which Load reads back bit for bit.
  void SaveInt8(const std::string& path) const;

  MultiheadAttention(MultiheadAttention&&) noexcept;
  MultiheadAttention& operator=(MultiheadAttention&&) noexcept;
  ~MultiheadAttention();

  // A moved-from operator holds nothing: this and every call on it throw edgeattn::Error.
  const Config& config() const;
  // The projection kernel chosen when the operator was built (see Config::projection_kernel).
  const char* projection_kernel() const;
  // The attention-core kernel chosen when the operator was built (Config::attention_kernel).
  const char* attention_kernel() const;
  // Bytes of the packed projections: weights in their kernel's layout, scales and biases.
  std::size_t weight_bytes() const;

  // Cross-attention: query [B, Lq, d], key and value [B, Lk, d] -> out [B, Lq, d].
  // Buffers may alias: query, key and value may be the same or overlapping memory (the result
  // is what separate copies would give), and out may lie over any of them (they are read
  // before out is first written). Refused with edgeattn::Error: out or attn_weights over the
  // lengths arrays, and attn_weights over out or the masks, which are still read while it is
  // written.
  void Forward(Context& context, ConstTensor query, ConstTensor key, ConstTensor value,
               Tensor out, const ForwardOptions& options = {}) const;
  // Self-attention: query = key = value = x.
  void Forward(Context& context, ConstTensor x, Tensor out,
               const ForwardOptions& options = {}) const;

  // One step of incremental decoding (causal self-attention): x [B, n, d] holds positions
  // [cache.length(), cache.length() + n) of each of the cache's B sequences. Their keys and
  // values are appended to the cache and each position attends to every cached position up
  // to itself, so out equals those rows of a causal Forward over the whole sequence (bit for bit
  // in fp32 without a window; once a windowed cache's ring wraps, its keys are summed in ring
  // order, within float rounding of Forward's, which int8 projections can turn into one step of
  // their output quantization). A step costs time linear in the cache length.
  void Decode(Context& context, ConstTensor x, KvCache& cache, Tensor out) const;
  // The same for a ragged batch: sequence b appends its first step_lengths[b] rows of x (each
  // at most x.length and at most the room its cache sequence has left) at its own cached
  // length; out's rows past step_lengths[b] are zeros. Refused: out over step_lengths.
  void Decode(Context& context, ConstTensor x, KvCache& cache, Tensor out,
              Span<const std::size_t> step_lengths) const;

  // Projects an encoder output [B, Lk, d] (B = memory.batch(), Lk <= memory.max_length()) with
  // this operator's key and value projections into memory, replacing what it held.
  // key_lengths: optional, one per item in [0, Lk], for a padded batch (frames past it are
  // ignored, as by Forward's key_lengths).
  void ProjectMemory(Context& context, ConstTensor encoder_output, CrossAttentionMemory& memory,
                     Span<const std::size_t> key_lengths = {}) const;
  // Cross-attention against a projected memory: query [B, n, d] -> out [B, n, d], equal to
  // Forward(query, E, E, out) over the encoder output E the memory was projected from (with its
  // key lengths); a sliding window does not apply, as encoder frames have no positions in the
  // decoder's sequence (a windowed operator's Forward would window them). Query item b reads
  // memory item memory_items[b] (one value per query item, each < memory.batch(): beams of one
  // utterance share its item); without memory_items, item b reads item b when
  // B == memory.batch(), or item 0 when the memory holds one item. out may alias query; refused:
  // out over memory_items.
  void DecodeCross(Context& context, ConstTensor query, const CrossAttentionMemory& memory,
                   Tensor out, Span<const std::size_t> memory_items = {}) const;

  struct Impl;

 private:
  friend class CrossAttentionMemory;  // made for one operator: it records which
  friend class KvCache;               // made for one layer: it records what makes its keys
  MultiheadAttention();
  static MultiheadAttention LoadLayer(const SafetensorsFile& file, const LoadOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_EDGEATTN_HPP_
