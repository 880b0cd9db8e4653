// _contrib_div_sqrt_dim: out = data / sqrt(data.shape[-1]), the attention-score scaling of
// MXNet's transformer ops. Its gradient is the same scaling of the head gradient.
#include <cmath>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {
void CheckHasLastDim(const TShape& s) {
  if (s.ndim() == 0)
    throw ShapeError(StrCat("_contrib_div_sqrt_dim: the input needs at least 1 dimension, got shape ", s));
}

void InferDivSqrtDimShape(const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
  SameShape(a, in, out);
  CheckHasLastDim((*in)[0]);
}

// x / sqrt(last dim of x), into y as req says.
void DivideBySqrtLastDim(const NDArray& x, const NDArray& y, OpReq req) {
  const TShape& s = x.shape();
  CheckHasLastDim(s);
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(s[s.ndim() - 1])));
  const float* in = x.fdata();
  MapWithReq(y.fdata(), x.Size(), req, [&](int64_t i) { return in[i] * scale; });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_div_sqrt_dim)
    .set_monitor_numbered_inputs()
    .describe("Rescales the input by the square root of its last dimension: data / sqrt(data.shape[-1]).")
    .set_forward_inplace()
    .set_infer_shape(InferDivSqrtDimShape)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      DivideBySqrtLastDim(in[0], out[0], req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      DivideBySqrtLastDim(a.out_grads[0], a.in_grads[0], a.req[0]);
    });

}  // namespace symbind
