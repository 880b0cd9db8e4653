// Element-wise, scalar, broadcast and reduction ops compute in their inputs' dtype (MXNet's
// type switch): float64 keeps its precision, integers use integer arithmetic, float16 rounds
// each result from float32. Checked against naive references in double / int64.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;

namespace {

NDArray Of(DType t, const TShape& shape, const std::vector<double>& v) {
  NDArray a(shape, t);
  ConvertElements(v.data(), DType::kFloat64, a.raw_data(), t, v.size());
  return a;
}

std::vector<double> Doubles(const NDArray& a) {
  std::vector<double> v(static_cast<size_t>(a.Size()));
  ConvertElements(a.raw_data(), a.dtype(), v.data(), DType::kFloat64, v.size());
  return v;
}

}  // namespace

TEST_CASE("Binary and scalar ops keep integer and float64 arithmetic", "[ops][elemwise][dtype]") {
  // int32: exact beyond float32's 24-bit mantissa; integer division truncates.
  NDArray a = Of(DType::kInt32, TShape({3}), {1234567891, -7, 7});
  NDArray b = Of(DType::kInt32, TShape({3}), {2, 2, -2});
  NDArray sum = Invoke("elemwise_add", {}, {a, b})[0];
  CHECK(sum.dtype() == DType::kInt32);
  CHECK(Doubles(sum) == std::vector<double>{1234567893, -5, 5});
  CHECK(Doubles(Invoke("_div", {}, {a, b})[0]) == std::vector<double>{617283945, -3, -3});
  // Integer division by zero gives 0 rather than trapping.
  NDArray zero = Of(DType::kInt32, TShape({3}), {0, 0, 0});
  CHECK(Doubles(Invoke("_div", {}, {a, zero})[0]) == std::vector<double>{0, 0, 0});
  CHECK(Doubles(Invoke("_div_scalar", {{"scalar", "0"}}, {a})[0]) == std::vector<double>{0, 0, 0});
  // Comparisons against a scalar beyond float32's precision.
  CHECK(Doubles(Invoke("_equal_scalar", {{"scalar", "1234567891"}}, {a})[0]) == std::vector<double>{1, 0, 0});
  CHECK(Doubles(Invoke("_equal_scalar", {{"scalar", "1234567890"}}, {a})[0]) == std::vector<double>{0, 0, 0});
  // add_n (ElementWiseSum) sums integers exactly.
  CHECK(Doubles(Invoke("add_n", {{"num_args", "3"}}, {a, b, b})[0]) == std::vector<double>{1234567895, -3, 3});
  // zeros_like / ones_like keep the dtype.
  NDArray ones = Invoke("ones_like", {}, {a})[0];
  CHECK(ones.dtype() == DType::kInt32);
  CHECK(Doubles(ones) == std::vector<double>{1, 1, 1});
  CHECK(Doubles(Invoke("zeros_like", {}, {Of(DType::kFloat16, TShape({2}), {3, 4})})[0]) == std::vector<double>{0, 0});
  // int8 wraps as C++'s conversion does; scalars saturate into the type.
  NDArray i8 = Of(DType::kInt8, TShape({2}), {100, -100});
  CHECK(Doubles(Invoke("_mul_scalar", {{"scalar", "2"}}, {i8})[0]) == std::vector<double>{-56, 56});
  CHECK(Doubles(Invoke("_plus_scalar", {{"scalar", "1000"}}, {i8})[0]) == std::vector<double>{-29, 27});
  // Python-style modulo on integers.
  NDArray m = Invoke("broadcast_mod", {}, {Of(DType::kInt64, TShape({2}), {-7, 7}), Of(DType::kInt64, TShape({1}), {3})})[0];
  CHECK(Doubles(m) == std::vector<double>{2, 1});
  // float64 keeps digits float32 would lose.
  NDArray d = Of(DType::kFloat64, TShape({2}), {1.0 + 1e-12, 3.0});
  NDArray prod = Invoke("broadcast_mul", {}, {d, Of(DType::kFloat64, TShape({1}), {2.0})})[0];
  CHECK(prod.dtype() == DType::kFloat64);
  CHECK(Doubles(prod) == std::vector<double>{2.0 + 2e-12, 6.0});
  CHECK(Doubles(Invoke("sqrt", {}, {d})[0])[1] == std::sqrt(3.0));
}

TEST_CASE("float16 element-wise ops round each result from float32", "[ops][elemwise][dtype]") {
  NDArray h = Of(DType::kFloat16, TShape({3}), {1.5, -2.25, 1000});
  NDArray one = Of(DType::kFloat16, TShape({3}), {1, 1, 1});
  NDArray s = Invoke("elemwise_add", {}, {h, one})[0];
  CHECK(s.dtype() == DType::kFloat16);
  CHECK(Doubles(s) == std::vector<double>{2.5, -1.25, 1001});
  // Written into a float16 output the caller gives.
  NDArray out = Of(DType::kFloat16, TShape({3}), {1, 1, 1});
  Invoke("_mul_scalar", {{"scalar", "2"}}, {h}, {out});
  CHECK(Doubles(out) == std::vector<double>{3, -4.5, 2000});
  CHECK(Doubles(Invoke("broadcast_greater", {}, {h, one})[0]) == std::vector<double>{1, 0, 1});
}

