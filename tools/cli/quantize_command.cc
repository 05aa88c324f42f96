// edgeattn quantize: writes a float model's projections as int8 weights with their scales.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "runtime/file_bytes.h"
#include "tools/cli/commands.h"
#include "tools/cli/layer_options.h"
#include "tools/cli/math_options.h"
#include "tools/cli/whole_number.h"

namespace edgeattn {
namespace cli {
namespace {

struct QuantizeOptions {
  std::string weights, output;
  std::size_t heads = 0;
  std::size_t int8_block = kDefaultInt8Block;
  LayerFlags layer;
  MathFlags rotary;  // only the rotary flags are registered
};

int Quantize(const QuantizeOptions& o) {
  if (o.heads == 0) throw Error("--heads: expected the number of attention heads, got 0");
  CheckOutputIsNotInput(CheckOutputPath(o.output, "--output"), "--output", o.output, "--weights",
                        o.weights);
  LoadOptions load = o.layer.ToLoadOptions(o.heads, Precision::kInt8, o.int8_block);
  load.math = o.rotary.ToMath();
  const MultiheadAttention mha = LoadLayer(o.weights, load);
  mha.SaveInt8(o.output);
  std::printf("wrote %s: int8 weights for d_model %zu, %zu heads, activation block %zu\n",
              o.output.c_str(), mha.config().d_model, mha.config().num_heads,
              mha.config().int8_block);
  return 0;
}

}  // namespace

Command AddQuantizeCommand(CLI::App& parent) {
  auto o = std::make_shared<QuantizeOptions>();
  CLI::App* app = parent.add_subcommand(
      "quantize", "Write a float safetensors model's projections as int8 weights and scales");
  app->add_option("--weights", o->weights, "Float safetensors file (names as for 'edgeattn run --weights')")
      ->required()
      ->check(CLI::ExistingFile);
  app->add_option("--heads", o->heads, "Number of attention heads")
      ->check(CheckWholeNumber)
      ->required();
  AddLayerFlags(app, &o->layer);
  AddRotaryFlags(app, &o->rotary);
  app->add_option("--output", o->output, "int8 safetensors file to write")->required();
  app->add_option("--int8-block", o->int8_block,
                  "Activation values per quantization scale at run time (multiple of 4)")
      ->check(CheckWholeNumber)
      ->capture_default_str();
  return {app, [o] { return Quantize(*o); }};
}

}  // namespace cli
}  // namespace edgeattn
