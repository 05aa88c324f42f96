// The forward pass reproduces PyTorch's nn.MultiheadAttention on models it exported.
#include <vector>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"
#include "edgeattn/npy.hpp"
#include "tests/golden_cases.h"
#include "tests/test_support.h"

namespace edgeattn {
namespace {

using testing_support::GoldenCase;

ConstTensor View(const NpyArray& a) {
  return a.shape.size() == 2 ? ConstTensor{a.data.data(), 1, a.shape[0], a.shape[1]}
                             : ConstTensor{a.data.data(), a.shape[0], a.shape[1], a.shape[2]};
}

TEST(GoldenTest, MatchesPyTorch) {
  const std::vector<GoldenCase> cases = testing_support::LoadGoldenCases();
  ASSERT_GE(cases.size(), 5u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    const MultiheadAttention mha = MultiheadAttention::Load(c.Path(".safetensors"), c.heads);
    const NpyArray query = ReadNpy(c.Path("_query.npy"));
    const NpyArray expected = ReadNpy(c.Path("_output.npy"));
    const NpyArray key = c.cross ? ReadNpy(c.Path("_key.npy")) : query;
    const NpyArray value = c.cross ? ReadNpy(c.Path("_value.npy")) : query;
    const ConstTensor q = View(query);
    std::vector<float> out(expected.data.size());
    for (std::size_t threads : {1, 2}) {
      Context context(threads);
      mha.Forward(context, q, View(key), View(value),
                  {out.data(), q.batch, q.length, mha.config().d_model});
      // PyTorch computes in float32 too, in another order: agreement to 1e-5 of the output's
      // magnitude is what float32 allows for these widths.
      EXPECT_LE(testing_support::MaxAbsDiff(out, expected.data),
                1e-5 * testing_support::MaxAbs(expected.data));
    }
  }
}

}  // namespace
}  // namespace edgeattn
