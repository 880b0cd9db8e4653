// BatchNorm: per-channel normalisation with batch statistics in training and moving
// statistics in inference.
//
// MXNet facts matched here:
// - The hidden output `var` holds the INVERSE standard deviation 1/sqrt(var + eps), not the
//   variance, in training and inference alike (so output_mean_var=True outputs mean and
//   invstd, as MXNet's docs say).
// - The moving statistics use the biased batch variance (sum (x-mean)^2 / N).
// - fix_gamma computes with gamma = 1 and writes 0 into gamma's gradient (with req=add the
//   gradient is left unchanged, as MXNet only writes it for write requests).
// - The moving averages are updated during the training forward pass, as MXNet's MKLDNN and
//   cuDNN kernels do (its plain CPU kernel defers the same update to the backward pass).
// - Gradients of the `mean` and `var` outputs are ignored.
#include <cmath>

#include <symbind/ops/nn/batch_norm_param.h>
#include <symbind/ops/nn/norm_util.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
using batch_norm::kBeta;
using batch_norm::kData;
using batch_norm::kGamma;
using batch_norm::kMovingMean;
using batch_norm::kMovingVar;
using batch_norm::InferBatchNormShape;

template <typename P>
AxisLayout ChannelLayout(const P& p, const TShape& s) {
  return LayoutAround(s, NormalizeAxis(p.axis, s.ndim(), "BatchNorm"));
}

// Calls f(flat index) for every element of channel c.
template <typename F>
void ForChannel(const AxisLayout& l, int64_t c, const F& f) {
  for (int64_t o = 0; o < l.outer; ++o) {
    const int64_t base = l.Index(o, c, 0);
    for (int64_t i = 0; i < l.inner; ++i) f(base + i);
  }
}


template <typename P>
void BatchNormForward(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  const auto& p = attrs.param<P>();
  const FusedActivation act = p.activation();  // none for BatchNorm
  const AxisLayout l = ChannelLayout(p, in[kData].shape());
  const int64_t per_channel = l.outer * l.inner;
  const bool batch_stats = ctx.is_train && !p.use_global_stats;
  const float* x = in[kData].fdata();
  const float* gamma = in[kGamma].fdata();
  const float* beta = in[kBeta].fdata();
  float* moving_mean = in[kMovingMean].fdata();
  float* moving_var = in[kMovingVar].fdata();
  float* y = out[0].fdata();
  float* save_mean = out[1].fdata();
  float* save_invstd = out[2].fdata();
  ParallelFor(l.n, GrainFor(per_channel), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      double mean, invstd;
      if (batch_stats) {
        double sum = 0;
        ForChannel(l, c, [&](int64_t at) { sum += x[at]; });
        mean = sum / per_channel;
        double sq = 0;
        ForChannel(l, c, [&](int64_t at) { sq += (x[at] - mean) * (x[at] - mean); });
        const double var = sq / per_channel;
        // MXNet: a constant channel with eps 0 gets invstd 0 rather than inf.
        invstd = (sq == 0 && p.eps == 0) ? 0.0 : 1.0 / std::sqrt(var + p.eps);
        moving_mean[c] = static_cast<float>(moving_mean[c] * p.momentum + mean * (1.0 - p.momentum));
        moving_var[c] = static_cast<float>(moving_var[c] * p.momentum + var * (1.0 - p.momentum));
      } else {
        mean = moving_mean[c];
        invstd = MovingInvStd(moving_var[c], p.eps);
      }
      save_mean[c] = static_cast<float>(mean);
      save_invstd[c] = static_cast<float>(invstd);
      const BatchNormAffine affine = BatchNormAffineOf(mean, invstd, gamma[c], beta[c], p.fix_gamma);
      const float m = affine.mean, scale = affine.scale, shift = affine.shift;
      if (req[0] != OpReq::kWrite && req[0] != OpReq::kWriteInplace) {
        ForChannel(l, c, [&](int64_t at) { Put(y + at, act((x[at] - m) * scale + shift), req[0]); });
        continue;
      }
      for (int64_t o = 0; o < l.outer; ++o) {  // the common case as plain loops, vectorised
        const float* xs = x + l.Index(o, c, 0);
        float* ys = y + l.Index(o, c, 0);
        for (int64_t i = 0; i < l.inner; ++i) ys[i] = (xs[i] - m) * scale + shift;
        ActivateInPlace(ys, l.inner, act);  // the row still in L1
      }
    }
  });
}

