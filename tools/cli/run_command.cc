// edgeattn run: attention output for inputs in .npy files, weights in a safetensors file.
#include <memory>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tools/cli/commands.h"

namespace edgeattn {
namespace cli {
namespace {

struct RunOptions {
  std::string weights, input, key, value, output, precision = "auto";
  std::size_t heads = 0;
  std::size_t threads = 0;
  std::size_t int8_block = kDefaultInt8Block;
};

// An [L, d] or [B, L, d] array as a tensor view.
ConstTensor AsTensor(const NpyArray& a, const std::string& name) {
  if (a.shape.size() == 2) return {a.data.data(), 1, a.shape[0], a.shape[1]};
  if (a.shape.size() == 3) return {a.data.data(), a.shape[0], a.shape[1], a.shape[2]};
  throw Error(name + ": expected shape [L, d] or [B, L, d], got rank " +
              std::to_string(a.shape.size()));
}

int Run(const RunOptions& o) {
  if (o.key.empty() != o.value.empty()) {
    throw Error("--key and --value: expected both or neither, got only " +
                std::string(o.key.empty() ? "--value" : "--key"));
  }
  const Precision precision = o.precision == "int8" ? Precision::kInt8 : Precision::kFp32;
  const MultiheadAttention mha =
      MultiheadAttention::Load(o.weights, o.heads, precision, o.int8_block);
  if (o.precision == "fp32" && mha.config().precision == Precision::kInt8) {
    throw Error("--precision fp32: '" + o.weights +
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
  Context context(o.threads);
  mha.Forward(context, query, key, value,
              {y.data.data(), query.batch, query.length, mha.config().d_model});
  WriteNpy(o.output, y);
  return 0;
}

}  // namespace

Command AddRunCommand(CLI::App& parent) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* app = parent.add_subcommand(
      "run", "Compute attention for inputs in .npy files (self-attention unless --key/--value)");
  app->add_option("--weights", o->weights,
                  "safetensors file with in_proj_weight, in_proj_bias, out_proj.weight, "
                  "out_proj.bias (as PyTorch's state_dict)")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--heads", o->heads,
                  "Number of attention heads (int8 files written by 'edgeattn quantize' record "
                  "it; required for float files)");
  app->add_option("--input", o->input, "Query .npy, float32 [L, d] or [B, L, d]")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--key", o->key, "Key .npy for cross-attention (with --value)")
      ->check(CLI::ExistingFile);
  app->add_option("--value", o->value, "Value .npy for cross-attention (with --key)")
      ->check(CLI::ExistingFile);
  app->add_option("--output", o->output, "Output .npy, same rank as --input")->required();
  app->add_option("--precision", o->precision,
                  "fp32, or int8 (quantizes a float file's projections on the fly); auto: int8 "
                  "for int8 files, fp32 otherwise")
      ->check(CLI::IsMember({"auto", "fp32", "int8"}))
      ->capture_default_str();
  app->add_option("--int8-block", o->int8_block,
                  "int8: activation values per quantization scale (multiple of 4)")
      ->capture_default_str();
  app->add_option("--threads", o->threads, "Worker threads (0: one per hardware thread)")
      ->capture_default_str();
  return {app, [o] { return Run(*o); }};
}

}  // namespace cli
}  // namespace edgeattn
