// Reductions over axes: sum, mean, prod, nansum, nanprod, max, min, _square_sum, norm, moments (mean
// and variance); and the index
// searches argmax, argmin, argmax_channel. Shapes follow MXNet 1.x's legacy (non-NumPy)
// rules: reducing every axis without keepdims gives shape (1,), not a scalar.
#include <cmath>
#include <limits>
#include <type_traits>

#include <symbind/ops/tensor/math_util.h>

namespace symbind {

namespace {
using math::Dims;

const char* const kAxisDoc =
    "The axis or axes along which to perform the reduction. The default, `axis=()`, will "
    "compute over all elements into a scalar array with shape `(1,)`. If `axis` is int, a "
    "reduction is performed on a particular axis. If `axis` is a tuple of ints, a reduction is "
    "performed on all the axes specified in the tuple. If `exclude` is true, reduction will be "
    "performed on the axes that are NOT in axis instead. Negative values means indexing from "
    "right to left.";

struct ReduceAxesParam : Parameter<ReduceAxesParam> {
  std::optional<TShape> axis;
  bool keepdims;
  bool exclude;
  static void Declare(ParamDeclarer<ReduceAxesParam>& d) {
    d.field("axis", &ReduceAxesParam::axis).set_default(std::nullopt).describe(kAxisDoc);
    d.field("keepdims", &ReduceAxesParam::keepdims).set_default(false)
        .describe("If this is set to `True`, the reduced axes are left in the result as dimension with size one.");
    d.field("exclude", &ReduceAxesParam::exclude).set_default(false)
        .describe("Whether to perform reduction on axis that are NOT in axis instead.");
  }
};

struct NormParam : Parameter<NormParam> {
  int ord;
  std::optional<TShape> axis;
  std::optional<int> out_dtype;
  bool keepdims;
  static void Declare(ParamDeclarer<NormParam>& d) {
    // MXNet accepts any int and fails at run time; we reject other orders when parsing.
    d.field("ord", &NormParam::ord).set_default(2).set_range(1, 2)
        .describe("Order of the norm. Currently ord=1 and ord=2 is supported.");
    d.field("axis", &NormParam::axis).set_default(std::nullopt)
        .describe("The axis or axes along which to perform the reduction. The default, `axis=()`, "
                  "will compute over all elements into a scalar array with shape `(1,)`. If "
                  "`axis` is int, a reduction is performed on a particular axis. If `axis` is a "
                  "2-tuple, it specifies the axes that hold 2-D matrices, and the matrix norms of "
                  "these matrices are computed.");
    d.field("out_dtype", &NormParam::out_dtype)
        .add_enum("float16", static_cast<int>(DType::kFloat16))
        .add_enum("float32", static_cast<int>(DType::kFloat32))
        .add_enum("float64", static_cast<int>(DType::kFloat64))
        .add_enum("int64", static_cast<int>(DType::kInt64))
        .add_enum("int32", static_cast<int>(DType::kInt32))
        .add_enum("int8", static_cast<int>(DType::kInt8))
        .set_default(std::nullopt).describe("The data type of the output.");
    d.field("keepdims", &NormParam::keepdims).set_default(false)
        .describe("If this is set to `True`, the reduced axis is left in the result as dimension with size one.");
  }
};

struct ReduceAxisParam : Parameter<ReduceAxisParam> {
  std::optional<int> axis;
  bool keepdims;
  static void Declare(ParamDeclarer<ReduceAxisParam>& d) {
    d.field("axis", &ReduceAxisParam::axis).set_default(std::nullopt)
        .describe("The axis along which to perform the reduction. Negative values means indexing "
                  "from right to left. ``Requires axis to be set as int, because global reduction "
                  "is not supported yet.``");
    d.field("keepdims", &ReduceAxisParam::keepdims).set_default(false)
        .describe("If this is set to `True`, the reduced axis is left in the result as dimension with size one.");
  }
};

// Which dims of `ishape` the reduction folds (MXNet's ReduceAxesShapeImpl). An absent or
// empty axis reduces everything, even with exclude set (as MXNet does).
std::vector<bool> ReducedAxes(const TShape& ishape, const std::optional<TShape>& axis, bool exclude) {
  const int nd = ishape.ndim();
  std::vector<bool> red(static_cast<size_t>(nd), true);
  if (!axis || axis->ndim() == 0) return red;
  std::vector<int64_t> axes;
  for (int64_t a : axis->dims()) axes.push_back(a < 0 ? a + nd : a);
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i - 1] == axes[i]) throw ShapeError(StrCat("Reduction axes have duplicates ", axis->ToStringAsWritten()));
  if (axes.back() >= nd || axes.front() < 0)
    throw ShapeError(StrCat("Reduction axis ", axis->ToStringAsWritten(), " exceeds input dimensions ", ishape));
  for (int i = 0; i < nd; ++i)
    red[static_cast<size_t>(i)] = std::binary_search(axes.begin(), axes.end(), i) != exclude;
  return red;
}

