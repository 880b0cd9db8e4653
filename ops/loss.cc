// Loss heads: their backward produces the loss gradient from the label and ignores the head
// gradient (unless SoftmaxOutput's out_grad is set).
#include <algorithm>
#include <cmath>

#include "kernel_util.h"

namespace symbind {

namespace {
enum Normalization { kNullNorm, kBatchNorm, kValidNorm };

struct SoftmaxOutputParam : Parameter<SoftmaxOutputParam> {
  float grad_scale;
  float ignore_label;
  bool multi_output;
  bool use_ignore;
  bool preserve_shape;
  int normalization;
  bool out_grad;
  float smooth_alpha;
  static void Declare(ParamDeclarer<SoftmaxOutputParam>& d) {
    d.field("grad_scale", &SoftmaxOutputParam::grad_scale).set_default(1.0f)
        .describe("Scales the gradient by a float factor.");
    d.field("ignore_label", &SoftmaxOutputParam::ignore_label).set_default(-1.0f)
        .describe("The instances whose labels == ignore_label are ignored during backward, if use_ignore is true.");
    d.field("multi_output", &SoftmaxOutputParam::multi_output).set_default(false)
        .describe("Softmax over axis 1 of an (n, k, x1, .., xn) input, one label per position.");
    d.field("use_ignore", &SoftmaxOutputParam::use_ignore).set_default(false)
        .describe("If true, the ignore_label is used.");
    d.field("preserve_shape", &SoftmaxOutputParam::preserve_shape).set_default(false)
        .describe("If true, softmax is applied over the last axis.");
    d.field("normalization", &SoftmaxOutputParam::normalization)
        .add_enum("null", kNullNorm).add_enum("batch", kBatchNorm).add_enum("valid", kValidNorm)
        .set_default(kNullNorm).describe("Normalizes the gradient.");
    d.field("out_grad", &SoftmaxOutputParam::out_grad).set_default(false)
        .describe("Multiplies the gradient with the head gradient.");
    d.field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha).set_default(0.0f)
        .describe("Label smoothing: the label's probability becomes 1-alpha, alpha/(k-1) elsewhere.");
  }
};

// The softmax layout: `outer` independent groups, each softmaxed over `k` values that are
// `inner` apart.
struct SoftmaxLayout {
  int64_t outer, k, inner;
};

SoftmaxLayout LayoutOf(const SoftmaxOutputParam& p, const TShape& s) {
  if (p.multi_output) return {s[0], s[1], s.ProdDims(2, s.ndim())};
  if (p.preserve_shape) return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1], 1};
  return {s[0], s.ProdDims(1, s.ndim()), 1};
}

void SoftmaxGroups(const float* x, float* y, const SoftmaxLayout& l) {
  ParallelFor(l.outer * l.inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(l.k, 1)),
              [&](int64_t b, int64_t e) {
                for (int64_t g = b; g < e; ++g) {
                  int64_t o = g / l.inner, i = g % l.inner;
                  const float* xs = x + o * l.k * l.inner + i;
                  float* ys = y + o * l.k * l.inner + i;
                  float m = xs[0];
                  for (int64_t c = 1; c < l.k; ++c) m = std::max(m, xs[c * l.inner]);
                  float sum = 0;
                  for (int64_t c = 0; c < l.k; ++c) {
                    ys[c * l.inner] = std::exp(xs[c * l.inner] - m);
                    sum += ys[c * l.inner];
                  }
                  for (int64_t c = 0; c < l.k; ++c) ys[c * l.inner] /= sum;
                }
              });
}

void InferSoftmaxOutput(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SoftmaxOutputParam>();
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 0, d);
  const TShape& label = (*in)[1];
  // A label of the data's shape holds probabilities (soft labels).
  if (!p.multi_output && !p.preserve_shape && label.ndim_known() && label.ndim() == d.ndim() && d.ndim() > 1)
    return ShapeAssignCheck(in, 1, d), void();
  if (p.multi_output) {
    if (d.ndim() < 2) throw ShapeError("SoftmaxOutput with multi_output needs data of rank >= 2");
    std::vector<int64_t> l{d[0]};
    for (int i = 2; i < d.ndim(); ++i) l.push_back(d[i]);
    ShapeAssignCheck(in, 1, TShape(l));
  } else if (p.preserve_shape) {
    ShapeAssignCheck(in, 1, TShape(std::vector<int64_t>(d.dims().begin(), d.dims().end() - 1)));
  } else {
    ShapeAssignCheck(in, 1, TShape({d[0]}));
  }
}

