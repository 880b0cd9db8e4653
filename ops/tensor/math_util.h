// Shared index arithmetic for the math ops (broadcast binary ops, reductions, norms): walking a
// shape while tracking the flat offsets of broadcast operands, and deterministic parallel
// reductions over a subset of axes.
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <symbind/ops/op_util.h>

namespace symbind {
namespace math {

using Dims = std::vector<int64_t>;

inline int64_t Product(const Dims& d) {
  int64_t p = 1;
  for (int64_t v : d) p *= v;
  return p;
}

// The dims of `s` with 1s prepended up to `ndim` (NumPy's right alignment).
inline Dims AlignDims(const TShape& s, int ndim) {
  Dims d(static_cast<size_t>(ndim - s.ndim()), 1);
  d.insert(d.end(), s.dims().begin(), s.dims().end());
  return d;
}

// Row-major element strides of an operand of dims `small` (aligned to `big`, each dim 1 or
// equal) as seen while walking `big`: 0 along the dims it is broadcast over.
inline Dims BroadcastStrides(const Dims& small, const Dims& big) {
  Dims st(big.size(), 0);
  int64_t s = 1;
  for (size_t k = big.size(); k-- > 0;) {
    st[k] = (small[k] == 1 && big[k] != 1) ? 0 : s;
    s *= small[k];
  }
  return st;
}

// Drops size-1 dims and merges neighbours that every stride list walks contiguously, so the
// walk below has as few dims as possible.
inline void CompactWalk(Dims* big, std::vector<Dims*> strides) {
  Dims nb;
  std::vector<Dims> ns(strides.size());
  for (size_t k = 0; k < big->size(); ++k) {
    if ((*big)[k] == 1) continue;
    bool merge = !nb.empty();
    for (size_t o = 0; o < strides.size() && merge; ++o)
      merge = ns[o].back() == (*strides[o])[k] * (*big)[k];
    if (merge) {
      nb.back() *= (*big)[k];
      for (size_t o = 0; o < strides.size(); ++o) ns[o].back() = (*strides[o])[k];
    } else {
      nb.push_back((*big)[k]);
      for (size_t o = 0; o < strides.size(); ++o) ns[o].push_back((*strides[o])[k]);
    }
  }
  *big = nb;
  for (size_t o = 0; o < strides.size(); ++o) *strides[o] = ns[o];
}

// An odometer over `dims` keeping the offsets of N operands with the given strides.
template <size_t N>
struct Walker {
  const Dims& dims;
  const Dims* strides[N];
  Dims coord;
  int64_t off[N] = {};

  // Positions the walker at flat index `start`.
  void Seek(int64_t start) {
    coord.assign(dims.size(), 0);
    for (size_t o = 0; o < N; ++o) off[o] = 0;
    for (size_t k = dims.size(); k-- > 0;) {
      coord[k] = start % dims[k];
      start /= dims[k];
      for (size_t o = 0; o < N; ++o) off[o] += coord[k] * (*strides[o])[k];
    }
  }
  void Next() {
    for (size_t k = dims.size(); k-- > 0;) {
      ++coord[k];
      for (size_t o = 0; o < N; ++o) off[o] += (*strides[o])[k];
      if (coord[k] < dims[k]) return;
      for (size_t o = 0; o < N; ++o) off[o] -= (*strides[o])[k] * dims[k];
      coord[k] = 0;
    }
  }
};

// Calls fn(i, a, b) for every flat index i of `big`, with a and b the flat indices into two
// operands of dims `da` and `db` (aligned to big, each dim 1 or equal). Parallel over fixed
// chunks.
template <typename F>
void ForEachBroadcast(Dims big, const Dims& da, const Dims& db, const F& fn) {
  const int64_t n = Product(big);
  Dims sa = BroadcastStrides(da, big), sb = BroadcastStrides(db, big);
  CompactWalk(&big, {&sa, &sb});
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    Walker<2> w{big, {&sa, &sb}, {}};
    w.Seek(b);
    for (int64_t i = b; i < e; ++i, w.Next()) fn(i, w.off[0], w.off[1]);
  });
}

