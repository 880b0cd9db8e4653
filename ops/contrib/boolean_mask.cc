// _contrib_boolean_mask: the rows of data (along axis 0) whose index element is non-zero. How
// many rows that is depends on index's values, so the output's first dim is unknown to shape
// inference; imperative calls take it from the values (Op::value_dependent_shape), and a bound
// graph holding this op is refused, as MXNet's executors refuse dynamic shapes.
#include <cstring>

#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
constexpr const char* kOp = "_contrib_boolean_mask";

struct BooleanMaskParam : Parameter<BooleanMaskParam> {
  int axis;
  static void Declare(ParamDeclarer<BooleanMaskParam>& d) {
    d.field("axis", &BooleanMaskParam::axis).set_default(0)
        .require([](const int& a) { return a == 0; }, "0 (MXNet's boolean_mask masks axis 0 only)")
        .describe("An integer that represents the axis in NDArray to mask from.");
  }
};

// data (n, ...) and a 1-D index of n elements; the output is data's shape with its first dim
// unknown (the rows kept).
void InferBooleanMaskShape(const NodeAttrs&, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape data = (*in)[0], index = (*in)[1];
  if (index.ndim_known() && index.ndim() != 1)
    throw ShapeError(StrCat(kOp, ": index must be 1-D (one flag per row of data), got shape ", index));
  if (data.ndim_known() && data.ndim() == 0)
    throw ShapeError(StrCat(kOp, ": data needs at least 1 dimension (the rows to mask), got shape ()"));
  if (data.ndim_known()) {
    ShapeAssignCheck(in, 1, TShape({data[0]}));
    TShape rows = data;
    rows[0] = TShape::kUnknownDim;
    ShapeAssignCheck(out, 0, rows);
  }
  if (index.ndim_known() && (*in)[0].ndim_known()) {
    TShape with_rows = (*in)[0];
    with_rows[0] = index[0];
    ShapeAssignCheck(in, 0, with_rows);
  }
}

// The rows whose flag is non-zero (NaN counts as set, as C++'s truth test).
std::vector<int64_t> KeptRows(const NDArray& index) {
  std::vector<int64_t> kept;
  const std::vector<double> flags = ValuesAsDouble(index);
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i] != 0) kept.push_back(static_cast<int64_t>(i));
  return kept;
}

void BooleanMaskForward(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                        const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  if (req[0] == OpReq::kNull) return;
  if (req[0] == OpReq::kAdd)
    throw Error(StrCat(kOp, ": the output cannot be added to (req add): its shape depends on index's values"));
  const NDArray &data = in[0], &index = in[1];
  const std::vector<int64_t> kept = KeptRows(index);
  const size_t row_bytes = data.Size() == 0 ? 0 : data.bytes() / static_cast<size_t>(data.shape()[0]);
  const char* src = static_cast<const char*>(data.raw_data());
  char* dst = static_cast<char*>(out[0].raw_data());
  ParallelFor(static_cast<int64_t>(kept.size()), GrainFor(static_cast<int64_t>(row_bytes), 1 << 20),
              [&](int64_t b, int64_t e) {
                for (int64_t j = b; j < e; ++j)
                  std::memcpy(dst + j * row_bytes, src + kept[static_cast<size_t>(j)] * row_bytes, row_bytes);
              });
}

// The gradient of the kept rows is the output's; the other rows get none.
void BooleanMaskBackward(const OpContext&, const NodeAttrs&, const BackwardArgs& a) {
  ZeroWithReq(a.in_grads[1], a.req[1]);  // index: piecewise constant
  if (a.req[0] == OpReq::kNull) return;
  const NDArray& grad = a.in_grads[0];
  ZeroWithReq(grad, a.req[0]);
  const std::vector<int64_t> kept = KeptRows(a.inputs[1]);
  const int64_t row = grad.Size() == 0 ? 0 : grad.Size() / grad.shape()[0];
  SwitchNumericType(grad.dtype(), kOp, [&](auto tag) {
    using T = decltype(tag);
    const T* dy = a.out_grads[0].template data<T>();
    T* dx = grad.template data<T>();
    ParallelFor(static_cast<int64_t>(kept.size()), GrainFor(row), [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        T* dst = dx + kept[static_cast<size_t>(j)] * row;
        const T* src = dy + j * row;
        for (int64_t k = 0; k < row; ++k) dst[k] = static_cast<T>(dst[k] + src[k]);
      }
    });
  });
}
}  // namespace

SYMBIND_REGISTER_OP(_contrib_boolean_mask)
    .add_alias("_npi_boolean_mask")
    .describe(R"(The rows of data (along axis 0) whose element of the 1-D index is non-zero, in
order: data (n, ...) and index (n,) give (k, ...) for the k non-zero flags. The output's shape
depends on index's values (a dynamic shape): the op runs in imperative calls (mx.nd, autograd)
and in hybridized blocks, which run such graphs op by op; binding a graph holding it fails.
The gradient goes to the kept rows, the others get zero. Any dtype for data and index.)")
    .set_params<BooleanMaskParam>()
    .set_arguments({"data", "index"})
    .add_argument_doc("data", "Data")
    .add_argument_doc("index", "Mask")
    .set_infer_shape(InferBooleanMaskShape)
    .set_value_dependent_shape([](const NodeAttrs&, const std::vector<NDArray>& in) {
      TShape s = in[0].shape();
      s[0] = static_cast<int64_t>(KeptRows(in[1]).size());
      return std::vector<TShape>{s};
    })
    .set_dtype_generic()
    .set_infer_type(InferTypeFromData)
    .set_forward(BooleanMaskForward)
    .set_backward(BooleanMaskBackward);

}  // namespace symbind
