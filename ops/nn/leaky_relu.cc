// LeakyReLU: leaky, prelu, rrelu, elu, selu, gelu.
//
// MXNet facts matched here:
// - leaky/elu/selu/rrelu gradients are computed from the OUTPUT (xelu_grad, elu_grad,
//   selu_grad), prelu and gelu gradients from the input.
// - selu's gradient for non-positive outputs is lambda * (alpha + y), MXNet's selu_grad
//   (mathematically d/dx is y + lambda * alpha; the two differ by (lambda - 1) * y).
// - prelu's gamma broadcasts onto the data's first two axes (aligned from the right), so
//   gamma may be (C,), (1,) or (N, C); an unknown gamma shape is inferred as (C,).
// - rrelu's `mask` output (the per-element slopes) is hidden, as in MXNet's original
//   LeakyReLU operator property. In inference the slope is (lower + upper) / 2 and the mask is
//   filled with it.
#include <algorithm>
#include <cmath>
#include <random>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

enum ActType { kRReLU, kLeaky, kPReLU, kELU, kSELU, kGELU };

constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kPi = 3.14159265358979323846;

struct LeakyReLUParam : Parameter<LeakyReLUParam> {
  int act_type;
  float slope, lower_bound, upper_bound;
  static void Declare(ParamDeclarer<LeakyReLUParam>& d) {
    d.field("act_type", &LeakyReLUParam::act_type)
        .add_enum("rrelu", kRReLU).add_enum("leaky", kLeaky).add_enum("prelu", kPReLU)
        .add_enum("elu", kELU).add_enum("selu", kSELU).add_enum("gelu", kGELU)
        .set_default(kLeaky).describe("Activation function to be applied.");
    d.field("slope", &LeakyReLUParam::slope).set_default(0.25f)
        .describe("Init slope for the activation. (For leaky and elu only)");
    d.field("lower_bound", &LeakyReLUParam::lower_bound).set_default(0.125f)
        .describe("Lower bound of random slope. (For rrelu only)");
    d.field("upper_bound", &LeakyReLUParam::upper_bound).set_default(0.334f)
        .describe("Upper bound of random slope. (For rrelu only)");
    d.check([](const LeakyReLUParam& p) {
              return p.act_type != kRReLU || p.lower_bound <= p.upper_bound;
            },
            "LeakyReLU: rrelu needs lower_bound <= upper_bound", {"lower_bound", "upper_bound"});
  }
};

const LeakyReLUParam& P(const NodeAttrs& a) { return a.param<LeakyReLUParam>(); }

// Data viewed as (N, C, rest); prelu's gamma, expanded onto (N, C), is indexed by
// (n if gamma spans N) * gamma_c + (c if gamma spans C).
struct PReLULayout {
  int64_t N, C, rest;
  bool g_n, g_c;  // gamma varies along N / along C
  int64_t gamma_c;
  int64_t GammaIndex(int64_t i) const {
    const int64_t nc = i / rest, n = nc / C, c = nc % C;
    return (g_n ? n * gamma_c : 0) + (g_c ? c : 0);
  }
};

// MXNet's expand_shape: gamma's dims align from the right with data dims 0 and 1, each equal
// to the data dim or 1. Throws ShapeError otherwise.
PReLULayout MakePReLULayout(const TShape& d, const TShape& g) {
  const int64_t N = d.ndim() > 0 ? d[0] : 1, C = d.ndim() > 1 ? d[1] : 1;
  std::vector<int64_t> expanded(2, 1);  // over data dims 0, 1
  int s = g.ndim() - 1;
  for (int i = std::min(d.ndim(), 2) - 1; i >= 0 && s >= 0; --i) {
    if (d[i] == g[s] || g[s] == 1) expanded[i] = g[s--];  // else: gamma is 1 along dim i
  }
  if (s != -1)
    throw ShapeError(StrCat("LeakyReLU(prelu): cannot broadcast gamma to data. gamma: ", g, ", data: ", d,
                            " (gamma must be (C,), (1,) or (N, C) for data (N, C, ...))"));
  PReLULayout l{N, C, N * C == 0 ? 0 : d.Size() / (N * C), expanded[0] > 1, expanded[1] > 1, expanded[1]};
  return l;
}

