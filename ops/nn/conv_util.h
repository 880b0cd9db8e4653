// Shared pieces of the convolution family (Convolution, Deconvolution, Pooling): spatial
// parameter defaults and checks as MXNet's parameter parsers apply them and the geometry built
// from them. The kernels themselves (geometry struct, im2col, ConvForward, ...) are in
// ops/kernels/conv.h.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <symbind/ops/kernels/conv.h>
#include <symbind/ops/op_util.h>

namespace symbind {
namespace conv {

// MXNet's parameter parsers: an empty tuple becomes `fill` for every kernel dim; a given one
// must have the kernel's length. `what` is the capitalised name used in the message
// ("Stride", "Dilate", "Padding", "Adjustment"), `field` the parameter name.
inline void DefaultSpatialTuple(const TShape& kernel, TShape* t, int64_t fill, const char* what,
                                const char* field) {
  if (t->ndim() <= 0) {
    *t = TShape::Filled(kernel.ndim(), fill);
  } else if (t->ndim() != kernel.ndim()) {
    throw ParamError(StrCat(what, " must have the same number of dimensions with kernel_size, but "
                            "kernel_size is set to ", kernel.ToStringAsWritten(), " while ", field, " is ",
                            t->ToStringAsWritten()));
  }
}

// Every entry >= lo (1 for kernel/stride/dilate, 0 for pad/adj).
inline void CheckTupleAtLeast(const TShape& t, int64_t lo, const char* field) {
  for (int i = 0; i < t.ndim(); ++i)
    if (t[i] < lo)
      throw ParamError(StrCat("Invalid ", field, " ", t.ToStringAsWritten(), ": every entry must be >= ", lo));
}

// Kernel of 1, 2 or 3 spatial dims, with stride/dilate/pad filled and checked.
inline void NormalizeSpatialParams(const char* op, TShape* kernel, TShape* stride, TShape* dilate,
                                   TShape* pad) {
  if (kernel->ndim() < 1 || kernel->ndim() > 3)
    throw ParamError(StrCat(op, ": kernel must have 1, 2 or 3 dims, got ", *kernel));
  CheckTupleAtLeast(*kernel, 1, "kernel");
  DefaultSpatialTuple(*kernel, stride, 1, "Stride", "stride");
  CheckTupleAtLeast(*stride, 1, "stride");
  if (dilate) {
    DefaultSpatialTuple(*kernel, dilate, 1, "Dilate", "dilate");
    CheckTupleAtLeast(*dilate, 1, "dilate");
  }
  DefaultSpatialTuple(*kernel, pad, 0, "Padding", "pad");
  CheckTupleAtLeast(*pad, 0, "pad");
}

// (k - 1) * d + 1, the extent of a dilated kernel in spatial dim `i`, and x + 2 * p, the padded
// input: checked, so huge parameters are a ShapeError naming them, never a wrapped size.
inline int64_t DilatedKernel(const char* op, int64_t k, int64_t d, int i) {
  return CheckedAdd(CheckedMul(k - 1, d, op, ": dilated kernel in spatial dim ", i, " (kernel ", k,
                               ", dilate ", d, ")"),
                    1, op, ": dilated kernel in spatial dim ", i);
}
inline int64_t PaddedSize(const char* op, int64_t x, int64_t p, int i) {
  return CheckedAdd(x, CheckedMul(2, p, op, ": pad ", p, " in spatial dim ", i), op,
                    ": padded input in spatial dim ", i, " (size ", x, ", pad ", p, ")");
}

// Pooling kernels compute window o's extent as o * stride - pad + kernel: shape inference
// checks once that the last of `out` windows fits int64, so the kernels need not.
inline void CheckWindowEnd(const char* op, int64_t out, int64_t stride, int64_t kernel, int i) {
  if (out < 1) return;
  CheckedAdd(CheckedMul(out - 1, stride, op, ": start of window ", out - 1, " in spatial dim ", i), kernel,
             op, ": end of window ", out - 1, " in spatial dim ", i);
}

// Layout enum values shared by the family (MXNet's mshadow::LayoutFlag names).
enum Layout { kNCW = 0, kNCHW = 1, kNCDHW = 2, kNWC = 3, kNHWC = 4, kNDHWC = 5 };
inline const char* LayoutName(int l) {
  static const char* names[] = {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"};
  return l >= 0 && l < 6 ? names[l] : "?";
}
// Only channel-first layouts are implemented (as on MXNet's CPU); the layout's rank must fit
// `spatial` dims when that is known (> 0).
inline void CheckChannelFirstLayout(const char* op, const std::optional<int>& layout, int spatial) {
  if (!layout) return;
  if (*layout != kNCW && *layout != kNCHW && *layout != kNCDHW)
    throw ParamError(StrCat(op, ": layout ", LayoutName(*layout),
                            " is not supported; only NCW, NCHW and NCDHW are"));
  if (spatial > 0 && *layout != spatial - 1)
    throw ParamError(StrCat(op, ": layout ", LayoutName(*layout), " does not fit a ", spatial,
                            "-D kernel"));
}

// The fields the convolution ops (Convolution, Convolution_v1, Deconvolution,
// DeformableConvolution) all have; their parameter structs derive from it.
struct ConvFields {
  TShape kernel, stride, dilate, pad;
  int num_filter;
  int num_group;
  int64_t workspace;
  bool no_bias;
  std::optional<int> layout;
};

// How each of those ops words and bounds the fields, as MXNet declares them per op. The numbers
// default to Convolution's.
struct ConvFieldSpec {
  std::string kernel, stride, dilate, pad, num_filter, num_group, workspace, cudnn_tune, layout;
  std::vector<Layout> layouts;  // the layout names accepted, in the order MXNet lists them
  int num_filter_max = 0;                               // 0: no upper bound
  int64_t workspace_default = 1024, workspace_max = 0;  // 0: no upper bound
  bool no_bias_default = false;
};

// Convolution's wording (DeformableConvolution's too) for the kernel shapes the op takes.
inline ConvFieldSpec ConvolutionFieldSpec(const std::string& shapes) {
  ConvFieldSpec s;
  s.kernel = "Convolution kernel size: " + shapes;
  s.stride = "Convolution stride: " + shapes + ". Defaults to 1 for each dimension.";
  s.dilate = "Convolution dilate: " + shapes + ". Defaults to 1 for each dimension.";
  s.pad = "Zero pad for convolution: " + shapes + ". Defaults to no padding.";
  s.num_filter = "Convolution filter(channel) number";
  s.num_group = "Number of group partitions.";
  s.workspace = "Maximum temporary workspace allowed (MB) in convolution. Accepted and ignored "
                "(the CPU kernel sizes its buffers itself).";
  s.cudnn_tune = "Whether to pick convolution algorithm by running performance test. Accepted "
                 "and ignored (no cuDNN).";
  s.layout = "Set layout for input, output and weight. Empty for default layout: NCW for 1d, "
             "NCHW for 2d and NCDHW for 3d. Only NCW, NCHW and NCDHW are supported.";
  s.layouts = {kNCW, kNCHW, kNCDHW, kNHWC, kNDHWC};
  return s;
}

// The declarations name the field types: a member of the base ConvFields is converted to a
// member of P, which template argument deduction alone would not do.

// kernel (required), stride, dilate and pad (empty: filled in by NormalizeSpatialParams).
template <typename P>
void DeclareConvWindow(ParamDeclarer<P>& d, const ConvFieldSpec& s) {
  const TShape empty(std::vector<int64_t>{});
  d.template field<TShape>("kernel", &P::kernel).describe(s.kernel);
  d.template field<TShape>("stride", &P::stride).set_default(empty).describe(s.stride);
  d.template field<TShape>("dilate", &P::dilate).set_default(empty).describe(s.dilate);
  d.template field<TShape>("pad", &P::pad).set_default(empty).describe(s.pad);
}

// num_filter (required) and num_group.
template <typename P>
void DeclareConvFilters(ParamDeclarer<P>& d, const ConvFieldSpec& s) {
  auto& num_filter = d.template field<int>("num_filter", &P::num_filter).describe(s.num_filter);
  if (s.num_filter_max > 0) num_filter.set_range(1, s.num_filter_max);
  else num_filter.lower_bound(1);
  d.template field<int>("num_group", &P::num_group).set_default(1).lower_bound(1)
      .describe(s.num_group);
}

// workspace (accepted and ignored) and no_bias.
template <typename P>
void DeclareConvWorkspaceAndBias(ParamDeclarer<P>& d, const ConvFieldSpec& s) {
  auto& workspace = d.template field<int64_t>("workspace", &P::workspace)
                        .set_default(s.workspace_default).describe(s.workspace);
  if (s.workspace_max > 0) workspace.set_range(0, s.workspace_max);
  else workspace.lower_bound(0);
  d.template field<bool>("no_bias", &P::no_bias).set_default(s.no_bias_default)
      .describe("Whether to disable bias parameter.");
}

// The optional `layout` of every op of the family (pooling too), with the layout names it
// accepts; CheckChannelFirstLayout then rejects the channel-last ones.
template <typename P>
void DeclareLayout(ParamDeclarer<P>& d, const std::vector<Layout>& accepted,
                   const std::string& doc) {
  auto& layout = d.template field<std::optional<int>>("layout", &P::layout);
  for (Layout l : accepted) layout.add_enum(LayoutName(l), l);
  layout.set_default(std::nullopt).describe(doc);
}

// cudnn_tune and cudnn_off (accepted and ignored: there is no cuDNN), then layout.
template <typename P>
void DeclareCudnnAndLayout(ParamDeclarer<P>& d, const ConvFieldSpec& s) {
  d.field("cudnn_tune", &P::cudnn_tune)
      .add_enum("off", 0).add_enum("limited_workspace", 1).add_enum("fastest", 2)
      .set_default(std::nullopt).describe(s.cudnn_tune);
  d.field("cudnn_off", &P::cudnn_off).set_default(false)
      .describe("Turn off cudnn for this layer. Accepted and ignored.");
  DeclareLayout(d, s.layouts, s.layout);
}

// Pooling's and Pooling_v1's pool types and output-size conventions (MXNet's enum values).
enum PoolType { kMax = 0, kAvg = 1, kSum = 2, kLp = 3 };
enum PoolingConvention { kValid = 0, kFull = 1, kSame = 2 };

// pool_type (Pooling_v1 has no lp) and global_pool.
template <typename P>
void DeclarePoolTypeAndGlobalPool(ParamDeclarer<P>& d, bool with_lp) {
  auto& f = d.field("pool_type", &P::pool_type).set_default(kMax)
                .add_enum("max", kMax).add_enum("avg", kAvg).add_enum("sum", kSum);
  if (with_lp) f.add_enum("lp", kLp);
  f.describe("Pooling type to be applied.");
  d.field("global_pool", &P::global_pool).set_default(false)
      .describe("Ignore kernel size, do global pooling based on current input feature map. ");
}

// pooling_convention; Pooling_v1 has no same.
template <typename P>
void DeclarePoolingConvention(ParamDeclarer<P>& d, bool with_same) {
  auto& f = d.field("pooling_convention", &P::pooling_convention).set_default(kValid)
                .add_enum("full", kFull).add_enum("valid", kValid);
  if (with_same) f.add_enum("same", kSame);
  f.describe("Pooling convention to be applied.");
}

// The argument list of an op with a `no_bias` parameter: data, weight and (unless no_bias) bias.
template <typename P>
std::vector<std::string> DataWeightBiasArguments(const NodeAttrs& a) {
  if (a.param<P>().no_bias) return {"data", "weight"};
  return {"data", "weight", "bias"};
}

// Builds the geometry from the image-side and column-side spatial dims (trailing dims of the
// NC... shapes) and the parameter tuples (all of the kernel's length).
inline ConvGeom MakeGeom(const TShape& image_shape, const TShape& col_shape, const TShape& kernel,
                         const TShape& stride, const TShape& dilate, const TShape& pad) {
  ConvGeom g;
  const int n = kernel.ndim(), off = 3 - n;
  for (int i = 0; i < n; ++i) {
    g.in[off + i] = image_shape[2 + i];
    g.out[off + i] = col_shape[2 + i];
    g.k[off + i] = kernel[i];
    g.s[off + i] = stride[i];
    g.d[off + i] = dilate[i];
    g.p[off + i] = pad[i];
  }
  return g;
}

}  // namespace conv
}  // namespace symbind
