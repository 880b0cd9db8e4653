// Dropout with inverted scaling; hidden output `mask` holds 0 or 1 / (1 - p) per element
// (shaped like the data with the `axes` dims set to 1, broadcast over them: variational
// dropout).
//
// MXNet facts matched here: dropout is active when training or with mode=always, and p > 0;
// otherwise the op is the identity and the hidden mask is left unwritten (nothing reads it: the
// backward multiplies by the mask when dropout was active and passes the gradient through otherwise).
// The mask is keep (0 or 1) times 1 / (1 - p), in float as MXNet's kernel computes it: with p = 1
// that is 0 * inf, NaN, which MXNet's own tests check for.
#include <random>

#include <symbind/ops/nn/dropout_param.h>

namespace symbind {

namespace {

bool Active(const OpContext& ctx, const DropoutParam& p) {
  return p.p > 0 && (ctx.is_train || p.mode == kDropoutAlways);
}

TShape MaskShape(const DropoutParam& p, const TShape& d) {
  TShape m = d;
  for (int i = 0; i < p.axes.ndim(); ++i) {
    const int64_t a = p.axes[i] < 0 ? p.axes[i] + d.ndim() : p.axes[i];
    if (a < 0 || a >= d.ndim())
      throw ShapeError(StrCat("Dropout: axes entry ", p.axes[i], " is out of range for data of shape ", d));
    m[static_cast<int>(a)] = 1;
  }
  return m;
}

// Maps a data element's flat index to its mask element (broadcast over the dropped axes).
struct MaskIndexer {
  std::vector<int64_t> dims, mask_strides;  // per data dim; stride 0 where the mask has 1
  bool same = true;
  MaskIndexer(const TShape& d, const TShape& m) {
    dims = d.dims();
    mask_strides.assign(dims.size(), 0);
    int64_t stride = 1;
    for (int i = d.ndim() - 1; i >= 0; --i) {
      if (m[i] != d[i]) same = false;
      mask_strides[i] = m[i] == 1 && d[i] != 1 ? 0 : stride;
      stride *= m[i];
    }
  }
  int64_t operator()(int64_t i) const {
    if (same) return i;
    int64_t at = 0;
    for (int k = static_cast<int>(dims.size()) - 1; k >= 0; --k) {
      at += (i % dims[k]) * mask_strides[k];
      i /= dims[k];
    }
    return at;
  }
};

void InferDropout(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  SameShape(attrs, in, out);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 1, MaskShape(attrs.param<DropoutParam>(), d));
}

void DropoutForward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<DropoutParam>();
  const float* x = in[0].fdata();
  float *y = out[0].fdata(), *mask = out[1].fdata();
  const int64_t n = in[0].Size(), m = out[1].Size();
  if (!Active(ctx, p)) {
    if (y != x || req[0] == OpReq::kAdd) MapWithReq(y, n, req[0], [&](int64_t i) { return x[i]; });
    return;  // in place (an inference executor's plan): the identity has nothing to write
  }
  // Keep with probability 1 - p; the engine is seeded per node and run by the executor.
  const double keep = 1.0 - static_cast<double>(p.p);
  const float scale = 1.0f / (1.0f - p.p);  // MXNet's float 1 / pkeep: inf at p = 1
  std::mt19937_64 rng(ctx.seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  for (int64_t i = 0; i < m; ++i) mask[i] = (u01(rng) < keep ? 1.0f : 0.0f) * scale;
  const MaskIndexer idx(in[0].shape(), out[1].shape());
  MapWithReq(y, n, req[0], [&](int64_t i) { return x[i] * mask[idx(i)]; });
}

void DropoutBackward(const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<DropoutParam>();
  const float *dy = a.out_grads[0].fdata(), *mask = a.outputs[1].fdata();
  float* dx = a.in_grads[0].fdata();
  const int64_t n = a.inputs[0].Size();
  if (!Active(ctx, p)) {
    MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i]; });
    return;
  }
  const MaskIndexer idx(a.inputs[0].shape(), a.outputs[1].shape());
  MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i] * mask[idx(i)]; });
}
}  // namespace

SYMBIND_REGISTER_OP(Dropout)
    .describe("Applies dropout: in training (or always with mode=always) each element is zeroed "
              "with probability p and the rest are scaled by 1/(1-p); otherwise the identity. "
              "`axes` shares one mask value along the given axes (variational dropout).")
    .set_params<DropoutParam>()
    .set_outputs({"output", "mask"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferDropout)
    .set_forward(DropoutForward)
    .set_forward_inplace()  // element by element: y[i] from x[i] (and the mask)
    .set_backward(DropoutBackward);

}  // namespace symbind
