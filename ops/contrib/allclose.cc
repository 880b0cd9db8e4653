// _contrib_allclose (MXNet 1.9.1's contrib/allclose_op): 1 when every element of a and b is
// close, |a - b| <= atol + rtol * |b| (numpy.allclose), else 0, as a uint8 scalar. NaNs
// compare equal to each other when equal_nan (the default), and unequal to anything else; an
// infinity is close only to itself (numpy's rule; MXNet's kernel called inf close to -inf).
// MXNet's test helper assert_almost_equal calls it for every pair of NDArrays it compares.
#include <atomic>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct AllCloseParam : Parameter<AllCloseParam> {
  float rtol, atol;
  bool equal_nan;
  static void Declare(ParamDeclarer<AllCloseParam>& d) {
    d.field("rtol", &AllCloseParam::rtol).set_default(1e-5f).describe("Relative tolerance.");
    d.field("atol", &AllCloseParam::atol).set_default(1e-8f).describe("Absolute tolerance.");
    d.field("equal_nan", &AllCloseParam::equal_nan).set_default(true)
        .describe("Whether NaNs in a and b at the same place count as equal.");
  }
};

template <typename T>
bool Close(T a, T b, float rtol, float atol, bool equal_nan) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) || std::isnan(b)) return equal_nan && std::isnan(a) && std::isnan(b);
  }
  if (a == b) return true;  // also equal infinities
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isinf(a) || std::isinf(b)) return false;  // as numpy: inf is close only to itself
  }
  const double diff = a > b ? static_cast<double>(a) - b : static_cast<double>(b) - a;
  return diff <= atol + rtol * std::fabs(static_cast<double>(b));
}

}  // namespace

SYMBIND_REGISTER_OP(_contrib_allclose)
    .describe("Returns 1 (a uint8 scalar) when |a - b| <= atol + rtol * |b| holds for every element "
              "of a and b (same shape and dtype), else 0, as numpy.allclose.")
    .set_params<AllCloseParam>()
    .set_arguments({"a", "b"})
    .add_argument_doc("a", "Input array a.")
    .add_argument_doc("b", "Input array b, the reference the relative tolerance scales with.")
    .set_dtype_generic()
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      ShapeAssignCheck(in, 1, (*in)[0]);
      ShapeAssignCheck(in, 0, (*in)[1]);
      ShapeAssignCheck(out, 0, TShape(std::vector<int64_t>{}));
    })
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      TypeAssignCheck(in, 1, (*in)[0]);
      TypeAssignCheck(in, 0, (*in)[1]);
      TypeAssignCheck(out, 0, static_cast<int>(DType::kUint8));
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<AllCloseParam>();
      std::atomic<bool> all_close{true};
      // float16 and bfloat16 compare as float32, as MXNet's half_t arithmetic does.
      ComputeInDType("_contrib_allclose", in, req, out,
                     [&](auto tag, const std::vector<NDArray>& x, const std::vector<OpReq>&,
                         const std::vector<NDArray>&) {
        using T = decltype(tag);
        const T* a = x[0].data<T>();
        const T* b = x[1].data<T>();
        ParallelFor(x[0].Size(), kElementwiseGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi && all_close.load(std::memory_order_relaxed); ++i)
            if (!Close(a[i], b[i], p.rtol, p.atol, p.equal_nan)) all_close = false;
        });
      });
      WriteValuesWithReq({all_close ? 1.0 : 0.0}, out[0], req[0]);
    });

}  // namespace symbind
