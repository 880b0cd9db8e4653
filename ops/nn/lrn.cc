// LRN: local response normalisation across channels (AlexNet, CaffeNet).
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

// LRN across channels (MXNet's lrn-inl.h):
//   tmp_norm = knorm + alpha / nsize * sum_{|c'-c| <= nsize/2} x[c']^2
//   out = x * tmp_norm^-beta
// Hidden output tmp_norm.

struct LRNParam : Parameter<LRNParam> {
  float alpha, beta, knorm;
  int64_t nsize;
  static void Declare(ParamDeclarer<LRNParam>& d) {
    d.field("alpha", &LRNParam::alpha).set_default(1e-4f)
        .describe("The variance scaling parameter alpha in the LRN expression.");
    d.field("beta", &LRNParam::beta).set_default(0.75f)
        .describe("The power parameter beta in the LRN expression.");
    d.field("knorm", &LRNParam::knorm).set_default(2.0f)
        .describe("The parameter k in the LRN expression.");
    d.field("nsize", &LRNParam::nsize).lower_bound(1)
        .describe("normalization window width in elements.");
  }
};

void InferLRN(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<LRNParam>();
  if (p.nsize % 2 != 1)
    throw ShapeError(StrCat("LRN only supports odd values for local_size (nsize); got nsize=", p.nsize));
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  // MXNet's kernel views the data as a 4-D (N, C, H, W) tensor.
  if (d.ndim() != 4) throw ShapeError(StrCat("LRN expects 4-D data (N, C, H, W); got shape ", d));
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, d);
}

// For every (n, spatial) pair, sum over the channel window of f(channel index); calls
// emit(at, window_sum) for every element.
template <typename F, typename Emit>
void ChannelWindowSums(const TShape& s, int64_t half, const F& f, const Emit& emit) {
  const AxisLayout l{s[0], s[1], s.ProdDims(2, s.ndim())};
  ParallelFor(l.outer * l.inner, GrainFor(l.n * (2 * half + 1)), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      for (int64_t c = 0; c < l.n; ++c) {
        double sum = 0;
        for (int64_t k = std::max<int64_t>(0, c - half); k <= std::min(l.n - 1, c + half); ++k)
          sum += f(base + k * l.inner);
        emit(base + c * l.inner, sum);
      }
    }
  });
}

void LRNForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LRNParam>();
  const float salpha = p.alpha / static_cast<float>(p.nsize);
  const float* x = in[0].fdata();
  float *y = out[0].fdata(), *tmp = out[1].fdata();
  ChannelWindowSums(
      in[0].shape(), p.nsize / 2, [&](int64_t at) { return static_cast<double>(x[at]) * x[at]; },
      [&](int64_t at, double sum) {
        tmp[at] = static_cast<float>(sum) * salpha + p.knorm;
        Put(y + at, x[at] * std::pow(tmp[at], -p.beta), req[0]);
      });
}

// dx = dy * tmp^-beta - 2 beta salpha x * sum_window(dy * x * tmp^(-beta-1))
void LRNBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const auto& p = attrs.param<LRNParam>();
  const float salpha = p.alpha / static_cast<float>(p.nsize);
  const float *x = a.inputs[0].fdata(), *tmp = a.outputs[1].fdata(), *dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  ChannelWindowSums(
      a.inputs[0].shape(), p.nsize / 2,
      [&](int64_t at) { return static_cast<double>(dy[at]) * x[at] * std::pow(tmp[at], -p.beta - 1.0f); },
      [&](int64_t at, double sum) {
        const double v = dy[at] * std::pow(tmp[at], -p.beta) - 2.0 * p.beta * salpha * sum * x[at];
        Put(dx + at, static_cast<float>(v), a.req[0]);
      });
}

}  // namespace

SYMBIND_REGISTER_OP(LRN)
    .describe("Local response normalization across channels: out = x * (knorm + alpha / nsize * "
              "sum of x^2 over a window of nsize channels)^-beta.")
    .set_params<LRNParam>()
    .set_outputs({"output", "tmp_norm"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferLRN)
    .set_forward(LRNForward)
    .set_backward(LRNBackward);

}  // namespace symbind
