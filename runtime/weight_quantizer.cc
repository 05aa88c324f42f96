#include "runtime/weight_quantizer.h"

#include <cmath>
#include <limits>

namespace edgeattn {

QuantizedMatrix QuantizePerChannel(const float* w, std::size_t n, std::size_t k) {
  QuantizedMatrix q;
  q.values.resize(n * k);
  q.scales.resize(n);
  for (std::size_t row = 0; row < n; ++row) {
    const float* in = w + row * k;
    float amax = 0.0f;
    bool finite = true;
    for (std::size_t i = 0; i < k; ++i) {
      finite = finite && std::isfinite(in[i]);
      amax = std::fmax(amax, std::fabs(in[i]));
    }
    if (!finite) {
      q.scales[row] = std::numeric_limits<float>::quiet_NaN();
      continue;  // values stay 0; the NaN scale carries the problem to the output
    }
    const double scale = amax / 127.0;
    q.scales[row] = static_cast<float>(scale);
    for (std::size_t i = 0; i < k; ++i) {
      const double v = scale > 0.0 ? std::nearbyint(in[i] / scale) : 0.0;
      q.values[row * k + i] = static_cast<std::int8_t>(std::fmax(-127.0, std::fmin(127.0, v)));
    }
  }
  return q;
}

}  // namespace edgeattn
