// Loading one attention layer: the naming schemes of PyTorch, BERT, Whisper and Llama-style
// checkpoints, prefixes into whole-model files, strict names as PyTorch's
// load_state_dict(strict=True) with its opt-outs, loads from memory, and what info lists.
// Each loaded operator is compared bit for bit with one built from the same arrays.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "edgeattn/checkpoint.hpp"
#include "edgeattn/edgeattn.hpp"
#include "edgeattn/safetensors.hpp"
#include "simd/half_float.h"
#include "tests/runtime/test_model.h"
#include "tests/scratch_dir.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::GqaModel;

std::vector<float> Forward1(const MultiheadAttention& mha, std::size_t seq = 5) {
  const std::size_t d = mha.config().d_model;
  const std::vector<float> x = testing_support::RandomNormal(seq * d, 99);
  std::vector<float> y(x.size());
  Context context(1);
  mha.Forward(context, {x.data(), 1, seq, d}, {y.data(), 1, seq, d});
  return y;
}

// Tensors by name, written as one safetensors file.
struct Checkpoint {
  SafetensorsWriter writer;

  void Add(const std::string& name, const std::vector<float>& v,
           std::vector<std::size_t> shape = {}) {
    if (shape.empty()) shape = {v.size()};
    writer.Add(name, DType::kF32, shape, v.data());
  }
  std::vector<std::uint8_t> bytes() const { return writer.Serialize(); }
};

// The separate projections of a model under one scheme's names.
void AddSeparate(Checkpoint* c, const GqaModel& m, const std::string& prefix,
                 const char* const names[4], const char* const biases[4]) {
  const std::size_t d = m.config.d_model;
  const std::size_t kvd = m.wk.size() / d;
  const std::vector<float>* w[4] = {&m.wq, &m.wk, &m.wv, &m.wo};
  const std::vector<float>* b[4] = {&m.bq, &m.bk, &m.bv, &m.bo};
  const std::size_t rows[4] = {d, kvd, kvd, d};
  for (int i = 0; i < 4; ++i) {
    c->Add(prefix + names[i], *w[i], {rows[i], d});
    if (biases[i] != nullptr) c->Add(prefix + biases[i], *b[i]);
  }
}

constexpr const char* kBert[4] = {"self.query.weight", "self.key.weight", "self.value.weight",
                                  "output.dense.weight"};
constexpr const char* kBertBias[4] = {"self.query.bias", "self.key.bias", "self.value.bias",
                                      "output.dense.bias"};
constexpr const char* kWhisper[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight",
                                     "out_proj.weight"};
constexpr const char* kWhisperBias[4] = {"q_proj.bias", nullptr, "v_proj.bias", "out_proj.bias"};
constexpr const char* kBartBias[4] = {"q_proj.bias", "k_proj.bias", "v_proj.bias",
                                      "out_proj.bias"};
constexpr const char* kLlama[4] = {"q_proj.weight", "k_proj.weight", "v_proj.weight",
                                   "o_proj.weight"};
constexpr const char* kNoBias[4] = {nullptr, nullptr, nullptr, nullptr};
constexpr const char* kQwenBias[4] = {"q_proj.bias", "k_proj.bias", "v_proj.bias", nullptr};

// The model's view with only the biases a scheme has.
WeightsView ViewWith(const GqaModel& m, const char* const biases[4]) {
  WeightsView v = m.view();
  if (biases[0] == nullptr) v.q_proj_bias = {};
  if (biases[1] == nullptr) v.k_proj_bias = {};
  if (biases[2] == nullptr) v.v_proj_bias = {};
  if (biases[3] == nullptr) v.out_proj_bias = {};
  return v;
}

LoadOptions Options(std::size_t heads, const std::string& prefix = "") {
  LoadOptions o;
  o.num_heads = heads;
  o.prefix = prefix;
  return o;
}

MultiheadAttention FromBytes(const std::vector<std::uint8_t>& bytes, const LoadOptions& o) {
  return MultiheadAttention::LoadFromMemory(bytes.data(), bytes.size(), o);
}

void ExpectLoadError(const std::vector<std::uint8_t>& bytes, const LoadOptions& o,
                     const std::vector<std::string>& fragments) {
  try {
    FromBytes(bytes, o);
    ADD_FAILURE() << "loaded; expected '" << fragments.front() << "'";
  } catch (const Error& e) {
    for (const std::string& f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what() << "\nwant: " << f;
    }
  }
}

