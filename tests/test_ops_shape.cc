// Shape, slicing and indexing ops: forward against naive references, gradients by finite
// differences, shape inference in both directions, error messages.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

// Shape inference of a single-op symbol over input "data".
TShape OutShape(const std::string& op, const KwArgs& params, const TShape& data) {
  Symbol s = Symbol::Create(op, "op", params, {{"data", Symbol::Variable("data")}});
  return InferShape(s, {{"data", data}}).out_shapes[0];
}

// Multi-index of flat `i` in `s`.
std::vector<int64_t> Unravel(int64_t i, const TShape& s) {
  std::vector<int64_t> idx(static_cast<size_t>(s.ndim()));
  for (int d = s.ndim() - 1; d >= 0; --d) {
    idx[d] = i % s[d];
    i /= s[d];
  }
  return idx;
}
int64_t Ravel(const std::vector<int64_t>& idx, const TShape& s) {
  int64_t f = 0;
  for (int d = 0; d < s.ndim(); ++d) f = f * s[d] + idx[d];
  return f;
}
}  // namespace

// ------------------------------------------------------------------------------------------
// Reshape / Flatten / expand_dims / squeeze

TEST_CASE("Reshape special values", "[ops][Reshape][shape]") {
  struct Case {
    TShape in;
    std::string shape;
    bool reverse;
    TShape want;
  };
  // MXNet's documented examples.
  std::vector<Case> cases = {
      {TShape({2, 3, 4}), "(4,0,2)", false, TShape({4, 3, 2})},
      {TShape({2, 3, 4}), "(2,0,0)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(6,1,-1)", false, TShape({6, 1, 4})},
      {TShape({2, 3, 4}), "(3,-1,8)", false, TShape({3, 1, 8})},
      {TShape({2, 3, 4}), "(-1,)", false, TShape({24})},
      {TShape({2, 3, 4}), "(-2,)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(2,-2)", false, TShape({2, 3, 4})},
      {TShape({2, 3, 4}), "(-2,1,1)", false, TShape({2, 3, 4, 1, 1})},
      {TShape({2, 3, 4, 5}), "(-3,-3)", false, TShape({6, 20})},
      {TShape({2, 3, 4}), "(0,-3)", false, TShape({2, 12})},
      {TShape({2, 3, 4, 5}), "(-3,-2)", false, TShape({6, 4, 5})},
      {TShape({2, 3, 4}), "(-4,1,2,-2)", false, TShape({1, 2, 3, 4})},
      {TShape({2, 3, 4}), "(2,-4,-1,3,-2)", false, TShape({2, 1, 3, 4})},
      // -1 consumes a source dim, so the 0 after it copies dim 1 (MXNet's documented example).
      {TShape({10, 5, 4}), "(-1,0)", false, TShape({40, 5})},
      {TShape({10, 5, 4}), "(-1,0)", true, TShape({50, 4})},
  };
  for (auto& c : cases) {
    INFO(c.in << " shape=" << c.shape << " reverse=" << c.reverse);
    KwArgs p = {{"shape", c.shape}, {"reverse", c.reverse ? "True" : "False"}};
    CHECK(OutShape("Reshape", p, c.in) == c.want);
  }
  // Legacy target_shape (0 = infer) and keep_highest.
  CHECK(OutShape("Reshape", {{"target_shape", "(0,4)"}}, TShape({2, 3, 4})) == TShape({6, 4}));
  CHECK(OutShape("Reshape", {{"target_shape", "(7,0)"}, {"keep_highest", "True"}}, TShape({2, 3, 4})) ==
        TShape({2, 12}));
  // Backward inference: the one unknown input dim from the output.
  Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(-1,6)"}}, {{"data", Symbol::Variable("data")}});
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "3"}}, {{"data", r}});
  auto res = InferShapePartial(fc, {{"data", TShape({-1, 2, 3})}});
  CHECK(res.out_shapes[0].ndim() == 2);
  // Errors.
  CHECK_THAT(ErrorOf([] { OutShape("reshape", {{"shape", "(-1,-1)"}}, TShape({2, 3})); }),
             Catch::Contains("one and only one dim can be inferred"));
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(5,-1)"}}, TShape({2, 3})); }),
             Catch::Contains("does not divide"));
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(4,4)"}}, TShape({2, 3})); }),
             Catch::Contains("has 16 elements but the input (2,3) has 6"));
  // (-3,) alone merges the first two dims and drops the rest: a size mismatch.
  CHECK_THROWS_AS(OutShape("Reshape", {{"shape", "(-3,)"}}, TShape({2, 3, 4, 5})), ShapeError);
  CHECK_THAT(ErrorOf([] { OutShape("Reshape", {{"shape", "(-4,4,-1)"}}, TShape({6, 3})); }),
             Catch::Contains("do not divide original dim 6"));
}