void BackwardSoftmaxOutput(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<SoftmaxOutputParam>();
  if (a.req[0] == OpReq::kNull) return;
  const TShape& s = a.outputs[0].shape();
  SoftmaxLayout l = LayoutOf(p, s);
  const float* y = a.outputs[0].fdata();
  const float* label = a.inputs[1].fdata();
  const int64_t n = a.outputs[0].Size();
  std::vector<float> grad(static_cast<size_t>(n));
  const bool soft = a.inputs[1].shape() == s && !p.multi_output && !p.preserve_shape && s.ndim() > 1;
  int64_t valid = 0;
  for (int64_t g = 0; g < l.outer * l.inner; ++g) {
    int64_t o = g / l.inner, i = g % l.inner;
    int64_t base = o * l.k * l.inner + i;
    if (soft) {
      for (int64_t c = 0; c < l.k; ++c) grad[base + c * l.inner] = y[base + c * l.inner] - label[base + c * l.inner];
      ++valid;
      continue;
    }
    float lab = label[g];
    bool ignored = p.use_ignore && lab == p.ignore_label;
    int64_t target = static_cast<int64_t>(lab);
    for (int64_t c = 0; c < l.k; ++c) {
      float t;
      if (p.smooth_alpha != 0.0f)
        t = c == target ? 1.0f - p.smooth_alpha : p.smooth_alpha / static_cast<float>(l.k - 1);
      else
        t = c == target ? 1.0f : 0.0f;
      grad[base + c * l.inner] = ignored ? 0.0f : y[base + c * l.inner] - t;
    }
    if (!ignored) ++valid;
  }
  float norm = 1.0f;
  if (p.normalization == kBatchNorm) norm = static_cast<float>(s[0]);
  else if (p.normalization == kValidNorm) norm = static_cast<float>(std::max<int64_t>(valid, 1));
  float scale = p.grad_scale / norm;
  const float* head = a.out_grads[0].fdata();
  MapWithReq(a.in_grads[0].fdata(), n, a.req[0], [&](int64_t i) {
    return grad[i] * scale * (p.out_grad ? head[i] : 1.0f);
  });
}

struct RegressionParam : Parameter<RegressionParam> {
  float grad_scale;
  static void Declare(ParamDeclarer<RegressionParam>& d) {
    d.field("grad_scale", &RegressionParam::grad_scale).set_default(1.0f)
        .describe("Scale the gradient by a float factor");
  }
};

void InferRegression(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 0, d);
  const TShape& label = (*in)[1];
  // MXNet accepts a (n,) label for (n,1) data.
  if (d.ndim() == 2 && d[1] == 1 && (!label.ndim_known() || label.ndim() == 1))
    ShapeAssignCheck(in, 1, TShape({d[0]}));
  else
    ShapeAssignCheck(in, 1, d);
}

// forward f(x), gradient g(out, label) before scaling by grad_scale / outputs-per-sample.
template <typename F, typename G>
void RegisterRegression(const char* name, const char* doc, F f, G g) {
  OpRegistry::Global().Register(name)
      .describe(doc)
      .set_params<RegressionParam>()
      .set_arguments({"data", "label"})
      .set_infer_shape(InferRegression)
      .set_is_loss()
      .set_forward([f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const float* x = in[0].fdata();
        MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return f(x[i]); });
      })
      .set_backward([g](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        if (a.req[0] == OpReq::kNull) return;
        const NDArray& label = a.inputs[1];
        float num_output = static_cast<float>(label.Size() / label.shape()[0]);
        float scale = attrs.param<RegressionParam>().grad_scale / num_output;
        const float* y = a.outputs[0].fdata();
        const float* t = label.fdata();
        MapWithReq(a.in_grads[0].fdata(), a.outputs[0].Size(), a.req[0],
                   [&](int64_t i) { return g(y[i], t[i]) * scale; });
      });
}

[[maybe_unused]] const bool regression_registered = [] {
  RegisterRegression("LinearRegressionOutput", "Least squares regression: out = data; grad = out - label.",
                     [](float x) { return x; }, [](float y, float t) { return y - t; });
  RegisterRegression("LogisticRegressionOutput", "Logistic regression: out = sigmoid(data); grad = out - label.",
                     [](float x) { return 1.0f / (1.0f + std::exp(-x)); },
                     [](float y, float t) { return y - t; });
  RegisterRegression("MAERegressionOutput", "Mean absolute error: out = data; grad = sign(out - label).",
                     [](float x) { return x; },
                     [](float y, float t) { return static_cast<float>((y > t) - (y < t)); });
  return true;
}();
}  // namespace

SYMBIND_REGISTER_OP(SoftmaxOutput)
    .add_alias("Softmax")
    .describe("Softmax forward; backward gives the cross-entropy gradient softmax - onehot(label).")
    .set_params<SoftmaxOutputParam>()
    .set_arguments({"data", "label"})
    .set_infer_shape(InferSoftmaxOutput)
    .set_is_loss()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>&, const std::vector<NDArray>& out) {
      SoftmaxGroups(in[0].fdata(), out[0].fdata(),
                    LayoutOf(attrs.param<SoftmaxOutputParam>(), in[0].shape()));
    })
    .set_backward(BackwardSoftmaxOutput);

}  // namespace symbind