// Over one contiguous row: *sum_dy += sum of dy, *dot += sum of (x - mean) * dy. Float partial
// sums in 8 lanes (the loop vectorises), rows added in double: a fixed order for any thread count.
void AddRowSums(const float* __restrict x, const float* __restrict dy, int64_t n, float mean, double* sum_dy,
                double* dot) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, d[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      s[l] += dy[i + l];
      d[l] += (x[i + l] - mean) * dy[i + l];
    }
  double rs = 0, rd = 0;
  for (int l = 0; l < 8; ++l) {
    rs += s[l];
    rd += d[l];
  }
  for (; i < n; ++i) {
    rs += dy[i];
    rd += static_cast<double>(x[i] - mean) * dy[i];
  }
  *sum_dy += rs;
  *dot += rd;
}

void BatchNormBackward(const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<BatchNormParam>();
  const AxisLayout l = ChannelLayout(p, a.inputs[kData].shape());
  const int64_t per_channel = l.outer * l.inner;
  const bool batch_stats = ctx.is_train && !p.use_global_stats;
  const float* x = a.inputs[kData].fdata();
  const float* gamma = a.inputs[kGamma].fdata();
  const float* dy = a.out_grads[0].fdata();
  // Forward saved the statistics it used: batch statistics in training, moving ones otherwise.
  const float* save_mean = a.outputs[1].fdata();
  const float* save_invstd = a.outputs[2].fdata();
  const OpReq req_x = a.req[kData], req_g = a.req[kGamma], req_b = a.req[kBeta];
  float* dx = req_x == OpReq::kNull ? nullptr : a.in_grads[kData].fdata();
  float* dgamma = req_g == OpReq::kNull ? nullptr : a.in_grads[kGamma].fdata();
  float* dbeta = req_b == OpReq::kNull ? nullptr : a.in_grads[kBeta].fdata();
  ParallelFor(l.n, GrainFor(per_channel), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const float mean = save_mean[c];
      const double invstd = save_invstd[c];
      const double w = p.fix_gamma ? 1.0 : gamma[c];
      double sum_dy = 0, dot = 0;
      for (int64_t o = 0; o < l.outer; ++o) AddRowSums(x + l.Index(o, c, 0), dy + l.Index(o, c, 0), l.inner, mean, &sum_dy, &dot);
      if (dx) {
        // Training: dx = (dy - mean(dy) - (x - mean) * invstd^2 * mean((x - mean) * dy)) * invstd * w;
        // otherwise dx = dy * invstd * w. In float with the per-channel factors from the double
        // sums; plain loops per row, vectorised (dx may be dy's buffer: each element reads its
        // own dy first).
        const float k = static_cast<float>(dot * invstd * invstd / per_channel);
        const float mean_dy = static_cast<float>(sum_dy / per_channel);
        const float iw = static_cast<float>(invstd * w);
        const bool add = req_x == OpReq::kAdd;
        for (int64_t o = 0; o < l.outer; ++o) {
          const float* xs = x + l.Index(o, c, 0);
          const float* dys = dy + l.Index(o, c, 0);
          float* dxs = dx + l.Index(o, c, 0);
          if (batch_stats && add)
            for (int64_t i = 0; i < l.inner; ++i) dxs[i] += (dys[i] - mean_dy - (xs[i] - mean) * k) * iw;
          else if (batch_stats)
            for (int64_t i = 0; i < l.inner; ++i) dxs[i] = (dys[i] - mean_dy - (xs[i] - mean) * k) * iw;
          else if (add)
            for (int64_t i = 0; i < l.inner; ++i) dxs[i] += dys[i] * iw;
          else
            for (int64_t i = 0; i < l.inner; ++i) dxs[i] = dys[i] * iw;
        }
      }
      if (dgamma) {
        if (!p.fix_gamma) Put(dgamma + c, static_cast<float>(dot * invstd), req_g);
        else if (req_g != OpReq::kAdd) dgamma[c] = 0.0f;
      }
      if (dbeta) Put(dbeta + c, static_cast<float>(sum_dy), req_b);
    }
  });
}
}  // namespace