// nn.MultiheadAttention's own names: packed projections, both biases or neither.
struct TorchLayer {
  GqaModel m{16, 4, 4, 3};
  std::vector<float> in_w, in_b;
  TorchLayer() {
    in_w = m.wq;
    in_w.insert(in_w.end(), m.wk.begin(), m.wk.end());
    in_w.insert(in_w.end(), m.wv.begin(), m.wv.end());
    in_b = m.bq;
    in_b.insert(in_b.end(), m.bk.begin(), m.bk.end());
    in_b.insert(in_b.end(), m.bv.begin(), m.bv.end());
  }
  Checkpoint File(bool in_bias, bool out_bias, const std::string& prefix = "") const {
    Checkpoint c;
    c.Add(prefix + "in_proj_weight", in_w, {48, 16});
    c.Add(prefix + "out_proj.weight", m.wo, {16, 16});
    if (in_bias) c.Add(prefix + "in_proj_bias", in_b);
    if (out_bias) c.Add(prefix + "out_proj.bias", m.bo);
    return c;
  }
  MultiheadAttention Expected(bool biases) const {
    WeightsView v;
    v.in_proj_weight = {in_w.data(), in_w.size()};
    v.out_proj_weight = {m.wo.data(), m.wo.size()};
    if (biases) {
      v.in_proj_bias = {in_b.data(), in_b.size()};
      v.out_proj_bias = {m.bo.data(), m.bo.size()};
    }
    return MultiheadAttention(m.config, v);
  }
};

TEST(WeightLoadingTest, StrictTorchNames) {
  const TorchLayer t;
  EXPECT_EQ(Forward1(FromBytes(t.File(true, true).bytes(), Options(4))),
            Forward1(t.Expected(true)));
  EXPECT_EQ(Forward1(FromBytes(t.File(false, false).bytes(), Options(4))),
            Forward1(t.Expected(false)));  // bias=False
  // Half a bias set: the missing one is named, and so is the way out.
  ExpectLoadError(t.File(false, true).bytes(), Options(4),
                  {"bias tensors 'out_proj.bias' without 'in_proj_bias'", "non-strict"});
  ExpectLoadError(t.File(true, false).bytes(), Options(4),
                  {"'in_proj_bias' without 'out_proj.bias'"});
  // A misspelled bias, an unknown tensor, torch's add_bias_kv extras.
  for (const char* extra : {"out_proj.bais", "in_proj_weight_", "bias_k"}) {
    Checkpoint c = t.File(true, false);
    c.Add(extra, t.m.bo);
    ExpectLoadError(c.bytes(), Options(4), {"unexpected tensors '" + std::string(extra) + "'"});
  }
  // Packed and separate projections both present.
  Checkpoint both = t.File(true, true);
  both.Add("q_proj_weight", t.m.wq, {16, 16});
  both.Add("k_proj_weight", t.m.wk, {16, 16});
  both.Add("v_proj_weight", t.m.wv, {16, 16});
  ExpectLoadError(both.bytes(), Options(4), {"the tensors of two layouts are present"});
  Checkpoint some = t.File(true, true);
  some.Add("q_proj_weight", t.m.wq, {16, 16});
  ExpectLoadError(some.bytes(), Options(4), {"unexpected tensors 'q_proj_weight'"});
}

