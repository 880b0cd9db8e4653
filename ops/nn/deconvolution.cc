// Deconvolution (transposed convolution), 1-D/2-D (and 3-D), grouped and dilated. It is the
// data gradient of the Convolution with the same weight, so its kernels are the convolution
// kernels with the two sides swapped: the deconvolution's output is the convolution's image.
#include <algorithm>

#include <symbind/ops/nn/conv_util.h>

namespace symbind {

namespace {
using namespace conv;

struct DeconvolutionParam : ConvFields, Parameter<DeconvolutionParam> {
  TShape adj, target_shape;
  std::optional<int> cudnn_tune;
  bool cudnn_off;
  static void Declare(ParamDeclarer<DeconvolutionParam>& d) {
    ConvFieldSpec spec = ConvolutionFieldSpec("");  // Convolution's cudnn and layout fields
    spec.kernel = "Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the "
                  "kernel size used for the corresponding convolution";
    spec.stride = "The stride used for the corresponding convolution: (w,), (h, w) or (d, h, w). "
                  "Defaults to 1 for each dimension.";
    spec.dilate = "Dilation factor for each dimension of the input: (w,), (h, w) or (d, h, w). "
                  "Defaults to 1 for each dimension.";
    spec.pad = "The amount of implicit zero padding added during convolution for each dimension "
               "of the input: (w,), (h, w) or (d, h, w). ``(kernel-1)/2`` is usually a good "
               "choice. If `target_shape` is set, `pad` will be ignored and a padding that will "
               "generate the target shape will be used. Defaults to no padding.";
    spec.num_filter = "Number of output filters.";
    spec.num_filter_max = 100000;
    spec.num_group = "Number of groups partition.";
    spec.workspace = "Maximum temporary workspace allowed (MB) in deconvolution. Accepted and ignored.";
    spec.workspace_default = 512;
    spec.workspace_max = 8192;
    spec.no_bias_default = true;
    DeclareConvWindow(d, spec);
    const TShape empty(std::vector<int64_t>{});
    d.field("adj", &DeconvolutionParam::adj).set_default(empty)
        .describe("Adjustment for output shape: (w,), (h, w) or (d, h, w). If `target_shape` is "
                  "set, `adj` will be ignored and computed accordingly.");
    d.field("target_shape", &DeconvolutionParam::target_shape).set_default(empty)
        .describe("Shape of the output tensor: (w,), (h, w) or (d, h, w).");
    DeclareConvFilters(d, spec);
    DeclareConvWorkspaceAndBias(d, spec);
    DeclareCudnnAndLayout(d, spec);
  }
  // MXNet's DeconvolutionParamParser: defaults and length checks for the spatial tuples.
  static DeconvolutionParam Parse(const KwArgs& kw) {
    DeconvolutionParam p = Parameter<DeconvolutionParam>::Parse(kw);
    NormalizeSpatialParams("Deconvolution", &p.kernel, &p.stride, &p.dilate, &p.pad);
    DefaultSpatialTuple(p.kernel, &p.adj, 0, "Adjustment", "adjustment");
    CheckTupleAtLeast(p.adj, 0, "adj");
    CheckTupleAtLeast(p.target_shape, 0, "target_shape");
    if (p.target_shape.ndim() > 0 && p.target_shape.ndim() != p.kernel.ndim())
      throw ParamError(StrCat("target_shape must have the same number of dimensions with "
                              "kernel_size, but kernel_size is set to ", p.kernel,
                              " while target_shape is ", p.target_shape));
    CheckChannelFirstLayout("Deconvolution", p.layout, p.kernel.ndim());
    return p;
  }
  bool UsesTargetShape() const {
    for (int i = 0; i < target_shape.ndim(); ++i)
      if (target_shape[i] != 0) return true;
    return false;
  }
};

// stride * (x - 1) + dilated kernel: the output size before padding in spatial dim i, checked.
int64_t FullDeconvSize(const DeconvolutionParam& p, int64_t x, int i) {
  return CheckedAdd(CheckedMul(p.stride[i], x - 1, "Deconvolution: stride ", p.stride[i],
                               " in spatial dim ", i, " times input size ", x, " - 1"),
                    DilatedKernel("Deconvolution", p.kernel[i], p.dilate[i], i),
                    "Deconvolution: output size in spatial dim ", i);
}

// MXNet's InferPad: with a (non-zero) target_shape the padding and adjustment are derived from
// it, the odd remainder going to adj; otherwise they are the parameters. Spatial dims of
// `data` that are unknown keep pad = adj = 0 (MXNet leaves them unset; they are unused then).
void InferPad(const DeconvolutionParam& p, const TShape& data, std::vector<int64_t>* pad,
              std::vector<int64_t>* adj) {
  const int ns = p.kernel.ndim();
  pad->assign(static_cast<size_t>(ns), 0);
  adj->assign(static_cast<size_t>(ns), 0);
  for (int i = 0; i < ns; ++i) {
    if (!p.UsesTargetShape()) {
      (*pad)[i] = p.pad[i];
      (*adj)[i] = p.adj[i];
      continue;
    }
    const int64_t x = data[2 + i];
    if (x < 0) continue;
    int64_t total = FullDeconvSize(p, x, i);
    if (total < p.target_shape[i])
      throw ShapeError(StrCat("Deconvolution: too big target shape ", p.target_shape,
                              ": at most ", total, " in spatial dim ", i, " for data shape ", data));
    total -= p.target_shape[i];
    (*adj)[i] = total % 2;
    (*pad)[i] = (total + 1) / 2;
  }
}

void InferShapeDeconv(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<DeconvolutionParam>();
  const int ns = p.kernel.ndim();
  const TShape& dshape = (*in)[0];
  if (!dshape.ndim_known()) return;
  if (dshape.ndim() != ns + 2)
    throw ShapeError(StrCat("Deconvolution: input data should be ", ns + 2, "D (batch, channel, ",
                            ns == 1 ? "x" : ns == 2 ? "y, x" : "d, y, x", ") for a ", ns,
                            "-D kernel ", p.kernel, ", got data shape ", dshape));
  const int64_t C = dshape[1];
  // Weight: (in_channels, num_filter / num_group, kernel...).
  std::vector<int64_t> w = {C, p.num_filter / p.num_group};
  for (int i = 0; i < ns; ++i) w.push_back(p.kernel[i]);
  ShapeAssignCheck(in, 1, TShape(w));
  if (!p.no_bias) ShapeAssignCheck(in, 2, TShape({p.num_filter}));
  if (C >= 0 && C % p.num_group != 0)
    throw ShapeError(StrCat("Deconvolution: input channels (", C,
                            ") must be divisible by num_group (", p.num_group,
                            "); data shape ", dshape));
  if (p.num_filter % p.num_group != 0)
    throw ShapeError(StrCat("Deconvolution: num_filter (", p.num_filter,
                            ") must be divisible by num_group (", p.num_group, ")"));
  std::vector<int64_t> pad, adj;
  InferPad(p, dshape, &pad, &adj);
  std::vector<int64_t> o = {dshape[0], p.num_filter};
  for (int i = 0; i < ns; ++i) {
    if (adj[i] > p.stride[i] - 1)
      throw ShapeError(StrCat("Deconvolution: adj ", adj[i], " in spatial dim ", i,
                              " must be smaller than the stride ", p.stride[i]));
    const int64_t x = dshape[2 + i];
    if (x < 0) {
      o.push_back(-1);
      continue;
    }
    const int64_t size = FullDeconvSize(p, x, i) - 2 * pad[i] + adj[i];
    if (p.target_shape.ndim() == ns && p.target_shape[i] > 0 && p.target_shape[i] != size)
      throw ShapeError(StrCat("Deconvolution: target_shape ", p.target_shape,
                              " was not reasonable: spatial dim ", i, " gives ", size));
    if (size < 1)
      throw ShapeError(StrCat("Deconvolution: output size ", size, " in spatial dim ", i,
                              " is not positive (data shape ", dshape, ", kernel ", p.kernel,
                              ", stride ", p.stride, ", pad ", p.pad, ")"));
    o.push_back(size);
  }
  ShapeAssignCheck(out, 0, TShape(o));
}

struct DeconvSetup {
  ConvDims dims;  // as the convolution whose data gradient this is
  ConvGeom geom;
};
DeconvSetup Setup(const DeconvolutionParam& p, const TShape& data, const TShape& outp) {
  std::vector<int64_t> pad, adj;
  InferPad(p, data, &pad, &adj);
  // The convolution's image is the deconvolution's output; its filters are our input channels.
  return {{data[0], p.num_filter, data[1], p.num_group},
          MakeGeom(outp, data, p.kernel, p.stride, p.dilate, TShape(pad))};
}

void ForwardDeconv(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<DeconvolutionParam>();
  if (req[0] == OpReq::kNull) return;
  auto s = Setup(p, in[0].shape(), out[0].shape());
  float* y = out[0].fdata();
  ConvBackwardData(in[0].fdata(), in[1].fdata(), y, s.dims, s.geom, req[0]);
  if (!p.no_bias) {
    const float* b = in[2].fdata();
    const int64_t plane = s.geom.in_size(), rows = s.dims.batch * p.num_filter;
    ParallelFor(rows, std::max<int64_t>(1, kElementwiseGrain / plane), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < plane; ++j) y[r * plane + j] += b[r % p.num_filter];
    });
  }
}