TShape ReduceOutShape(const TShape& ishape, const std::optional<TShape>& axis, bool keepdims,
                      bool exclude) {
  if (!axis || axis->ndim() == 0)
    return keepdims ? TShape::Filled(ishape.ndim(), 1) : TShape({1});
  std::vector<bool> red = ReducedAxes(ishape, axis, exclude);
  std::vector<int64_t> o;
  for (int i = 0; i < ishape.ndim(); ++i) {
    if (!red[static_cast<size_t>(i)]) o.push_back(ishape[i]);
    else if (keepdims) o.push_back(1);
  }
  if (o.empty()) o.push_back(1);
  return TShape(o);
}

// The input's dims with the reduced ones set to 1: the output's layout for the kernels.
Dims SmallDims(const TShape& ishape, const std::optional<TShape>& axis, bool exclude) {
  std::vector<bool> red = ReducedAxes(ishape, axis, exclude);
  Dims d = ishape.dims();
  for (size_t i = 0; i < d.size(); ++i)
    if (red[i]) d[i] = 1;
  return d;
}

enum ReduceKind { kSum, kMean, kNanSum, kProd, kNanProd, kMax, kMin, kNorm1, kNorm2, kSquareSum };

// Folds `x` (dims big) into `y` (dims small) with req, in x's element type T: sums and
// products accumulate in double (int64 for integers), extrema in T.
template <typename T>
void ReduceForward(ReduceKind kind, const T* x, const Dims& big, T* y, const Dims& small, OpReq req) {
  if (req == OpReq::kNull) return;
  auto store = [&](int64_t j, T v) { y[j] = req == OpReq::kAdd ? static_cast<T>(y[j] + v) : v; };
  if (kind == kMax || kind == kMin) {
    const bool is_max = kind == kMax;
    using Lim = std::numeric_limits<T>;
    const T init = Lim::has_infinity ? (is_max ? -Lim::infinity() : Lim::infinity())
                                     : (is_max ? Lim::lowest() : Lim::max());
    // NaN propagates, as mshadow's maximum/minimum reducers.
    auto fold = [is_max](T& a, T v) {
      if (a != a) return;
      if (v != v || (is_max ? !(a >= v) : !(a <= v))) a = v;
    };
    math::ReduceToSmall<T>(big, small, init, [&](T& a, int64_t i) { fold(a, x[i]); }, fold, store);
    return;
  }
  using Acc = std::conditional_t<std::is_integral<T>::value, int64_t, double>;
  const bool product = kind == kProd || kind == kNanProd;
  const double count = static_cast<double>(math::Product(big)) / std::max<int64_t>(1, math::Product(small));
  math::ReduceToSmall<Acc>(
      big, small, product ? Acc(1) : Acc(0),
      [&](Acc& a, int64_t i) {
        Acc v = static_cast<Acc>(x[i]);
        switch (kind) {
          case kNanSum: if (!(v != v)) a += v; break;
          case kProd: a *= v; break;
          case kNanProd: if (!(v != v)) a *= v; break;
          case kNorm1: a += v < 0 ? -v : v; break;
          case kNorm2: case kSquareSum: a += v * v; break;
          default: a += v;
        }
      },
      [product](Acc& a, Acc b) { product ? a *= b : a += b; },
      [&](int64_t j, Acc a) {
        if (kind == kMean) return store(j, static_cast<T>(static_cast<double>(a) / count));
        if (kind == kNorm2) return store(j, static_cast<T>(std::sqrt(static_cast<double>(a))));
        store(j, static_cast<T>(a));
      });
}