TEST(WeightLoadingTest, NonStrictAndNoBias) {
  const TorchLayer t;
  LoadOptions lenient = Options(4);
  lenient.strict = false;
  // A missing bias is zero, as PyTorch initialises it.
  std::vector<float> zeros(48, 0.0f);
  WeightsView v;
  v.in_proj_weight = {t.in_w.data(), t.in_w.size()};
  v.in_proj_bias = {zeros.data(), zeros.size()};
  v.out_proj_weight = {t.m.wo.data(), t.m.wo.size()};
  v.out_proj_bias = {t.m.bo.data(), t.m.bo.size()};
  Checkpoint c = t.File(false, true);
  c.Add("norm1.weight", t.m.bo);  // ignored when non-strict
  EXPECT_EQ(Forward1(FromBytes(c.bytes(), lenient)),
            Forward1(MultiheadAttention(t.m.config, v)));
  // no_bias: strict, biases in the file are errors; non-strict, they are dropped.
  LoadOptions no_bias = Options(4);
  no_bias.no_bias = true;
  ExpectLoadError(t.File(true, true).bytes(), no_bias,
                  {"no_bias (bias=False) expects no bias tensors, got 'in_proj_bias', "
                   "'out_proj.bias'"});
  EXPECT_EQ(Forward1(FromBytes(t.File(false, false).bytes(), no_bias)),
            Forward1(t.Expected(false)));
  no_bias.strict = false;
  EXPECT_EQ(Forward1(FromBytes(t.File(true, true).bytes(), no_bias)),
            Forward1(t.Expected(false)));
  // Missing weights stay errors.
  Checkpoint no_out;
  no_out.Add("in_proj_weight", t.in_w, {48, 16});
  ExpectLoadError(no_out.bytes(), lenient, {"missing 'out_proj.weight'"});
}

TEST(WeightLoadingTest, HuggingFaceFamilies) {
  struct Case {
    const char* family;
    const char* const* names;
    const char* const* biases;
    std::size_t kv_heads;
    std::vector<std::string> extras;  // parts of the block that are not attention
  };
  const std::vector<Case> cases = {
      {"bert", kBert, kBertBias, 4, {"output.LayerNorm.weight", "output.LayerNorm.bias"}},
      {"whisper (no k_proj bias)", kWhisper, kWhisperBias, 4, {}},
      {"bart", kWhisper, kBartBias, 4, {}},
      {"llama (GQA, no biases)", kLlama, kNoBias, 2, {}},
      {"qwen2 (GQA, q/k/v biases)", kLlama, kQwenBias, 1, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.family);
    const GqaModel m(32, 4, c.kv_heads, 7);
    Checkpoint file;
    AddSeparate(&file, m, "", c.names, c.biases);
    for (const std::string& extra : c.extras) file.Add(extra, m.bo);
    const MultiheadAttention loaded = FromBytes(file.bytes(), Options(4));
    EXPECT_EQ(loaded.config().num_kv_heads, c.kv_heads);
    EXPECT_EQ(Forward1(loaded), Forward1(MultiheadAttention(m.config, ViewWith(m, c.biases))));
  }
}