// For every element j of the reduced array (dims `small`: aligned to `big`, 1 on the reduced
// dims) folds the elements of `big` that broadcast to j: acc = init; add(acc, i) for each such
// flat index i of big, in order; then fin(j, acc). Long reductions into few outputs are split
// into fixed chunks whose partial results merge(acc, part) in order, so results never depend
// on the thread count.
template <typename Acc, typename Add, typename Merge, typename Fin>
void ReduceToSmall(const Dims& big, const Dims& small, Acc init, const Add& add,
                   const Merge& merge, const Fin& fin) {
  Dims kept, kept_st, red, red_st;
  int64_t stride = 1;
  for (size_t k = big.size(); k-- > 0;) {
    if (small[k] == big[k]) {
      kept.insert(kept.begin(), big[k]);
      kept_st.insert(kept_st.begin(), stride);
    } else {
      red.insert(red.begin(), big[k]);
      red_st.insert(red_st.begin(), stride);
    }
    stride *= big[k];
  }
  const int64_t J = Product(kept), R = Product(red);
  CompactWalk(&kept, {&kept_st});
  CompactWalk(&red, {&red_st});
  auto partial = [&](int64_t j, int64_t r0, int64_t r1) {
    if (r0 >= r1) return init;
    Walker<1> kw{kept, {&kept_st}, {}};
    kw.Seek(j);
    Walker<1> rw{red, {&red_st}, {}};
    rw.Seek(r0);
    Acc acc = init;
    for (int64_t r = r0; r < r1; ++r, rw.Next()) add(acc, kw.off[0] + rw.off[0]);
    return acc;
  };
  constexpr int64_t kChunk = int64_t{1} << 15;
  const int64_t chunks = (R + kChunk - 1) / kChunk;
  if (chunks <= 1 || J >= 64) {
    ParallelFor(J, std::max<int64_t>(1, kChunk / std::max<int64_t>(R, 1)), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) fin(j, partial(j, 0, R));
    });
    return;
  }
  std::vector<Acc> parts(static_cast<size_t>(J * chunks), init);
  ParallelFor(J * chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t j = t / chunks, c = t % chunks;
      parts[static_cast<size_t>(t)] = partial(j, c * kChunk, std::min(R, (c + 1) * kChunk));
    }
  });
  for (int64_t j = 0; j < J; ++j) {
    Acc acc = parts[static_cast<size_t>(j * chunks)];
    for (int64_t c = 1; c < chunks; ++c) merge(acc, parts[static_cast<size_t>(j * chunks + c)]);
    fin(j, acc);
  }
}

// Sums `src` (dims `big`) into `dst` (dims `small`, aligned, 1 on summed dims) as `req` says;
// the reduction half of every broadcast backward. T is float or double.
template <typename T>
void SumToSmall(const T* src, const Dims& big, T* dst, const Dims& small, OpReq req) {
  if (req == OpReq::kNull) return;
  ReduceToSmall<double>(
      big, small, 0.0, [&](double& a, int64_t i) { a += src[i]; },
      [](double& a, double b) { a += b; },
      [&](int64_t j, double a) {
        if (req == OpReq::kAdd) dst[j] += static_cast<T>(a);
        else dst[j] = static_cast<T>(a);
      });
}

// Scalar functions shared by the element-wise, scalar and broadcast forms of an op, with MXNet's
// mshadow_op semantics, for every element type the kernels compute in (ComputeInDType).
template <typename T>
T Power(T a, T b) { return static_cast<T>(std::pow(a, b)); }
template <typename T>
T PowerGradL(T a, T b) { return static_cast<T>(std::pow(a, b - T(1)) * b); }
template <typename T>
T PowerGradR(T a, T b) { return static_cast<T>(std::pow(a, b) * std::log(a)); }
// Division; an integer divided by 0 gives 0 (as NumPy) rather than a trap, and the one
// overflowing quotient (min / -1) wraps.
template <typename T>
T Div(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0) return T(0);
    if (std::is_signed<T>::value && b == T(-1)) return static_cast<T>(T(0) - static_cast<std::make_unsigned_t<T>>(a));
  }
  return static_cast<T>(a / b);
}
// Python-style modulo: the result takes the sign of b; x mod 0 is 0.
template <typename T>
T Mod(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    if (b == 0 || (std::is_signed<T>::value && b == T(-1))) return T(0);
    T m = static_cast<T>(a % b);
    if (m != 0 && ((m < 0) != (b < 0))) m = static_cast<T>(m + b);
    return m;
  } else {
    double x = a, y = b;
    if (y == 0) return T(0);
    if (y < 0) {
      if (x < 0) return static_cast<T>(-std::fmod(-x, -y));
      double m = std::fmod(x, -y);
      return static_cast<T>(m + (m != 0 ? y : 0));
    }
    if (x < 0) {
      double m = std::fmod(-x, y);
      return static_cast<T>(-m + (m != 0 ? y : 0));
    }
    return static_cast<T>(std::fmod(x, y));
  }
}
template <typename T>
T Hypot(T a, T b) { return static_cast<T>(std::hypot(a, b)); }
inline float Bool(bool v) { return v ? 1.0f : 0.0f; }

