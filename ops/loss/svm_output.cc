// SVMOutput: a support vector machine loss head. Forward is the identity; backward is the
// gradient of the L1 (hinge) or L2 (squared hinge) SVM loss given the class labels, scaled by
// regularization_coefficient. As a loss head it ignores the head gradient.
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct SVMOutputParam : Parameter<SVMOutputParam> {
  float margin, regularization_coefficient;
  bool use_linear;
  static void Declare(ParamDeclarer<SVMOutputParam>& d) {
    d.field("margin", &SVMOutputParam::margin).set_default(1.0f)
        .describe("The loss function penalizes outputs that lie outside this margin. Default margin is 1.");
    d.field("regularization_coefficient", &SVMOutputParam::regularization_coefficient).set_default(1.0f)
        .describe("Regularization parameter for the SVM. This balances the tradeoff between coefficient "
                  "size and error.");
    d.field("use_linear", &SVMOutputParam::use_linear).set_default(false)
        .describe("Whether to use L1-SVM objective. L2-SVM objective is used by default.");
  }
};

// data (n, ..., k) and label (n, ...): one class index per row of the data's last axis.
void InferSVMOutput(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(in, 0, (*out)[0]);
  const TShape& d = (*in)[0];
  if (!d.ndim_known()) return;
  ShapeAssignCheck(out, 0, d);
  if (d.ndim() < 1) throw ShapeError("SVMOutput: data must have at least one dimension");
  std::vector<int64_t> label(d.dims().begin(), d.dims().end() - 1);
  ShapeAssignCheck(in, 1, TShape(label));
}

SYMBIND_REGISTER_OP(SVMOutput)
    .describe("Computes support vector machine based transformation of the input: the output is the "
              "data; the gradient is that of the L2-SVM (default) or L1-SVM loss for the labels.")
    .set_params<SVMOutputParam>()
    .set_arguments({"data", "label"})
    .add_argument_doc("data", "Input data for SVM transformation.")
    .add_argument_doc("label", "Class label for the input data.")
    .set_infer_shape(InferSVMOutput)
    .set_is_loss()
    .set_forward(ForwardCopy)
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      float* dx = InGradOrNull(a, 0);
      if (!dx) return;
      const auto& p = attrs.param<SVMOutputParam>();
      const float* y = a.outputs[0].fdata();
      const TShape& s = a.outputs[0].shape();
      const int64_t k = s[s.ndim() - 1], rows = k > 0 ? s.Size() / k : 0;
      std::vector<double> label = ValuesAsDouble(a.inputs[1]);
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t c = TruncateIndex(label[r]);
        if (c < 0 || c >= k)
          throw Error(StrCat(InOperator(attrs), ": label ", label[r], " of row ", r,
                             " is out of range for ", k, " classes"));
        for (int64_t j = 0; j < k; ++j) {
          // The label's class wants y >= margin, the others y <= -margin.
          const float sign = j == c ? 1.0f : -1.0f, v = y[r * k + j];
          const float slack = p.margin - sign * v;
          float g = 0;
          if (slack > 0) g = p.use_linear ? -sign : -2.0f * sign * slack;
          Put(dx + r * k + j, g * p.regularization_coefficient, a.req[0]);
        }
      }
    });

}  // namespace

}  // namespace symbind
