// _zeros, _ones, _full, _arange and _contrib_arange_like: values, output dtypes through InferType (integer types
// included), shapes from parameters or from the consumer, parameter errors.
#include <cmath>

#include <symbind/core/shape_semantics.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray Created(const std::string& op, const KwArgs& params) { return RunForward(op, params, {}); }

// Naive arange: start + (i / repeat) * step for ceil((stop - start) / step) * repeat elements.
std::vector<double> NaiveArange(double start, double stop, double step, int repeat) {
  std::vector<double> v;
  const int64_t n = static_cast<int64_t>(std::ceil((stop - start) / step));
  for (int64_t i = 0; i < n; ++i)
    for (int r = 0; r < repeat; ++r) v.push_back(start + static_cast<double>(i) * step);
  return v;
}

void RequireValues(const NDArray& a, const std::vector<double>& want) {
  REQUIRE(a.Size() == static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) CHECK(a.GetFlat(static_cast<int64_t>(i)) == Approx(want[i]));
}
}  // namespace

TEST_CASE("_zeros, _ones and _full fill arrays of the given shape and dtype", "[ops][init]") {
  NDArray z = Created("_zeros", {{"shape", "(2, 3)"}});
  CHECK(z.shape() == TShape({2, 3}));
  CHECK(z.dtype() == DType::kFloat32);
  RequireValues(z, std::vector<double>(6, 0.0));
  NDArray o = Created("_ones", {{"shape", "(4,)"}, {"dtype", "int32"}});
  CHECK(o.dtype() == DType::kInt32);
  for (int i = 0; i < 4; ++i) CHECK(o.data<int32_t>()[i] == 1);
  NDArray f = Created("_full", {{"shape", "(2, 2)"}, {"value", "2.5"}, {"dtype", "float64"}});
  CHECK(f.dtype() == DType::kFloat64);
  RequireValues(f, std::vector<double>(4, 2.5));
  NDArray fi = Created("_full", {{"shape", "(3,)"}, {"value", "-7"}, {"dtype", "int64"}});
  for (int i = 0; i < 3; ++i) CHECK(fi.data<int64_t>()[i] == -7);
  NDArray fu = Created("_full", {{"shape", "(2,)"}, {"value", "200"}, {"dtype", "uint8"}});
  CHECK(fu.data<uint8_t>()[1] == 200);
  CHECK(OpRegistry::Global().Get("_npi_full").name == "_full");
  CHECK_THROWS_AS(Symbol::Create("_full", "f", {{"shape", "(2,)"}}, {}), ParamError);  // value is required
  CHECK_THROWS_AS(Symbol::Create("_zeros", "z", {{"dtype", "complex64"}}, {}), ParamError);
}

TEST_CASE("_zeros without a shape takes its consumer's", "[ops][init][shape]") {
  for (std::string shape : {"", "(0, 3)"}) {
    INFO("shape '" << shape << "'");
    KwArgs p;
    if (!shape.empty()) p["shape"] = shape;
    Symbol z = Symbol::Create("_zeros", "z", p, {});
    Symbol sum = Symbol::Create("elemwise_add", "s", {}, {{"lhs", z}, {"rhs", Symbol::Variable("x")}});
    NDArray x = RandomArray(TShape({2, 3}), 4);
    auto exec = SimpleBind(sum, Context::CPU(), {{"x", x}}, {}, {{"x", OpReq::kWrite}});
    exec->Forward(true);
    RequireClose(exec->outputs()[0], x);
    // A creation op has no inputs to differentiate; the gradient flows past it.
    NDArray head = RandomArray(TShape({2, 3}), 5);
    exec->Backward({head});
    RequireClose(exec->grad_arrays()[0], head);
  }
}

