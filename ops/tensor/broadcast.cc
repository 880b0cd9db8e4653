// Broadcasting binary ops (broadcast_add, broadcast_maximum, broadcast_equal, ...). Shapes
// align from the right as in NumPy (MXNet 1.x's BinaryBroadcastShape): missing leading dims
// count as 1 and a dim of 1 stretches to the other operand's. Gradients sum over the axes an
// operand was broadcast along; comparisons and logical ops have a zero gradient.
#include <cmath>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
using math::AlignDims;
using math::Dims;

// Forward only, as MXNet: the inputs' shapes are not inferred from the output.
void InferBroadcastShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& l = (*in)[0];
  const TShape& r = (*in)[1];
  if (!l.ndim_known() || !r.ndim_known()) return;
  if (l == r) {
    ShapeAssignCheck(out, 0, l);
    return;
  }
  const int nd = std::max(l.ndim(), r.ndim());
  Dims ld = AlignDims(l, nd), rd = AlignDims(r, nd), od(static_cast<size_t>(nd), -1);
  for (size_t i = 0; i < od.size(); ++i) {
    if (ld[i] < 0 || rd[i] < 0) continue;  // unknown stays unknown
    if (ld[i] != rd[i] && ld[i] != 1 && rd[i] != 1)
      throw ShapeError(StrCat("operands could not be broadcast together with shapes ", l, " ", r));
    od[i] = ld[i] == 1 ? rd[i] : ld[i];
  }
  ShapeAssignCheck(out, 0, TShape(od));
}

// In the inputs' dtype (ComputeInDType).
template <typename F>
void BroadcastForward(const F& f, const char* op, const std::vector<NDArray>& inputs, OpReq req0,
                      const NDArray& output) {
  if (req0 == OpReq::kNull) return;
  ComputeInDType(op, inputs, {req0}, {output}, [&](auto tag, const auto& in, const auto& reqs, const auto& outs) {
    using T = decltype(tag);
    const OpReq req = reqs[0];
    const NDArray& out = outs[0];
    const T* l = in[0].template data<T>();
    const T* r = in[1].template data<T>();
    T* y = out.template data<T>();
    if (in[0].shape() == in[1].shape()) {
      MapWithReq(y, out.Size(), req, [&](int64_t i) { return f(l[i], r[i]); });
      return;
    }
    const int nd = out.shape().ndim();
    math::ForEachBroadcast(AlignDims(out.shape(), nd), AlignDims(in[0].shape(), nd),
                           AlignDims(in[1].shape(), nd), [&](int64_t i, int64_t a, int64_t b) {
                             T v = static_cast<T>(f(l[a], r[b]));
                             y[i] = req == OpReq::kAdd ? static_cast<T>(y[i] + v) : v;
                           });
  });
}

// in_grad[side] = sum over broadcast axes of out_grad * d(side)(l, r), in T (float or double).
template <typename T, typename DL, typename DR>
void BroadcastBackward(const DL& dl, const DR& dr, const BackwardArgs& a) {
  const T* l = a.inputs[0].template data<T>();
  const T* r = a.inputs[1].template data<T>();
  const T* g = a.out_grads[0].template data<T>();
  const TShape& os = a.out_grads[0].shape();
  const int64_t n = os.Size();
  auto grad = [&](size_t k) { return a.req[k] == OpReq::kNull ? nullptr : a.in_grads[k].template data<T>(); };
  if (a.inputs[0].shape() == a.inputs[1].shape()) {
    MapWithReq(grad(0), n, a.req[0], [&](int64_t i) { return static_cast<T>(g[i] * dl(l[i], r[i])); });
    MapWithReq(grad(1), n, a.req[1], [&](int64_t i) { return static_cast<T>(g[i] * dr(l[i], r[i])); });
    return;
  }
  const int nd = os.ndim();
  Dims od = AlignDims(os, nd), ld = AlignDims(a.inputs[0].shape(), nd),
       rd = AlignDims(a.inputs[1].shape(), nd);
  std::vector<T> tmp(static_cast<size_t>(n));
  auto side = [&](size_t k, const auto& d) {
    if (a.req[k] == OpReq::kNull) return;
    math::ForEachBroadcast(od, ld, rd, [&](int64_t i, int64_t li, int64_t ri) {
      tmp[static_cast<size_t>(i)] = static_cast<T>(g[i] * d(l[li], r[ri]));
    });
    math::SumToSmall(tmp.data(), od, grad(k), k == 0 ? ld : rd, a.req[k]);
  };
  side(0, dl);
  side(1, dr);
}

Op& Declare(const char* name, const char* doc) {
  return OpRegistry::Global()
      .Register(name)
      .describe(doc)
      .set_arguments({"lhs", "rhs"})
      .set_dtype_generic()
      .set_infer_shape(InferBroadcastShape);
}

// An op with forward f(l, r) and partial derivatives dl(l, r), dr(l, r).
template <typename F, typename DL, typename DR>
Op& RegisterBroadcast(const char* name, const char* doc, F f, DL dl, DR dr) {
  return Declare(name, doc)
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        BroadcastForward(f, attrs.op->name.c_str(), in, req[0], out[0]);
      })
      .set_float64_backward()
      .set_backward([dl, dr](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        math::RequireFloatGradient(a, attrs);
        math::BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          BroadcastBackward<decltype(tag)>(dl, dr, b);
        });
      });
}