// A Llama layer's stored rotary frequencies must be what LoadOptions.math computes: without
// rotary, strict loading refuses them (plain attention would be another layer) and non-strict
// ignores them; with it, another base, fewer rotated channels or one frequency off by more than
// its dtype's rounding is an error naming it.
TEST(WeightLoadingTest, StoredRotaryFrequenciesMustMatchTheMath) {
  const GqaModel m(32, 4, 2, 7);  // head_dim 8: 4 frequencies
  std::vector<float> inv_freq(4);
  for (std::size_t i = 0; i < 4; ++i) inv_freq[i] = float(std::pow(500.0, -2.0 * i / 8.0));
  const auto file_with = [&](const std::vector<float>& frequencies) {
    Checkpoint file;
    AddSeparate(&file, m, "", kLlama, kNoBias);
    file.Add("rotary_emb.inv_freq", frequencies);
    return file.bytes();
  };
  const std::vector<std::uint8_t> bytes = file_with(inv_freq);
  ExpectLoadError(bytes, Options(4),
                  {"'rotary_emb.inv_freq' holds rotary frequencies", "LoadOptions.math.rotary"});
  LoadOptions lenient = Options(4);
  lenient.strict = false;
  EXPECT_EQ(Forward1(FromBytes(bytes, lenient)),
            Forward1(MultiheadAttention(m.config, ViewWith(m, kNoBias))));

  LoadOptions rotary = Options(4);
  rotary.math.rotary = RotaryLayout::kHalves;
  rotary.math.rotary_base = 500.0f;
  Config config = m.config;
  config.math = rotary.math;
  EXPECT_EQ(Forward1(FromBytes(bytes, rotary)),
            Forward1(MultiheadAttention(config, ViewWith(m, kNoBias))));
  std::vector<float> off = inv_freq;
  off[2] *= 1.0f + 1e-4f;  // ten times the float tolerance
  ExpectLoadError(file_with(off), rotary, {"'rotary_emb.inv_freq'[2]", "and 8 rotated dims"});
  // Stored in bf16: rounded to nearest they load, one unit in the last place off does not.
  std::vector<std::uint16_t> bf16(4);
  for (std::size_t i = 0; i < 4; ++i) bf16[i] = simd::Bf16FromF32(inv_freq[i]);
  const auto bf16_file = [&] {
    Checkpoint file;
    AddSeparate(&file, m, "", kLlama, kNoBias);
    file.writer.Add("rotary_emb.inv_freq", DType::kBF16, {4}, bf16.data());
    return file.bytes();
  };
  EXPECT_EQ(Forward1(FromBytes(bf16_file(), rotary)),
            Forward1(MultiheadAttention(config, ViewWith(m, kNoBias))));
  bf16[3] += 1;
  ExpectLoadError(bf16_file(), rotary, {"'rotary_emb.inv_freq'[3]"});
  rotary.math.rotary_base = 10000.0f;
  ExpectLoadError(bytes, rotary, {"'rotary_emb.inv_freq'[1]", "rotary_base 10000", "got 0.2114"});
  // fp16 under a prefix, base 1e6: 3.2e-5 is one of fp16's subnormals, 2^-24 apart.
  const GqaModel qwen(32, 4, 2, 8);
  Checkpoint fp16;
  AddSeparate(&fp16, qwen, "model.layers.0.self_attn.", kLlama, kNoBias);
  std::vector<std::uint16_t> half(4);
  for (std::size_t i = 0; i < 4; ++i) {
    half[i] = simd::F16FromF32(float(std::pow(1e6, -2.0 * i / 8.0)));
  }
  fp16.writer.Add("model.layers.0.self_attn.rotary_emb.inv_freq", DType::kF16, {4}, half.data());
  LoadOptions prefixed = Options(4, "model.layers.0.self_attn");
  prefixed.math = rotary.math;
  prefixed.math.rotary_base = 1e6f;
  Config qwen_config = qwen.config;
  qwen_config.math = prefixed.math;
  EXPECT_EQ(Forward1(FromBytes(fp16.bytes(), prefixed)),
            Forward1(MultiheadAttention(qwen_config, ViewWith(qwen, kNoBias))));
  prefixed.math.rotary_base = 1.1e6f;
  ExpectLoadError(fp16.bytes(), prefixed,
                  {"'model.layers.0.self_attn.rotary_emb.inv_freq'[1]", "rotary_base 1100000"});

  rotary.math.rotary_base = 500.0f;
  rotary.math.rotary_dim = 4;
  ExpectLoadError(
      bytes, rotary,
      {"'rotary_emb.inv_freq': expected [2], one frequency per pair of the 4 rotated dims",
       "LoadOptions.math.rotary_dim", "got [4]"});
}

TEST(WeightLoadingTest, FamilyBiasRules) {
  const GqaModel m(32, 4, 2, 8);
  // Qwen2 without its k bias, BERT without one bias, Whisper without the q bias: errors.
  const char* qwen_no_k[4] = {"q_proj.bias", nullptr, "v_proj.bias", nullptr};
  Checkpoint qwen;
  AddSeparate(&qwen, m, "", kLlama, qwen_no_k);
  ExpectLoadError(qwen.bytes(), Options(4),
                  {"without 'k_proj.bias'", "Qwen2"});
  const GqaModel mha(32, 4, 4, 9);
  const char* bert_partial[4] = {"self.query.bias", "self.key.bias", "self.value.bias", nullptr};
  Checkpoint bert;
  AddSeparate(&bert, mha, "", kBert, bert_partial);
  ExpectLoadError(bert.bytes(), Options(4), {"without 'output.dense.bias'"});
  const char* whisper_no_q[4] = {nullptr, nullptr, "v_proj.bias", "out_proj.bias"};
  Checkpoint whisper;
  AddSeparate(&whisper, mha, "", kWhisper, whisper_no_q);
  ExpectLoadError(whisper.bytes(), Options(4), {"without 'q_proj.bias'"});
  // A Q/K norm (Gemma 3 / Qwen3 q_norm) without LoadOptions.math.qk_norm would change the
  // result unasked, and typos of a family's names are named.
  Checkpoint gemma;
  AddSeparate(&gemma, m, "", kLlama, kNoBias);
  gemma.Add("q_norm.weight", std::vector<float>(8, 1.0f));
  ExpectLoadError(gemma.bytes(), Options(4), {"'q_norm.weight'", "LoadOptions.math.qk_norm"});
  Checkpoint typo;
  AddSeparate(&typo, mha, "", kBert, kBertBias);
  typo.Add("output.LayerNorm.wieght", mha.bo);
  ExpectLoadError(typo.bytes(), Options(4), {"'output.LayerNorm.wieght'"});
}

