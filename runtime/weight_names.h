// The tensor names of the attention layers edgeattn loads, one naming scheme per model family,
// and the strict rules that match a checkpoint's names against them, in the manner of PyTorch's
// load_state_dict(strict=True). Only names are looked at here; shapes and dtypes are checked by
// the loader.
#ifndef EDGEATTN_RUNTIME_WEIGHT_NAMES_H_
#define EDGEATTN_RUNTIME_WEIGHT_NAMES_H_

#include <cstddef>
#include <string>
#include <vector>

namespace edgeattn {

// Slots of a layer's tensors: the packed input projection (in_proj), or separate q, k and v,
// and the output projection.
enum Slot : std::size_t { kPacked = 0, kQ = 1, kK = 2, kV = 3, kOut = 4, kSlots = 5 };

struct NameScheme {
  const char* family;       // "torch", "bert", "whisper", "llama"
  const char* description;  // the models that name their tensors this way
  const char* weights[kSlots];  // null: the scheme has no such tensor
  const char* biases[kSlots];
  // The bias sets the family's models have, as bit masks over slots (1 << slot); 0 is none.
  std::vector<unsigned> bias_sets;
  const char* bias_rule;  // the same in words, for error messages
  // Tensors of the family's attention block that are not part of the attention operation.
  std::vector<const char*> ignored;
};

// Every scheme edgeattn knows, in the order they are tried.
const std::vector<NameScheme>& NameSchemes();

struct NameRules {
  std::string prefix;  // with its final '.'; empty: the top level
  bool strict = true;
  bool no_bias = false;
};

// One layer's tensors as found: full names (prefix included); "" where the layer has none.
struct MatchedNames {
  const NameScheme* scheme = nullptr;
  std::string weights[kSlots];
  std::string biases[kSlots];
};

// Finds the layer under rules.prefix among `names` (every tensor of the file) and applies the
// rules: one scheme's weights complete, no tensor under the prefix that the scheme neither
// uses nor ignores (strict), biases a set the family has (strict) or none (no_bias).
// Throws edgeattn::Error naming `source` and the tensors at fault.
MatchedNames MatchLayerNames(const std::vector<std::string>& names, const NameRules& rules,
                             const std::string& source);

struct FoundLayer {
  std::string prefix;
  const NameScheme* scheme;
};

// Every place in `names` where a scheme's first input weight and its output weight sit under
// one prefix, ordered by prefix with numbers compared as numbers (layers.2 before layers.10).
std::vector<FoundLayer> FindLayerNames(const std::vector<std::string>& names);

// The prefix as the rules use it: a final '.' is added to a non-empty prefix that lacks one.
std::string NormalizePrefix(const std::string& prefix);

}  // namespace edgeattn

#endif  // EDGEATTN_RUNTIME_WEIGHT_NAMES_H_