// A comparison or logical op: 0/1 outputs and a zero gradient (MXNet's MakeZeroGradNodes).
template <typename F>
void RegisterPredicate(const char* name, const char* doc, F f) {
  Declare(name, doc)
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        BroadcastForward([&](auto l, auto r) { return f(l, r) ? 1 : 0; }, attrs.op->name.c_str(), in, req[0],
                         out[0]);
      })
      .set_backward([](const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
        ZeroWithReq(a.in_grads[0], a.req[0]);
        ZeroWithReq(a.in_grads[1], a.req[1]);
      });
}

const auto one = [](float, float) { return 1.0f; };

SYMBIND_REGISTER_OP_FAMILY(broadcast_binary) {
  RegisterBroadcast("broadcast_add", "Returns element-wise sum of the input arrays with broadcasting.",
                    [](auto l, auto r) { return l + r; }, one, one)
      .add_alias("broadcast_plus")
      .set_integer_backward();
  RegisterBroadcast("broadcast_sub", "Returns element-wise difference of the input arrays with broadcasting.",
                    [](auto l, auto r) { return l - r; }, one, [](float, float) { return -1.0f; })
      .add_alias("broadcast_minus")
      .set_integer_backward();
  RegisterBroadcast("broadcast_mul", "Returns element-wise product of the input arrays with broadcasting.",
                    [](auto l, auto r) { return l * r; }, [](auto, auto r) { return r; },
                    [](auto l, auto) { return l; })
      .set_integer_backward();
  RegisterBroadcast("broadcast_div", "Returns element-wise division of the input arrays with broadcasting.",
                    [](auto l, auto r) { return math::Div(l, r); }, [](auto, auto r) { return 1.0f / r; },
                    [](auto l, auto r) { return -l / (r * r); });
  Op& mod = RegisterBroadcast("broadcast_mod", "Returns element-wise modulo of the input arrays with broadcasting.",
                              [](auto a, auto b) { return math::Mod(a, b); }, one,
                              [](auto l, auto r) { return -std::floor(l / r); });
  mod.set_backward(math::ZeroGradientForIntegers(mod.backward));
  RegisterBroadcast("broadcast_power", "Returns result of first array elements raised to powers from second array, element-wise with broadcasting.",
                    [](auto a, auto b) { return math::Power(a, b); }, [](auto a, auto b) { return math::PowerGradL(a, b); }, [](auto a, auto b) { return math::PowerGradR(a, b); });
  // Ties send the gradient to lhs (MXNet's ge/lt and le/gt pairs).
  RegisterBroadcast("broadcast_maximum", "Returns element-wise maximum of the input arrays with broadcasting.",
                    [](auto l, auto r) { return math::Maximum(l, r); },
                    [](auto l, auto r) { return math::Bool(l >= r); },
                    [](auto l, auto r) { return math::Bool(l < r); });
  RegisterBroadcast("broadcast_minimum", "Returns element-wise minimum of the input arrays with broadcasting.",
                    [](auto l, auto r) { return math::Minimum(l, r); },
                    [](auto l, auto r) { return math::Bool(l <= r); },
                    [](auto l, auto r) { return math::Bool(l > r); });
  RegisterBroadcast("broadcast_hypot", "Returns the hypotenuse of a right angled triangle, given its legs, with broadcasting.",
                    [](auto a, auto b) { return math::Hypot(a, b); }, [](auto l, auto r) { return l / std::hypot(l, r); },
                    [](auto l, auto r) { return r / std::hypot(l, r); });

  RegisterPredicate("broadcast_equal", "Returns the result of element-wise **equal to** (==) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l == r; });
  RegisterPredicate("broadcast_not_equal", "Returns the result of element-wise **not equal to** (!=) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l != r; });
  RegisterPredicate("broadcast_greater", "Returns the result of element-wise **greater than** (>) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l > r; });
  RegisterPredicate("broadcast_greater_equal", "Returns the result of element-wise **greater than or equal to** (>=) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l >= r; });
  RegisterPredicate("broadcast_lesser", "Returns the result of element-wise **lesser than** (<) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l < r; });
  RegisterPredicate("broadcast_lesser_equal", "Returns the result of element-wise **lesser than or equal to** (<=) comparison operation with broadcasting.",
                    [](auto l, auto r) { return l <= r; });
  RegisterPredicate("broadcast_logical_and", "Returns the result of element-wise **logical and** with broadcasting.",
                    [](auto l, auto r) { return l != 0 && r != 0; });
  RegisterPredicate("broadcast_logical_or", "Returns the result of element-wise **logical or** with broadcasting.",
                    [](auto l, auto r) { return l != 0 || r != 0; });
  RegisterPredicate("broadcast_logical_xor", "Returns the result of element-wise **logical xor** with broadcasting.",
                    [](auto l, auto r) { return (l != 0) != (r != 0); });
}
}  // namespace

}  // namespace symbind
