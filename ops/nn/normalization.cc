// InstanceNorm, L2Normalization, LayerNorm and LRN.
#include <cmath>

#include <symbind/ops/norm_util.h>

namespace symbind {

namespace {
using norm_util::AxisLayout;
using norm_util::Put;

// ---------------------------------------------------------------------------------------------
// InstanceNorm: each (instance, channel) is normalised over its spatial elements.
// Hidden outputs mean and var (the biased variance, not the inverse std), shape (N, C).

struct InstanceNormParam : Parameter<InstanceNormParam> {
  float eps;
  static void Declare(ParamDeclarer<InstanceNormParam>& d) {
    d.field("eps", &InstanceNormParam::eps).set_default(1e-3f)
        .describe("An `epsilon` parameter to prevent division by 0.");
  }
};

void InferInstanceNorm(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 3)
    throw ShapeError(StrCat("InstanceNorm only supports input tensors of rank >= 3; got data of shape ", d));
  ShapeAssignCheck(in, 1, TShape({d[1]}));
  ShapeAssignCheck(in, 2, TShape({d[1]}));
  ShapeAssignCheck(out, 0, d);
  ShapeAssignCheck(out, 1, TShape({d[0], d[1]}));
  ShapeAssignCheck(out, 2, TShape({d[0], d[1]}));
}

void InstanceNormForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const float eps = attrs.param<InstanceNormParam>().eps;
  const TShape& s = in[0].shape();
  const int64_t C = s[1], groups = s[0] * C, rest = s.ProdDims(2, s.ndim());
  const float *x = in[0].fdata(), *gamma = in[1].fdata(), *beta = in[2].fdata();
  float *y = out[0].fdata(), *mean_out = out[1].fdata(), *var_out = out[2].fdata();
  ParallelFor(groups, norm_util::GrainFor(rest), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      double mean, var;
      norm_util::GroupMoments(x + g * rest, rest, 1, &mean, &var);
      mean_out[g] = static_cast<float>(mean);
      var_out[g] = static_cast<float>(var);
      const float m = static_cast<float>(mean);
      const float scale = static_cast<float>(gamma[g % C] / std::sqrt(var + eps));
      for (int64_t j = 0; j < rest; ++j)
        Put(y + g * rest + j, (x[g * rest + j] - m) * scale + beta[g % C], req[0]);
    }
  });
}

void InstanceNormBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const float eps = attrs.param<InstanceNormParam>().eps;
  const TShape& s = a.inputs[0].shape();
  const int64_t N = s[0], C = s[1], rest = s.ProdDims(2, s.ndim());
  const float *x = a.inputs[0].fdata(), *gamma = a.inputs[1].fdata(), *dy = a.out_grads[0].fdata();
  const float *mean = a.outputs[1].fdata(), *var = a.outputs[2].fdata();
  if (a.req[0] != OpReq::kNull) {
    float* dx = a.in_grads[0].fdata();
    ParallelFor(N * C, norm_util::GrainFor(rest), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const float rstd = 1.0f / std::sqrt(var[g] + eps), w = gamma[g % C];
        norm_util::NormalizeGroupBackward(x + g * rest, dy + g * rest, [w](int64_t) { return w; },
                                          rest, 1, mean[g], rstd, dx + g * rest, a.req[0]);
      }
    });
  }
  // gamma and beta: sums over instances and spatial positions, per channel.
  for (int k : {1, 2}) {
    if (a.req[k] == OpReq::kNull) continue;
    float* dst = a.in_grads[k].fdata();
    ParallelFor(C, norm_util::GrainFor(N * rest), [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < N; ++n) {
          const int64_t g = n * C + c;
          const double rstd = 1.0 / std::sqrt(static_cast<double>(var[g]) + eps);
          for (int64_t j = 0; j < rest; ++j)
            sum += k == 2 ? dy[g * rest + j] : dy[g * rest + j] * (x[g * rest + j] - mean[g]) * rstd;
        }
        Put(dst + c, static_cast<float>(sum), a.req[k]);
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
// L2Normalization: out = x / sqrt(sum x^2 + eps) over the mode's group. Hidden output norm.

enum L2Mode { kInstance, kChannel, kSpatial };

struct L2NormalizationParam : Parameter<L2NormalizationParam> {
  float eps;
  int mode;
  static void Declare(ParamDeclarer<L2NormalizationParam>& d) {
    d.field("eps", &L2NormalizationParam::eps).set_default(1e-10f)
        .describe("A small constant for numerical stability.");
    d.field("mode", &L2NormalizationParam::mode)
        .add_enum("instance", kInstance).add_enum("spatial", kSpatial).add_enum("channel", kChannel)
        .set_default(kInstance)
        .describe("Specify the dimension along which to compute L2 norm.");
  }
};

// The groups as (outer, n, inner): the norm is taken over n for every (outer, inner).
AxisLayout L2Layout(int mode, const TShape& s) {
  if (mode == kInstance) return {s[0], s.ProdDims(1, s.ndim()), 1};
  if (mode == kChannel) return {s[0], s[1], s.ProdDims(2, s.ndim())};
  return {s[0] * s[1], s.ProdDims(2, s.ndim()), 1};  // spatial
}

void InferL2Normalization(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const int mode = attrs.param<L2NormalizationParam>().mode;
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  if (d.ndim() < 1) throw ShapeError("L2Normalization needs data of rank >= 1");
  if (mode != kInstance && d.ndim() < 3)
    throw ShapeError(StrCat("L2Normalization: at least 3 dimensions required in ",
                            mode == kChannel ? "channel" : "spatial", " mode; got data of shape ", d));
  ShapeAssignCheck(out, 0, d);
  if (mode == kInstance) {
    ShapeAssignCheck(out, 1, TShape({d[0]}));
  } else if (mode == kChannel) {
    TShape n = d;
    n[1] = 1;
    ShapeAssignCheck(out, 1, n);
  } else {
    ShapeAssignCheck(out, 1, TShape({d[0], d[1]}));
  }
}

void L2NormalizationForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<L2NormalizationParam>();
  const AxisLayout l = L2Layout(p.mode, in[0].shape());
  const float* x = in[0].fdata();
  float *y = out[0].fdata(), *norm = out[1].fdata();
  ParallelFor(l.outer * l.inner, norm_util::GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double sq = 0;
      for (int64_t k = 0; k < l.n; ++k) sq += static_cast<double>(x[base + k * l.inner]) * x[base + k * l.inner];
      const float nrm = static_cast<float>(std::sqrt(sq + p.eps));
      norm[g] = nrm;
      for (int64_t k = 0; k < l.n; ++k) Put(y + base + k * l.inner, x[base + k * l.inner] / nrm, req[0]);
    }
  });
}

// dx = (dy - y * sum(dy * y)) / norm, from the output y.
void L2NormalizationBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  if (a.req[0] == OpReq::kNull) return;
  const AxisLayout l = L2Layout(attrs.param<L2NormalizationParam>().mode, a.inputs[0].shape());
  const float *y = a.outputs[0].fdata(), *norm = a.outputs[1].fdata(), *dy = a.out_grads[0].fdata();
  float* dx = a.in_grads[0].fdata();
  ParallelFor(l.outer * l.inner, norm_util::GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double dot = 0;
      for (int64_t k = 0; k < l.n; ++k) dot += static_cast<double>(dy[base + k * l.inner]) * y[base + k * l.inner];
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        Put(dx + at, static_cast<float>((dy[at] - y[at] * dot) / norm[g]), a.req[0]);
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// LayerNorm: normalises along `axis`; gamma and beta have that axis' length. Hidden outputs
// mean and std (= sqrt(var + eps)), shaped like the data with the axis set to 1.

struct LayerNormParam : Parameter<LayerNormParam> {
  int axis;
  float eps;
  bool output_mean_var;
  static void Declare(ParamDeclarer<LayerNormParam>& d) {
    d.field("axis", &LayerNormParam::axis).set_default(-1)
        .describe("The axis to perform layer normalization. Usually, this should be be axis of the "
                  "channel dimension. Negative values means indexing from right to left.");
    d.field("eps", &LayerNormParam::eps).set_default(1e-5f)
        .describe("An `epsilon` parameter to prevent division by 0.");
    d.field("output_mean_var", &LayerNormParam::output_mean_var).set_default(false)
        .describe("Output the mean and std calculated along the given axis.");
  }
};

AxisLayout LayerNormLayout(const LayerNormParam& p, const TShape& s) {
  return norm_util::LayoutAround(s, norm_util::ResolveAxis("LayerNorm", p.axis, s));
}

void InferLayerNorm(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<LayerNormParam>();
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  const int axis = norm_util::ResolveAxis("LayerNorm", p.axis, d);
  ShapeAssignCheck(in, 1, TShape({d[axis]}));
  ShapeAssignCheck(in, 2, TShape({d[axis]}));
  ShapeAssignCheck(out, 0, d);
  TShape moments = d;
  moments[axis] = 1;
  ShapeAssignCheck(out, 1, moments);
  ShapeAssignCheck(out, 2, moments);
}

void LayerNormForward(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<LayerNormParam>();
  const AxisLayout l = LayerNormLayout(p, in[0].shape());
  const float *x = in[0].fdata(), *gamma = in[1].fdata(), *beta = in[2].fdata();
  float *y = out[0].fdata(), *mean_out = out[1].fdata(), *std_out = out[2].fdata();
  ParallelFor(l.outer * l.inner, norm_util::GrainFor(l.n), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
      double mean, var;
      norm_util::GroupMoments(x + base, l.n, l.inner, &mean, &var);
      const double sd = std::sqrt(var + p.eps);
      mean_out[g] = static_cast<float>(mean);
      std_out[g] = static_cast<float>(sd);
      const float m = static_cast<float>(mean), rstd = static_cast<float>(1.0 / sd);
      for (int64_t k = 0; k < l.n; ++k) {
        const int64_t at = base + k * l.inner;
        Put(y + at, (x[at] - m) * rstd * gamma[k] + beta[k], req[0]);
      }
    }
  });
}

