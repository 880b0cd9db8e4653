// _contrib_boolean_mask: the rows an index marks, against a naive selection; its gradient by
// finite differences through imperative calls (a bound graph refuses its dynamic shape, which
// is checked too); index and parameter errors.
#include <symbind/executor/autograd.h>
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
constexpr const char* kOp = "_contrib_boolean_mask";

// The rows i of data (along axis 0) with flags[i] != 0, in order.
NDArray NaiveMask(const NDArray& data, const std::vector<float>& flags) {
  const int64_t row = data.Size() / data.shape()[0];
  std::vector<float> kept;
  for (size_t i = 0; i < flags.size(); ++i)
    if (flags[i] != 0)
      for (int64_t k = 0; k < row; ++k) kept.push_back(data.GetFlat(static_cast<int64_t>(i) * row + k));
  TShape s = data.shape();
  s[0] = static_cast<int64_t>(kept.size()) / row;
  return NDArray(s, kept);
}

// The gradient of sum(mask(data) * head) for data, by the op's autograd backward.
NDArray RecordedGradient(const NDArray& data, const NDArray& index, const NDArray& head, OpReq req,
                         const NDArray& initial) {
  NDArray grad = initial.Copy();
  autograd::RecordingScope scope(true, true);
  const autograd::EntryPtr x = autograd::MarkVariable(grad, req);
  InvokedCall call;
  InvokeOptions options;
  options.record = &call;
  const NDArray out = Invoke(kOp, {}, InvokeInputs{{data, index}, {}}, {}, options)[0];
  const autograd::EntryPtr y = autograd::RecordOp(call, {x, nullptr}, options)[0];
  autograd::Backward({y}, {out}, {head});
  return grad;
}
}  // namespace

TEST_CASE("_contrib_boolean_mask keeps the rows whose index is non-zero", "[ops][contrib][boolean_mask]") {
  const NDArray data = RandomArray(TShape({5, 3, 2}), 1);
  const std::vector<float> flags = {0, 2, 0, -1, 0.5f};
  for (DType it : {DType::kFloat32, DType::kInt32, DType::kBool, DType::kUint8}) {
    INFO("index dtype " << DTypeName(it));
    const NDArray index = NDArray(TShape({5}), std::vector<float>{0, 2, 0, -1, 0.5f}).AsType(it);
    std::vector<float> as_read(flags.size());
    for (size_t i = 0; i < flags.size(); ++i) as_read[i] = index.GetFlat(static_cast<int64_t>(i));
    const NDArray out = Invoke(kOp, {}, {data, index})[0];
    RequireClose(out, NaiveMask(data, as_read), 0, 0);
  }
  // MXNet's example; an int32 data array keeps its dtype.
  const NDArray m(TShape({3, 3}), std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8, 9});
  const NDArray picked = Invoke(kOp, {}, {m.AsType(DType::kInt32), NDArray(TShape({3}), std::vector<float>{0, 1, 0})})[0];
  CHECK(picked.dtype() == DType::kInt32);
  CHECK(picked.shape() == TShape({1, 3}));
  CHECK(picked.AsType(DType::kFloat32).ToVector() == std::vector<float>{4, 5, 6});
  // No row kept: a (0, 3) array.
  CHECK(Invoke(kOp, {}, {m, NDArray(TShape({3}), std::vector<float>{0, 0, 0})})[0].shape() == TShape({0, 3}));
  // Every row kept, 1-D data.
  const NDArray v(TShape({4}), std::vector<float>{1, 2, 3, 4});
  CHECK(Invoke(kOp, {}, {v, NDArray(TShape({4}), std::vector<float>{1, 1, 1, 1})})[0].ToVector() == v.ToVector());
}

TEST_CASE("_contrib_boolean_mask: gradient by finite differences, write and add", "[ops][contrib][boolean_mask][grad]") {
  const NDArray data = RandomArray(TShape({4, 3}), 2);
  const NDArray index(TShape({4}), std::vector<float>{1, 0, 1, 1});
  const NDArray head = RandomArray(TShape({3, 3}), 3);
  const std::vector<double> want =
      NumericGradient([&](const NDArray& x) { return Invoke(kOp, {}, {x, index})[0]; }, data, head, 1e-2f);
  const NDArray initial = RandomArray(data.shape(), 4);
  const NDArray written = RecordedGradient(data, index, head, OpReq::kWrite, initial);
  const NDArray added = RecordedGradient(data, index, head, OpReq::kAdd, initial);
  for (int64_t i = 0; i < data.Size(); ++i) {
    INFO("element " << i);
    CHECK(written.GetFlat(i) == Approx(want[static_cast<size_t>(i)]).margin(1e-4));
    CHECK(added.GetFlat(i) == Approx(initial.GetFlat(i) + want[static_cast<size_t>(i)]).margin(1e-4));
  }
  // An integer array's gradient is scattered in its own dtype (MXNet's test_boolean_mask).
  const NDArray ints = data.AsType(DType::kInt32);
  const NDArray int_grad = RecordedGradient(ints, index, NDArray(TShape({3, 3}), std::vector<float>(9, 2)).AsType(DType::kInt32),
                                            OpReq::kWrite, NDArray(ints.shape(), DType::kInt32));
  CHECK(int_grad.AsType(DType::kFloat32).ToVector() == std::vector<float>{2, 2, 2, 0, 0, 0, 2, 2, 2, 2, 2, 2});
}

TEST_CASE("_contrib_boolean_mask: bad index, axis, and a bound graph refused", "[ops][contrib][boolean_mask]") {
  const NDArray data = RandomArray(TShape({3, 2}), 5);
  CHECK_THROWS_WITH(Invoke(kOp, {}, {data, NDArray(TShape({3, 1}))}),
                    Catch::Contains("index must be 1-D (one flag per row of data), got shape (3,1)"));
  CHECK_THROWS_WITH(Invoke(kOp, {}, {data, NDArray(TShape({4}))}),
                    Catch::Contains("index") && Catch::Contains("provided (4,), inferred (3,)"));
  CHECK_THROWS_AS(Invoke(kOp, {{"axis", "1"}}, {data, NDArray(TShape({2}))}), ParamError);
  // Shape inference knows every dim but the rows kept.
  const Symbol sym = SingleOpSymbol(kOp, {});
  const ShapeInferResult partial = InferShapePartial(sym, {{"op_data", TShape({3, 2})}});
  CHECK(partial.arg_shapes[1] == TShape({3}));
  CHECK(partial.out_shapes[0] == TShape({TShape::kUnknownDim, 2}));
  // Binding needs every shape: refused, naming the dynamic shape.
  CHECK_THROWS_WITH(SimpleBind(sym, Context::CPU(), {{"op_data", data}, {"op_index", NDArray(TShape({3}))}}),
                    Catch::Contains("Error in operator op (_contrib_boolean_mask): its output shape depends on the "
                                    "values of its inputs (a dynamic shape)"));
  CHECK_THROWS_WITH(Bind(sym, Context::CPU(), {data, NDArray(TShape({3}))}, {}, {}, {}),
                    Catch::Contains("a dynamic shape"));
}
