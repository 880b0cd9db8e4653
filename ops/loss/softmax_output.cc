// SoftmaxOutput: the softmax classification head. Its backward produces the loss gradient
// from the label and ignores the head gradient (unless out_grad is set).
#include <algorithm>
#include <cmath>
#include <vector>

#include <symbind/ops/kernels/softmax.h>
#include <symbind/ops/op_util.h>

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
        .describe("The instances whose `labels` == `ignore_label` will be ignored during backward, if `use_ignore` is set to ``true``).");
    d.field("multi_output", &SoftmaxOutputParam::multi_output).set_default(false)
        .describe("If set to ``true``, the softmax function will be computed along axis ``1``. This is applied when the shape of input array differs from the shape of label array.");
    d.field("use_ignore", &SoftmaxOutputParam::use_ignore).set_default(false)
        .describe("If set to ``true``, the `ignore_label` value will not contribute to the backward gradient.");
    d.field("preserve_shape", &SoftmaxOutputParam::preserve_shape).set_default(false)
        .describe("If set to ``true``, the softmax function will be computed along the last axis (``-1``).");
    d.field("normalization", &SoftmaxOutputParam::normalization)
        .add_enum("null", kNullNorm).add_enum("batch", kBatchNorm).add_enum("valid", kValidNorm)
        .set_default(kNullNorm).describe("Normalizes the gradient.");
    d.field("out_grad", &SoftmaxOutputParam::out_grad).set_default(false)
        .describe("Multiplies gradient with output gradient element-wise.");
    d.field("smooth_alpha", &SoftmaxOutputParam::smooth_alpha).set_default(0.0f).set_range(0.0, 1.0)
        .describe("Constant for computing a label smoothed version of cross-entropy for the backwards "
                  "pass. This constant gets subtracted from the one-hot encoding of the gold label and "
                  "distributed uniformly to all other labels (ignored with multi_output, as MXNet).");
  }
};

AxisLayout LayoutOf(const SoftmaxOutputParam& p, const TShape& s) {
  if (p.multi_output) return {s[0], s[1], s.ProdDims(2, s.ndim())};
  if (p.preserve_shape) return {s.ProdDims(0, s.ndim() - 1), s[s.ndim() - 1], 1};
  return {s[0], s.ProdDims(1, s.ndim()), 1};
}

// MXNet's SoftmaxOutputShape: a label of the data's shape holds probabilities (any mode);
// otherwise multi_output accepts (n, prod(d2..)), (n, d2, ..) or (n, 1, d2, ..) and infers the
// first, and the other modes take data's shape without its last axis. (Oddly, that holds
// without preserve_shape too: (n, c, h) data wants an (n, c) label although the softmax runs
// over the flattened (n, c*h) rows and only the first n labels are read.)
void InferSoftmaxOutput(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const auto& p = attrs.param<SoftmaxOutputParam>();
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 0, d);
  const TShape& label = (*in)[1];
  if (label == d) return;
  if (p.multi_output) {
    if (d.ndim() < 2) throw ShapeError(StrCat("SoftmaxOutput with multi_output needs data of rank >= 2, got ", d));
    if (!d.is_known()) return;
    TShape l1({d[0], d[1] == 0 ? 0 : d.Size() / std::max<int64_t>(d[0], 1) / d[1]});
    std::vector<int64_t> l2{d[0]};
    for (int i = 2; i < d.ndim(); ++i) l2.push_back(d[i]);
    TShape l3 = d;
    l3[1] = 1;
    if (!label.ndim_known()) ShapeAssignCheck(in, 1, l1);
    else if (label != l1 && label != TShape(l2) && label != l3)
      throw ShapeError(StrCat("SoftmaxOutput: expecting label ", l1, " or ", TShape(l2), ". But got ", label));
  } else {
    if (d.ndim() < 1) throw ShapeError("SoftmaxOutput needs data of rank >= 1");
    ShapeAssignCheck(in, 1, TShape(std::vector<int64_t>(d.dims().begin(), d.dims().end() - 1)));
  }
}

// Class labels must name a class. MXNet silently treats any other value as "no target"
// (the gradient is plain softmax), which hides broken label data; symbind rejects it. The
// exception is ignore_label: MXNet gives it meaning with and without use_ignore (zero gradient,
// or excluded from valid normalisation), so it stays accepted. Probability labels (the data's
// shape) are not class indices.
void CheckSoftmaxLabels(const NodeAttrs& attrs, const TShape& data_shape, const NDArray& label) {
  if (label.shape() == data_shape) return;
  const auto& p = attrs.param<SoftmaxOutputParam>();
  const AxisLayout l = LayoutOf(p, data_shape);
  const float* v = label.fdata();
  const int64_t read = std::min(l.outer * l.inner, label.Size());  // the labels the gradient reads
  for (int64_t i = 0; i < read; ++i) {
    // Labels are truncated to int as in MXNet, so (-1, k) maps into [0, k); nan fails too.
    if (v[i] > -1.0f && v[i] < static_cast<float>(l.n)) continue;
    if (std::trunc(v[i]) == std::trunc(p.ignore_label)) continue;
    throw Error(StrCat("Error in operator ", attrs.name, " (SoftmaxOutput): label ", v[i],
                       " at index ", i, " is out of range for ", l.n, " classes (expected 0..",
                       l.n - 1, " or ignore_label ", p.ignore_label, ")"));
  }
}