TEST_CASE("_zeros and _ones under NumPy shape semantics make scalars and empty arrays", "[ops][init][shape]") {
  // Legacy reading: rank 0 and 0 dims are unknown, so with no consumer there is no shape.
  CHECK_THROWS_AS(Created("_ones", {{"shape", "()"}}), Error);
  CHECK_THROWS_AS(Created("_zeros", {{"shape", "(0, 1, 3, 0)"}}), Error);
  const bool was = SetNumpyShapeSemantics(true);
  NDArray scalar = Created("_ones", {{"shape", "()"}});
  NDArray empty = Created("_zeros", {{"shape", "(0, 1, 0, 4)"}});
  NDArray full = Created("_full", {{"shape", "(2, 0)"}, {"value", "3"}});
  SetNumpyShapeSemantics(was);
  CHECK(scalar.shape() == TShape(std::vector<int64_t>{}));
  RequireValues(scalar, {1.0});
  CHECK(empty.shape() == TShape({0, 1, 0, 4}));
  CHECK(empty.Size() == 0);
  CHECK(full.shape() == TShape({2, 0}));
  CHECK_FALSE(NumpyShapeSemantics());
}

TEST_CASE("_arange values, repeat, negative steps and integer dtypes", "[ops][init][arange]") {
  RequireValues(Created("_arange", {{"start", "2"}, {"stop", "11"}, {"step", "3"}}), NaiveArange(2, 11, 3, 1));
  // A start alone is the stop.
  RequireValues(Created("_arange", {{"start", "5"}}), NaiveArange(0, 5, 1, 1));
  RequireValues(Created("_arange", {{"start", "1"}, {"stop", "4"}, {"repeat", "3"}}), NaiveArange(1, 4, 1, 3));
  RequireValues(Created("_arange", {{"start", "3"}, {"stop", "-1"}, {"step", "-0.5"}}), NaiveArange(3, -1, -0.5, 1));
  RequireValues(Created("_arange", {{"start", "0.5"}, {"stop", "5"}, {"step", "1.5"}}), NaiveArange(0.5, 5, 1.5, 1));
  // Integer outputs truncate start and step first (MXNet's range_fwd), keeping the length.
  NDArray ints = Created("_arange", {{"start", "0.5"}, {"stop", "5"}, {"step", "1.5"}, {"dtype", "int32"}});
  CHECK(ints.dtype() == DType::kInt32);
  REQUIRE(ints.Size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(ints.data<int32_t>()[i] == i);
  Symbol r = Symbol::Create("_arange", "r", {{"start", "4"}, {"dtype", "int64"}}, {});
  CHECK(InferType(r, {}).out_types[0] == DType::kInt64);
  CHECK(InferShape(r, {}).out_shapes[0] == TShape({4}));
}

TEST_CASE("_arange with infer_range takes its length from the consumer", "[ops][init][arange][shape]") {
  Symbol r = Symbol::Create("_arange", "r", {{"start", "1"}, {"step", "2"}, {"infer_range", "True"}}, {});
  Symbol sum = Symbol::Create("elemwise_add", "s", {}, {{"lhs", r}, {"rhs", Symbol::Variable("x")}});
  auto exec = SimpleBind(sum, Context::CPU(), {{"x", NDArray(TShape({4}))}});
  exec->Forward(false);
  RequireValues(exec->outputs()[0], {1, 3, 5, 7});
}

TEST_CASE("_arange rejects empty ranges, zero steps and repeats below 1", "[ops][init][arange]") {
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"start", "0"}, {"stop", "3"}, {"step", "0"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"start", "3"}, {"stop", "1"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"start", "1"}, {"stop", "3"}, {"step", "-1"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"start", "0"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"start", "0"}, {"stop", "3"}, {"repeat", "0"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("_arange", "r", {{"stop", "3"}}, {}), ParamError);  // start is required
}