TEST_CASE("Reshape infers its input from the output", "[ops][Reshape][shape]") {
  Symbol r = Symbol::Create("Reshape", "r", {{"shape", "(0,-1)"}}, {{"data", Symbol::Variable("data")}});
  auto res = InferShapePartial(r, {{"data", TShape({4, -1, 3})}});
  CHECK(res.out_shapes[0] == TShape({4, -1}));
  // Given the output (through a following op) the missing input dim is filled.
  Symbol e = Symbol::Create("elemwise_add", "add", {}, {{"lhs", r}, {"rhs", Symbol::Variable("other")}});
  auto full = InferShape(e, {{"data", TShape({4, -1, 3})}, {"other", TShape({4, 6})}});
  CHECK(full.arg_shapes[0] == TShape({4, 2, 3}));
}

TEST_CASE("Reshape family forward and gradients", "[ops][Reshape][Flatten][expand_dims][squeeze][grad]") {
  NDArray x = RandomArray(TShape({2, 1, 3}), 1);
  struct Case {
    std::string op;
    KwArgs params;
    TShape want;
  };
  std::vector<Case> cases = {{"Reshape", {{"shape", "(3,-1)"}}, TShape({3, 2})},
                             {"Flatten", {}, TShape({2, 3})},
                             {"expand_dims", {{"axis", "-1"}}, TShape({2, 1, 3, 1})},
                             {"expand_dims", {{"axis", "0"}}, TShape({1, 2, 1, 3})},
                             {"squeeze", {}, TShape({2, 3})},
                             {"squeeze", {{"axis", "(1,)"}}, TShape({2, 3})},
                             {"squeeze", {{"axis", "-2"}}, TShape({2, 3})}};
  for (auto& c : cases) {
    INFO(c.op);
    NDArray y = RunForward(c.op, c.params, {{"data", x}});
    REQUIRE(y.shape() == c.want);
    for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == x.GetFlat(i));
    CheckGradients(c.op, c.params, {{"data", x}});
  }
}