// MXNet's SoftmaxOutputOp::Backward. Normalisation differs by mode, as there:
// - probability labels: grad_scale only, never normalised;
// - multi_output: null divides by the spatial size (n_inner) too, batch by n * n_inner, valid
//   by the count of labels != ignore_label; smooth_alpha is ignored;
// - otherwise: batch divides by the label count, valid by the labels != ignore_label.
// "valid" counts labels by int-cast comparison with ignore_label whether or not use_ignore is
// set, as MXNet does.
void BackwardSoftmaxOutput(const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
  const auto& p = attrs.param<SoftmaxOutputParam>();
  if (a.req[0] == OpReq::kNull) return;
  const TShape& s = a.outputs[0].shape();
  CheckSoftmaxLabels(attrs, s, a.inputs[1]);  // the label may have changed since Forward
  const float* y = a.outputs[0].fdata();
  const float* label = a.inputs[1].fdata();
  const float* head = a.out_grads[0].fdata();
  const int64_t n = a.outputs[0].Size();
  float* dx = a.in_grads[0].fdata();
  auto emit = [&](auto grad_of, float scale) {
    MapWithReq(dx, n, a.req[0], [&](int64_t i) {
      return grad_of(i) * scale * (p.out_grad ? head[i] : 1.0f);
    });
  };
  if (a.inputs[1].shape() == s) {
    emit([&](int64_t i) { return y[i] - label[i]; }, p.grad_scale);
    return;
  }
  AxisLayout l = LayoutOf(p, s);
  const int ignore = static_cast<int>(p.ignore_label);
  const int64_t num_labels = a.inputs[1].Size();
  int64_t valid = num_labels;
  if (p.normalization == kValidNorm) {
    for (int64_t i = 0; i < num_labels; ++i)
      if (static_cast<int>(label[i]) == ignore) --valid;
    valid = std::max<int64_t>(valid, 1);
  }
  const float alpha = p.multi_output ? 0.0f : p.smooth_alpha;
  const float off_target = alpha / static_cast<float>(l.n - 1);
  auto grad_of = [&](int64_t i) {
    int64_t o = i / (l.n * l.inner), c = (i / l.inner) % l.n, in = i % l.inner;
    int target = static_cast<int>(label[o * l.inner + in]);
    if (p.use_ignore && target == ignore) return 0.0f;
    if (c == target) return y[i] - 1.0f + alpha;
    return alpha != 0.0f ? y[i] - off_target : y[i];
  };
  float scale = p.grad_scale;
  if (p.multi_output) {
    if (p.normalization == kValidNorm) scale /= static_cast<float>(valid);
    else if (p.normalization == kBatchNorm) scale /= static_cast<float>(l.inner) * static_cast<float>(s[0]);
    else scale /= static_cast<float>(l.inner);
  } else {
    if (p.normalization == kValidNorm) scale /= static_cast<float>(valid);
    else if (p.normalization == kBatchNorm) scale /= static_cast<float>(num_labels);
  }
  emit(grad_of, scale);
}

}  // namespace

SYMBIND_REGISTER_OP(SoftmaxOutput)
    .add_alias("Softmax")
    .describe("Softmax forward; backward gives the cross-entropy gradient softmax - onehot(label).")
    .set_params<SoftmaxOutputParam>()
    .set_arguments({"data", "label"})
    .add_argument_doc("data", "Input array: the scores to normalise.")
    .add_argument_doc("label", "Ground truth: class indices (data's shape without the class axis), or probabilities of data's shape.")
    .set_infer_shape(InferSoftmaxOutput)
    .set_is_loss()
    .set_forward([](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      // Only training reads the label (inference often binds a placeholder label).
      if (ctx.is_train) CheckSoftmaxLabels(attrs, in[0].shape(), in[1]);
      if (req[0] == OpReq::kNull) return;
      AxisLayout l = LayoutOf(attrs.param<SoftmaxOutputParam>(), in[0].shape());
      if (req[0] != OpReq::kAdd) return SoftmaxAlong(in[0].fdata(), out[0].fdata(), l, 1.0, false);
      std::vector<float> y(static_cast<size_t>(out[0].Size()));
      SoftmaxAlong(in[0].fdata(), y.data(), l, 1.0, false);
      AssignWithReq(out[0].fdata(), y.data(), out[0].Size(), req[0]);
    })
    .set_backward(BackwardSoftmaxOutput);

}  // namespace symbind
