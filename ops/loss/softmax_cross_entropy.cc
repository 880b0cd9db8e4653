// softmax_cross_entropy: summed cross entropy of softmax rows against integer labels.
#include <cmath>
#include <vector>

#include <symbind/ops/kernels/softmax.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

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
  SoftmaxAlong(data.fdata(), prob.data(), {n, k, 1}, 1.0, false);
  const float* l = label.fdata();
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = static_cast<int64_t>(l[i]);
    if (c < 0 || c >= k)
      throw Error(StrCat("softmax_cross_entropy: label ", l[i], " at row ", i, " is not in [0, ", k, ")"));
  }
  return prob;
}

}  // namespace

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
      MapWithReq(InGradOrNull(a, 0), a.inputs[0].Size(), a.req[0], [&](int64_t i) {
        float onehot = (i % k) == static_cast<int64_t>(l[i / k]) ? 1.0f : 0.0f;
        return head * (prob[static_cast<size_t>(i)] - onehot);
      });
    });

}  // namespace symbind
