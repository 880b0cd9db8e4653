// The helpers every operator file uses: parallel loops whose chunking never depends on the
// thread count, writing per OpReq, axis handling and the common shape functions. One of each;
// family-specific helpers live beside their family (ops/nn/norm_util.h, ops/tensor/...), numeric
// kernels in ops/kernels/.
//
//   SYMBIND_REGISTER_OP(my_op)
//       .set_infer_shape(SameShape)
//       .set_forward([](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
//                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
//         const float* x = in[0].fdata();
//         MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) { return 2 * x[i]; });
//       });
#pragma once
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <symbind/core/checked_math.h>
#include <symbind/core/op.h>

namespace symbind {

// Runs fn(begin, end) over [0, n) in chunks of `grain`. The chunking depends only on n and
// grain, never on the thread count, so results are identical with 1 or many threads.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, const F& fn) {
  if (n <= 0) return;
  if (n <= grain) {
    fn(int64_t{0}, n);
    return;
  }
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    [&](const tbb::blocked_range<int64_t>& r) { fn(r.begin(), r.end()); },
                    tbb::simple_partitioner());
}

// The threads a ParallelFor started here can use: the current arena's, capped by the process's
// limit (SetNumThreads sets a tbb::global_control, which the arena's max_concurrency does not
// show). For choosing how to cut work; never for what a result is.
inline int UsableThreads() {
  return static_cast<int>(std::min<size_t>(
      static_cast<size_t>(tbb::this_task_arena::max_concurrency()),
      tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism)));
}

// Runs fn on the calling thread with every ParallelFor inside it serial (UsableThreads() reads 1
// there): for a task that calls whole-layer kernels on its own part of a job (a band of a fused
// block), where their own splitting would move the part's data to other threads' caches. Each
// thread enters an arena of one slot of its own.
template <typename F>
void RunSerially(const F& fn) {
  thread_local tbb::task_arena one_thread(1);
  one_thread.execute(fn);
}

// Grain for cheap elementwise loops.
constexpr int64_t kElementwiseGrain = 1 << 15;

// Grain so that one chunk does roughly `work` element operations.
inline int64_t GrainFor(int64_t per_item, int64_t work = 1 << 15) {
  return std::max<int64_t>(1, work / std::max<int64_t>(per_item, 1));
}

// --- Writing as OpReq says (AssignWithReq in core/op.h writes a whole buffer) ---------------

// out[i] (written or added per req) = f(i) over n elements, in parallel; f's value is
// converted to T (MXNet's DType cast of an element-wise result).
template <typename T, typename F>
void MapWithReq(T* out, int64_t n, OpReq req, const F& f) {
  if (req == OpReq::kNull) return;
  ParallelFor(n, kElementwiseGrain, [&](int64_t b, int64_t e) {
    if (req == OpReq::kAdd)
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(out[i] + f(i));
    else
      for (int64_t i = b; i < e; ++i) out[i] = static_cast<T>(f(i));
  });
}

// --- Kernels in the arrays' own dtype --------------------------------------------------------

// Calls fn(T()) with T the element type of `t`, for the dtypes kernels compute in natively
// (float32, float64, uint8, int8, int32, int64); any other throws TypeError naming `op`.
template <typename F>
void SwitchNumericType(DType t, const char* op, F&& fn) {
  switch (t) {
    case DType::kFloat32: fn(float()); return;
    case DType::kFloat64: fn(double()); return;
    case DType::kUint8: fn(uint8_t()); return;
    case DType::kInt8: fn(int8_t()); return;
    case DType::kInt32: fn(int32_t()); return;
    case DType::kInt64: fn(int64_t()); return;
    default:
      throw TypeError(StrCat(op, ": unsupported dtype ", DTypeName(t),
                              " (supported: float16, bfloat16, float32, float64, uint8, int8, int32, int64)"));
  }
}