// A whole model: two torch layers and their neighbours; one layer by prefix.
TEST(WeightLoadingTest, PrefixSelectsOneLayerOfAModel) {
  const TorchLayer t;
  Checkpoint model = t.File(true, true, "encoder.layers.1.self_attn.");
  const TorchLayer other;
  for (const char* name : {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}) {
    const std::vector<float>& v = std::string(name) == "in_proj_weight" ? other.in_w
                                  : std::string(name) == "in_proj_bias" ? other.in_b
                                  : std::string(name) == "out_proj.weight" ? other.m.wo
                                                                           : other.m.bo;
    model.Add(std::string("encoder.layers.0.self_attn.") + name, v,
              std::string(name) == "in_proj_weight" ? std::vector<std::size_t>{48, 16}
              : std::string(name) == "out_proj.weight" ? std::vector<std::size_t>{16, 16}
                                                       : std::vector<std::size_t>{});
  }
  model.Add("encoder.layers.1.linear1.weight", t.m.wo, {16, 16});
  model.Add("encoder.layers.1.norm1.weight", t.m.bo);
  model.Add("encoder.layers.1.self_attnX.weight", t.m.bo);  // shares the text, not the prefix
  const std::vector<std::uint8_t> bytes = model.bytes();
  const std::vector<float> want = Forward1(t.Expected(true));
  EXPECT_EQ(Forward1(FromBytes(bytes, Options(4, "encoder.layers.1.self_attn."))), want);
  EXPECT_EQ(Forward1(FromBytes(bytes, Options(4, "encoder.layers.1.self_attn"))), want);
  ExpectLoadError(bytes, Options(4),
                  {"top level: no attention weights found",
                   "'encoder.layers.0.self_attn.' (torch), 'encoder.layers.1.self_attn.' (torch)"});
  ExpectLoadError(bytes, Options(4, "encoder.layers.1."), {"no attention weights found"});
  ExpectLoadError(bytes, Options(4, "decoder."), {"no tensor name starts with the prefix"});
  const SafetensorsFile file = SafetensorsFile::View(bytes.data(), bytes.size(), "model");
  const std::vector<AttentionLayerInfo> layers = FindAttentionLayers(file);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[1].prefix, "encoder.layers.1.self_attn.");
  EXPECT_EQ(layers[1].family, "torch");
  EXPECT_EQ(layers[1].d_model, 16u);
  EXPECT_EQ(layers[1].kv_dim, 16u);
  EXPECT_EQ(layers[1].num_heads, 0u);
  EXPECT_EQ(layers[1].biases, (std::vector<std::string>{"in_proj_bias", "out_proj.bias"}));
  EXPECT_EQ(layers[1].tensors.size(), 4u);
}

TEST(WeightLoadingTest, FindsLayersOfEveryFamilyInNumericOrder) {
  const GqaModel m(32, 4, 2, 10);
  const GqaModel mha(32, 4, 4, 11);
  Checkpoint c;
  for (const char* layer : {"10", "2"}) {
    AddSeparate(&c, m, std::string("model.layers.") + layer + ".self_attn.", kLlama, kQwenBias);
  }
  AddSeparate(&c, mha, "bert.encoder.layer.0.attention.", kBert, kBertBias);
  AddSeparate(&c, mha, "model.decoder.layers.0.encoder_attn.", kWhisper, kWhisperBias);
  const std::vector<std::uint8_t> bytes = c.bytes();
  const std::vector<AttentionLayerInfo> layers =
      FindAttentionLayers(SafetensorsFile::View(bytes.data(), bytes.size(), "mixed"));
  ASSERT_EQ(layers.size(), 4u);
  EXPECT_EQ(layers[0].prefix, "bert.encoder.layer.0.attention.");
  EXPECT_EQ(layers[0].family, "bert");
  EXPECT_EQ(layers[1].prefix, "model.decoder.layers.0.encoder_attn.");
  EXPECT_EQ(layers[1].family, "whisper");
  EXPECT_EQ(layers[2].prefix, "model.layers.2.self_attn.");
  EXPECT_EQ(layers[3].prefix, "model.layers.10.self_attn.");
  EXPECT_EQ(layers[3].family, "llama");
  EXPECT_EQ(layers[3].kv_dim, 16u);
  EXPECT_EQ(layers[3].biases.size(), 3u);
  EXPECT_EQ(Forward1(FromBytes(bytes, Options(4, "model.layers.10.self_attn."))),
            Forward1(MultiheadAttention(m.config, ViewWith(m, kQwenBias))));
}