// d x[i] = g[j] * factor(x[i], y[j]) where j is the output element x[i] folds into, in T
// (float32, or float64 where the op computes in it).
template <typename T>
void ReduceBackward(ReduceKind kind, const BackwardArgs& a, const Dims& big, const Dims& small) {
  OpReq req = a.req[0];
  if (req == OpReq::kNull) return;
  const T* x = a.inputs[0].template data<T>();
  const T* y = a.outputs[0].template data<T>();
  const T* g = a.out_grads[0].template data<T>();
  T* dx = a.in_grads[0].template data<T>();
  const T inv_count =
      static_cast<T>(std::max<int64_t>(1, math::Product(small))) / static_cast<T>(math::Product(big));
  math::ForEachBroadcast(big, small, small, [&](int64_t i, int64_t j, int64_t) {
    T v;
    switch (kind) {
      case kMean: v = g[j] * inv_count; break;
      case kNanSum: v = std::isnan(x[i]) ? T(0) : g[j]; break;
      case kProd: v = g[j] * (y[j] / x[i]); break;
      case kNanProd: v = std::isnan(x[i]) ? T(0) : g[j] * (y[j] / x[i]); break;
      // Every element equal to the extremum gets the full gradient (MXNet's eq mask).
      case kMax: case kMin: v = x[i] == y[j] ? g[j] : T(0); break;
      case kNorm1: v = x[i] > 0 ? g[j] : (x[i] < 0 ? -g[j] : T(0)); break;
      case kNorm2: v = g[j] * (x[i] / y[j]); break;
      case kSquareSum: v = T(2) * x[i] * g[j]; break;
      default: v = g[j];
    }
    dx[i] = req == OpReq::kAdd ? dx[i] + v : v;
  });
}

void RegisterReduce(const char* name, const char* alias, const char* doc, ReduceKind kind) {
  Op& op = OpRegistry::Global().Register(name);
  if (alias) op.add_alias(alias);
  const bool minmax = kind == kMax || kind == kMin;
  op.describe(doc)
      .set_monitor_numbered_inputs()
      .set_params<ReduceAxesParam>()
      .set_infer_shape([minmax](const NodeAttrs& attrs, std::vector<TShape>* in,
                                std::vector<TShape>* out) {
        const auto& p = attrs.param<ReduceAxesParam>();
        const TShape& d = (*in)[0];
        if (!d.ndim_known()) return;
        if (minmax && d.is_known() && d.Size() == 0)
          throw ShapeError(StrCat("Reduction input's size should > 0 ", d));
        ShapeAssignCheck(out, 0, ReduceOutShape(d, p.axis, p.keepdims, p.exclude));
      })
      .set_dtype_generic()
      .set_forward([kind](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                          const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const auto& p = attrs.param<ReduceAxesParam>();
        ComputeInDType(attrs.op->name.c_str(), in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                                 const auto& out) {
          using T = decltype(tag);
          ReduceForward(kind, in[0].template data<T>(), in[0].shape().dims(), out[0].template data<T>(),
                        SmallDims(in[0].shape(), p.axis, p.exclude), req[0]);
        });
      })
      .set_float64_backward()
      .set_backward([kind](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        math::RequireFloatGradient(a, attrs);
        const auto& p = attrs.param<ReduceAxesParam>();
        math::BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          ReduceBackward<decltype(tag)>(kind, b, b.inputs[0].shape().dims(),
                                        SmallDims(b.inputs[0].shape(), p.axis, p.exclude));
        });
      });
  // Integer arrays: MXNet's gradients of these are integers (a copy of the head gradient, or
  // zero); the mean's and products' divide.
  if (kind == kSum || kind == kNanSum || kind == kMax || kind == kMin) op.set_integer_backward();
}

ReduceKind NormKind(const NodeAttrs& attrs) { return attrs.param<NormParam>().ord == 1 ? kNorm1 : kNorm2; }

