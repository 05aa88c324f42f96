// edgeattn run: attention output for inputs in .npy files, weights in a safetensors file.
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "runtime/file_bytes.h"
#include "runtime/text_checks.h"
#include "runtime/thread_count.h"
#include "tools/cli/commands.h"
#include "tools/cli/layer_options.h"
#include "tools/cli/math_options.h"
#include "tools/cli/whole_number.h"

namespace edgeattn {
namespace cli {
namespace {

struct RunOptions {
  std::string weights, input, key, value, output, precision, kv_format = "fp32";
  std::string key_padding_mask, attn_mask, weights_output;
  bool causal = false;
  bool per_head_weights = false;
  std::size_t heads = 0;
  std::size_t threads = 0;
  std::size_t int8_block = kDefaultInt8Block;
  LayerFlags layer;
  MathFlags math;
};

// An [L, d] or [B, L, d] float32 array as a tensor view.
ConstTensor AsTensor(const NpyArray& a, const std::string& name) {
  if (a.dtype != NpyDType::kFloat32) {
    throw Error(name + ": expected float32 [L, d] or [B, L, d], got a bool array (bool .npy "
                "files are masks: --key-padding-mask, --attn-mask)");
  }
  if (a.shape.size() == 2) return {a.data.data(), 1, a.shape[0], a.shape[1]};
  if (a.shape.size() == 3) return {a.data.data(), a.shape[0], a.shape[1], a.shape[2]};
  throw Error(name + ": expected shape [L, d] or [B, L, d], got rank " +
              std::to_string(a.shape.size()));
}

// The masks and weights of the run, read from and written to .npy files.
struct MaskFiles {
  std::unique_ptr<bool[]> key_padding;
  NpyArray attn_mask;
  NpyArray weights;
};

ForwardOptions ReadMasks(const RunOptions& o, const ConstTensor& query, const ConstTensor& key,
                         std::size_t heads, bool batched, MaskFiles* files) {
  ForwardOptions options;
  options.is_causal = o.causal;
  if (!o.key_padding_mask.empty()) {
    const NpyArray m = ReadNpy(o.key_padding_mask);
    const std::vector<std::size_t> want = batched ? std::vector<std::size_t>{key.batch, key.length}
                                                  : std::vector<std::size_t>{key.length};
    if (m.dtype != NpyDType::kBool || m.shape != want) {
      throw Error("--key-padding-mask " + o.key_padding_mask + ": expected bool " +
                  ShapeText(want) + " (true = ignore the key), got " +
                  (m.dtype == NpyDType::kBool ? "bool " : "float32 ") + ShapeText(m.shape));
    }
    files->key_padding = NpyBools(m);
    options.key_padding_mask = {files->key_padding.get(), m.data.size()};
  }
  if (!o.attn_mask.empty()) {
    NpyArray& m = files->attn_mask;
    m = ReadNpy(o.attn_mask);
    const std::vector<std::size_t> shared{query.length, key.length};
    const std::vector<std::size_t> per_head{query.batch * heads, query.length, key.length};
    if (m.shape != shared && m.shape != per_head) {
      throw Error("--attn-mask " + o.attn_mask + ": expected " + ShapeText(shared) + " or " +
                  ShapeText(per_head) + " [batch * heads, Lq, Lk], got " + ShapeText(m.shape));
    }
    BoolMaskToAdditive(&m);
    options.attn_mask = {m.data.data(), m.data.size()};
  }
  if (!o.weights_output.empty()) {
    NpyArray& w = files->weights;
    if (batched) w.shape.push_back(query.batch);
    if (o.per_head_weights) w.shape.push_back(heads);
    w.shape.push_back(query.length);
    w.shape.push_back(key.length);
    w.data.resize(query.batch * (o.per_head_weights ? heads : 1) * query.length * key.length);
    options.need_weights =
        o.per_head_weights ? AttentionWeights::kPerHead : AttentionWeights::kAveraged;
    options.attn_weights = {w.data.data(), w.data.size()};
  }
  return options;
}

// Every output can be written, no two name the same file, and none names an input: checked
// before the run, so that a run that cannot deliver everything writes nothing and reads what
// it was given.
void CheckOutputs(const RunOptions& o) {
  const std::string output = CheckOutputPath(o.output, "--output");
  const std::string weights =
      o.weights_output.empty() ? "" : CheckOutputPath(o.weights_output, "--weights-output");
  if (!weights.empty() && SameOutput(output, weights)) {
    throw Error("--weights-output '" + o.weights_output + "': names the same file as --output '" +
                o.output + "'");
  }
  const std::pair<const char*, const std::string*> inputs[] = {
      {"--weights", &o.weights},
      {"--input", &o.input},
      {"--key", &o.key},
      {"--value", &o.value},
      {"--key-padding-mask", &o.key_padding_mask},
      {"--attn-mask", &o.attn_mask}};
  for (const auto& [flag, path] : inputs) {
    if (path->empty()) continue;
    CheckOutputIsNotInput(output, "--output", o.output, flag, *path);
    if (!weights.empty()) {
      CheckOutputIsNotInput(weights, "--weights-output", o.weights_output, flag, *path);
    }
  }
}

int Run(const RunOptions& o) {
  // The library's own rule, named as the option (Context's error says "Context: threads").
  CheckThreadCount("--threads", o.threads);
  if (o.key.empty() != o.value.empty()) {
    throw Error("--key and --value: expected both or neither, got only " +
                std::string(o.key.empty() ? "--value" : "--key"));
  }
  CheckOutputs(o);
  // Unset: the file's own format (int8 files run int8, float files fp32).
  const Precision precision = o.precision.empty() ? Precision::kFp32 : PrecisionNamed(o.precision);
  LoadOptions load = o.layer.ToLoadOptions(o.heads, precision, o.int8_block);
  load.math = o.math.ToMath();
  load.kv_format = KvFormatNamed(o.kv_format);
  const MultiheadAttention mha = LoadLayer(o.weights, load);
  if (!o.precision.empty() && precision != Precision::kAuto && precision != Precision::kInt8 &&
      mha.config().precision == Precision::kInt8) {
    throw Error("--precision " + o.precision + ": '" + o.weights +
                "' holds int8 weights (written by edgeattn quantize); use the float file");
  }
  const NpyArray x = ReadNpy(o.input);
  const ConstTensor query = AsTensor(x, "--input " + o.input);
  NpyArray k, v;
  ConstTensor key = query, value = query;
  if (!o.key.empty()) {
    k = ReadNpy(o.key);
    v = ReadNpy(o.value);
    if (k.shape.size() != x.shape.size() || v.shape.size() != x.shape.size()) {
      throw Error("--key and --value: expected the same rank as --input (" +
                  std::to_string(x.shape.size()) + ")");
    }
    key = AsTensor(k, "--key " + o.key);
    value = AsTensor(v, "--value " + o.value);
  }
  NpyArray y;
  y.shape = x.shape;
  y.shape.back() = mha.config().d_model;
  y.data.resize(query.batch * query.length * mha.config().d_model);
  MaskFiles files;
  const ForwardOptions options =
      ReadMasks(o, query, key, mha.config().num_heads, x.shape.size() == 3, &files);
  Context context(o.threads);
  mha.Forward(context, query, key, value,
              {y.data.data(), query.batch, query.length, mha.config().d_model}, options);
  // Both files are written in full before either replaces anything.
  std::vector<StagedFile> staged;
  staged.emplace_back(o.output, SerializeNpy(y));
  if (!o.weights_output.empty()) staged.emplace_back(o.weights_output, SerializeNpy(files.weights));
  for (StagedFile& file : staged) file.Commit();
  return 0;
}

}  // namespace

Command AddRunCommand(CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand(
      "run", "Compute attention for inputs in .npy files (self-attention unless --key/--value)");
  app->add_option("--weights", o->weights,
                  "safetensors file: an nn.MultiheadAttention state_dict (in_proj_weight, "
                  "in_proj_bias, out_proj.weight, out_proj.bias), a Hugging Face BERT, Whisper "
                  "or Llama-style layer, a whole checkpoint with --prefix, or an int8 file from "
                  "'edgeattn quantize'")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--heads", o->heads,
                  "Number of attention heads (int8 files written by 'edgeattn quantize' record "
                  "it; required for float files)")
      ->check(CheckWholeNumber);
  AddLayerFlags(app, &o->layer);
  AddMathFlags(app, &o->math);
  app->add_option("--input", o->input, "Query .npy, float32 [L, d] or [B, L, d]")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--key", o->key, "Key .npy for cross-attention (with --value)")
      ->check(CLI::ExistingFile);
  app->add_option("--value", o->value, "Value .npy for cross-attention (with --key)")
      ->check(CLI::ExistingFile);
  app->add_option("--output", o->output, "Output .npy, same rank as --input")->required();
  app->add_flag("--causal", o->causal,
                "Causal mask: query i attends keys j <= i (upper triangle never computed)");
  app->add_option("--key-padding-mask", o->key_padding_mask,
                  "bool .npy [Lk] or [B, Lk]: true = ignore that key (PyTorch's "
                  "key_padding_mask)")
      ->check(CLI::ExistingFile);
  app->add_option("--attn-mask", o->attn_mask,
                  ".npy [Lq, Lk] or [B * heads, Lq, Lk]: float32 added to the scores, or bool "
                  "with true = not allowed (PyTorch's attn_mask)")
      ->check(CLI::ExistingFile);
  app->add_option("--weights-output", o->weights_output,
                  "Also write the attention weights to this .npy: [B, Lq, Lk] averaged over "
                  "heads, or [B, heads, Lq, Lk] with --per-head-weights (no B for [L, d] input)")
      ->check(NotEmpty("a file name"));
  app->add_flag("--per-head-weights", o->per_head_weights,
                "--weights-output per head instead of averaged");
  app->add_option("--precision", o->precision,
                  "Projection weights: fp32; int8 (quantizes a float file's projections on the "
                  "fly); bf16 or fp16 (half the memory; F16/BF16 files are used as they are); "
                  "auto: this CPU's fastest within the accuracy bounds ('edgeattn info' says "
                  "which). Default: int8 for int8 files, fp32 otherwise")
      ->check(CLI::IsMember(PrecisionNames()));
  app->add_option("--kv-format", o->kv_format,
                  "How the attention core stores keys and values: fp32; bf16 or fp16 (half the "
                  "bytes; fp16 refuses keys or values past 65504); int8 (a quarter); auto: this "
                  "CPU's fastest within the accuracy bounds")
      ->check(CLI::IsMember(KvFormatNames()))
      ->capture_default_str();
  app->add_option("--int8-block", o->int8_block,
                  "int8: activation values per quantization scale (multiple of 4)")
      ->check(CheckWholeNumber)
      ->capture_default_str();
  app->add_option("--threads", o->threads, "Worker threads (0: one per hardware thread)")
      ->check(CheckWholeNumber)
      ->capture_default_str();
  return {app, [o] { return Run(*o); }};
}

}  // namespace cli
}  // namespace edgeattn