TEST_CASE("expand_dims and squeeze shapes and errors", "[ops][expand_dims][squeeze][shape]") {
  CHECK(OutShape("expand_dims", {{"axis", "3"}}, TShape({2, 3, 4})) == TShape({2, 3, 4, 1}));
  CHECK(OutShape("expand_dims", {{"axis", "-4"}}, TShape({2, 3, 4})) == TShape({1, 2, 3, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("expand_dims", {{"axis", "4"}}, TShape({2, 3, 4})); }),
             Catch::Contains("axis must be in the range [-4, 3] (4 provided)"));
  // expand_dims infers its input from the output.
  Symbol e = Symbol::Create("expand_dims", "e", {{"axis", "1"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", e}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({5, 1, 7})}}).arg_shapes[0] == TShape({5, 7}));
  CHECK(OutShape("squeeze", {}, TShape({1, 1, 1})) == TShape({1}));
  CHECK(OutShape("squeeze", {{"axis", "None"}}, TShape({1, 3, 1})) == TShape({3}));
  CHECK(OutShape("squeeze", {{"axis", "(0,2)"}}, TShape({1, 3, 1})) == TShape({3}));
  CHECK_THAT(ErrorOf([] { OutShape("squeeze", {{"axis", "(1,)"}}, TShape({1, 3, 1})); }),
             Catch::Contains("size=3 not equal to one"));
  CHECK_THROWS_AS(Symbol::Create("expand_dims", "x", {}, {}), ParamError);  // axis is required
}

// ------------------------------------------------------------------------------------------
// transpose / tile / repeat

TEST_CASE("transpose forward, gradient and shape inference", "[ops][transpose][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 2);
  for (std::string axes : {"()", "(1,0,2)", "(2,0,1)", "(0,2,1)"}) {
    INFO(axes);
    std::vector<int64_t> ax = {2, 1, 0};
    if (axes != "()") {
      TShape t = TShape::Parse(axes);
      ax = t.dims();
    }
    NDArray y = RunForward("transpose", {{"axes", axes}}, {{"data", x}});
    TShape ws({x.shape()[ax[0]], x.shape()[ax[1]], x.shape()[ax[2]]});
    REQUIRE(y.shape() == ws);
    for (int64_t k = 0; k < y.Size(); ++k) {
      auto oi = Unravel(k, ws);
      std::vector<int64_t> ii(3);
      for (int d = 0; d < 3; ++d) ii[ax[d]] = oi[d];
      CHECK(y.GetFlat(k) == x.GetFlat(Ravel(ii, x.shape())));
    }
    CheckGradients("transpose", {{"axes", axes}}, {{"data", RandomArray(TShape({2, 3, 2}), 3)}});
  }
  // Both directions: the input from the output.
  Symbol t = Symbol::Create("transpose", "t", {{"axes", "(1,2,0)"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", t}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({3, 4, 2})}}).arg_shapes[0] == TShape({2, 3, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("transpose", {{"axes", "(0,0,1)"}}, TShape({2, 3, 4})); }),
             Catch::Contains("not a permutation"));
  CHECK_THAT(ErrorOf([] { OutShape("transpose", {{"axes", "(1,0)"}}, TShape({2, 3, 4})); }),
             Catch::Contains("has 2 entries but the input has 3 dimensions"));
}

TEST_CASE("tile forward and gradient", "[ops][tile][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 4);
  struct Case {
    std::string reps;
    TShape want;
  };
  for (auto& c : std::vector<Case>{{"(2,)", TShape({2, 6})}, {"(2,2)", TShape({4, 6})},
                                   {"(2,1,3)", TShape({2, 2, 9})}, {"()", TShape({2, 3})}}) {
    INFO(c.reps);
    NDArray y = RunForward("tile", {{"reps", c.reps}}, {{"data", x}});
    REQUIRE(y.shape() == c.want);
    for (int64_t k = 0; k < y.Size(); ++k) {
      auto oi = Unravel(k, c.want);
      int64_t r = oi[oi.size() - 2] % 2, col = oi.back() % 3;
      CHECK(y.GetFlat(k) == x.GetFlat(r * 3 + col));
    }
    CheckGradients("tile", {{"reps", c.reps}}, {{"data", x}});
  }
  CHECK(OutShape("tile", {{"reps", "(2,0)"}}, TShape({2, 3})) == TShape({4, 0}));
}

TEST_CASE("repeat forward and gradient", "[ops][repeat][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 5);
  NDArray flat = RunForward("repeat", {{"repeats", "2"}}, {{"data", x}});
  REQUIRE(flat.shape() == TShape({12}));
  for (int64_t k = 0; k < 12; ++k) CHECK(flat.GetFlat(k) == x.GetFlat(k / 2));
  NDArray ax1 = RunForward("repeat", {{"repeats", "3"}, {"axis", "1"}}, {{"data", x}});
  REQUIRE(ax1.shape() == TShape({2, 9}));
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 9; ++c) CHECK(ax1.GetFlat(r * 9 + c) == x.GetFlat(r * 3 + c / 3));
  NDArray axm = RunForward("repeat", {{"repeats", "2"}, {"axis", "-2"}}, {{"data", x}});
  REQUIRE(axm.shape() == TShape({4, 3}));
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t c = 0; c < 3; ++c) CHECK(axm.GetFlat(r * 3 + c) == x.GetFlat((r / 2) * 3 + c));
  CheckGradients("repeat", {{"repeats", "2"}}, {{"data", x}});
  CheckGradients("repeat", {{"repeats", "3"}, {"axis", "1"}}, {{"data", x}});
  CheckGradients("repeat", {{"repeats", "2"}, {"axis", "0"}}, {{"data", x}});
  CHECK(OutShape("repeat", {{"repeats", "0"}, {"axis", "1"}}, TShape({2, 3})) == TShape({0}));
  CHECK_THAT(ErrorOf([] { OutShape("repeat", {{"repeats", "2"}, {"axis", "2"}}, TShape({2, 3})); }),
             Catch::Contains("axis 2 is out of range"));
}

// ------------------------------------------------------------------------------------------
// Cast / BlockGrad / _copy / zeros_like / ones_like / clip

TEST_CASE("Cast converts types and casts the gradient back", "[ops][Cast][grad]") {
  NDArray x(TShape({5}), {1.7f, -2.2f, 3.0f, 250.4f, -0.5f});
  NDArray y = RunForward("Cast", {{"dtype", "int32"}}, {{"data", x}});
  REQUIRE(y.dtype() == DType::kInt32);
  const int32_t* yi = y.data<int32_t>();
  for (int64_t i = 0; i < 5; ++i) CHECK(yi[i] == static_cast<int32_t>(x.GetFlat(i)));
  NDArray h = RunForward("cast", {{"dtype", "float16"}}, {{"data", x}});
  REQUIRE(h.dtype() == DType::kFloat16);
  CHECK(h.GetFlat(3) == 250.375f);  // nearest half
  // Type inference: the output takes dtype, the input keeps its own.
  Symbol c = Symbol::Create("Cast", "c", {{"dtype", "float64"}}, {{"data", Symbol::Variable("data")}});
  auto t = InferType(c, {{"data", DType::kFloat32}});
  CHECK(t.out_types[0] == DType::kFloat64);
  CHECK(t.arg_types[0] == DType::kFloat32);
  // Gradients float32 -> float32 (the finite-difference harness works in float32).
  CheckGradients("Cast", {{"dtype", "float32"}}, {{"data", RandomArray(TShape({2, 3}), 6)}});
  // float32 -> float64: backward casts the head gradient back to float32.
  auto exec = BindSingleOp("Cast", {{"dtype", "float64"}}, {{"data", x}});
  exec->Forward(true);
  NDArray head(TShape({5}), DType::kFloat64);
  for (int64_t i = 0; i < 5; ++i) head.SetFlat(i, 0.5f * static_cast<float>(i));
  exec->Backward({head});
  REQUIRE(exec->grad_arrays()[0].dtype() == DType::kFloat32);
  for (int64_t i = 0; i < 5; ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.5f * static_cast<float>(i));
  CHECK_THROWS_AS(Symbol::Create("Cast", "c2", {{"dtype", "float128"}}, {}), ParamError);
}

TEST_CASE("BlockGrad, identity, zeros_like, ones_like", "[ops][BlockGrad][identity][zeros_like][ones_like][grad]") {
  NDArray x = RandomArray(TShape({2, 3}), 7);
  for (std::string op : {"BlockGrad", "stop_gradient", "_copy", "identity"}) {
    NDArray y = RunForward(op, {}, {{"data", x}});
    for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == x.GetFlat(i));
  }
  NDArray z = RunForward("zeros_like", {}, {{"data", x}}), o = RunForward("ones_like", {}, {{"data", x}});
  for (int64_t i = 0; i < x.Size(); ++i) {
    CHECK(z.GetFlat(i) == 0.0f);
    CHECK(o.GetFlat(i) == 1.0f);
  }
  // identity passes gradients; zeros_like/ones_like have zero gradient (the finite differences
  // agree); BlockGrad's zero gradient is checked directly below.
  for (std::string op : {"_copy", "zeros_like", "ones_like"}) {
    INFO(op);
    CheckGradients(op, {}, {{"data", x}});
  }
  auto exec = BindSingleOp("BlockGrad", {}, {{"data", x}});
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({2, 3}), 8)});
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.0f);
}

