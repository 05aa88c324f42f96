#include "runtime/weight_names.h"

#include <algorithm>
#include <bitset>
#include <cctype>
#include <set>

#include "edgeattn/edgeattn.hpp"
#include "runtime/text_checks.h"

namespace edgeattn {
namespace {

constexpr unsigned kP = 1u << kPacked, kQb = 1u << kQ, kKb = 1u << kK, kVb = 1u << kV,
                   kOb = 1u << kOut;

constexpr const char* kTorchBiasRule =
    "a PyTorch layer has in_proj_bias and out_proj.bias (bias=True) or neither (bias=False)";

using NameSet = std::set<std::string>;

std::string Quoted(const std::string& name) { return "'" + Printable(name) + "'"; }

// At most 8 names, then how many more.
std::string NameList(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + Quoted(names[i]);
  if (names.size() > 8) out += " and " + std::to_string(names.size() - 8) + " more";
  return out;
}

std::string Where(const std::string& source, const std::string& prefix) {
  return "safetensors '" + source + "'" +
         (prefix.empty() ? std::string(", top level") : ", prefix " + Quoted(prefix)) + ": ";
}

// What to pass as the prefix instead, when the file holds layers elsewhere.
std::string LayersHint(const std::vector<std::string>& names) {
  const std::vector<FoundLayer> layers = FindLayerNames(names);
  if (layers.empty()) return "; the file holds no attention layer edgeattn knows";
  std::vector<std::string> shown;
  for (const FoundLayer& layer : layers) {
    shown.push_back(layer.prefix + "' (" + layer.scheme->family);
  }
  std::string out = "; attention layers in the file (pass one as the prefix): ";
  for (std::size_t i = 0; i < shown.size() && i < 6; ++i) {
    out += (i ? ", '" : "'") + Printable(shown[i]) + ")";
  }
  if (shown.size() > 6) out += " and " + std::to_string(shown.size() - 6) + " more";
  return out;
}

std::size_t PresentWeights(const NameScheme& scheme, const NameSet& scope) {
  std::size_t n = 0;
  for (const char* w : scheme.weights) n += w != nullptr && scope.count(w) != 0;
  return n;
}

bool CompleteWeights(const NameScheme& scheme, const NameSet& scope) {
  for (const char* w : scheme.weights) {
    if (w != nullptr && scope.count(w) == 0) return false;
  }
  return true;
}

// The one scheme whose weights are all under the prefix; errors name what is missing or clashes.
const NameScheme& ChooseScheme(const NameSet& scope, const std::vector<std::string>& names,
                               const std::string& where) {
  std::vector<const NameScheme*> complete;
  for (const NameScheme& s : NameSchemes()) {
    if (CompleteWeights(s, scope)) complete.push_back(&s);
  }
  if (complete.size() > 1) {
    std::string clash;
    for (const NameScheme* s : complete) {
      std::vector<std::string> first;
      for (const char* w : s->weights) {
        if (w != nullptr) first.push_back(w);
      }
      clash += (clash.empty() ? "" : " and ") + std::string(s->description) + " (" +
               NameList(first) + ")";
    }
    throw Error(where + "the tensors of two layouts are present: " + clash +
                "; keep one (e.g. packed in_proj_weight or separate projections, not both)");
  }
  if (complete.size() == 1) return *complete.front();
  const NameScheme* best = nullptr;
  for (const NameScheme& s : NameSchemes()) {
    if (PresentWeights(s, scope) > (best ? PresentWeights(*best, scope) : 0)) best = &s;
  }
  if (best == nullptr) throw Error(where + "no attention weights found" + LayersHint(names));
  std::vector<std::string> missing;
  for (const char* w : best->weights) {
    if (w != nullptr && scope.count(w) == 0) missing.push_back(w);
  }
  throw Error(where + "missing " + NameList(missing) + " of a " + best->description + " layer");
}

// The bias tensors under the prefix, as a mask over slots.
unsigned PresentBiases(const NameScheme& scheme, const NameSet& scope) {
  unsigned mask = 0;
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    const char* b = scheme.biases[slot];
    if (b != nullptr && scope.count(b) != 0) mask |= 1u << slot;
  }
  return mask;
}

std::vector<std::string> BiasNames(const NameScheme& scheme, unsigned mask,
                                   const std::string& prefix) {
  std::vector<std::string> out;
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if ((mask >> slot & 1u) != 0) out.push_back(prefix + scheme.biases[slot]);
  }
  return out;
}