// Hugging Face files carry __metadata__ {"format": "pt"}: a float file, not a broken int8 one.
TEST(WeightLoadingTest, OtherWritersFormatMetadata) {
  const TorchLayer t;
  Checkpoint c = t.File(true, true);
  c.writer.SetMetadata("format", "pt");
  EXPECT_EQ(Forward1(FromBytes(c.bytes(), Options(4))), Forward1(t.Expected(true)));
  Checkpoint half_int8 = t.File(true, true);
  const std::vector<std::int8_t> q(16 * 16, 1);
  half_int8.writer.Add("out_proj.weight.int8", DType::kI8, {16, 16}, q.data());
  ExpectLoadError(half_int8.bytes(), Options(4), {"expected __metadata__ 'format'"});
}

TEST(WeightLoadingTest, FloatFilesNeedTheHeads) {
  const TorchLayer t;
  ExpectLoadError(t.File(true, true).bytes(), Options(0),
                  {"num_heads:", "do not record the number of attention heads", "--heads"});
}

// d_model and the key/value heads come from the tensors' shapes: bad ones are named as the
// file's, with the tensor.
TEST(WeightLoadingTest, ShapesOutOfRangeNameTheTensor) {
  const GqaModel m(32, 4, 2, 7);
  Checkpoint three_kv_heads;
  const std::vector<float> wk(3 * 8 * 32, 0.5f);
  for (const char* name : {"q_proj.weight", "o_proj.weight"}) {
    three_kv_heads.Add(name, m.wq, {32, 32});
  }
  three_kv_heads.Add("k_proj.weight", wk, {24, 32});
  three_kv_heads.Add("v_proj.weight", wk, {24, 32});
  ExpectLoadError(three_kv_heads.bytes(), Options(4),
                  {"'k_proj.weight': its 24 rows are 3 key/value heads of 8 channels, expected a "
                   "divisor of the 4 heads"});
  Checkpoint zero;
  for (const char* name : {"q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"}) {
    zero.Add(name, {}, {0, 0});
  }
  ExpectLoadError(zero.bytes(), Options(4),
                  {"'o_proj.weight': expected d_model in [1, 16384], got a [0, 0] matrix"});
}

// The buffer is read during the call only: overwriting it afterwards changes nothing.
TEST(WeightLoadingTest, MemoryLoadKeepsNoPointerIntoTheBuffer) {
  const TorchLayer t;
  std::vector<std::uint8_t> bytes = t.File(true, true).bytes();
  const MultiheadAttention mha = FromBytes(bytes, Options(4));
  std::fill(bytes.begin(), bytes.end(), 0xFF);
  bytes.clear();
  bytes.shrink_to_fit();
  EXPECT_EQ(Forward1(mha), Forward1(t.Expected(true)));
  EXPECT_THROW(MultiheadAttention::LoadFromMemory(nullptr, 10, Options(4)), Error);
  try {
    const std::uint8_t junk[16] = {};
    MultiheadAttention::LoadFromMemory(junk, sizeof(junk), Options(4));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("safetensors 'memory buffer'"), std::string::npos);
  }
}