TEST_CASE("clip forward and gradient", "[ops][clip][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 9, -2.0f, 2.0f);
  for (int64_t i = 0; i < x.Size(); ++i)  // away from the kinks at -0.5 and 1
    if (std::fabs(x.GetFlat(i) + 0.5f) < 0.05f || std::fabs(x.GetFlat(i) - 1.0f) < 0.05f) x.SetFlat(i, 0.2f);
  KwArgs p = {{"a_min", "-0.5"}, {"a_max", "1"}};
  NDArray y = RunForward("clip", p, {{"data", x}});
  for (int64_t i = 0; i < x.Size(); ++i)
    CHECK(y.GetFlat(i) == std::min(1.0f, std::max(-0.5f, x.GetFlat(i))));
  CheckGradients("clip", p, {{"data", x}});
  CHECK_THROWS_AS(Symbol::Create("clip", "c", {{"a_min", "0"}}, {}), ParamError);
}

// ------------------------------------------------------------------------------------------
// Concat / SliceChannel

TEST_CASE("Concat forward and gradients", "[ops][Concat][grad]") {
  NDArray a = RandomArray(TShape({2, 1, 3}), 10), b = RandomArray(TShape({2, 2, 3}), 11),
          c = RandomArray(TShape({2, 3, 3}), 12);
  NDArray y = RunForward("Concat", {{"num_args", "3"}, {"dim", "1"}}, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  REQUIRE(y.shape() == TShape({2, 6, 3}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ch = 0; ch < 6; ++ch)
      for (int64_t k = 0; k < 3; ++k) {
        float want = ch < 1 ? a.GetFlat((n * 1 + ch) * 3 + k)
                     : ch < 3 ? b.GetFlat((n * 2 + ch - 1) * 3 + k)
                              : c.GetFlat((n * 3 + ch - 3) * 3 + k);
        CHECK(y.GetFlat((n * 6 + ch) * 3 + k) == want);
      }
  CheckGradients("Concat", {{"num_args", "3"}, {"dim", "1"}}, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  NDArray p = RandomArray(TShape({2, 3, 1}), 13), q = RandomArray(TShape({2, 3, 2}), 14);
  NDArray z = RunForward("concat", {{"num_args", "2"}, {"dim", "-1"}}, {{"arg0", p}, {"arg1", q}});
  REQUIRE(z.shape() == TShape({2, 3, 3}));
  for (int64_t r = 0; r < 6; ++r) {
    CHECK(z.GetFlat(r * 3) == p.GetFlat(r));
    CHECK(z.GetFlat(r * 3 + 1) == q.GetFlat(r * 2));
    CHECK(z.GetFlat(r * 3 + 2) == q.GetFlat(r * 2 + 1));
  }
  CheckGradients("Concat", {{"num_args", "2"}, {"dim", "0"}},
                 {{"arg0", RandomArray(TShape({1, 3}), 15)}, {"arg1", RandomArray(TShape({2, 3}), 16)}});
  // One input without a gradient.
  GradCheckOptions opt;
  opt.no_grad = {"arg0"};
  CheckGradients("Concat", {{"num_args", "2"}}, {{"arg0", p}, {"arg1", RandomArray(TShape({2, 1, 1}), 17)}}, opt);
}

TEST_CASE("Concat shape inference both ways", "[ops][Concat][shape]") {
  Symbol x = Symbol::Variable("x"), y = Symbol::Variable("y"), z = Symbol::Variable("z");
  Symbol c = Symbol::Create("Concat", "cat", {}, {}, {x, y, z});  // num_args from composition
  CHECK(c.ListArguments() == std::vector<std::string>{"x", "y", "z"});
  auto r = InferShape(c, {{"x", TShape({2, 3, 4})}, {"y", TShape({2, 5, 4})}, {"z", TShape({2, 1, 4})}});
  CHECK(r.out_shapes[0] == TShape({2, 9, 4}));
  // Unknown dims of the inputs come from the others, the concat dim of one from the output.
  Symbol out = Symbol::Variable("o");
  Symbol add = Symbol::Create("elemwise_add", "add", {}, {{"lhs", c}, {"rhs", out}});
  auto r2 = InferShape(add, {{"x", TShape({2, 3, 4})}, {"y", TShape({-1, 5, -1})}, {"z", TShape({-1, -1, 4})},
                             {"o", TShape({2, 10, 4})}});
  CHECK(r2.arg_shapes[1] == TShape({2, 5, 4}));
  CHECK(r2.arg_shapes[2] == TShape({2, 2, 4}));
  CHECK_THAT(ErrorOf([&] { InferShape(c, {{"x", TShape({2, 3, 4})}, {"y", TShape({2, 5, 5})}, {"z", TShape({2, 1, 4})}}); }),
             Catch::Contains("Concat: incompatible shape for arg1"));
  CHECK_THAT(ErrorOf([&] { InferShape(Symbol::Create("Concat", "c3", {{"dim", "3"}}, {}, {x, y}), {{"x", TShape({2, 3})}}); }),
             Catch::Contains("axis 3 is out of range"));
}

TEST_CASE("SliceChannel forward, gradient and shapes", "[ops][SliceChannel][grad]") {
  NDArray x = RandomArray(TShape({2, 6, 2}), 18);
  auto exec = BindSingleOp("SliceChannel", {{"num_outputs", "3"}}, {{"data", x}}, {}, OpReq::kNull);
  exec->Forward(false);
  REQUIRE(exec->outputs().size() == 3);
  for (int64_t i = 0; i < 3; ++i) {
    const NDArray& o = exec->outputs()[i];
    REQUIRE(o.shape() == TShape({2, 2, 2}));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t k = 0; k < 2; ++k) CHECK(o.GetFlat((n * 2 + c) * 2 + k) == x.GetFlat((n * 6 + i * 2 + c) * 2 + k));
  }
  CHECK(exec->symbol().ListOutputs() == std::vector<std::string>{"op_output0", "op_output1", "op_output2"});
  CheckGradients("SliceChannel", {{"num_outputs", "3"}}, {{"data", x}});
  CheckGradients("split", {{"num_outputs", "2"}, {"axis", "-1"}, {"squeeze_axis", "True"}}, {{"data", x}});
  CHECK(OutShape("SliceChannel", {{"num_outputs", "2"}, {"axis", "0"}, {"squeeze_axis", "1"}}, TShape({2, 3})) ==
        TShape({3}));
  // The input from an output.
  Symbol s = Symbol::Create("SliceChannel", "s", {{"num_outputs", "2"}, {"axis", "0"}}, {{"data", Symbol::Variable("data")}});
  Symbol add = Symbol::Create("elemwise_add", "a", {}, {{"lhs", s[1]}, {"rhs", Symbol::Variable("o")}});
  CHECK(InferShape(add, {{"o", TShape({3, 4})}}).arg_shapes[0] == TShape({6, 4}));
  CHECK_THAT(ErrorOf([] { OutShape("SliceChannel", {{"num_outputs", "4"}}, TShape({2, 6})); }),
             Catch::Contains("4 does not evenly divide 6"));
  CHECK_THAT(ErrorOf([] { OutShape("SliceChannel", {{"num_outputs", "2"}, {"squeeze_axis", "True"}}, TShape({2, 6})); }),
             Catch::Contains("must be the same as num_outputs"));
}

// ------------------------------------------------------------------------------------------
// slice / slice_axis / slice_like

namespace {
// Python-style slicing of one axis of length n: the indices taken.
std::vector<int64_t> PySlice(int64_t n, std::optional<int64_t> b, std::optional<int64_t> e, int64_t s) {
  std::vector<int64_t> idx;
  int64_t lo, hi;
  if (s > 0) {
    lo = b ? (*b < 0 ? std::max<int64_t>(*b + n, 0) : std::min(*b, n)) : 0;
    hi = e ? (*e < 0 ? std::max<int64_t>(*e + n, 0) : std::min(*e, n)) : n;
    for (int64_t i = lo; i < hi; i += s) idx.push_back(i);
  } else {
    lo = b ? (*b < 0 ? std::max<int64_t>(*b + n, -1) : std::min(*b, n - 1)) : n - 1;
    hi = e ? (*e < 0 ? std::max<int64_t>(*e + n, -1) : std::min(*e, n - 1)) : -1;
    for (int64_t i = lo; i > hi; i += s) idx.push_back(i);
  }
  return idx;
}
}  // namespace

TEST_CASE("slice matches Python slicing", "[ops][slice][grad]") {
  NDArray x = RandomArray(TShape({4, 5, 3}), 19);
  struct Case {
    std::string begin, end, step;
    std::vector<std::optional<int64_t>> b, e;
    std::vector<int64_t> s;
  };
  std::vector<Case> cases = {
      {"(1,0)", "(3,4)", "", {1, 0}, {3, 4}, {1, 1}},
      {"(None,-4)", "(-1,None)", "", {std::nullopt, -4}, {-1, std::nullopt}, {1, 1}},
      {"(3,None,0)", "(None,1,3)", "(-2,-1,2)", {3, std::nullopt, 0}, {std::nullopt, 1, 3}, {-2, -1, 2}},
      {"(0,1,2)", "(4,5,3)", "(3,2,1)", {0, 1, 2}, {4, 5, 3}, {3, 2, 1}},
      {"(-10,)", "(10,)", "(None,)", {-10}, {10}, {1}},
  };
  for (auto& c : cases) {
    INFO(c.begin << " " << c.end << " " << c.step);
    KwArgs p = {{"begin", c.begin}, {"end", c.end}};
    if (!c.step.empty()) p["step"] = c.step;
    NDArray y = RunForward("slice", p, {{"data", x}});
    std::vector<std::vector<int64_t>> idx;
    for (int d = 0; d < 3; ++d) {
      if (static_cast<size_t>(d) < c.b.size()) idx.push_back(PySlice(x.shape()[d], c.b[d], c.e[d], c.s[d]));
      else idx.push_back(PySlice(x.shape()[d], std::nullopt, std::nullopt, 1));
    }
    TShape ws({static_cast<int64_t>(idx[0].size()), static_cast<int64_t>(idx[1].size()),
               static_cast<int64_t>(idx[2].size())});
    REQUIRE(y.shape() == ws);
    for (int64_t k = 0; k < y.Size(); ++k) {
      auto oi = Unravel(k, ws);
      CHECK(y.GetFlat(k) == x.GetFlat(Ravel({idx[0][oi[0]], idx[1][oi[1]], idx[2][oi[2]]}, x.shape())));
    }
    CheckGradients("slice", p, {{"data", x}});
  }
  CHECK(OutShape("crop", {{"begin", "(3,)"}, {"end", "(1,)"}}, TShape({4, 5})) == TShape({0, 5}));
  CHECK_THAT(ErrorOf([] { OutShape("slice", {{"begin", "(0,0,0)"}, {"end", "(1,1,1)"}}, TShape({4, 5})); }),
             Catch::Contains("exceeds data dimensions"));
  CHECK_THAT(ErrorOf([] { OutShape("slice", {{"begin", "(0,)"}, {"end", "(1,)"}, {"step", "(0,)"}}, TShape({4, 5})); }),
             Catch::Contains("step[0] cannot be 0"));
}

TEST_CASE("slice_axis forward, gradient and errors", "[ops][slice_axis][grad]") {
  NDArray x = RandomArray(TShape({3, 5}), 20);
  NDArray y = RunForward("slice_axis", {{"axis", "1"}, {"begin", "-4"}, {"end", "4"}}, {{"data", x}});
  REQUIRE(y.shape() == TShape({3, 3}));
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 3; ++c) CHECK(y.GetFlat(r * 3 + c) == x.GetFlat(r * 5 + c + 1));
  NDArray z = RunForward("slice_axis", {{"axis", "0"}, {"begin", "1"}, {"end", "None"}}, {{"data", x}});
  REQUIRE(z.shape() == TShape({2, 5}));
  for (int64_t i = 0; i < 10; ++i) CHECK(z.GetFlat(i) == x.GetFlat(i + 5));
  CheckGradients("slice_axis", {{"axis", "-1"}, {"begin", "1"}, {"end", "-1"}}, {{"data", x}});
  CHECK_THAT(ErrorOf([] { OutShape("slice_axis", {{"axis", "1"}, {"begin", "3"}, {"end", "2"}}, TShape({3, 5})); }),
             Catch::Contains("invalid begin, end"));
  CHECK_THAT(ErrorOf([] { OutShape("slice_axis", {{"axis", "1"}, {"begin", "0"}, {"end", "7"}}, TShape({3, 5})); }),
             Catch::Contains("invalid end=7"));
  CHECK_THROWS_AS(Symbol::Create("slice_axis", "s", {{"axis", "1"}, {"begin", "0"}}, {}), ParamError);
}

TEST_CASE("slice_like forward, gradient and shapes", "[ops][slice_like][grad]") {
  NDArray x = RandomArray(TShape({3, 4, 2}), 21), like = RandomArray(TShape({2, 3, 5}), 22);
  NDArray y = RunForward("slice_like", {{"axes", "(0,-2)"}}, {{"data", x}, {"shape_like", like}});
  REQUIRE(y.shape() == TShape({2, 3, 2}));
  for (int64_t k = 0; k < y.Size(); ++k) {
    auto oi = Unravel(k, y.shape());
    CHECK(y.GetFlat(k) == x.GetFlat(Ravel(oi, x.shape())));
  }
  CheckGradients("slice_like", {{"axes", "(0,1)"}}, {{"data", x}, {"shape_like", like}});
  NDArray like2 = RandomArray(TShape({1, 2, 2}), 23);
  CheckGradients("slice_like", {}, {{"data", x}, {"shape_like", like2}});
  Symbol s = Symbol::Create("slice_like", "s", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "s_shape_like"});
  CHECK_THAT(ErrorOf([&] { InferShape(s, {{"data", TShape({3, 4})}, {"s_shape_like", TShape({2, 5})}}); }),
             Catch::Contains("exceeds limit of input with size 4"));
}

