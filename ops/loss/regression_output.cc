// LinearRegressionOutput, LogisticRegressionOutput and MAERegressionOutput: regression heads
// whose backward is the loss gradient from the label.
#include <cmath>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

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
        MapWithReq(InGradOrNull(a, 0), a.outputs[0].Size(), a.req[0],
                   [&](int64_t i) { return g(y[i], t[i]) * scale; });
      });
}

SYMBIND_REGISTER_OP_FAMILY(regression_outputs) {
  RegisterRegression("LinearRegressionOutput", "Least squares regression: out = data; grad = out - label.",
                     [](float x) { return x; }, [](float y, float t) { return y - t; });
  RegisterRegression("LogisticRegressionOutput", "Logistic regression: out = sigmoid(data); grad = out - label.",
                     [](float x) { return 1.0f / (1.0f + std::exp(-x)); },
                     [](float y, float t) { return y - t; });
  RegisterRegression("MAERegressionOutput", "Mean absolute error: out = data; grad = sign(out - label).",
                     [](float x) { return x; },
                     [](float y, float t) { return static_cast<float>((y > t) - (y < t)); });
}

}  // namespace

}  // namespace symbind
