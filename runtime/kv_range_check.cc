#include "runtime/kv_range_check.h"

#include <cmath>
#include <sstream>
#include <string>

#include "edgeattn/edgeattn.hpp"
#include "simd/attention.h"

namespace edgeattn {
namespace {

// The midpoint between fp16's largest finite value, 65504, and 2^16: from here on, round to
// nearest even gives infinity.
constexpr float kFp16Overflow = 65520.0f;

// The first of n values that fp16 turns into infinity (non-finite inputs stay what they are,
// as in fp32), or n.
std::size_t FirstOverflow(const float* x, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (std::fabs(x[i]) >= kFp16Overflow && std::isfinite(x[i])) return i;
  }
  return n;
}

// rows [count x kvd] of item b, projected from `input`: throws at the first overflow.
void CheckRows(const ForwardPass& pass, const float* rows, std::size_t b, std::size_t count,
               const char* input, const char* what) {
  const MhaShape& s = pass.call.shape;
  const std::size_t kvd = s.kv_dim();
  const std::size_t at = FirstOverflow(rows, count * kvd);
  if (at == count * kvd) return;
  const std::size_t first = pass.call.cache != nullptr ? pass.call.cache->first_of(b) : 0;
  const std::size_t column = at % kvd;
  std::ostringstream message;
  message.precision(9);
  message << input << ": the projected " << what << " of batch item " << b << " at position "
          << first + at / kvd << ", key/value head " << column / s.head_dim() << " column "
          << column % s.head_dim() << " is " << rows[at]
          << ", beyond the fp16 K/V format's range (|x| <= 65504, larger rounds to infinity); "
             "use KvFormat::kBf16 or kFp32";
  throw Error(message.str());
}

}  // namespace

void CheckKeysValuesFitFp16(const ForwardPass& pass, const char* key_input,
                            const char* value_input) {
  if (pass.call.attention.kv != simd::KvType::kF16) return;
  const MhaShape& s = pass.call.shape;
  const std::size_t kvd = s.kv_dim();
  for (std::size_t b = 0; b < s.batch; ++b) {
    const std::size_t offset = b * s.lk * kvd;
    const std::size_t count = pass.plan.k_rows.valid(b);
    CheckRows(pass, pass.buffers.k + offset, b, count, key_input, "key");
    CheckRows(pass, pass.buffers.v + offset, b, count, value_input, "value");
  }
}

}  // namespace edgeattn