TEST_CASE("Reductions compute in the input's dtype", "[ops][reduce][dtype]") {
  NDArray a(TShape({2, 2}), DType::kInt64);  // set directly: a double cannot hold 4e18 + 1
  const int64_t values[] = {4000000000000000001, 1, -3, 2};
  std::copy(values, values + 4, a.data<int64_t>());
  NDArray s = Invoke("sum", {{"axis", "1"}}, {a})[0];
  CHECK(s.dtype() == DType::kInt64);
  CHECK(s.data<int64_t>()[0] == 4000000000000000002);
  CHECK(s.data<int64_t>()[1] == -1);
  CHECK(Invoke("max", {{"axis", "0"}}, {a})[0].data<int64_t>()[0] == 4000000000000000001);
  CHECK(Doubles(Invoke("min", {}, {a})[0]) == std::vector<double>{-3});
  CHECK(Doubles(Invoke("argmax", {{"axis", "1"}}, {a})[0]) == std::vector<double>{0, 1});
  // float64 sums keep small terms a float32 output would drop.
  NDArray d = Of(DType::kFloat64, TShape({3}), {1.0, 1e-10, 1e-10});
  CHECK(Doubles(Invoke("sum", {}, {d})[0])[0] == 1.0 + 1e-10 + 1e-10);
  CHECK(Doubles(Invoke("mean", {}, {Of(DType::kInt32, TShape({4}), {1, 2, 3, 5})})[0]) == std::vector<double>{2});
  // argmax/argmin take the first NaN, as NumPy.
  NDArray fn = Of(DType::kFloat32, TShape({4}), {1, std::nan(""), 5, std::nan("")});
  CHECK(Doubles(Invoke("argmax", {}, {fn})[0]) == std::vector<double>{1});
  CHECK(Doubles(Invoke("argmin", {}, {fn})[0]) == std::vector<double>{1});
  // max keeps NaN (mshadow's reducer), in float16 as in float32.
  NDArray hn = Of(DType::kFloat16, TShape({3}), {1, std::nan(""), 2});
  CHECK(std::isnan(Doubles(Invoke("max", {}, {hn})[0])[0]));
}

TEST_CASE("Element-wise ops reject dtypes they cannot compute in", "[ops][elemwise][dtype]") {
  NDArray b = Of(DType::kBool, TShape({2}), {1, 0});
  CHECK_THROWS_WITH(Invoke("elemwise_add", {}, {b, b}), Catch::Contains("unsupported dtype bool"));
  // Mixed input dtypes are a type inconsistency, as in MXNet.
  CHECK_THROWS_AS(Invoke("elemwise_add", {}, {Of(DType::kInt32, TShape({2}), {1, 2}),
                                              Of(DType::kFloat32, TShape({2}), {1, 2})}),
                  TypeError);
}