// Strict: the biases form one of the family's sets (no_bias: none at all).
void CheckBiases(const NameScheme& scheme, unsigned present, const NameRules& rules,
                 const std::string& where) {
  if (rules.no_bias) {
    if (present == 0) return;
    throw Error(where + "no_bias (bias=False) expects no bias tensors, got " +
                NameList(BiasNames(scheme, present, rules.prefix)) +
                "; load non-strict to ignore them");
  }
  if (std::find(scheme.bias_sets.begin(), scheme.bias_sets.end(), present) !=
      scheme.bias_sets.end()) {
    return;
  }
  // The smallest allowed set holding every present bias names what is missing.
  unsigned want = 0;
  for (unsigned set : scheme.bias_sets) {
    if ((set & present) == present && (want == 0 || std::bitset<kSlots>(set).count() <
                                                        std::bitset<kSlots>(want).count())) {
      want = set;
    }
  }
  throw Error(where + "bias tensors " + NameList(BiasNames(scheme, present, rules.prefix)) +
              " without " + NameList(BiasNames(scheme, want & ~present, rules.prefix)) + ": " +
              scheme.bias_rule +
              "; load non-strict to take the missing biases as zeros, or use no_bias to drop "
              "all of them");
}

// Strict: every tensor under the prefix is used or ignored by the scheme.
void CheckUnexpected(const NameScheme& scheme, const NameSet& scope, const NameRules& rules,
                     const std::string& where) {
  NameSet known(scheme.ignored.begin(), scheme.ignored.end());
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (scheme.weights[slot] != nullptr) known.insert(scheme.weights[slot]);
    if (scheme.biases[slot] != nullptr) known.insert(scheme.biases[slot]);
  }
  std::vector<std::string> unexpected;
  for (const std::string& name : scope) {
    if (known.count(name) == 0) unexpected.push_back(rules.prefix + name);
  }
  if (unexpected.empty()) return;
  throw Error(where + "unexpected tensors " + NameList(unexpected) + " beside a " +
              scheme.description +
              " layer (a misspelled name, another layout's tensors, or parts of the layer "
              "edgeattn does not compute); load non-strict to ignore them");
}

