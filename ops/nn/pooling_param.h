// Pooling's parameters and shape inference, shared by Pooling (ops/nn/pooling.cc) and
// _contrib_quantized_pooling (ops/quantization/quantized_pooling.cc).
#pragma once
#include <algorithm>
#include <optional>
#include <vector>

#include <symbind/ops/nn/conv_util.h>

namespace symbind {
namespace conv {

struct PoolingParam : Parameter<PoolingParam> {
  TShape kernel, stride, pad;
  int pool_type;
  int pooling_convention;
  bool global_pool;
  bool cudnn_off;
  std::optional<int> p_value;
  std::optional<bool> count_include_pad;
  std::optional<int> layout;
  static void Declare(ParamDeclarer<PoolingParam>& d) {
    const TShape empty(std::vector<int64_t>{});
    d.field("kernel", &PoolingParam::kernel).set_default(empty)
        .describe("Pooling kernel size: (y, x) or (d, y, x)");
    DeclarePoolTypeAndGlobalPool(d, /*with_lp=*/true);
    d.field("cudnn_off", &PoolingParam::cudnn_off).set_default(false)
        .describe("Turn off cudnn pooling and use MXNet pooling operator. Accepted and ignored.");
    DeclarePoolingConvention(d, /*with_same=*/true);
    d.field("stride", &PoolingParam::stride).set_default(empty)
        .describe("Stride: for pooling (y, x) or (d, y, x). Defaults to 1 for each dimension.");
    d.field("pad", &PoolingParam::pad).set_default(empty)
        .describe("Pad for pooling: (y, x) or (d, y, x). Defaults to no padding.");
    d.field("p_value", &PoolingParam::p_value).set_default(std::nullopt)
        .describe("Value of p for Lp pooling, can be 1, 2 or 3, required for Lp Pooling.");
    d.field("count_include_pad", &PoolingParam::count_include_pad).set_default(std::nullopt)
        .describe("Only used for AvgPool, specify whether to count padding elements for average "
                  "calculation. For example, with a 5*5 kernel on a 3*3 corner of a image, the "
                  "sum of the 9 valid elements will be divided by 25 if this is set to true, or "
                  "it will be divided by 9 if this is set to false. Defaults to true.");
    DeclareLayout(d, {kNCW, kNCHW, kNCDHW, kNWC, kNHWC, kNDHWC},
                  "Set layout for input and output. Empty for default layout: NCW for 1d, NCHW "
                  "for 2d and NCDHW for 3d. Only NCW, NCHW and NCDHW are supported.");
    // A window that can lie wholly in the padding has no input element (MXNet's pooling
    // kernels, like cuDNN's, assume pad < kernel). Tuples of other lengths fail in Parse.
    d.check([](const PoolingParam& p) {
              for (int i = 0; !p.global_pool && i < std::min(p.kernel.ndim(), p.pad.ndim()); ++i)
                if (p.pad[i] >= p.kernel[i]) return false;
              return true;
            },
            "Pooling: every pad must be smaller than the kernel", {"kernel", "pad"});
  }
  // MXNet's PoolingParamParser: stride defaults to 1s and pad to 0s; the kernel may be omitted
  // for global pooling.
  static PoolingParam Parse(const KwArgs& kw) {
    PoolingParam p = Parameter<PoolingParam>::Parse(kw);
    // MXNet reads only the pads its kernel has, so scripts pass pad=(0,0,0) with a 1-D
    // kernel; zeros past the kernel's rank are dropped, anything else stays an error.
    if (p.kernel.ndim() > 0 && p.pad.ndim() > p.kernel.ndim()) {
      const auto& pd = p.pad.dims();
      if (std::all_of(pd.begin() + p.kernel.ndim(), pd.end(), [](int64_t v) { return v == 0; }))
        p.pad = TShape(std::vector<int64_t>(pd.begin(), pd.begin() + p.kernel.ndim()));
    }
    if (p.kernel.ndim() > 0)
      NormalizeSpatialParams("Pooling", &p.kernel, &p.stride, nullptr, &p.pad);
    else if (!p.global_pool)
      throw ParamError("Pooling: kernel is required unless global_pool is set");
    CheckTupleAtLeast(p.stride, 1, "stride");
    CheckTupleAtLeast(p.pad, 0, "pad");
    CheckChannelFirstLayout("Pooling", p.layout, p.kernel.ndim());
    if (p.pool_type == kLp) {
      if (!p.p_value)
        throw ParamError("Pooling: pool_type 'lp' needs p_value (1, 2 or 3)");
      if (*p.p_value < 1 || *p.p_value > 3)
        throw ParamError(StrCat("Pooling: p value of ", *p.p_value,
                                " is not supported yet (only 1, 2 and 3)"));
    }
    return p;
  }
  int P() const { return pool_type == kLp ? *p_value : 1; }
  bool CountIncludePad() const { return count_include_pad.value_or(true); }
};

// The window geometry for data of shape `d`, right-aligned into 3 slots: global pooling uses
// the whole spatial extent with unit stride and no padding.
inline ConvGeom PoolGeom(const PoolingParam& p, const TShape& d, const TShape& o) {
  const int ns = d.ndim() - 2;
  if (p.global_pool) {
    TShape k(std::vector<int64_t>(d.dims().begin() + 2, d.dims().end()));
    return MakeGeom(d, o, k, TShape::Filled(ns, 1), TShape::Filled(ns, 1), TShape::Filled(ns, 0));
  }
  return MakeGeom(d, o, p.kernel, p.stride, TShape::Filled(ns, 1), p.pad);
}

inline void InferShapePool(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<PoolingParam>();
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 3 || d.ndim() > 5)
    throw ShapeError(StrCat("Pooling: input data should be 3D in (batch, channel, x), 4D in "
                            "(batch, channel, y, x) or 5D in (batch, channel, d, y, x), got ", d));
  const int ns = d.ndim() - 2;
  if (p.layout && *p.layout != ns - 1)
    throw ShapeError(StrCat("Pooling: layout ", LayoutName(*p.layout), " does not fit data ", d));
  if (p.pooling_convention == kSame) {
    // MXNet supports the 'same' convention for 1-D pooling only, without padding.
    if (ns != 1)
      throw ShapeError(StrCat("Pooling: input data should be 3D in (batch, channel, x) for "
                              "pooling_convention 'same' (only 1-D is supported), got ", d));
    if (p.pad.ndim() > 0 && p.pad[0] != 0)
      throw ShapeError("Pooling: same pooling convention disables the use of pad parameter");
  }
  TShape o = d;
  if (p.global_pool) {
    for (int i = 0; i < ns; ++i) o[2 + i] = 1;
    ShapeAssignCheck(out, 0, o);
    return;
  }
  if (p.kernel.ndim() == 0)
    throw ShapeError("Pooling: you need to set the kernel size if global pooling is not used");
  if (p.kernel.ndim() != ns)
    throw ShapeError(StrCat("Pooling: a ", p.kernel.ndim(), "-D kernel ", p.kernel,
                            " needs input data of rank ", p.kernel.ndim() + 2, ", got ", d));
  for (int i = 0; i < ns; ++i) {
    const int64_t x = d[2 + i];
    if (x < 0) {
      o[2 + i] = -1;
      continue;
    }
    const int64_t padded = PaddedSize("Pooling", x, p.pad[i], i), k = p.kernel[i], s = p.stride[i];
    if (k > padded)
      throw ShapeError(StrCat("Pooling: kernel size (", k, ") exceeds input (", x, " padded to ",
                              padded, ") in spatial dim ", i, "; kernel ", p.kernel, ", pad ",
                              p.pad, ", data shape ", d));
    switch (p.pooling_convention) {
      // Ceiling divisions written as (a - 1) / s + 1 so a huge stride cannot overflow.
      case kValid: o[2 + i] = 1 + (padded - k) / s; break;
      case kFull: o[2 + i] = 1 + (padded - k == 0 ? 0 : (padded - k - 1) / s + 1); break;
      default: o[2 + i] = padded == 0 ? 0 : (padded - 1) / s + 1; break;
    }
    CheckWindowEnd("Pooling", o[2 + i], s, k, i);
  }
  ShapeAssignCheck(out, 0, o);
}

}  // namespace conv
}  // namespace symbind