TEST_CASE("Gradients of the dtype-generic ops: float64 in double, integers as MXNet computes them", "[ops][elemwise][dtype][grad]") {
  Symbol mul = Symbol::Create("elemwise_mul", "m", {}, {{"lhs", Symbol::Variable("a")}, {"rhs", Symbol::Variable("b")}});
  // float64 differentiates in double (Op::float64_backward): d(a*b)/da = b.
  NDArray d = Of(DType::kFloat64, TShape({2}), {1, 2}), three = Of(DType::kFloat64, TShape({2}), {3, 3});
  auto exec = SimpleBind(mul, Context::CPU(), {{"a", d}, {"b", three}},
                         {{"a", NDArray(TShape({2}), DType::kFloat64)}, {"b", NDArray(TShape({2}), DType::kFloat64)}},
                         {{"a", OpReq::kWrite}, {"b", OpReq::kWrite}});
  exec->Forward(true);
  CHECK(Doubles(exec->outputs()[0]) == std::vector<double>{3, 6});
  exec->Backward({Of(DType::kFloat64, TShape({2}), {1, 1})});
  CHECK(Doubles(exec->grad_arrays()[0]) == std::vector<double>{3, 3});
  CHECK(Doubles(exec->grad_arrays()[1]) == std::vector<double>{1, 2});
  // Integers (Op::integer_backward): the same formulas, exact beyond float32's 2^24, added with kAdd.
  NDArray i = Of(DType::kInt32, TShape({2}), {100000007, -2});
  NDArray ga = Of(DType::kInt32, TShape({2}), {1, 1});
  auto iexec = SimpleBind(mul, Context::CPU(), {{"a", i}, {"b", Of(DType::kInt32, TShape({2}), {3, 5})}},
                          {{"a", ga}, {"b", NDArray(TShape({2}), DType::kInt32)}},
                          {{"a", OpReq::kAdd}, {"b", OpReq::kWrite}});
  iexec->Forward(true);
  iexec->Backward({Of(DType::kInt32, TShape({2}), {7, -1})});
  CHECK(Doubles(ga) == std::vector<double>{22, -4});                                   // 1 + 7 * 3, 1 - 1 * 5
  CHECK(Doubles(iexec->grad_arrays()[1]) == std::vector<double>{700000049, 2});       // 7 * a, -1 * a
  CHECK(iexec->grad_arrays()[1].dtype() == DType::kInt32);
  // Ops whose integer gradients would need integer division are refused by name.
  Symbol div = Symbol::Create("elemwise_div", "q", {}, {{"lhs", Symbol::Variable("a")}, {"rhs", Symbol::Variable("b")}});
  auto dexec = SimpleBind(div, Context::CPU(), {{"a", i}, {"b", Of(DType::kInt32, TShape({2}), {3, 5})}},
                          {{"a", NDArray(TShape({2}), DType::kInt32)}, {"b", NDArray(TShape({2}), DType::kInt32)}},
                          {{"a", OpReq::kWrite}, {"b", OpReq::kWrite}});
  dexec->Forward(true);
  CHECK_THROWS_WITH(dexec->Backward({Of(DType::kInt32, TShape({2}), {1, 1})}),
                    Catch::Contains("elemwise_div: gradients compute in float32 only, got int32"));
}

TEST_CASE("Integer gradients of sums, broadcasts, scalars and modulo", "[ops][elemwise][dtype][grad]") {
  // sum(a + broadcast_mul(a, c) - 3) over int32: d/da = 1 + c (broadcast), d/dc = sum over rows of a.
  Symbol a = Symbol::Variable("a"), c = Symbol::Variable("c");
  Symbol prod = Symbol::Create("broadcast_mul", "bm", {}, {{"lhs", a}, {"rhs", c}});
  Symbol plus = Symbol::Create("elemwise_add", "add", {}, {{"lhs", a}, {"rhs", prod}});
  Symbol shifted = Symbol::Create("_minus_scalar", "shift", {{"scalar", "3"}}, {{"data", plus}});
  Symbol total = Symbol::Create("sum", "total", {}, {{"data", shifted}});
  NDArray av = Of(DType::kInt32, TShape({2, 2}), {1, 2, 3, 4}), cv = Of(DType::kInt32, TShape({1, 2}), {10, -20});
  auto exec = SimpleBind(total, Context::CPU(), {{"a", av}, {"c", cv}},
                         {{"a", NDArray(TShape({2, 2}), DType::kInt32)}, {"c", NDArray(TShape({1, 2}), DType::kInt32)}},
                         {{"a", OpReq::kWrite}, {"c", OpReq::kWrite}});
  exec->Forward(true);
  CHECK(Doubles(exec->outputs()[0]) == std::vector<double>{1 + 2 + 3 + 4 + 10 * 4 - 20 * 6 - 12});
  exec->Backward({Of(DType::kInt32, TShape({1}), {2})});
  CHECK(Doubles(exec->grad_arrays()[0]) == std::vector<double>{22, -38, 22, -38});  // 2 * (1 + c)
  CHECK(Doubles(exec->grad_arrays()[1]) == std::vector<double>{8, 12});             // 2 * (1 + 3), 2 * (2 + 4)

  // Modulo of integers has zero gradients (MXNet's mod_grad and mod_rgrad for integer types).
  for (const char* op : {"_mod", "broadcast_mod"}) {
    Symbol mod = Symbol::Create(op, "mod", {}, {{"lhs", Symbol::Variable("a")}, {"rhs", Symbol::Variable("b")}});
    auto mexec = SimpleBind(mod, Context::CPU(),
                            {{"a", Of(DType::kInt32, TShape({2}), {7, -7})}, {"b", Of(DType::kInt32, TShape({2}), {3, 3})}},
                            {{"a", Of(DType::kInt32, TShape({2}), {9, 9})}, {"b", Of(DType::kInt32, TShape({2}), {9, 9})}},
                            {{"a", OpReq::kWrite}, {"b", OpReq::kWrite}});
    mexec->Forward(true);
    CHECK(Doubles(mexec->outputs()[0]) == std::vector<double>{1, 2});
    mexec->Backward({Of(DType::kInt32, TShape({2}), {5, 5})});
    CHECK(Doubles(mexec->grad_arrays()[0]) == std::vector<double>{0, 0});
    CHECK(Doubles(mexec->grad_arrays()[1]) == std::vector<double>{0, 0});
  }
}
