// edgeattn: multi-head attention for CPUs, as PyTorch's
// nn.MultiheadAttention(d_model, num_heads, bias=True, batch_first=True) computes it in inference.
//
//   Q = Xq Wq^T + bq,  K = Xk Wk^T + bk,  V = Xv Wv^T + bv
//   head_i = softmax(Q_i K_i^T / sqrt(head_dim)) V_i
//   Y = Concat(head_1 .. head_h) Wo^T + bo
//
// All tensors are row-major float32. Errors are thrown as edgeattn::Error with a message that
// names the argument, what was expected and what came.
#ifndef EDGEATTN_EDGEATTN_HPP_
#define EDGEATTN_EDGEATTN_HPP_

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "edgeattn/export.hpp"
#include "edgeattn/executor.hpp"

namespace edgeattn {

class EDGEATTN_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Largest d_model, sequence length and batch accepted: far beyond any edge model, small
// enough that no buffer size computed from them can overflow.
inline constexpr std::size_t kMaxModelDim = 16384;
inline constexpr std::size_t kMaxSequenceLength = 1 << 20;
inline constexpr std::size_t kMaxBatch = 1 << 16;

// fp32: every step in float. int8: the four projections run on int8 weights (symmetric, one
// scale per output channel, quantized once when the operator is built) and int8 activations
// (quantized at run time with one scale per row and per block of int8_block values); the
// attention core (Q K^T, softmax, P V) stays float.
enum class Precision { kFp32, kInt8 };

// Values per activation scale in int8 mode: a multiple of 4. Smaller blocks follow outlier
// channels more closely; larger ones are faster. See README, "int8".
inline constexpr std::size_t kDefaultInt8Block = 64;

struct Config {
  std::size_t d_model = 0;
  std::size_t num_heads = 0;
  Precision precision = Precision::kFp32;
  std::size_t int8_block = kDefaultInt8Block;
};

// A read-only float array and its element count (checked against the shape it must have).
struct FloatSpan {
  const float* data = nullptr;
  std::size_t size = 0;
};

// Weights named as in PyTorch's state_dict. A null bias (data == nullptr) means no bias, as
// with bias=False.
struct WeightsView {
  FloatSpan in_proj_weight;   // [3 * d_model, d_model]: rows of Wq, then Wk, then Wv
  FloatSpan in_proj_bias;     // [3 * d_model]
  FloatSpan out_proj_weight;  // [d_model, d_model]  (state_dict name: out_proj.weight)
  FloatSpan out_proj_bias;    // [d_model]           (state_dict name: out_proj.bias)
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

// Where a forward call runs and the scratch memory it reuses. One context per calling thread;
// a built operator may be shared by any number of contexts at once.
class EDGEATTN_API Context {
 public:
  // threads = 0: one per hardware thread. Runs on a oneTBB arena of that size.
  explicit Context(std::size_t threads = 0);
  // Runs on an executor the application owns; it must outlive the context.
  explicit Context(Executor& executor);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  std::size_t threads() const;
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
  // Loads a safetensors file as written by safetensors.torch.save_file(mha.state_dict(), path),
  // or an int8 file written by SaveInt8 (which runs in int8 whatever `precision` says).
  static MultiheadAttention Load(const std::string& path, std::size_t num_heads,
                                 Precision precision = Precision::kFp32,
                                 std::size_t int8_block = kDefaultInt8Block);

  // int8 operators only: writes the quantized weights (I8 tensors and F32 scales; names and
  // metadata in README, "int8 weight files"), which Load reads back bit for bit.
  void SaveInt8(const std::string& path) const;

  MultiheadAttention(MultiheadAttention&&) noexcept;
  MultiheadAttention& operator=(MultiheadAttention&&) noexcept;
  ~MultiheadAttention();

  const Config& config() const;

  // Cross-attention: query [B, Lq, d], key and value [B, Lk, d] -> out [B, Lq, d].
  void Forward(Context& context, ConstTensor query, ConstTensor key, ConstTensor value,
               Tensor out) const;
  // Self-attention: query = key = value = x.
  void Forward(Context& context, ConstTensor x, Tensor out) const;

  struct Impl;

 private:
  MultiheadAttention();
  std::unique_ptr<Impl> impl_;
};

}  // namespace edgeattn

#endif  // EDGEATTN_EDGEATTN_HPP_