// MXNet's maximum and minimum: a NaN in either operand gives NaN (numpy.maximum's rule).
template <typename A, typename B>
auto Maximum(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return static_cast<T>(a);
  }
  return a > b ? static_cast<T>(a) : static_cast<T>(b);
}
template <typename A, typename B>
auto Minimum(A a, B b) {
  using T = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<A>) {
    if (std::isnan(a)) return static_cast<T>(a);
  }
  return a < b ? static_cast<T>(a) : static_cast<T>(b);
}

// A scalar parameter as element type T; integers saturate instead of overflowing (UB).
template <typename T>
T ScalarAs(double v) {
  if constexpr (std::is_integral<T>::value) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

// Backward in the dtype of input 0, float32 or float64 (for ops that set Op::float64_backward):
// kernel(T(), args). Arrays of another floating type are read and written through copies in T:
// a head gradient of an output nobody used (a float32 zero array), and the executors' float32
// gradient buffers.
template <typename K>
void BackwardInFloatType(const NodeAttrs& attrs, const BackwardArgs& a, const K& kernel) {
  const DType t = a.inputs[0].dtype();
  if (t != DType::kFloat32 && t != DType::kFloat64)
    throw TypeError(StrCat(attrs.op ? attrs.op->name : std::string("op"),
                           ": gradients compute in float32 or float64, got ", DTypeName(t)));
  auto other_float = [t](const NDArray& x) { return !x.is_none() && IsFloatingType(x.dtype()) && x.dtype() != t; };
  auto in_type = [&](const std::vector<NDArray>& arrays) {
    std::vector<NDArray> v;
    for (const NDArray& x : arrays) v.push_back(other_float(x) ? x.AsType(t) : x);
    return v;
  };
  const std::vector<NDArray> out_grads = in_type(a.out_grads), outputs = in_type(a.outputs);
  std::vector<NDArray> in_grads;
  std::vector<bool> copied;
  for (size_t i = 0; i < a.in_grads.size(); ++i) {
    const NDArray& g = a.in_grads[i];
    copied.push_back(a.req[i] != OpReq::kNull && other_float(g));
    if (!copied.back()) in_grads.push_back(g);
    else in_grads.push_back(a.req[i] == OpReq::kAdd ? g.AsType(t) : NDArray(g.shape(), t));
  }
  const BackwardArgs args{out_grads, a.inputs, outputs, a.req, in_grads};
  if (t == DType::kFloat64) kernel(double(), args);
  else kernel(float(), args);
  for (size_t i = 0; i < in_grads.size(); ++i)
    if (copied[i])
      ConvertElements(in_grads[i].raw_data(), t, a.in_grads[i].raw_data(), a.in_grads[i].dtype(),
                      static_cast<size_t>(in_grads[i].Size()));
}

// Forward computes in every dtype (ComputeInDType); gradients in float32 only (float64 where a
// kernel has its own path): anything else is refused by name rather than read as the wrong type.
inline void RequireFloat32Gradient(const BackwardArgs& a, const NodeAttrs& attrs) {
  for (const NDArray& x : a.inputs)
    if (!x.is_none() && x.dtype() != DType::kFloat32)
      throw TypeError(StrCat(attrs.op ? attrs.op->name : std::string("op"), ": gradients compute in float32 only, got ",
                              DTypeName(x.dtype()), " (Cast to float32 to differentiate)"));
}

// The same for kernels that differentiate in float32 or float64 (BackwardInFloatType): integer
// inputs are refused with the float32 wording.
inline void RequireFloatGradient(const BackwardArgs& a, const NodeAttrs& attrs) {
  for (const NDArray& x : a.inputs)
    if (!x.is_none() && !IsFloatingType(x.dtype())) RequireFloat32Gradient(a, attrs);
}

// Registration of element-wise ops on equal shapes (elemwise_binary.cc, elemwise_logic.cc) and
// of ops with a scalar operand (MXNet's NumpyBinaryScalarParam: scalar, is_int).

// Registers a binary op with forward f(l, r) and partial derivatives dl(l, r), dr(l, r).
template <typename F, typename DL, typename DR>
Op& RegisterBinary(Op& op, F f, DL dl, DR dr) {
  return op.set_arguments({"lhs", "rhs"})
      .set_forward_inplace()
      .set_infer_shape(AllSameShape)
      .set_dtype_generic()
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        ComputeInDType(attrs.op->name.c_str(), in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                                 const auto& out) {
          using T = decltype(tag);
          const T* l = in[0].template data<T>();
          const T* r = in[1].template data<T>();
          MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) { return f(l[i], r[i]); });
        });
      })
      .set_float64_backward()
      .set_backward([dl, dr](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        RequireFloatGradient(a, attrs);
        BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          using T = decltype(tag);
          const T* l = b.inputs[0].template data<T>();
          const T* r = b.inputs[1].template data<T>();
          const T* g = b.out_grads[0].template data<T>();
          const int64_t n = b.inputs[0].Size();
          if (b.req[0] != OpReq::kNull)
            MapWithReq(b.in_grads[0].template data<T>(), n, b.req[0],
                       [&](int64_t i) { return static_cast<T>(g[i] * dl(l[i], r[i])); });
          if (b.req[1] != OpReq::kNull)
            MapWithReq(b.in_grads[1].template data<T>(), n, b.req[1],
                       [&](int64_t i) { return static_cast<T>(g[i] * dr(l[i], r[i])); });
        });
      });
}