// The same file from a path (mapped), from memory, misaligned in memory (copied), and with
// half-precision tensors (converted): the same operator.
TEST(WeightLoadingTest, PathMemoryMisalignedAndHalfPrecision) {
  const TorchLayer t;
  const std::vector<std::uint8_t> bytes = t.File(true, true).bytes();
  testing_support::ScratchDir dir;
  const std::string path = dir.Path("layer.safetensors");
  t.File(true, true).writer.Write(path);
  const std::vector<float> want = Forward1(t.Expected(true));
  EXPECT_EQ(Forward1(MultiheadAttention::Load(path, Options(4))), want);
  EXPECT_EQ(Forward1(MultiheadAttention::Load(path, 4)), want);
  std::vector<std::uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  EXPECT_EQ(Forward1(MultiheadAttention::LoadFromMemory(shifted.data() + 1, bytes.size(),
                                                        Options(4))),
            want);
  // BF16 keeps the upper half of each float: weights rounded that way load as those floats.
  TorchLayer rounded;
  for (std::vector<float>* v : {&rounded.in_w, &rounded.in_b, &rounded.m.wo, &rounded.m.bo}) {
    for (float& x : *v) {
      std::uint32_t bits;
      std::memcpy(&bits, &x, 4);
      bits &= 0xFFFF0000u;
      std::memcpy(&x, &bits, 4);
    }
  }
  SafetensorsWriter bf16;
  const auto add = [&](const char* name, const std::vector<float>& v,
                       std::vector<std::size_t> shape) {
    std::vector<std::uint16_t> half(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      half[i] = static_cast<std::uint16_t>(bits >> 16);
    }
    bf16.Add(name, DType::kBF16, shape, half.data());
  };
  add("in_proj_weight", rounded.in_w, {48, 16});
  add("in_proj_bias", rounded.in_b, {48});
  add("out_proj.weight", rounded.m.wo, {16, 16});
  add("out_proj.bias", rounded.m.bo, {16});
  const std::vector<std::uint8_t> half_bytes = bf16.Serialize();
  EXPECT_EQ(Forward1(FromBytes(half_bytes, Options(4))), Forward1(rounded.Expected(true)));
}

// A key projection with no rows is zero key/value heads: an error naming the tensor, before
// the heads are divided by it.
TEST(WeightLoadingTest, KeyProjectionWithoutRows) {
  const GqaModel m(32, 4, 2, 7);
  Checkpoint c;
  c.Add("q_proj.weight", m.wq, {32, 32});
  c.Add("o_proj.weight", m.wq, {32, 32});
  c.Add("k_proj.weight", {}, {0, 32});
  c.Add("v_proj.weight", {}, {0, 32});
  ExpectLoadError(c.bytes(), Options(4),
                  {"'k_proj.weight': expected [num_kv_heads * 8, 32]", "got [0, 32]"});
}

// A layer's names end at a '.' boundary: "xin_proj_weight" is not "in_proj_weight" under "x".
TEST(WeightLoadingTest, LayerNamesStartAtADot) {
  const TorchLayer t;
  Checkpoint c;
  c.Add("xin_proj_weight", t.in_w, {48, 16});
  c.Add("xout_proj.weight", t.m.wo, {16, 16});
  const std::vector<std::uint8_t> bytes = c.bytes();
  EXPECT_TRUE(FindAttentionLayers(SafetensorsFile::View(bytes.data(), bytes.size(), "x")).empty());
  ExpectLoadError(bytes, Options(4), {"the file holds no attention layer edgeattn knows"});
}

// Load(path, num_heads, precision, int8_block) is Load(path, {num_heads, precision,
// int8_block}): the precision and the block reach the operator.
TEST(WeightLoadingTest, ShortLoadPassesPrecisionAndBlock) {
  const TorchLayer t;
  testing_support::ScratchDir dir;
  const std::string path = dir.Path("layer.safetensors");
  t.File(true, true).writer.Write(path);
  LoadOptions options = Options(4);
  options.precision = Precision::kInt8;
  options.int8_block = 8;
  const MultiheadAttention int8 = MultiheadAttention::Load(path, 4, Precision::kInt8, 8);
  EXPECT_EQ(int8.config().precision, Precision::kInt8);
  EXPECT_EQ(int8.config().int8_block, 8u);
  EXPECT_EQ(Forward1(int8), Forward1(MultiheadAttention::Load(path, options)));
  EXPECT_EQ(MultiheadAttention::Load(path, 4, Precision::kBf16).config().precision,
            Precision::kBf16);
}

}  // namespace
}  // namespace edgeattn
