// _contrib_quadratic: y = a * x^2 + b * x + c element-wise, MXNet's example operator. Forward
// and backward in the input's dtype (float16 through float32).
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct QuadraticParam : Parameter<QuadraticParam> {
  float a, b, c;
  static void Declare(ParamDeclarer<QuadraticParam>& d) {
    d.field("a", &QuadraticParam::a).set_default(0.0f)
        .describe("Coefficient of the quadratic term in the quadratic function.");
    d.field("b", &QuadraticParam::b).set_default(0.0f)
        .describe("Coefficient of the linear term in the quadratic function.");
    d.field("c", &QuadraticParam::c).set_default(0.0f).describe("Constant term in the quadratic function.");
  }
};

SYMBIND_REGISTER_OP(_contrib_quadratic)
    .describe("This operators implements the quadratic function: f(x) = ax^2+bx+c, where x is an input "
              "tensor and a, b, c are scalars.")
    .set_params<QuadraticParam>()
    .add_argument_doc("data", "Input ndarray")
    .set_infer_shape(SameShape)
    .set_forward_inplace()
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<QuadraticParam>();
      ComputeInDType("_contrib_quadratic", in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                             const auto& out) {
        using T = decltype(tag);
        const T* x = in[0].template data<T>();
        MapWithReq(out[0].template data<T>(), out[0].Size(), req[0],
                   [&](int64_t i) { return (p.a * x[i] + p.b) * x[i] + p.c; });
      });
    })
    // dy/dx = 2 a x + b.
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      if (a.req[0] == OpReq::kNull) return;
      const auto& p = attrs.param<QuadraticParam>();
      ComputeInDType("_contrib_quadratic", {a.inputs[0], a.out_grads[0]}, {a.req[0]}, {a.in_grads[0]},
                     [&](auto tag, const auto& in, const auto& req, const auto& out) {
                       using T = decltype(tag);
                       const T *x = in[0].template data<T>(), *g = in[1].template data<T>();
                       MapWithReq(out[0].template data<T>(), out[0].Size(), req[0],
                                  [&](int64_t i) { return g[i] * (2 * p.a * x[i] + p.b); });
                     });
    });

}  // namespace

}  // namespace symbind