// argmax/argmin over one axis (or the flattened array): indices in the input's dtype, the first
// occurrence wins.
void SearchForward(bool is_max, const std::optional<int>& axis, const NDArray& x, OpReq req,
                   const NDArray& y) {
  if (req == OpReq::kNull) return;
  const TShape& s = x.shape();
  int64_t outer = 1, m = x.Size(), inner = 1;
  if (axis && s.ndim() > 1) {  // a 1-D input is searched whole whatever the axis (MXNet)
    int ax = *axis < 0 ? *axis + s.ndim() : *axis;
    outer = s.ProdDims(0, ax);
    m = s[ax];
    inner = s.ProdDims(ax + 1, s.ndim());
  }
  ComputeInDType(is_max ? "argmax" : "argmin", {x}, {req}, {y}, [&](auto tag, const auto& in, const auto& reqs,
                                                                       const auto& out) {
    using T = decltype(tag);
    const T* xs = in[0].template data<T>();
    MapWithReq(out[0].template data<T>(), outer * inner, reqs[0], [&](int64_t j) {
      const T* p = xs + (j / inner) * m * inner + j % inner;
      // The first NaN wins, as NumPy's argmax/argmin (and max/min propagate NaN).
      int64_t best = 0;
      for (int64_t k = 1; k < m; ++k) {
        const T b = p[best * inner], v = p[k * inner];
        if (b != b) break;
        if (v != v || (is_max ? v > b : v < b)) best = k;
      }
      return static_cast<T>(best);
    });
  });
}

// MXNet's ReduceAxisShapeImpl.
TShape SearchOutShape(const TShape& s, const std::optional<int>& axis, bool keepdims) {
  if (!axis || s.ndim() == 1) return keepdims ? TShape::Filled(s.ndim(), 1) : TShape({1});
  const int nd = s.ndim();
  if (nd == 0 ? (*axis != 0 && *axis != -1) : (*axis >= nd || *axis < -nd))
    throw ShapeError(StrCat("axis ", *axis, " exceeds the input dimension of ", nd));
  if (nd == 0) return keepdims ? TShape() : TShape({1});
  const int ax = (*axis + nd) % nd;
  std::vector<int64_t> o;
  for (int i = 0; i < nd; ++i) {
    if (i != ax) o.push_back(s[i]);
    else if (keepdims) o.push_back(1);
  }
  return TShape(o);
}

void RegisterSearch(const char* name, const char* doc, bool is_max) {
  OpRegistry::Global()
      .Register(name)
      .describe(doc)
      .set_monitor_numbered_inputs()
      .set_params<ReduceAxisParam>()
      .set_dtype_generic()
      .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
        const auto& p = attrs.param<ReduceAxisParam>();
        if (!(*in)[0].is_known()) return;
        ShapeAssignCheck(out, 0, SearchOutShape((*in)[0], p.axis, p.keepdims));
      })
      .set_forward([is_max](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        SearchForward(is_max, attrs.param<ReduceAxisParam>().axis, in[0], req[0], out[0]);
      })
      // MXNet gives argmax/argmin a zero gradient (MakeZeroGradNodes).
      .set_zero_gradient();
}

SYMBIND_REGISTER_OP_FAMILY(reductions) {
  RegisterReduce("sum", "sum_axis", "Computes the sum of array elements over given axes.", kSum);
  RegisterReduce("mean", nullptr, "Computes the mean of array elements over given axes.", kMean);
  RegisterReduce("nansum", nullptr, "Computes the sum of array elements over given axes treating Not a Numbers (NaN) as zero.", kNanSum);
  RegisterReduce("prod", nullptr, "Computes the product of array elements over given axes.", kProd);
  RegisterReduce("nanprod", nullptr, "Computes the product of array elements over given axes treating Not a Numbers (NaN) as one.", kNanProd);
  RegisterReduce("max", "max_axis", "Computes the max of array elements over given axes.", kMax);
  RegisterReduce("min", "min_axis", "Computes the min of array elements over given axes.", kMin);
  // MXNet's sum of squares, written for row_sparse inputs (which compute dense here).
  RegisterReduce("_square_sum", nullptr, "Computes the sum of the squares of array elements over given axes.",
                 kSquareSum);
  RegisterSearch("argmax", "Returns indices of the maximum values along an axis.", true);
  RegisterSearch("argmin", "Returns indices of the minimum values along an axis.", false);
}
}  // namespace