// Runs kernel(T(), in, req, out) with T the element type of in[0]: every input and output of
// that dtype is read and written as T (others, such as index outputs, as they are). float16
// and bfloat16 compute in float32, as MXNet's half_t arithmetic does: through float32 copies
// of those arrays, converted back into the outputs.
template <typename K>
void ComputeInDType(const char* op, const std::vector<NDArray>& in, const std::vector<OpReq>& req,
                    const std::vector<NDArray>& out, const K& kernel) {
  const DType t = in.empty() ? out[0].dtype() : in[0].dtype();
  if (t != DType::kFloat16 && t != DType::kBFloat16) {
    SwitchNumericType(t, op, [&](auto tag) { kernel(tag, in, req, out); });
    return;
  }
  std::vector<NDArray> fin, fout;
  for (const NDArray& a : in) fin.push_back(a.dtype() == t ? a.AsType(DType::kFloat32) : a);
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].dtype() != t) fout.push_back(out[i]);
    else if (req[i] == OpReq::kAdd) fout.push_back(out[i].AsType(DType::kFloat32));
    else fout.push_back(NDArray(out[i].shape(), DType::kFloat32));
  }
  kernel(float(), fin, req, fout);
  for (size_t i = 0; i < out.size(); ++i)
    if (out[i].dtype() == t && req[i] != OpReq::kNull)
      ConvertElements(fout[i].raw_data(), DType::kFloat32, out[i].raw_data(), t,
                      static_cast<size_t>(out[i].Size()));
}

// One element: dst = v or dst += v as `req` says.
inline void Put(float* dst, float v, OpReq req) {
  if (req == OpReq::kAdd) *dst += v;
  else if (req != OpReq::kNull) *dst = v;
}

// Sets dst to zero under kWrite; leaves it alone under kAdd and kNull (the gradient of
// piecewise-constant ops, or the start of a scatter).
inline void ZeroWithReq(const NDArray& dst, OpReq req) {
  if (req == OpReq::kWrite || req == OpReq::kWriteInplace) dst.Fill(0.0f);
}

// The gradient buffer of argument i, or null when nobody asked for it (req kNull: the executor
// may have bound no array there, so its data must not be touched).
inline float* InGradOrNull(const BackwardArgs& a, size_t i) {
  return a.req[i] == OpReq::kNull ? nullptr : a.in_grads[i].fdata();
}

// Copies (or adds) src into dst element-wise; the shapes may differ, the sizes match.
// Writes work for any dtype (a byte copy); adds need float32.
inline void CopyWithReq(const NDArray& dst, const NDArray& src, OpReq req) {
  if (req == OpReq::kNull || dst.raw_data() == src.raw_data()) return;
  if (req != OpReq::kAdd && dst.dtype() == src.dtype()) {
    const char* s = static_cast<const char*>(src.raw_data());
    char* d = static_cast<char*>(dst.raw_data());
    int64_t bytes = static_cast<int64_t>(src.bytes());
    ParallelFor(bytes, int64_t{1} << 20, [&](int64_t b, int64_t e) {
      std::memcpy(d + b, s + b, static_cast<size_t>(e - b));
    });
    return;
  }
  const float* s = src.fdata();
  MapWithReq(dst.fdata(), dst.Size(), req, [&](int64_t i) { return s[i]; });
}

// Forward and backward of ops whose output is their input (reshapes, identities, loss heads).
inline void ForwardCopy(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                        const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  CopyWithReq(out[0], in[0], req[0]);
}
inline void BackwardCopy(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  CopyWithReq(a.in_grads[0], a.out_grads[0], a.req[0]);
}

