// Convolution_v1: MXNet's legacy convolution, found in old model files. Its parameters are
// those of Convolution without 1-D kernels and the NCW layout; it runs Convolution's shape
// inference and kernels (MXNet's v1 computes the same cross-correlation; its forward supports
// 2-D kernels only, symbind runs 3-D ones too).
#include <symbind/ops/nn/conv_util.h>

namespace symbind {

namespace {
using conv::kNCDHW;
using conv::kNCHW;
using conv::kNDHWC;
using conv::kNHWC;

struct ConvolutionV1Param : Parameter<ConvolutionV1Param> {
  TShape kernel, stride, dilate, pad;
  int num_filter;
  int num_group;
  int64_t workspace;
  bool no_bias;
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  std::optional<int> layout;
  static void Declare(ParamDeclarer<ConvolutionV1Param>& d) {
    const TShape empty(std::vector<int64_t>{});
    d.field("kernel", &ConvolutionV1Param::kernel).describe("convolution kernel size: (h, w) or (d, h, w)");
    d.field("stride", &ConvolutionV1Param::stride).set_default(empty)
        .describe("convolution stride: (h, w) or (d, h, w)");
    d.field("dilate", &ConvolutionV1Param::dilate).set_default(empty)
        .describe("convolution dilate: (h, w) or (d, h, w)");
    d.field("pad", &ConvolutionV1Param::pad).set_default(empty)
        .describe("pad for convolution: (h, w) or (d, h, w)");
    d.field("num_filter", &ConvolutionV1Param::num_filter).lower_bound(1)
        .describe("convolution filter(channel) number");
    d.field("num_group", &ConvolutionV1Param::num_group).set_default(1).lower_bound(1)
        .describe("Number of group partitions. Equivalent to slicing input into num_group partitions, "
                  "apply convolution on each, then concatenate the results");
    d.field("workspace", &ConvolutionV1Param::workspace).set_default(1024).lower_bound(0)
        .describe("Maximum temporary workspace allowed for convolution (MB). Accepted and ignored.");
    d.field("no_bias", &ConvolutionV1Param::no_bias).set_default(false)
        .describe("Whether to disable bias parameter.");
    d.field("cudnn_tune", &ConvolutionV1Param::cudnn_tune)
        .add_enum("off", 0).add_enum("limited_workspace", 1).add_enum("fastest", 2)
        .set_default(std::nullopt)
        .describe("Whether to pick convolution algo by running performance test. Accepted and ignored.");
    d.field("cudnn_off", &ConvolutionV1Param::cudnn_off).set_default(false)
        .describe("Turn off cudnn for this layer. Accepted and ignored.");
    d.field("layout", &ConvolutionV1Param::layout)
        .add_enum("NCHW", kNCHW).add_enum("NHWC", kNHWC).add_enum("NCDHW", kNCDHW).add_enum("NDHWC", kNDHWC)
        .set_default(std::nullopt)
        .describe("Set layout for input, output and weight. Empty for default layout: NCHW for 2d and "
                  "NCDHW for 3d. Only NCHW and NCDHW are supported.");
    d.check([](const ConvolutionV1Param& p) { return p.kernel.ndim() == 2 || p.kernel.ndim() == 3; },
            "Convolution_v1: the kernel must be 2-D (h, w) or 3-D (d, h, w)", {"kernel"});
  }
};
}  // namespace

[[maybe_unused]] static Op& convolution_v1 =
    RunAs<ConvolutionV1Param>(OpRegistry::Global().Register("Convolution_v1"), "Convolution")
        .describe("Legacy convolution (MXNet's Convolution_v1): 2-D or 3-D convolution of NCHW or NCDHW "
                  "input, computed as Convolution with the same parameters.");

}  // namespace symbind