SYMBIND_REGISTER_OP(norm)
    .set_monitor_numbered_inputs()
    .describe("Computes the norm on an NDArray: L2 (ord=2) or L1 (ord=1) over the given axes, by "
              "default over the entire array. With a 2-tuple axis, ord=2 gives the Frobenius norm.")
    .set_params<NormParam>()
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<NormParam>();
      if (!(*in)[0].is_known()) return;
      ShapeAssignCheck(out, 0, ReduceOutShape((*in)[0], p.axis, p.keepdims, false));
    })
    .set_infer_type([](const NodeAttrs& attrs, std::vector<int>* in, std::vector<int>* out) {
      // out_dtype sets the output's dtype on its own; the reduction computes in float32.
      const auto& p = attrs.param<NormParam>();
      if (!p.out_dtype) return InferSameType(attrs, in, out);
      TypeAssignCheck(out, 0, *p.out_dtype);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<NormParam>();
      ReduceForward(NormKind(attrs), in[0].fdata(), in[0].shape().dims(), out[0].fdata(),
                    SmallDims(in[0].shape(), p.axis, false), req[0]);
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      ReduceBackward<float>(NormKind(attrs), a, a.inputs[0].shape().dims(),
                            SmallDims(a.inputs[0].shape(), attrs.param<NormParam>().axis, false));
    });

namespace {
struct MomentsParam : Parameter<MomentsParam> {
  std::optional<TShape> axes;
  bool keepdims;
  static void Declare(ParamDeclarer<MomentsParam>& d) {
    d.field("axes", &MomentsParam::axes).set_default(std::nullopt)
        .describe("Array of ints. Axes along which to compute mean and variance.");
    d.field("keepdims", &MomentsParam::keepdims).set_default(false)
        .describe("produce moments with the same dimensionality as the input.");
  }
};
}  // namespace

// The mean and the (biased) variance over `axes`: the variance is the mean of the squared
// deviations, so both are kMean reductions.
SYMBIND_REGISTER_OP(moments)
    .describe("Calculate the mean and variance of `data` over the given axes.")
    .set_params<MomentsParam>()
    .add_argument_doc("data", "Input ndarray")
    .set_outputs({"mean", "var"})
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<MomentsParam>();
      if (!p.axes || p.axes->ndim() == 0)
        throw ShapeError("moments: empty axes is not supported; for global moments pass every axis in axes");
      if (!(*in)[0].ndim_known()) return;
      const TShape o = ReduceOutShape((*in)[0], p.axes, p.keepdims, false);
      ShapeAssignCheck(out, 0, o);
      ShapeAssignCheck(out, 1, o);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const Dims big = in[0].shape().dims(), small = SmallDims(in[0].shape(), attrs.param<MomentsParam>().axes, false);
      const float* x = in[0].fdata();
      std::vector<float> mean(static_cast<size_t>(math::Product(small)));
      ReduceForward(kMean, x, big, mean.data(), small, OpReq::kWrite);
      std::vector<float> sq(static_cast<size_t>(in[0].Size()));
      math::ForEachBroadcast(big, small, small, [&](int64_t i, int64_t j, int64_t) {
        const float d = x[i] - mean[j];
        sq[i] = d * d;
      });
      AssignWithReq(out[0].fdata(), mean.data(), out[0].Size(), req[0]);
      ReduceForward(kMean, sq.data(), big, out[1].fdata(), small, req[1]);
    })
    // d mean / dx = 1 / N; d var / dx = 2 (x - mean) / N.
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      float* dx = InGradOrNull(a, 0);
      if (!dx) return;
      const Dims big = a.inputs[0].shape().dims(), small = SmallDims(a.inputs[0].shape(), attrs.param<MomentsParam>().axes, false);
      const float *x = a.inputs[0].fdata(), *mean = a.outputs[0].fdata();
      const float *gm = a.out_grads[0].fdata(), *gv = a.out_grads[1].fdata();
      const float inv_n = static_cast<float>(std::max<int64_t>(1, math::Product(small))) / static_cast<float>(math::Product(big));
      math::ForEachBroadcast(big, small, small, [&](int64_t i, int64_t j, int64_t) {
        Put(dx + i, (gm[j] + 2.0f * gv[j] * (x[i] - mean[j])) * inv_n, a.req[0]);
      });
    });

// Legacy: argmax over axis 1 without keepdims; no gradient in MXNet.
SYMBIND_REGISTER_OP(argmax_channel)
    .set_monitor_numbered_inputs()
    .describe("Returns argmax indices of each channel from the input array.")
    .set_infer_shape([](const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
      if (!(*in)[0].is_known()) return;
      ShapeAssignCheck(out, 0, SearchOutShape((*in)[0], 1, false));
    })
    .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      SearchForward(true, 1, in[0], req[0], out[0]);
    });

}  // namespace symbind
