// smooth_l1(x, sigma): 0.5 * (sigma * x)^2 where |x| < 1 / sigma^2, |x| - 0.5 / sigma^2 elsewhere
// (the R-CNN box regression loss; sigma = 1 is the Huber loss at delta 1). The scalar parameter
// is sigma. Gradient sigma^2 * x inside, sign(x) outside (MXNet's smooth_l1_gradient).
#include <cmath>
#include <type_traits>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
// smooth_l1 (or its gradient) at x in floating type T.
template <typename T>
T SmoothL1Of(T x, T sigma, bool grad) {
  const T s2 = sigma * sigma, inv = T(1) / s2;
  if (x > inv) return grad ? T(1) : x - T(0.5) * inv;
  if (x < -inv) return grad ? T(-1) : -x - T(0.5) * inv;
  return grad ? s2 * x : T(0.5) * x * x * s2;
}

// In the input's floating type (float64 keeps its precision); integers compute in float, as
// MXNet's float literals promote them.
template <typename T, typename S>
T SmoothL1(T x, S sigma, bool grad) {
  if constexpr (std::is_floating_point_v<T>) return SmoothL1Of(x, static_cast<T>(sigma), grad);
  else return static_cast<T>(SmoothL1Of(static_cast<float>(x), static_cast<float>(sigma), grad));
}

[[maybe_unused]] const bool registered = [] {
  math::RegisterScalar(OpRegistry::Global().Register("smooth_l1").add_alias("_npx_smooth_l1")
                           .describe("Smooth L1 loss of each element with sigma = scalar: 0.5 * (sigma * x)^2 "
                                     "where |x| < 1 / sigma^2, else |x| - 0.5 / sigma^2."),
                       [](auto x, auto sigma) { return SmoothL1(x, sigma, false); },
                       [](auto x, auto sigma) { return SmoothL1(x, sigma, true); })
      .set_forward_inplace();
  return true;
}();
}  // namespace

}  // namespace symbind