// Makes the legacy op `legacy` (MXNet's *_v1 ops, whose parameters are a subset of a current
// op's) run as the registered op `modern`: `legacy` keeps its own parameter schema, which
// validates the attributes first; then they are parsed as `modern` parses them, and the names,
// shape and type inference and kernels are `modern`'s, looked up when used (registration order
// across files is unspecified).
template <typename LegacyParam>
Op& RunAs(Op& legacy, const std::string& modern) {
  auto target = [modern]() -> const Op& { return OpRegistry::Global().Get(modern); };
  legacy.set_params<LegacyParam>();
  legacy.parse_params = [target](const KwArgs& kw) {
    LegacyParam::Parse(kw);
    return target().parse_params(kw);
  };
  legacy.set_arguments([target](const NodeAttrs& a) { return target().ListArguments(a); })
      .set_aux_states([target](const NodeAttrs& a) { return target().ListAuxStates(a); })
      .set_outputs([target](const NodeAttrs& a) { return target().ListOutputs(a); })
      .set_num_visible_outputs([target](const NodeAttrs& a) { return target().NumVisibleOutputs(a); })
      .set_infer_shape([target](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        if (target().infer_shape) target().infer_shape(a, in, out);
      })
      .set_infer_type([target](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
        if (target().infer_type) target().infer_type(a, in, out);
        else InferSameType(a, in, out);
      })
      .set_forward([target](const OpContext& ctx, const NodeAttrs& a, const std::vector<NDArray>& in,
                            const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        target().forward(ctx, a, in, req, out);
      })
      .set_backward([target](const OpContext& ctx, const NodeAttrs& a, const BackwardArgs& args) {
        target().backward(ctx, a, args);
      });
  return legacy;
}

// "Error in operator NAME (OP)": how a kernel's error message starts (shape errors get it from
// the graph; errors found while running name the node themselves).
inline std::string InOperator(const NodeAttrs& attrs) {
  return StrCat("Error in operator ", attrs.name, " (", attrs.op ? attrs.op->name : "?", ")");
}

// --- Axes and shapes ------------------------------------------------------------------------

// Maps a possibly negative axis into [0, ndim); throws ShapeError naming `op` otherwise.
inline int NormalizeAxis(int64_t axis, int ndim, const char* op) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    throw ShapeError(StrCat(op, ": axis ", axis, " is out of range for an input of ", ndim,
                            " dimensions (expected -", ndim, " <= axis < ", ndim, ")"));
  return static_cast<int>(a);
}

// A tensor viewed as (outer, n, inner) around one axis: element (o, k, i) sits at
// (o * n + k) * inner + i.
struct AxisLayout {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t Index(int64_t o, int64_t k, int64_t i) const { return (o * n + k) * inner + i; }
};
inline AxisLayout LayoutAround(const TShape& s, int axis) {
  return {s.ProdDims(0, axis), s[axis], s.ProdDims(axis + 1, s.ndim())};
}

// Row-major strides of `s`.
inline std::vector<int64_t> Strides(const TShape& s) {
  std::vector<int64_t> st(static_cast<size_t>(s.ndim()), 1);
  for (int i = s.ndim() - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

// Product of dims [begin, end), -1 if any is unknown.
inline int64_t KnownProduct(const TShape& s, int begin, int end) {
  int64_t p = 1;
  for (int i = begin; i < end; ++i) {
    if (s[i] < 0) return -1;
    p = CheckedMul(p, s[i], "product of dims ", begin, " to ", end - 1, " of ", s);
  }
  return p;
}

// InferShape of ops whose output 0 has the shape of input 0, inferred both ways.
inline void SameShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, (*in)[0]);
  ShapeAssignCheck(in, 0, (*out)[0]);
}

// prefix0, prefix1, ...: the input or output names of variadic ops.
// Multiply-adds when each element of `base` is multiplied with one row of `weight`, shaped
// (rows, ...): output elements for Convolution and FullyConnected, input elements for
// Deconvolution. A MacCountFn's core.
inline int64_t WeightRowMacs(const TShape& base, const TShape& weight) {
  if (weight.ndim() < 1 || weight[0] <= 0) return 0;
  return CheckedMul(base.Size(), weight.Size() / weight[0], "multiply-adds of a ", base, " output");
}

// The MacCountFn of Convolution and FullyConnected: each output element meets one weight row.
inline int64_t OutputWeightRowMacs(const NodeAttrs&, const std::vector<TShape>& in,
                                   const std::vector<TShape>& out) {
  return WeightRowMacs(out[0], in[1]);
}

// InferShape of ops whose inputs and output 0 all share one shape (element-wise binary ops,
// optimizer updates), inferred both ways.
inline void AllSameShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  for (size_t i = 0; i < in->size(); ++i) ShapeAssignCheck(out, 0, (*in)[i]);
  for (size_t i = 0; i < in->size(); ++i) ShapeAssignCheck(in, i, (*out)[0]);
}

