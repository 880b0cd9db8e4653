// Ops that change shape without changing values.
#include <cstring>

#include "kernel_util.h"

namespace symbind {

namespace {
// Copies (or adds) src into dst element-wise; the shapes may differ, the sizes match.
void CopyWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull || dst.raw_data() == src.raw_data()) return;
  const float* s = src.fdata();
  MapWithReq(dst.fdata(), dst.Size(), req, [&](int64_t i) { return s[i]; });
}

void ForwardCopy(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                 const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  CopyWithReq(out[0], in[0], req[0]);
}

void BackwardCopy(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  CopyWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
}
}  // namespace

SYMBIND_REGISTER_OP(Flatten)
    .add_alias("flatten")
    .describe("Flattens the input to 2-D: (d0, d1*d2*...).")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.ndim_known()) return;
      if (d.ndim() < 1) throw ShapeError("Flatten needs data of rank >= 1");
      int64_t rest = 1;
      for (int i = 1; i < d.ndim(); ++i) rest = (d[i] < 0 || rest < 0) ? -1 : rest * d[i];
      ShapeAssignCheck(out, 0, TShape({d[0], rest}));
    })
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

}  // namespace symbind
