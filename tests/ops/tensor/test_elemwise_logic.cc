// Comparison and logical ops (_equal ... _logical_xor) on equal shapes and against a scalar:
// forward against naive references, zero gradients, aliases and shape inference.
#include <functional>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
struct LogicCase {
  std::string op;
  std::function<bool(double, double)> f;
  std::vector<std::string> aliases;  // of the op, then of its _scalar form
};

std::vector<LogicCase> Cases() {
  return {{"_equal", [](double a, double b) { return a == b; }, {"_Equal", "_EqualScalar"}},
          {"_not_equal", [](double a, double b) { return a != b; }, {"_Not_Equal", "_NotEqualScalar"}},
          {"_greater", [](double a, double b) { return a > b; }, {"_Greater", "_GreaterScalar"}},
          {"_greater_equal", [](double a, double b) { return a >= b; }, {"_Greater_Equal", "_GreaterEqualScalar"}},
          {"_lesser", [](double a, double b) { return a < b; }, {"_Lesser", "_LesserScalar"}},
          {"_lesser_equal", [](double a, double b) { return a <= b; }, {"_Lesser_Equal", "_LesserEqualScalar"}},
          {"_logical_and", [](double a, double b) { return a != 0 && b != 0; }, {"_Logical_And", "_LogicalAndScalar"}},
          {"_logical_or", [](double a, double b) { return a != 0 || b != 0; }, {"_Logical_Or", "_LogicalOrScalar"}},
          {"_logical_xor", [](double a, double b) { return (a != 0) != (b != 0); }, {"_Logical_Xor", "_LogicalXorScalar"}}};
}

// Small integers, so that equal operands and zeros occur.
NDArray SmallIntegers(const TShape& shape, uint64_t seed) {
  NDArray a(shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(-2, 2);
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(dist(rng)));
  return a;
}
}  // namespace

TEST_CASE("comparison and logical ops forward match naive references", "[ops][logic]") {
  NDArray l = SmallIntegers(TShape({4, 5}), 1), r = SmallIntegers(TShape({4, 5}), 2);
  for (auto& c : Cases()) {
    INFO(c.op);
    NDArray want(l.shape());
    for (int64_t i = 0; i < l.Size(); ++i) want.SetFlat(i, c.f(l.GetFlat(i), r.GetFlat(i)) ? 1.0f : 0.0f);
    RequireClose(RunForward(c.op, {}, {{"lhs", l}, {"rhs", r}}), want, 0, 0);
    for (double s : {0.0, 1.0, -1.5}) {
      NDArray want_s(l.shape());
      for (int64_t i = 0; i < l.Size(); ++i) want_s.SetFlat(i, c.f(l.GetFlat(i), s) ? 1.0f : 0.0f);
      RequireClose(RunForward(c.op + "_scalar", {{"scalar", std::to_string(s)}}, {{"data", l}}), want_s, 0, 0);
    }
    CHECK(OpRegistry::Global().Get(c.aliases[0]).name == c.op);
    CHECK(OpRegistry::Global().Get(c.aliases[1]).name == c.op + "_scalar");
  }
}

TEST_CASE("comparison and logical ops have zero gradients", "[ops][logic][grad]") {
  // Operands half a unit apart: finite differences see flat outputs, as the analytic zero says.
  NDArray l = SmallIntegers(TShape({3, 4}), 3), r = SmallIntegers(TShape({3, 4}), 4);
  for (int64_t i = 0; i < r.Size(); ++i) r.SetFlat(i, r.GetFlat(i) + 0.5f);
  for (auto& c : Cases()) {
    INFO(c.op);
    CheckGradients(c.op, {}, {{"lhs", l}, {"rhs", r}});
    CheckGradients(c.op + "_scalar", {{"scalar", "0.5"}}, {{"data", l}});
  }
}

TEST_CASE("comparison ops infer shapes both ways and reject mismatches", "[ops][logic][shape]") {
  Symbol s = Symbol::Create("_greater", "g", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
  auto res = InferShape(s, {{"l", TShape({2, 3})}});
  CHECK(res.arg_shapes[1] == TShape({2, 3}));
  CHECK(res.out_shapes[0] == TShape({2, 3}));
  CHECK_THROWS_AS(InferShape(s, {{"l", TShape({2, 3})}, {"r", TShape({3, 2})}}), ShapeError);
  Symbol sc = Symbol::Create("_lesser_scalar", "c", {{"scalar", "2"}}, {{"data", Symbol::Variable("x")}});
  CHECK(InferShape(sc, {{"x", TShape({5})}}).out_shapes[0] == TShape({5}));
}