// ------------------------------------------------------------------------------------------
// Embedding / take / where

TEST_CASE("Embedding forward clips indices, gradient goes to weight only", "[ops][Embedding][grad]") {
  NDArray w = RandomArray(TShape({5, 3}), 24);
  // Float indices are truncated, then clipped to [0, input_dim-1] as MXNet does.
  NDArray idx(TShape({2, 3}), {0.0f, 4.0f, 2.7f, -1.0f, 7.0f, 1.0f});
  std::vector<int64_t> rows = {0, 4, 2, 0, 4, 1};
  KwArgs p = {{"input_dim", "5"}, {"output_dim", "3"}};
  NDArray y = RunForward("Embedding", p, {{"data", idx}, {"weight", w}});
  REQUIRE(y.shape() == TShape({2, 3, 3}));
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j) CHECK(y.GetFlat(i * 3 + j) == w.GetFlat(rows[i] * 3 + j));
  GradCheckOptions opt;
  opt.no_grad = {"data"};
  CheckGradients("Embedding", p, {{"data", idx}, {"weight", w}}, opt);  // repeated rows accumulate
  // With a gradient requested for data, it is zero.
  auto exec = BindSingleOp("Embedding", p, {{"data", idx}, {"weight", w}});
  exec->Forward(true);
  exec->Backward({RandomArray(TShape({2, 3, 3}), 25)});
  for (int64_t i = 0; i < 6; ++i) CHECK(exec->grad_arrays()[0].GetFlat(i) == 0.0f);
  // Shapes, types and parameters.
  Symbol e = Symbol::Create("Embedding", "emb", {{"input_dim", "10"}, {"output_dim", "4"}, {"sparse_grad", "True"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(e.ListArguments() == std::vector<std::string>{"data", "emb_weight"});
  auto r = InferShape(e, {{"data", TShape({7})}});
  CHECK(r.arg_shapes[1] == TShape({10, 4}));
  CHECK(r.out_shapes[0] == TShape({7, 4}));
  Symbol e16 = Symbol::Create("Embedding", "e16", {{"input_dim", "10"}, {"output_dim", "4"}, {"dtype", "float16"}},
                              {{"data", Symbol::Variable("data")}});
  auto t = InferType(e16, {{"data", DType::kInt32}});
  CHECK(t.arg_types[1] == DType::kFloat16);
  CHECK(t.out_types[0] == DType::kFloat16);
  CHECK_THROWS_AS(Symbol::Create("Embedding", "bad", {{"input_dim", "0"}, {"output_dim", "4"}}, {}), ParamError);
}

TEST_CASE("take along axes with clip, wrap and raise", "[ops][take][grad]") {
  NDArray a = RandomArray(TShape({4, 3, 2}), 26);
  NDArray idx(TShape({2, 2}), {1.0f, -1.0f, 5.0f, 1.0f});
  for (std::string mode : {"clip", "wrap"}) {
    for (int axis : {0, 1, -1}) {
      INFO(mode << " axis " << axis);
      int ax = axis < 0 ? axis + 3 : axis;
      int64_t n = a.shape()[ax];
      KwArgs p = {{"axis", std::to_string(axis)}, {"mode", mode}};
      NDArray y = RunForward("take", p, {{"a", a}, {"indices", idx}});
      std::vector<int64_t> os;
      for (int d = 0; d < ax; ++d) os.push_back(a.shape()[d]);
      os.push_back(2);
      os.push_back(2);
      for (int d = ax + 1; d < 3; ++d) os.push_back(a.shape()[d]);
      REQUIRE(y.shape() == TShape(os));
      for (int64_t k = 0; k < y.Size(); ++k) {
        auto oi = Unravel(k, y.shape());
        int64_t raw = static_cast<int64_t>(idx.GetFlat(oi[ax] * 2 + oi[ax + 1]));
        int64_t j = mode == "clip" ? std::min<int64_t>(std::max<int64_t>(raw, 0), n - 1) : ((raw % n) + n) % n;
        std::vector<int64_t> ai;
        for (int d = 0; d < ax; ++d) ai.push_back(oi[d]);
        ai.push_back(j);
        for (int d = ax + 2; d < static_cast<int>(oi.size()); ++d) ai.push_back(oi[d]);
        CHECK(y.GetFlat(k) == a.GetFlat(Ravel(ai, a.shape())));
      }
      GradCheckOptions opt;
      opt.no_grad = {"indices"};
      CheckGradients("take", p, {{"a", a}, {"indices", idx}}, opt);
    }
  }
  NDArray ok(TShape({2}), {0.0f, 3.0f});
  CHECK(RunForward("take", {{"mode", "raise"}}, {{"a", a}, {"indices", ok}}).shape() == TShape({2, 3, 2}));
  CHECK_THAT(ErrorOf([&] { RunForward("take", {{"mode", "raise"}}, {{"a", a}, {"indices", idx}}); }),
             Catch::Contains("out of bounds"));
  Symbol t = Symbol::Create("take", "t", {{"axis", "3"}}, {});
  CHECK(t.ListArguments() == std::vector<std::string>{"t_a", "t_indices"});
  CHECK_THAT(ErrorOf([&] { InferShape(t, {{"t_a", TShape({4, 3, 2})}, {"t_indices", TShape({5})}}); }),
             Catch::Contains("axis 3 is out of range"));
}

TEST_CASE("where with full and 1-D conditions", "[ops][where][grad]") {
  NDArray x = RandomArray(TShape({3, 2}), 27), y = RandomArray(TShape({3, 2}), 28);
  NDArray full(TShape({3, 2}), {1, 0, 0, 2, -1, 0}), rows(TShape({3}), {0, 1, 0});
  NDArray a = RunForward("where", {}, {{"condition", full}, {"x", x}, {"y", y}});
  for (int64_t i = 0; i < 6; ++i) CHECK(a.GetFlat(i) == (full.GetFlat(i) != 0 ? x.GetFlat(i) : y.GetFlat(i)));
  NDArray b = RunForward("where", {}, {{"condition", rows}, {"x", x}, {"y", y}});
  for (int64_t i = 0; i < 6; ++i) CHECK(b.GetFlat(i) == (rows.GetFlat(i / 2) != 0 ? x.GetFlat(i) : y.GetFlat(i)));
  GradCheckOptions opt;
  opt.no_grad = {"condition"};
  CheckGradients("where", {}, {{"condition", full}, {"x", x}, {"y", y}}, opt);
  CheckGradients("where", {}, {{"condition", rows}, {"x", x}, {"y", y}}, opt);
  Symbol w = Symbol::Create("where", "w", {}, {});
  CHECK(w.ListArguments() == std::vector<std::string>{"w_condition", "w_x", "w_y"});
  auto r = InferShape(w, {{"w_condition", TShape({3, 2})}, {"w_y", TShape({3, 2})}});
  CHECK(r.arg_shapes[1] == TShape({3, 2}));
  CHECK_THAT(ErrorOf([&] { InferShape(w, {{"w_condition", TShape({4})}, {"w_x", TShape({3, 2})}}); }),
             Catch::Contains("1-D condition must have the length of x's first axis"));
}
