// Convolution_v1: MXNet's legacy convolution, found in old model files. Its parameters are
// those of Convolution without 1-D kernels and the NCW layout; it runs Convolution's shape
// inference and kernels (MXNet's v1 computes the same cross-correlation; its forward supports
// 2-D kernels only, symbind runs 3-D ones too).
#include <symbind/ops/nn/conv_util.h>

namespace symbind {

namespace {
using namespace conv;

struct ConvolutionV1Param : ConvFields, Parameter<ConvolutionV1Param> {
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  static void Declare(ParamDeclarer<ConvolutionV1Param>& d) {
    ConvFieldSpec spec;
    spec.kernel = "convolution kernel size: (h, w) or (d, h, w)";
    spec.stride = "convolution stride: (h, w) or (d, h, w)";
    spec.dilate = "convolution dilate: (h, w) or (d, h, w)";
    spec.pad = "pad for convolution: (h, w) or (d, h, w)";
    spec.num_filter = "convolution filter(channel) number";
    spec.num_group = "Number of group partitions. Equivalent to slicing input into num_group "
                     "partitions, apply convolution on each, then concatenate the results";
    spec.workspace = "Maximum temporary workspace allowed for convolution (MB). Accepted and ignored.";
    spec.cudnn_tune = "Whether to pick convolution algo by running performance test. Accepted and "
                      "ignored.";
    spec.layout = "Set layout for input, output and weight. Empty for default layout: NCHW for 2d "
                  "and NCDHW for 3d. Only NCHW and NCDHW are supported.";
    spec.layouts = {kNCHW, kNHWC, kNCDHW, kNDHWC};
    DeclareConvWindow(d, spec);
    DeclareConvFilters(d, spec);
    DeclareConvWorkspaceAndBias(d, spec);
    DeclareCudnnAndLayout(d, spec);
    d.check([](const ConvolutionV1Param& p) { return p.kernel.ndim() == 2 || p.kernel.ndim() == 3; },
            "Convolution_v1: the kernel must be 2-D (h, w) or 3-D (d, h, w)", {"kernel"});
  }
};
}  // namespace

[[maybe_unused]] static Op& convolution_v1 =
    RunAs<ConvolutionV1Param>(OpRegistry::Global().Register("Convolution_v1"), "Convolution")
        .describe("Legacy convolution (MXNet's Convolution_v1): 2-D or 3-D convolution of NCHW or NCDHW "
                  "input, computed as Convolution with the same parameters.")
        .set_mac_count(OutputWeightRowMacs);

}  // namespace symbind