void LayerNormBackward(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<LayerNormParam>();
  const AxisLayout l = LayerNormLayout(p, a.inputs[0].shape());
  const float *x = a.inputs[0].fdata(), *gamma = a.inputs[1].fdata(), *dy = a.out_grads[0].fdata();
  const float *mean = a.outputs[1].fdata(), *sd = a.outputs[2].fdata();
  const int64_t groups = l.outer * l.inner;
  if (a.req[0] != OpReq::kNull) {
    float* dx = a.in_grads[0].fdata();
    ParallelFor(groups, norm_util::GrainFor(l.n), [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const int64_t base = l.Index(g / l.inner, 0, g % l.inner);
        norm_util::NormalizeGroupBackward(x + base, dy + base, [gamma](int64_t k) { return gamma[k]; },
                                          l.n, l.inner, mean[g], 1.0f / sd[g], dx + base, a.req[0]);
      }
    });
  }
  // gamma and beta: per position along the axis, sums over all groups.
  for (int which : {1, 2}) {
    if (a.req[which] == OpReq::kNull) continue;
    float* dst = a.in_grads[which].fdata();
    ParallelFor(l.n, norm_util::GrainFor(groups), [&](int64_t b, int64_t e) {
      for (int64_t k = b; k < e; ++k) {
        double sum = 0;
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t at = l.Index(g / l.inner, k, g % l.inner);
          sum += which == 2 ? dy[at] : static_cast<double>(dy[at]) * (x[at] - mean[g]) / sd[g];
        }
        Put(dst + k, static_cast<float>(sum), a.req[which]);
      }
    });
  }
}

// ---------------------------------------------------------------------------------------------
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
  ParallelFor(l.outer * l.inner, norm_util::GrainFor(l.n * (2 * half + 1)), [&](int64_t b, int64_t e) {
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

SYMBIND_REGISTER_OP(InstanceNorm)
    .describe("Instance normalization: out = (x - mean) / sqrt(var + eps) * gamma + beta, with mean "
              "and var over the spatial elements of each instance and channel.")
    .set_params<InstanceNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_outputs({"output", "mean", "var"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferInstanceNorm)
    .set_forward(InstanceNormForward)
    .set_backward(InstanceNormBackward);

SYMBIND_REGISTER_OP(L2Normalization)
    .describe("Normalizes the data by its L2 norm: over each instance (instance), over channels at "
              "each position (channel), or over the spatial positions of each channel (spatial).")
    .set_params<L2NormalizationParam>()
    .set_outputs({"output", "norm"})
    .set_num_visible_outputs([](const NodeAttrs&) { return 1; })
    .set_infer_shape(InferL2Normalization)
    .set_forward(L2NormalizationForward)
    .set_backward(L2NormalizationBackward);

SYMBIND_REGISTER_OP(LayerNorm)
    .describe("Layer normalization along `axis`: out = (x - mean) / sqrt(var + eps) * gamma + beta. "
              "Hidden outputs mean and std are visible when output_mean_var is true.")
    .set_params<LayerNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_outputs({"output", "mean", "std"})
    .set_num_visible_outputs([](const NodeAttrs& a) {
      return a.param<LayerNormParam>().output_mean_var ? 3 : 1;
    })
    .set_infer_shape(InferLayerNorm)
    .set_forward(LayerNormForward)
    .set_backward(LayerNormBackward);

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
