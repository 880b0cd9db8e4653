// Ordering ops: topk, sort, argsort (MXNet 1.9.1's ordering_op). Each row along the axis (or
// the flattened array when axis=None) is ordered by value; ties keep the lower index first
// (MXNet's std::sort leaves their order unspecified) and NaN counts as larger than every
// number (last ascending, first descending; MXNet's order is undefined there).
// Index outputs carry the position along the axis (the flat position for axis=None) in the
// dtype the `dtype` parameter names; the hidden indices output of topk(ret_typ='value') and
// sort is int32, as in MXNet's default build.
#include <algorithm>
#include <cmath>
#include <limits>
#include <symbind/ops/op_util.h>


namespace symbind {

namespace {

enum RetType { kValue, kIndices, kMask, kBoth };

// MXNet's index dtypes for topk and argsort (real types kept for compatibility).
template <typename Field>
Field& AddIndexDTypes(Field& f) {
  return f.add_enum("uint8", static_cast<int>(DType::kUint8))
      .add_enum("int32", static_cast<int>(DType::kInt32))
      .add_enum("int64", static_cast<int>(DType::kInt64))
      .add_enum("float16", static_cast<int>(DType::kFloat16))
      .add_enum("float32", static_cast<int>(DType::kFloat32))
      .add_enum("float64", static_cast<int>(DType::kFloat64))
      .set_default(static_cast<int>(DType::kFloat32));
}

const char* const kAxisDoc =
    "Axis along which to choose the top k indices. If not given, the flattened array is used. "
    "Default is -1.";

struct TopKParam : Parameter<TopKParam> {
  std::optional<int> axis;
  int k;
  int ret_typ;
  bool is_ascend;
  int dtype;
  static void Declare(ParamDeclarer<TopKParam>& d) {
    d.field("axis", &TopKParam::axis).set_default(std::optional<int>(-1)).describe(kAxisDoc);
    d.field("k", &TopKParam::k).set_default(1)
        .describe("Number of top elements to select, should be always smaller than or equal to "
                  "the element number in the given axis. A global sort is performed if set k < 1.");
    d.field("ret_typ", &TopKParam::ret_typ)
        .add_enum("value", kValue).add_enum("indices", kIndices).add_enum("mask", kMask)
        .add_enum("both", kBoth).set_default(kIndices)
        .describe("The return type. \"value\" means to return the top k values, \"indices\" means "
                  "to return the indices of the top k values, \"mask\" means to return a mask "
                  "array containing 0 and 1. 1 means the top k values. \"both\" means to return "
                  "a list of both values and indices of top k elements.");
    d.field("is_ascend", &TopKParam::is_ascend).set_default(false)
        .describe("Whether to choose k largest or k smallest elements. Top K largest elements "
                  "will be chosen if set to false.");
    AddIndexDTypes(d.field("dtype", &TopKParam::dtype))
        .describe("DType of the output indices when ret_typ is \"indices\" or \"both\". An error "
                  "will be raised if the selected data type cannot precisely represent the "
                  "indices.");
  }
};

struct SortParam : Parameter<SortParam> {
  std::optional<int> axis;
  bool is_ascend;
  static void Declare(ParamDeclarer<SortParam>& d) {
    d.field("axis", &SortParam::axis).set_default(std::optional<int>(-1))
        .describe("Axis along which to choose sort the input tensor. If not given, the flattened "
                  "array is used. Default is -1.");
    d.field("is_ascend", &SortParam::is_ascend).set_default(true)
        .describe("Whether to sort in ascending or descending order.");
  }
};

struct ArgSortParam : Parameter<ArgSortParam> {
  std::optional<int> axis;
  bool is_ascend;
  int dtype;
  static void Declare(ParamDeclarer<ArgSortParam>& d) {
    d.field("axis", &ArgSortParam::axis).set_default(std::optional<int>(-1))
        .describe("Axis along which to sort the input tensor. If not given, the flattened array "
                  "is used. Default is -1.");
    d.field("is_ascend", &ArgSortParam::is_ascend).set_default(true)
        .describe("Whether to sort in ascending or descending order.");
    AddIndexDTypes(d.field("dtype", &ArgSortParam::dtype))
        .describe("DType of the output indices. It is only valid when ret_typ is \"indices\" or "
                  "\"both\". An error will be raised if the selected data type cannot precisely "
                  "represent the indices.");
  }
};

// What every ordering op does, whatever its parameter struct.
struct Ordering {
  std::optional<int> axis;
  int64_t k = 0;  // <= 0: every element
  int ret_typ = kIndices;
  bool is_ascend = false;
  int dtype = static_cast<int>(DType::kFloat32);
  const char* op = "topk";
};

Ordering FromParam(const TopKParam& p) { return {p.axis, p.k, p.ret_typ, p.is_ascend, p.dtype, "topk"}; }
Ordering FromParam(const SortParam& p) { return {p.axis, 0, kValue, p.is_ascend, static_cast<int>(DType::kInt32), "sort"}; }
Ordering FromParam(const ArgSortParam& p) { return {p.axis, 0, kIndices, p.is_ascend, p.dtype, "argsort"}; }

// The rows the op orders: outer * inner rows of n elements, element j of row (o, i) at
// (o * n + j) * inner + i; and k, the count kept.
struct RowLayout {
  int64_t outer = 1, n = 1, inner = 1, k = 1;
};

// MXNet's ParseTopKParam: the layout and the output shape.
RowLayout Layout(const Ordering& o, const TShape& s, TShape* out_shape) {
  RowLayout L;
  int axis = 0;
  if (!o.axis) {
    L.n = s.Size();
  } else {
    axis = NormalizeAxis(*o.axis, s.ndim(), o.op);
    L.outer = s.ProdDims(0, axis);
    L.n = s[axis];
    L.inner = s.ProdDims(axis + 1, s.ndim());
  }
  L.k = o.k <= 0 ? L.n : o.k;
  if (L.k > L.n)
    throw ShapeError(StrCat(o.op, ": k must be smaller than or equal to the ", L.n,
                            " elements along the axis, got k = ", L.k));
  if (out_shape) {
    if (o.ret_typ == kMask) {
      *out_shape = s;
    } else if (!o.axis) {
      *out_shape = TShape({L.k});
    } else {
      *out_shape = s;
      (*out_shape)[axis] = L.k;
    }
  }
  return L;
}

int NumOutputs(const Ordering& o) { return o.ret_typ == kIndices || o.ret_typ == kMask ? 1 : 2; }

void InferShapeOrdering(const Ordering& o, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& d = (*in)[0];
  if (!d.is_known()) return;
  TShape target;
  Layout(o, d, &target);
  for (size_t i = 0; i < out->size(); ++i) ShapeAssignCheck(out, i, target);
}

// MXNet's TopKType: values and masks share the data type; indices take `dtype`.
void InferTypeOrdering(const Ordering& o, std::vector<int>* in, std::vector<int>* out) {
  constexpr int kInt32 = static_cast<int>(DType::kInt32);
  if (o.ret_typ == kIndices) {
    TypeAssignCheck(out, 0, o.dtype);
  } else {
    TypeAssignCheck(out, 0, (*in)[0]);
    TypeAssignCheck(in, 0, (*out)[0]);
  }
  if (out->size() > 1) TypeAssignCheck(out, 1, o.ret_typ == kValue ? kInt32 : o.dtype);
}

// The largest count of consecutive integers from 0 that `t` represents exactly.
double ExactIntegerLimit(DType t) {
  switch (t) {
    case DType::kUint8: return 255;
    case DType::kInt8: return 127;
    case DType::kInt32: return std::numeric_limits<int32_t>::max();
    case DType::kFloat16: return 2048;
    case DType::kFloat32: return 16777216;
    default: return 9007199254740992.0;  // int64, float64
  }
}

// For every row, the positions of its k first elements in order (ties: lower position first;
// NaN above every number).
template <typename T>
std::vector<int64_t> OrderRows(const T* x, const RowLayout& L, bool ascend) {
  std::vector<int64_t> top(static_cast<size_t>(L.outer * L.inner * L.k));
  const bool partial = L.k * 8 <= L.n;  // MXNet's switch from a full to a partial sort
  ParallelFor(L.outer * L.inner, std::max<int64_t>(1, (int64_t{1} << 14) / (L.n + 1)),
              [&](int64_t b, int64_t e) {
    std::vector<int64_t> pos(static_cast<size_t>(L.n));
    for (int64_t row = b; row < e; ++row) {
      const T* base = x + (row / L.inner) * L.n * L.inner + row % L.inner;
      auto val = [&](int64_t j) { return base[j * L.inner]; };
      auto before = [&](int64_t a, int64_t c) {
        T va = val(a), vc = val(c);
        bool na = va != va, nc = vc != vc;
        if (na || nc) return na != nc ? (ascend ? nc : na) : a < c;
        if (va != vc) return ascend ? va < vc : va > vc;
        return a < c;
      };
      for (int64_t j = 0; j < L.n; ++j) pos[static_cast<size_t>(j)] = j;
      if (partial) std::partial_sort(pos.begin(), pos.begin() + L.k, pos.end(), before);
      else std::sort(pos.begin(), pos.end(), before);
      std::copy(pos.begin(), pos.begin() + L.k, top.begin() + row * L.k);
    }
  });
  return top;
}

// Flat offset in the input of kept element r of row `row`.
int64_t InputOffset(const RowLayout& L, int64_t row, int64_t j) {
  return ((row / L.inner) * L.n + j) * L.inner + row % L.inner;
}
// Flat offset in a (outer, k, inner) output of kept element r of row `row`.
int64_t OutputOffset(const RowLayout& L, int64_t row, int64_t r) {
  return ((row / L.inner) * L.k + r) * L.inner + row % L.inner;
}

void ForwardOrdering(const Ordering& o, const std::vector<NDArray>& in, const std::vector<OpReq>& req,
                     const std::vector<NDArray>& out) {
  const NDArray& data = in[0];
  RowLayout L = Layout(o, data.shape(), nullptr);
  const int idx_out = o.ret_typ == kIndices ? 0 : (o.ret_typ == kMask ? -1 : 1);
  if (idx_out >= 0 && L.n > 0 && static_cast<double>(L.n - 1) > ExactIntegerLimit(out[idx_out].dtype()))
    throw Error(StrCat(o.op, ": the index dtype ", DTypeName(out[idx_out].dtype()),
                       " cannot represent the indices of an axis of ", L.n, " elements"));
  std::vector<int64_t> top;
  const int64_t rows = L.outer * L.inner;
  // Values and masks in the data's dtype; indices are written below in theirs.
  ComputeInDType(o.op, in, req, out, [&](auto tag, const auto& ins, const auto& reqs, const auto& outs) {
    using T = decltype(tag);
    const T* x = ins[0].template data<T>();
    top = OrderRows(x, L, o.is_ascend);
    if (o.ret_typ == kMask) {
      if (reqs[0] == OpReq::kNull) return;
      std::vector<T> mask(static_cast<size_t>(data.Size()), T(0));
      for (int64_t row = 0; row < rows; ++row)
        for (int64_t r = 0; r < L.k; ++r) mask[static_cast<size_t>(InputOffset(L, row, top[row * L.k + r]))] = T(1);
      MapWithReq(outs[0].template data<T>(), data.Size(), reqs[0], [&](int64_t i) { return mask[static_cast<size_t>(i)]; });
      return;
    }
    if (o.ret_typ == kValue || o.ret_typ == kBoth) {
      MapWithReq(outs[0].template data<T>(), rows * L.k, reqs[0], [&](int64_t t) {
        int64_t row = (t / (L.k * L.inner)) * L.inner + t % L.inner, r = (t / L.inner) % L.k;
        return x[InputOffset(L, row, top[row * L.k + r])];
      });
    }
  });
  if (o.ret_typ == kMask) return;
  std::vector<double> idx(static_cast<size_t>(rows * L.k));
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t r = 0; r < L.k; ++r)
      idx[static_cast<size_t>(OutputOffset(L, row, r))] = static_cast<double>(top[row * L.k + r]);
  WriteValuesWithReq(idx, out[idx_out], req[idx_out]);
}

// MXNet's _backward_topk: the value gradient flows back to the positions the indices name.
void BackwardOrdering(const Ordering& o, const BackwardArgs& a) {
  OpReq req = a.req[0];
  if (req == OpReq::kNull) return;
  if (o.ret_typ == kIndices || o.ret_typ == kMask) {  // MXNet: MakeZeroGradNodes
    ZeroWithReq(a.in_grads[0], req);
    return;
  }
  // In double, written in the gradient's dtype (integer data differentiates too, as in MXNet).
  RowLayout L = Layout(o, a.inputs[0].shape(), nullptr);
  std::vector<double> idx = ValuesAsDouble(a.outputs[1]);
  const std::vector<double> g = ValuesAsDouble(a.out_grads[0]);
  std::vector<double> dx(static_cast<size_t>(a.in_grads[0].Size()), 0.0);
  const int64_t rows = L.outer * L.inner;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t r = 0; r < L.k; ++r) {
      int64_t t = OutputOffset(L, row, r);
      dx[static_cast<size_t>(InputOffset(L, row, static_cast<int64_t>(idx[static_cast<size_t>(t)])))] +=
          g[static_cast<size_t>(t)];
    }
  WriteValuesWithReq(dx, a.in_grads[0], req);
}

