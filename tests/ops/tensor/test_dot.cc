// dot and batch_dot: every transpose, vectors and N-D arrays, gradients, shapes and errors.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// out[i, l] = sum_k op(A)[i, k] op(B)[k, l] for A stored (ar, ac), B stored (br, bc).
std::vector<double> NaiveMatMul(const float* A, int64_t ar, int64_t ac, bool ta, const float* B,
                                int64_t br, int64_t bc, bool tb) {
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t q = 0; q < k; ++q) {
        double a = ta ? A[q * ac + i] : A[i * ac + q];
        double b = tb ? B[j * bc + q] : B[q * bc + j];
        s += a * b;
      }
      out[static_cast<size_t>(i * n + j)] = s;
    }
  return out;
}

NDArray FromDoubles(const TShape& shape, const std::vector<double>& v) {
  NDArray a(shape);
  REQUIRE(a.Size() == static_cast<int64_t>(v.size()));
  for (int64_t i = 0; i < a.Size(); ++i) a.SetFlat(i, static_cast<float>(v[static_cast<size_t>(i)]));
  return a;
}

// out[i, j, l] = sum over k < 4 of term(i, j, l, k), for a (2, 3, 5) output.
NDArray Contract235(const std::function<double(int, int, int, int)>& term) {
  NDArray out(TShape({2, 3, 5}));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int l = 0; l < 5; ++l) {
        double s = 0;
        for (int k = 0; k < 4; ++k) s += term(i, j, l, k);
        out.SetFlat((i * 3 + j) * 5 + l, static_cast<float>(s));
      }
  return out;
}

KwArgs TransposeParams(bool ta, bool tb) {
  return {{"transpose_a", ta ? "True" : "False"}, {"transpose_b", tb ? "True" : "False"}};
}
}  // namespace

TEST_CASE("dot of matrices with every transpose", "[ops][dot][grad]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a=" << ta << " transpose_b=" << tb);
      TShape ls = ta ? TShape({4, 3}) : TShape({3, 4}), rs = tb ? TShape({5, 4}) : TShape({4, 5});
      NDArray l = RandomArray(ls, 20), r = RandomArray(rs, 21);
      NDArray y = RunForward("dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
      RequireClose(y, FromDoubles(TShape({3, 5}), NaiveMatMul(l.fdata(), ls[0], ls[1], ta, r.fdata(),
                                                              rs[0], rs[1], tb)));
      CheckGradients("dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
    }
}

TEST_CASE("dot of vectors and N-D arrays", "[ops][dot][grad]") {
  // 1-D x 1-D: inner product of shape (1,).
  NDArray u = RandomArray(TShape({4}), 22), v = RandomArray(TShape({4}), 23);
  double ip = 0;
  for (int i = 0; i < 4; ++i) ip += u.GetFlat(i) * v.GetFlat(i);
  NDArray y = RunForward("dot", {}, {{"lhs", u}, {"rhs", v}});
  CHECK(y.shape() == TShape({1}));
  CHECK(y.GetFlat(0) == Approx(ip).epsilon(1e-5));
  CheckGradients("dot", {}, {{"lhs", u}, {"rhs", v}});

  // N-D: lhs (2,3,4) . rhs (4,5) -> (2,3,5), written as an explicit tensor contraction.
  NDArray a = RandomArray(TShape({2, 3, 4}), 24), b = RandomArray(TShape({4, 5}), 25);
  RequireClose(RunForward("dot", {}, {{"lhs", a}, {"rhs", b}}),
               Contract235([&](int i, int j, int l, int k) { return a.At({i, j, k}) * b.At({k, l}); }));
  CheckGradients("dot", {}, {{"lhs", a}, {"rhs", b}});

  // rhs N-D: (3,) . (3,2,2) -> (2,2); transpose_a on 3-D lhs contracts its first axis:
  // (4,2,3)^T . (4,5) -> (2,3,5).
  NDArray c = RandomArray(TShape({3}), 26), d = RandomArray(TShape({3, 2, 2}), 27);
  NDArray want2(TShape({2, 2}));
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += c.GetFlat(k) * d.At({k, p, q});
      want2.SetFlat(p * 2 + q, static_cast<float>(s));
    }
  RequireClose(RunForward("dot", {}, {{"lhs", c}, {"rhs", d}}), want2);
  CheckGradients("dot", {}, {{"lhs", c}, {"rhs", d}});
  NDArray e = RandomArray(TShape({4, 2, 3}), 28);
  RequireClose(RunForward("dot", {{"transpose_a", "True"}}, {{"lhs", e}, {"rhs", b}}),
               Contract235([&](int i, int j, int l, int k) { return e.At({k, i, j}) * b.At({k, l}); }));
  CheckGradients("dot", {{"transpose_a", "True"}, {"transpose_b", "True"}},
                 {{"lhs", e}, {"rhs", RandomArray(TShape({2, 4}), 29)}});
}