SYMBIND_REGISTER_OP(BatchNorm)
    .set_forward_inplace()
    .describe(
        "Batch normalization. Normalizes each channel (axis `axis`) of the data by the mean and "
        "variance of the batch in training (updating moving_mean and moving_var with "
        "`momentum`) or by the moving statistics in inference or with use_global_stats, then "
        "scales by gamma (1 when fix_gamma) and shifts by beta. Hidden outputs mean and var "
        "(the inverse standard deviation) are visible when output_mean_var is true.")
    .set_params<BatchNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_aux_states({"moving_mean", "moving_var"})
    .set_outputs({"output", "mean", "var"})
    .set_num_visible_outputs([](const NodeAttrs& a) {
      return a.param<BatchNormParam>().output_mean_var ? 3 : 1;
    })
    .add_argument_doc("data", "Input data to batch normalization: (batch, channel, ...) with channels on `axis`.")
    .add_argument_doc("gamma", "Scale per channel: (channel,); held at 1 when fix_gamma.")
    .add_argument_doc("beta", "Shift per channel: (channel,).")
    .add_argument_doc("moving_mean", "Running mean per channel (aux state), used when not training.")
    .add_argument_doc("moving_var", "Running variance per channel (aux state), used when not training.")
    .set_input_initializer("moving_mean", R"(["zero", {}])")
    .set_input_initializer("moving_var", R"(["one", {}])")
    .set_infer_shape(InferBatchNormShape<BatchNormParam>)
    .set_forward(BatchNormForward<BatchNormParam>)
    .set_backward(BatchNormBackward);

// Made by the Predictor's FuseActivations rewrite (predict/graph_rewrites.h), not by models.
SYMBIND_REGISTER_OP(_fused_batch_norm_act)
    .set_forward_inplace()
    .describe(
        "BatchNorm followed by relu, clip or leaky, computed in one pass: the activation is applied "
        "as the normalised output is written. Inference only; made from a BatchNorm (one the rewrites "
        "could not fold into the layer before it, e.g. after a residual add) and the Activation(relu) / "
        "clip / LeakyReLU(leaky) reading it by the Predictor's graph rewrite. Parameters: BatchNorm's, "
        "then act_type, a_min, a_max, slope.")
    .set_params<FusedBatchNormParam>()
    .set_arguments({"data", "gamma", "beta"})
    .set_aux_states({"moving_mean", "moving_var"})
    .set_outputs({"output", "mean", "var"})
    .set_num_visible_outputs([](const NodeAttrs& a) {
      return a.param<FusedBatchNormParam>().output_mean_var ? 3 : 1;
    })
    .add_argument_doc("data", "Input data to batch normalization: (batch, channel, ...) with channels on `axis`.")
    .add_argument_doc("gamma", "Scale per channel: (channel,); held at 1 when fix_gamma.")
    .add_argument_doc("beta", "Shift per channel: (channel,).")
    .add_argument_doc("moving_mean", "Running mean per channel (aux state), used when not training.")
    .add_argument_doc("moving_var", "Running variance per channel (aux state), used when not training.")
    .set_infer_shape(InferBatchNormShape<FusedBatchNormParam>)
    .set_forward(BatchNormForward<FusedBatchNormParam>);

}  // namespace symbind