// Compares prefixes with runs of digits taken as numbers: layers.2. before layers.10.
bool NaturalLess(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      std::size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      const std::size_t za = na.find_first_not_of('0'), zb = nb.find_first_not_of('0');
      const std::string sa = za == std::string::npos ? "" : na.substr(za);
      const std::string sb = zb == std::string::npos ? "" : nb.substr(zb);
      if (sa.size() != sb.size()) return sa.size() < sb.size();
      if (sa != sb) return sa < sb;
      i = ei, j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

const std::vector<NameScheme>& NameSchemes() {
  static const std::vector<NameScheme> schemes = {
      {"torch",
       "PyTorch nn.MultiheadAttention",
       {"in_proj_weight", nullptr, nullptr, nullptr, "out_proj.weight"},
       {"in_proj_bias", nullptr, nullptr, nullptr, "out_proj.bias"},
       {0, kP | kOb},
       kTorchBiasRule,
       {}},
      {"torch",
       "PyTorch nn.MultiheadAttention with separate projections (kdim/vdim)",
       {nullptr, "q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight"},
       {"in_proj_bias", nullptr, nullptr, nullptr, "out_proj.bias"},
       {0, kP | kOb},
       kTorchBiasRule,
       {}},
      {"bert",
       "Hugging Face BERT/MiniLM attention block",
       {nullptr, "self.query.weight", "self.key.weight", "self.value.weight",
        "output.dense.weight"},
       {nullptr, "self.query.bias", "self.key.bias", "self.value.bias", "output.dense.bias"},
       {0, kQb | kKb | kVb | kOb},
       "a BERT attention block has biases on query, key, value and output.dense, or none",
       {"output.LayerNorm.weight", "output.LayerNorm.bias", "output.LayerNorm.gamma",
        "output.LayerNorm.beta"}},
      {"whisper",
       "Hugging Face Whisper/BART attention",
       {nullptr, "q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"},
       {nullptr, "q_proj.bias", "k_proj.bias", "v_proj.bias", "out_proj.bias"},
       {0, kQb | kKb | kVb | kOb, kQb | kVb | kOb},
       "Whisper/BART attention has biases on q_proj, v_proj and out_proj, with or without "
       "k_proj (Whisper has none there), or none",
       {}},
      {"llama",
       "Hugging Face Llama/Mistral/Qwen2/Gemma attention",
       {nullptr, "q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"},
       {nullptr, "q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"},
       {0, kQb | kKb | kVb, kQb | kKb | kVb | kOb},
       "Llama-style attention has no biases (Llama, Mistral, Gemma), biases on q_proj, k_proj "
       "and v_proj (Qwen2), or on all four",
       // Not projections: rotary frequencies (edgeattn computes its own), and the attention
       // step's learned tensors, which weight_loading.cc reads (sinks, Q/K norm weights).
       {"rotary_emb.inv_freq", "sinks", "q_norm.weight", "k_norm.weight"}},
  };
  return schemes;
}

std::string NormalizePrefix(const std::string& prefix) {
  return prefix.empty() || prefix.back() == '.' ? prefix : prefix + ".";
}

MatchedNames MatchLayerNames(const std::vector<std::string>& names, const NameRules& rules,
                             const std::string& source) {
  const std::string where = Where(source, rules.prefix);
  NameSet scope;
  for (const std::string& name : names) {
    if (name.compare(0, rules.prefix.size(), rules.prefix) == 0) {
      scope.insert(name.substr(rules.prefix.size()));
    }
  }
  if (scope.empty()) throw Error(where + "no tensor name starts with the prefix" + LayersHint(names));
  const NameScheme& scheme = ChooseScheme(scope, names, where);
  if (rules.strict) CheckUnexpected(scheme, scope, rules, where);
  const unsigned present = PresentBiases(scheme, scope);
  if (rules.strict) CheckBiases(scheme, present, rules, where);
  MatchedNames matched;
  matched.scheme = &scheme;
  for (std::size_t slot = 0; slot < kSlots; ++slot) {
    if (scheme.weights[slot] != nullptr) matched.weights[slot] = rules.prefix + scheme.weights[slot];
    if (!rules.no_bias && (present >> slot & 1u) != 0) {
      matched.biases[slot] = rules.prefix + scheme.biases[slot];
    }
  }
  return matched;
}

std::vector<FoundLayer> FindLayerNames(const std::vector<std::string>& names) {
  const NameSet all(names.begin(), names.end());
  std::vector<FoundLayer> found;
  for (const std::string& name : names) {
    for (const NameScheme& scheme : NameSchemes()) {
      const std::string first = scheme.weights[kPacked] ? scheme.weights[kPacked] : scheme.weights[kQ];
      if (name.size() < first.size() || name.compare(name.size() - first.size(), first.size(), first) != 0) {
        continue;
      }
      const std::string prefix = name.substr(0, name.size() - first.size());
      if (!prefix.empty() && prefix.back() != '.') continue;
      if (all.count(prefix + scheme.weights[kOut]) != 0) found.push_back({prefix, &scheme});
    }
  }
  std::sort(found.begin(), found.end(), [](const FoundLayer& a, const FoundLayer& b) {
    return NaturalLess(a.prefix, b.prefix);
  });
  return found;
}

}  // namespace edgeattn