TEST_CASE("dot shape inference and errors", "[ops][dot][shape]") {
  auto infer = [](const KwArgs& p, const TShape& l, const TShape& r) {
    Symbol s = Symbol::Create("dot", "d", p, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
    return InferShape(s, {{"l", l}, {"r", r}}).out_shapes[0];
  };
  CHECK(infer({}, TShape({2, 3, 4}), TShape({4, 5, 6})) == TShape({2, 3, 5, 6}));
  CHECK(infer({{"transpose_b", "True"}}, TShape({2, 4}), TShape({5, 6, 4})) == TShape({2, 5, 6}));
  CHECK(infer({}, TShape({7}), TShape({7, 2})) == TShape({2}));
  CHECK(infer({}, TShape({7}), TShape({7})) == TShape({1}));
  try {
    infer({}, TShape({2, 3}), TShape({4, 5}));
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    CHECK_THAT(e.what(), Catch::Contains("dot shape error: (2,3) X (4,5)"));
  }
  CHECK_THROWS_AS(infer({{"transpose_a", "True"}}, TShape({3}), TShape({3})), ShapeError);
  CHECK_THROWS_AS(infer({{"forward_stype", "dense"}}, TShape({3}), TShape({3})), ParamError);
  CHECK(infer({{"forward_stype", "default"}}, TShape({3}), TShape({3})) == TShape({1}));
}

TEST_CASE("batch_dot forward, gradients and shapes", "[ops][batch_dot][grad]") {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      INFO("transpose_a=" << ta << " transpose_b=" << tb);
      TShape ls = ta ? TShape({3, 4, 2}) : TShape({3, 2, 4}), rs = tb ? TShape({3, 5, 4}) : TShape({3, 4, 5});
      NDArray l = RandomArray(ls, 30), r = RandomArray(rs, 31);
      NDArray y = RunForward("batch_dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
      REQUIRE(y.shape() == TShape({3, 2, 5}));
      for (int b = 0; b < 3; ++b) {
        auto want = NaiveMatMul(l.fdata() + b * 8, ls[1], ls[2], ta, r.fdata() + b * 20, rs[1], rs[2], tb);
        RequireClose(y.At(b), FromDoubles(TShape({2, 5}), want));
      }
      CheckGradients("batch_dot", TransposeParams(ta, tb), {{"lhs", l}, {"rhs", r}});
    }
  // 4-D: two batch dims.
  NDArray l = RandomArray(TShape({2, 2, 3, 2}), 32), r = RandomArray(TShape({2, 2, 2, 3}), 33);
  NDArray y = RunForward("batch_dot", {}, {{"lhs", l}, {"rhs", r}});
  REQUIRE(y.shape() == TShape({2, 2, 3, 3}));
  for (int b = 0; b < 4; ++b)
    RequireClose(y.Reshape(TShape({4, 3, 3})).At(b),
                 FromDoubles(TShape({3, 3}), NaiveMatMul(l.fdata() + b * 6, 3, 2, false, r.fdata() + b * 6, 2, 3, false)));
  CheckGradients("batch_dot", {}, {{"lhs", l}, {"rhs", r}});

  auto infer = [](const TShape& a, const TShape& b) {
    Symbol s = Symbol::Create("batch_dot", "bd", {}, {{"lhs", Symbol::Variable("l")}, {"rhs", Symbol::Variable("r")}});
    return InferShape(s, {{"l", a}, {"r", b}}).out_shapes[0];
  };
  CHECK_THROWS_WITH(infer(TShape({2, 3}), TShape({2, 3, 4})),
                    Catch::Contains("batch_dot currently only support N-D*N-D array (N >= 3)"));
  CHECK_THROWS_WITH(infer(TShape({2, 3, 4}), TShape({3, 4, 5})),
                    Catch::Contains("the leading batch dimensions must be equal"));
  CHECK_THROWS_WITH(infer(TShape({2, 3, 4}), TShape({2, 5, 5})), Catch::Contains("shape mismatch"));
}
