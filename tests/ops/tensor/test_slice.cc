// slice, slice_axis and slice_like against Python slicing, gradients and errors.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

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
  // shape_like lends only its shape: its dtype may differ from data's.
  NDArray by_int = RunForward("slice_like", {}, {{"data", x}, {"shape_like", like2.AsType(DType::kInt32)}});
  CHECK(by_int.dtype() == DType::kFloat32);
  CHECK(by_int.shape() == TShape({1, 2, 2}));
  Symbol s = Symbol::Create("slice_like", "s", {}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "s_shape_like"});
  CHECK_THAT(ErrorOf([&] { InferShape(s, {{"data", TShape({3, 4})}, {"s_shape_like", TShape({2, 5})}}); }),
             Catch::Contains("exceeds limit of input with size 4"));
}