void BackwardDeconv(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<DeconvolutionParam>();
  auto s = Setup(p, a.inputs[0].shape(), a.out_grads[0].shape());
  const float* dy = a.out_grads[0].fdata();
  auto grad = [&](size_t i) { return a.in_grads[i].is_none() ? nullptr : a.in_grads[i].fdata(); };
  // d data = conv(dy, W); d W = the convolution's weight gradient with data and dy swapped.
  ConvForward(dy, a.inputs[1].fdata(), nullptr, grad(0), s.dims, s.geom, a.req[0]);
  ConvBackwardWeight(a.inputs[0].fdata(), dy, grad(1), s.dims, s.geom, a.req[1]);
  if (!p.no_bias)
    BiasBackward(dy, grad(2), s.dims.batch, p.num_filter, s.geom.in_size(), a.req[2]);
}
}  // namespace

SYMBIND_REGISTER_OP(Deconvolution)
    .describe(R"(Computes 1-D, 2-D or 3-D transposed convolution (the gradient of Convolution
with respect to its input) on (N+2)-D input.

out spatial size = stride*(x-1) + dilate*(kernel-1) + 1 - 2*pad + adj; when target_shape is set
pad and adj are derived from it. weight: (channel, num_filter/num_group, kernel...), bias:
(num_filter,) (absent by default: no_bias defaults to True).)")
    .set_params<DeconvolutionParam>()
    .set_arguments(DataWeightBiasArguments<DeconvolutionParam>)
    .add_argument_doc("data", "Input data to the deconvolution: (batch, channel, [depth,] height, width).")
    .add_argument_doc("weight", "Weight matrix: (channel, num_filter/num_group, kernel...).")
    .add_argument_doc("bias", "Bias parameter: (num_filter,); present only when no_bias is False.")
    .set_infer_shape(InferShapeDeconv)
    // Each input element meets one row of the weight.
    .set_mac_count([](const NodeAttrs&, const std::vector<TShape>& in,
                      const std::vector<TShape>&) { return WeightRowMacs(in[0], in[1]); })
    .set_forward(ForwardDeconv)
    .set_backward(BackwardDeconv);

}  // namespace symbind