void InferLeakyReLU(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = P(attrs);
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (p.act_type == kPReLU) {
    if (!(*in)[1].ndim_known()) ShapeAssignCheck(in, 1, TShape({d.ndim() > 1 ? d[1] : 1}));
    if (d.is_known() && (*in)[1].is_known()) MakePReLULayout(d, (*in)[1]);
  }
  ShapeAssignCheck(out, 0, d);
  if (p.act_type == kRReLU) ShapeAssignCheck(out, 1, d);
}

// x for x > 0, slope * x otherwise: MXNet's xelu (and FusedActivation's kLeaky, so a LeakyReLU
// fused into a convolution gives the same bits); a select the loops vectorise as a blend.
inline float Leaky(float x, float slope) { return x > 0 ? x : slope * x; }

float Gelu(float x) { return static_cast<float>(0.5 * x * (1.0 + std::erf(x / kSqrt2))); }
float GeluGrad(float x) {
  const double z = x / kSqrt2;
  return static_cast<float>(0.5 * (1.0 + std::erf(z) + x * (2.0 / std::sqrt(kPi)) * std::exp(-z * z) / kSqrt2));
}

void LeakyReLUForward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = P(attrs);
  const float* x = in[0].fdata();
  float* y = out[0].fdata();
  const int64_t n = in[0].Size();
  switch (p.act_type) {
    case kLeaky:
      MapWithReq(y, n, req[0], [&](int64_t i) { return Leaky(x[i], p.slope); });
      break;
    case kELU:
      MapWithReq(y, n, req[0], [&](int64_t i) { return x[i] > 0 ? x[i] : p.slope * std::expm1(x[i]); });
      break;
    case kSELU:
      MapWithReq(y, n, req[0], [&](int64_t i) {
        return kSeluLambda * (x[i] > 0 ? x[i] : kSeluAlpha * std::expm1(x[i]));
      });
      break;
    case kGELU:
      MapWithReq(y, n, req[0], [&](int64_t i) { return Gelu(x[i]); });
      break;
    case kPReLU: {
      const PReLULayout l = MakePReLULayout(in[0].shape(), in[1].shape());
      const float* gamma = in[1].fdata();
      if (req[0] == OpReq::kNull) break;
      // One slope per (n, c) plane: a contiguous, vectorisable loop per plane.
      const bool add = req[0] == OpReq::kAdd;
      ParallelFor(l.N * l.C, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, l.rest)),
                  [&](int64_t p0, int64_t p1) {
                    for (int64_t plane = p0; plane < p1; ++plane) {
                      const float slope = gamma[l.GammaIndex(plane * l.rest)];
                      const float* xp = x + plane * l.rest;
                      float* yp = y + plane * l.rest;
                      if (add)
                        for (int64_t i = 0; i < l.rest; ++i) yp[i] += Leaky(xp[i], slope);
                      else
                        for (int64_t i = 0; i < l.rest; ++i) yp[i] = Leaky(xp[i], slope);
                    }
                  });
      break;
    }
    case kRReLU: {
      float* mask = out[1].fdata();
      if (ctx.is_train) {
        // One slope per element, uniform in [lower, upper), from the node's seed.
        std::mt19937_64 rng(ctx.seed);
        std::uniform_real_distribution<float> u01(0.0f, 1.0f);
        for (int64_t i = 0; i < n; ++i) mask[i] = u01(rng) * (p.upper_bound - p.lower_bound) + p.lower_bound;
      } else {
        const float slope = (p.lower_bound + p.upper_bound) / 2.0f;
        MapWithReq(mask, n, OpReq::kWrite, [&](int64_t) { return slope; });
      }
      MapWithReq(y, n, req[0], [&](int64_t i) { return x[i] > 0 ? x[i] : x[i] * mask[i]; });
      break;
    }
  }
}

void LeakyReLUBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = P(attrs);
  const float *x = a.inputs[0].fdata(), *y = a.outputs[0].fdata(), *dy = a.out_grads[0].fdata();
  const int64_t n = a.inputs[0].Size();
  if (p.act_type == kPReLU) {
    const PReLULayout l = MakePReLULayout(a.inputs[0].shape(), a.inputs[1].shape());
    const float* gamma = a.inputs[1].fdata();
    if (a.req[0] != OpReq::kNull)
      MapWithReq(InGradOrNull(a, 0), n, a.req[0],
                 [&](int64_t i) { return dy[i] * (x[i] > 0 ? 1.0f : gamma[l.GammaIndex(i)]); });
    if (a.req[1] != OpReq::kNull) {
      // Partial sums per (n, c) row in parallel, then a fixed-order reduction into gamma.
      std::vector<double> rows(static_cast<size_t>(l.N * l.C), 0.0);
      ParallelFor(l.N * l.C, GrainFor(l.rest), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          double s = 0;
          for (int64_t j = r * l.rest; j < (r + 1) * l.rest; ++j) s += x[j] > 0 ? 0.0 : static_cast<double>(x[j]) * dy[j];
          rows[r] = s;
        }
      });
      const int64_t gsize = a.inputs[1].Size();
      std::vector<double> acc(static_cast<size_t>(gsize), 0.0);
      for (int64_t r = 0; r < l.N * l.C; ++r) acc[l.GammaIndex(r * l.rest)] += rows[r];
      float* dgamma = a.in_grads[1].fdata();
      for (int64_t k = 0; k < gsize; ++k) Put(dgamma + k, static_cast<float>(acc[k]), a.req[1]);
    }
    return;
  }
  if (a.req[0] == OpReq::kNull) return;
  float* dx = a.in_grads[0].fdata();
  switch (p.act_type) {
    case kLeaky:
      MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i] * (y[i] > 0 ? 1.0f : p.slope); });
      break;
    case kELU:
      MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i] * (y[i] > 0 ? 1.0f : p.slope + y[i]); });
      break;
    case kSELU:  // MXNet's selu_grad, see the file comment.
      MapWithReq(dx, n, a.req[0],
                 [&](int64_t i) { return dy[i] * kSeluLambda * (y[i] > 0 ? 1.0f : kSeluAlpha + y[i]); });
      break;
    case kGELU:
      MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i] * GeluGrad(x[i]); });
      break;
    case kRReLU: {
      const float* mask = a.outputs[1].fdata();
      MapWithReq(dx, n, a.req[0], [&](int64_t i) { return dy[i] * (y[i] > 0 ? 1.0f : mask[i]); });
      break;
    }
  }
}
}  // namespace

SYMBIND_REGISTER_OP(LeakyReLU)
    .set_forward_inplace()
    .describe(
        "Leaky rectified linear units: leaky (x > 0 ? x : slope * x), prelu (slope gamma "
        "learnt per channel), rrelu (slope uniform in [lower_bound, upper_bound) in training, "
        "their mean in inference), elu (x > 0 ? x : slope * (exp(x) - 1)), selu (scaled elu) "
        "and gelu (0.5 x (1 + erf(x / sqrt(2)))).")
    .set_params<LeakyReLUParam>()
    .set_arguments([](const NodeAttrs& a) {
      return P(a).act_type == kPReLU ? std::vector<std::string>{"data", "gamma"}
                                     : std::vector<std::string>{"data"};
    })
    .set_outputs([](const NodeAttrs& a) {
      return P(a).act_type == kRReLU ? std::vector<std::string>{"output", "mask"}
                                     : std::vector<std::string>{"output"};
    })
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .add_argument_doc("data", "Input data to the activation function.")
    .add_argument_doc("gamma", "Learned slopes, (channel,) or (1,): act_type prelu only.")
    .set_input_initializer("gamma", R"(["Constant", {"value": 0.25}])")
    .set_infer_shape(InferLeakyReLU)
    .set_forward(LeakyReLUForward)
    .set_backward(LeakyReLUBackward);

}  // namespace symbind
