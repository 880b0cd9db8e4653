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

// The fields Convolution and Deconvolution share verbatim: cudnn_tune, cudnn_off (accepted and
// ignored: there is no cuDNN) and layout (channel-first only).
template <typename P>
void DeclareCudnnAndLayout(ParamDeclarer<P>& d) {
  d.field("cudnn_tune", &P::cudnn_tune)
      .add_enum("off", 0).add_enum("limited_workspace", 1).add_enum("fastest", 2)
      .set_default(std::nullopt)
      .describe("Whether to pick convolution algorithm by running performance test. Accepted "
                "and ignored (no cuDNN).");
  d.field("cudnn_off", &P::cudnn_off).set_default(false)
      .describe("Turn off cudnn for this layer. Accepted and ignored.");
  d.field("layout", &P::layout)
      .add_enum("NCW", kNCW).add_enum("NCHW", kNCHW).add_enum("NCDHW", kNCDHW)
      .add_enum("NHWC", kNHWC).add_enum("NDHWC", kNDHWC).set_default(std::nullopt)
      .describe("Set layout for input, output and weight. Empty for default layout: NCW for "
                "1d, NCHW for 2d and NCDHW for 3d. Only NCW, NCHW and NCDHW are supported.");
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
