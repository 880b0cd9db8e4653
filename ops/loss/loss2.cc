// Custom-loss heads: MakeLoss and make_loss (identity forward, constant gradient), and
// softmax_cross_entropy (summed cross entropy of softmax rows against integer labels).
#include <algorithm>
#include <cmath>

#include <symbind/ops/loss_util.h>

namespace symbind {

namespace {
enum MakeLossNorm { kNull, kBatch, kValid };

struct MakeLossParam : Parameter<MakeLossParam> {
  float grad_scale;
  float valid_thresh;
  int normalization;
  static void Declare(ParamDeclarer<MakeLossParam>& d) {
    d.field("grad_scale", &MakeLossParam::grad_scale).set_default(1.0f)
        .describe("Gradient scale as a supplement to unary and binary operators");
    d.field("valid_thresh", &MakeLossParam::valid_thresh).set_default(0.0f)
        .describe("clip each element in the array to 0 when it is less than ``valid_thresh``. "
                  "This is used when ``normalization`` is set to ``'valid'``.");
    d.field("normalization", &MakeLossParam::normalization)
        .add_enum("null", kNull).add_enum("batch", kBatch).add_enum("valid", kValid)
        .set_default(kNull)
        .describe("If this is set to null, the output gradient will not be normalized. If this is "
                  "set to batch, the output gradient will be divided by the batch size. If this is "
                  "set to valid, the output gradient will be divided by the number of valid input "
                  "elements.");
  }
};

void ForwardIdentity(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                     const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull || in[0].raw_data() == out[0].raw_data()) return;
  const float* x = in[0].fdata();
  MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return x[i]; });
}

void FillGrad(const BackwardArgs& a, float value) {
  MapWithReq(a.in_grads[0].fdata(), a.in_grads[0].Size(), a.req[0], [&](int64_t) { return value; });
}

// (n, k) data and (n,) integer labels give a (1,) output.
void InferSoftmaxCE(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (d.ndim_known() && d.ndim() != 2)
    throw ShapeError(StrCat("SoftmaxCrossEntropy only accept 2D data, got ", d));
  // MXNet requires the label's shape up front; inferring it from the data is a convenience.
  if (d.ndim_known()) ShapeAssignCheck(in, 1, TShape({d[0]}));
  const TShape& l = (*in)[1];
  if (l.ndim_known() && l.ndim() != 1)
    throw ShapeError(StrCat("SoftmaxCrossEntropy only accept 1D label, got ", l));
  ShapeAssignCheck(out, 0, TShape({1}));
}

// Softmax rows of `data` (n, k) into `prob`, checking the labels are class indices.
std::vector<float> SoftmaxRows(const NDArray& data, const NDArray& label) {
  const int64_t n = data.shape()[0], k = data.shape()[1];
  std::vector<float> prob(static_cast<size_t>(n * k));
  SoftmaxGroups(data.fdata(), prob.data(), {n, k, 1});
  const float* l = label.fdata();
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = static_cast<int64_t>(l[i]);
    if (c < 0 || c >= k)
      throw Error(StrCat("softmax_cross_entropy: label ", l[i], " at row ", i, " is not in [0, ", k, ")"));
  }
  return prob;
}
}  // namespace

SYMBIND_REGISTER_OP(MakeLoss)
    .describe("Make your own loss function in network construction: the output is the input, and "
              "the gradient is grad_scale (normalised by batch or by the count of elements above "
              "valid_thresh).")
    .set_params<MakeLossParam>()
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      if ((*in)[0].ndim_known()) ShapeAssignCheck(out, 0, (*in)[0]);
    })
    .set_is_loss()
    .set_forward(ForwardIdentity)
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<MakeLossParam>();
      if (a.req[0] == OpReq::kNull) return;
      float scale = p.grad_scale;
      if (p.normalization == kBatch) {
        scale /= static_cast<float>(a.inputs[0].shape()[0]);
      } else if (p.normalization == kValid) {
        const float* x = a.inputs[0].fdata();
        int64_t valid = 0;
        for (int64_t i = 0; i < a.inputs[0].Size(); ++i) valid += x[i] > p.valid_thresh;
        scale /= static_cast<float>(std::max<int64_t>(valid, 1));
      }
      FillGrad(a, scale);
    });

// The gradient is ones whatever the head gradient (MXNet's ones_like FGradient).
SYMBIND_REGISTER_OP(make_loss)
    .describe("Make your own loss function in network construction: identity forward, a gradient "
              "of ones.")
    .set_outputs({"loss"})
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, (*in)[0]);
      ShapeAssignCheck(in, 0, (*out)[0]);
    })
    .set_is_loss()
    .set_forward(ForwardIdentity)
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      if (a.req[0] != OpReq::kNull) FillGrad(a, 1.0f);
    });

SYMBIND_REGISTER_OP(softmax_cross_entropy)
    .describe("Calculate cross entropy of softmax output and one-hot label: "
              "sum over rows of -log(softmax(data)[label]).")
    .set_arguments({"data", "label"})
    .set_infer_shape(InferSoftmaxCE)
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const int64_t n = in[0].shape()[0], k = in[0].shape()[1];
      std::vector<float> prob = SoftmaxRows(in[0], in[1]);
      const float* l = in[1].fdata();
      float loss = 0.0f;
      // Probabilities are clipped at 1e-8 before the log, as MXNet.
      for (int64_t i = 0; i < n; ++i)
        loss -= std::log(std::max(prob[static_cast<size_t>(i * k + static_cast<int64_t>(l[i]))], 1e-8f));
      AssignWithReq(out[0].fdata(), &loss, 1, req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
      if (a.req[1] != OpReq::kNull)
        throw Error("SoftmaxCrossEntropy: Cannot take gradient wrt label");
      if (a.req[0] == OpReq::kNull) return;
      const int64_t k = a.inputs[0].shape()[1];
      std::vector<float> prob = SoftmaxRows(a.inputs[0], a.inputs[1]);
      const float* l = a.inputs[1].fdata();
      const float head = a.out_grads[0].fdata()[0];
      MapWithReq(a.in_grads[0].fdata(), a.inputs[0].Size(), a.req[0], [&](int64_t i) {
        float onehot = (i % k) == static_cast<int64_t>(l[i / k]) ? 1.0f : 0.0f;
        return head * (prob[static_cast<size_t>(i)] - onehot);
      });
    });

}  // namespace symbind