// MXNet's mod_grad and mod_rgrad are 0 for integer types (1 and -floor(l / r) for floats): the
// backward `floating` for floating inputs, zero gradients for integer ones.
inline BackwardFn ZeroGradientForIntegers(BackwardFn floating) {
  return [floating](const OpContext& ctx, const NodeAttrs& attrs, const BackwardArgs& a) {
    if (IsFloatingType(a.inputs[0].dtype())) return floating(ctx, attrs, a);
    for (size_t i = 0; i < a.in_grads.size(); ++i) ZeroWithReq(a.in_grads[i], a.req[i]);
  };
}

struct ScalarParam : Parameter<ScalarParam> {
  double scalar;
  bool is_int;
  static void Declare(ParamDeclarer<ScalarParam>& d) {
    d.field("scalar", &ScalarParam::scalar).set_default(1.0).allow_non_finite().describe("Scalar input value.");
    d.field("is_int", &ScalarParam::is_int).set_default(true)
        .describe("Indicate whether scalar input is int type (accepted for compatibility).");
  }
};

// Registers x -> f(x, s) with derivative df(x, s) (by x).
template <typename F, typename DF>
Op& RegisterScalar(Op& op, F f, DF df) {
  return op.set_params<ScalarParam>()
      .set_monitor_numbered_inputs()
      .set_infer_shape(SameShape)
      .set_dtype_generic()
      .set_forward([f](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        const double scalar = attrs.param<ScalarParam>().scalar;
        ComputeInDType(attrs.op->name.c_str(), in, req, out, [&](auto tag, const auto& in, const auto& req,
                                                                 const auto& out) {
          using T = decltype(tag);
          const T s = ScalarAs<T>(scalar);  // MXNet casts the scalar to the array's type
          const T* x = in[0].template data<T>();
          MapWithReq(out[0].template data<T>(), out[0].Size(), req[0], [&](int64_t i) { return f(x[i], s); });
        });
      })
      .set_float64_backward()
      .set_backward([df](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
        RequireFloatGradient(a, attrs);
        if (a.req[0] == OpReq::kNull) return;
        BackwardInFloatType(attrs, a, [&](auto tag, const BackwardArgs& b) {
          using T = decltype(tag);
          const T s = static_cast<T>(attrs.param<ScalarParam>().scalar);
          const T* x = b.inputs[0].template data<T>();
          const T* g = b.out_grads[0].template data<T>();
          MapWithReq(b.in_grads[0].template data<T>(), b.inputs[0].Size(), b.req[0],
                     [&](int64_t i) { return static_cast<T>(g[i] * df(x[i], s)); });
        });
      });
}
}  // namespace math
}  // namespace symbind
