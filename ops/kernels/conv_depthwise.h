// One plane of the direct depthwise convolution (conv_depthwise.cc), for kernels that run
// depthwise planes inside tiles of their own (conv_inverted_residual.cc).
#pragma once
#include <cstdint>

#include <symbind/ops/kernels/gemm.h>

namespace symbind {
namespace conv {

// One plane's geometry: input H x W read with padding ph (rows) and pw (columns), output
// OH x OW. Input rows outside [0, H) read `zeros` (a row of W zeros): a band of an image is
// passed as the image rows it holds (H of them) and a row padding that places the first
// output row over them (rows the band does not hold must then be padding rows).
struct DepthwisePlaneArgs {
  int64_t H, W, ph, pw, OH, OW;
  const float* zeros;
  FusedActivation act;  // applied to each finished output row (only with kWrite); kPRelu resolved (ForRow)
};

// out (+= when add) = act(bias + the K x K filter w over in at stride S), every output summed
// from the bias over its taps in (kh, kw) order, so the result does not depend on which rows a
// call covers. On the calling thread.
using DepthwisePlaneFn = void (*)(const float* in, const DepthwisePlaneArgs& a, const float* w, float bias,
                                  float* out, bool add);
// The plane kernel DepthwiseConvForward uses for a k x k filter at `stride` (k 3, 5 or 7,
// stride 1 or 2, as DepthwiseApplies).
DepthwisePlaneFn ChooseDepthwisePlane(int64_t k, int64_t stride);

}  // namespace conv
}  // namespace symbind
