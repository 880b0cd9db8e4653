// smooth_l1(x, sigma): 0.5 * (sigma * x)^2 where |x| < 1 / sigma^2, |x| - 0.5 / sigma^2 elsewhere
// (the R-CNN box regression loss; sigma = 1 is the Huber loss at delta 1). The scalar parameter
// is sigma. Gradient sigma^2 * x inside, sign(x) outside (MXNet's smooth_l1_gradient).
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
float SmoothL1(float x, float sigma) {
  const float s2 = sigma * sigma, inv = 1.0f / s2;
  if (x > inv) return x - 0.5f * inv;
  if (x < -inv) return -x - 0.5f * inv;
  return 0.5f * x * x * s2;
}

float SmoothL1Grad(float x, float sigma) {
  const float s2 = sigma * sigma, inv = 1.0f / s2;
  if (x > inv) return 1.0f;
  if (x < -inv) return -1.0f;
  return s2 * x;
}

[[maybe_unused]] const bool registered = [] {
  math::RegisterScalar(OpRegistry::Global().Register("smooth_l1").add_alias("_npx_smooth_l1")
                           .describe("Smooth L1 loss of each element with sigma = scalar: 0.5 * (sigma * x)^2 "
                                     "where |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2."),
                       SmoothL1, SmoothL1Grad)
      .set_forward_inplace();
  return true;
}();
}  // namespace

}  // namespace symbind