std::vector<std::string> OutputNames(int n) {
  return n == 1 ? std::vector<std::string>{"output"} : std::vector<std::string>{"output0", "output1"};
}

// Registers one ordering op over parameter struct P.
template <typename P>
Op& RegisterOrdering(const char* name, const char* doc, const char* np_alias) {
  auto ord = [](const NodeAttrs& a) { return FromParam(a.param<P>()); };
  return OpRegistry::Global()
      .Register(name)
      .add_alias(np_alias)
      .describe(doc)
      .set_monitor_numbered_inputs()
      .set_params<P>()
      .set_num_outputs([ord](const NodeAttrs& a) { return NumOutputs(ord(a)); })
      .set_outputs([ord](const NodeAttrs& a) { return OutputNames(NumOutputs(ord(a))); })
      .set_num_visible_outputs([ord](const NodeAttrs& a) { return ord(a).ret_typ == kBoth ? 2 : 1; })
      .set_infer_shape([ord](const NodeAttrs& a, std::vector<TShape>* in, std::vector<TShape>* out) {
        InferShapeOrdering(ord(a), in, out);
      })
      .set_infer_type([ord](const NodeAttrs& a, std::vector<int>* in, std::vector<int>* out) {
        InferTypeOrdering(ord(a), in, out);
      })
      .set_dtype_generic()  // InferTypeOrdering keeps the data float32; indices take `dtype`
      .set_forward([ord](const OpContext&, const NodeAttrs& a, const std::vector<NDArray>& in,
                         const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
        ForwardOrdering(ord(a), in, req, out);
      })
      .set_backward([ord](const OpContext&, const NodeAttrs& a, const BackwardArgs& args) {
        BackwardOrdering(ord(a), args);
      });
}

[[maybe_unused]] const bool registered = [] {
  RegisterOrdering<TopKParam>(
      "topk",
      "Returns the indices of the top k elements in an input array along the given axis (by "
      "default the last). ret_typ='value' returns the values, 'both' values and indices, 'mask' "
      "a 0/1 array marking the top k. The returned elements are sorted. Gradient: values flow "
      "back to the selected positions (ret_typ value/both); indices and masks have none.",
      "_npx_topk");
  RegisterOrdering<SortParam>(
      "sort",
      "Returns a sorted copy of an input array along the given axis (by default the last; None "
      "sorts the flattened array). The gradient flows back to each value's source position.",
      "_npi_sort");
  RegisterOrdering<ArgSortParam>(
      "argsort",
      "Returns the indices that would sort an input array along the given axis (None: the "
      "flattened array), in `dtype`. Not differentiable (zero gradient, as MXNet).",
      "_npi_argsort")
      .set_zero_gradient();
  return true;
}();
}  // namespace

}  // namespace symbind