// --- Parameters and dtypes ------------------------------------------------------------------

// Declares MXNet's dtype names on an int field: float32, float64, float16, uint8, int8, int32,
// int64 (MXNET_ADD_ALL_TYPES), plus bfloat16 and bool when `with_bool` (..._WITH_BOOL).
template <typename Field>
Field& AddDTypeEnums(Field& f, bool with_bool) {
  f.add_enum("float32", static_cast<int>(DType::kFloat32))
      .add_enum("float64", static_cast<int>(DType::kFloat64))
      .add_enum("float16", static_cast<int>(DType::kFloat16));
  if (with_bool) f.add_enum("bfloat16", static_cast<int>(DType::kBFloat16));
  f.add_enum("uint8", static_cast<int>(DType::kUint8))
      .add_enum("int8", static_cast<int>(DType::kInt8))
      .add_enum("int32", static_cast<int>(DType::kInt32))
      .add_enum("int64", static_cast<int>(DType::kInt64));
  if (with_bool) f.add_enum("bool", static_cast<int>(DType::kBool));
  return f;
}

// The values of an array of any dtype as double (indices, conditions).
inline std::vector<double> ValuesAsDouble(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
}

// --- Indices and dtypes of index outputs ---------------------------------------------------

// Writes (or adds, per req) `v` into `out` converted to out's dtype: index and shape outputs
// whose dtype a parameter chooses.
inline void WriteValuesWithReq(const std::vector<double>& v, const NDArray& out, OpReq req) {
  if (req == OpReq::kNull) return;
  if (req == OpReq::kAdd) {
    std::vector<double> sum = ValuesAsDouble(out);
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += v[i];
    ConvertElements(sum.data(), DType::kFloat64, out.raw_data(), out.dtype(), sum.size());
    return;
  }
  ConvertElements(v.data(), DType::kFloat64, out.raw_data(), out.dtype(), v.size());
}

// Type inference of dtype_generic ops whose data still computes in float32: rejects another
// known dtype for `what` (an input or output name) with the message the graph gives others.
inline void RequireFloat32(int type, const char* op, const char* what) {
  if (type >= 0 && type != static_cast<int>(DType::kFloat32))
    throw TypeError(StrCat(op, ": unsupported dtype for ", what, ": expected float32, got ",
                            DTypeName(static_cast<DType>(type)),
                            " (the operator computes in float32 only; Cast the input to float32)"));
}

// An index value truncated toward zero as MXNet's static_cast does, without its undefined
// behaviour: NaN and values beyond int64 saturate (NaN to the minimum, as x86 converts it).
inline int64_t TruncateIndex(double v) {
  constexpr double kLimit = 9.2e18;
  if (std::isnan(v) || v <= -kLimit) return std::numeric_limits<int64_t>::min();
  if (v >= kLimit) return std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

enum IndexMode { kRaise, kWrap, kClip };

// Indices into an axis of length n: values truncated to integers as MXNet's static_cast
// does, then clipped, wrapped, or (raise) checked.
inline std::vector<int64_t> ResolveIndices(const NDArray& idx, int64_t n, int mode, const char* op) {
  std::vector<double> v = ValuesAsDouble(idx);
  std::vector<int64_t> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t j = TruncateIndex(v[i]);
    if (mode == kWrap) {
      j %= n;
      if (j < 0) j += n;
    } else if (mode == kRaise) {
      if (j < 0 || j >= n)
        throw IndexError(StrCat(op, ": index ", v[i], " is out of bounds for an axis of size ", n,
                           " (mode='raise')"));
    } else {
      j = std::min(std::max<int64_t>(j, 0), n - 1);
    }
    r[i] = j;
  }
  return r;
}

// Type inference for ops whose output has input 0's type and whose other inputs (indices)
// may be of any type.
inline void InferTypeFromData(const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
  TypeAssignCheck(out, 0, (*in)[0]);
  TypeAssignCheck(in, 0, (*out)[0]);
}

}  // namespace symbind