TEST_CASE("_linspace spaces num values from start to stop", "[ops][init]") {
  // Naive: start + i * (stop - start) / (num - 1), or / num without the endpoint.
  auto naive = [](double start, double stop, int num, bool endpoint) {
    std::vector<double> v;
    const int parts = endpoint ? num - 1 : num;
    for (int i = 0; i < num; ++i) v.push_back(parts > 0 ? start + i * (stop - start) / parts : start);
    return v;
  };
  NDArray a = Created("_linspace", {{"start", "0"}, {"stop", "1"}, {"num", "5"}});
  CHECK(a.shape() == TShape({5}));
  RequireValues(a, naive(0, 1, 5, true));
  NDArray b = Created("_linspace", {{"start", "2"}, {"stop", "-3"}, {"num", "4"}, {"endpoint", "False"},
                                    {"dtype", "float64"}});
  CHECK(b.dtype() == DType::kFloat64);
  for (int i = 0; i < 4; ++i) CHECK(b.data<double>()[i] == naive(2, -3, 4, false)[static_cast<size_t>(i)]);
  // Integer outputs truncate each value; one sample is the start; none is an empty array.
  NDArray c = Created("_linspace", {{"start", "0"}, {"stop", "3"}, {"num", "3"}, {"dtype", "int32"}});
  CHECK(std::vector<int32_t>(c.data<int32_t>(), c.data<int32_t>() + 3) == std::vector<int32_t>{0, 1, 3});
  RequireValues(Created("_linspace", {{"start", "4"}, {"stop", "9"}, {"num", "1"}}), {4});
  CHECK(Created("_linspace", {{"start", "4"}, {"stop", "9"}, {"num", "0"}}).shape() == TShape({0}));
  CHECK_THROWS_WITH(Symbol::Create("_linspace", "l", {{"start", "0"}, {"stop", "1"}, {"num", "-1"}}, {}),
                    Catch::Contains("num (the number of samples) must be non-negative"));
}

TEST_CASE("_eye puts ones on diagonal k of an N x M matrix", "[ops][init]") {
  auto naive = [](int64_t n, int64_t m, int64_t k) {
    std::vector<double> v;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c) v.push_back(c - r == k ? 1 : 0);
    return v;
  };
  NDArray a = Created("_eye", {{"N", "3"}});
  CHECK(a.shape() == TShape({3, 3}));
  RequireValues(a, naive(3, 3, 0));
  RequireValues(Created("_eye", {{"N", "3"}, {"M", "5"}, {"k", "2"}}), naive(3, 5, 2));
  RequireValues(Created("_eye", {{"N", "4"}, {"M", "2"}, {"k", "-1"}}), naive(4, 2, -1));
  // A diagonal outside the matrix leaves it zero.
  RequireValues(Created("_eye", {{"N", "2"}, {"k", "5"}}), naive(2, 2, 5));
  NDArray i = Created("_eye", {{"N", "2"}, {"dtype", "int64"}});
  CHECK(i.data<int64_t>()[3] == 1);
  CHECK_THROWS_WITH(Symbol::Create("_eye", "e", {{"N", "-2"}}, {}), Catch::Contains("N and M must not be negative"));
}

TEST_CASE("_contrib_arange_like fills the input's shape or one axis's length", "[ops][arange_like]") {
  NDArray x = RandomArray(TShape({2, 3}), 1);
  NDArray all = RunForward("_contrib_arange_like", {{"start", "1.5"}, {"step", "2"}, {"repeat", "2"}}, {{"data", x}});
  REQUIRE(all.shape() == TShape({2, 3}));
  for (int64_t i = 0; i < 6; ++i) CHECK(all.GetFlat(i) == Approx(1.5 + (i / 2) * 2));
  NDArray ax = RunForward("_contrib_arange_like", {{"axis", "-1"}}, {{"data", x}});
  RequireClose(ax, NDArray(TShape({3}), {0, 1, 2}));
  RequireClose(RunForward("_contrib_arange_like", {{"axis", "0"}, {"step", "-1"}}, {{"data", x}}),
               NDArray(TShape({2}), {0, -1}));
  // The input's dtype; integer outputs truncate start and step as _arange does.
  auto exec = BindSingleOp("_contrib_arange_like", {{"start", "2.7"}}, {{"data", x.AsType(DType::kInt32)}});
  exec->Forward(false);
  CHECK(exec->outputs()[0].dtype() == DType::kInt32);
  CHECK(exec->outputs()[0].AsType(DType::kFloat32).GetFlat(5) == 7.0f);
  CHECK_THROWS_WITH(RunForward("_contrib_arange_like", {{"axis", "2"}}, {{"data", x}}), Catch::Contains("out of range"));
}
