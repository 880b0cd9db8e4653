// reverse (flip), SwapAxis (swapaxes) and stack: forward against naive index loops, shape
// inference both ways, finite-difference gradients, errors.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("reverse flips the given axes", "[ops][reverse]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 1);
  for (const char* axes : {"(0,)", "(1,2)", "(-1,)", "(0,1,2)", "(1,1)"}) {
    INFO("axis=" << axes);
    TShape ax = TShape::Parse(axes);
    NDArray want(x.shape());
    for (int64_t f = 0; f < x.Size(); ++f) {
      auto c = Unravel(f, x.shape());
      for (int i = 0; i < ax.ndim(); ++i) {
        int a = static_cast<int>(ax[i] < 0 ? ax[i] + 3 : ax[i]);
        c[static_cast<size_t>(a)] = x.shape()[a] - 1 - c[static_cast<size_t>(a)];
      }
      want.SetFlat(f, x.GetFlat(Ravel(c, x.shape())));
    }
    RequireClose(RunForward("reverse", {{"axis", axes}}, {{"data", x}}), want, 0, 0);
    RequireClose(RunForward("flip", {{"axis", axes}}, {{"data", x}}), want, 0, 0);
  }
  CheckGradients("reverse", {{"axis", "(0,2)"}}, {{"data", x}});
  // Any dtype moves as it is (mx.image flips uint8 images).
  NDArray bytes(TShape({2, 3}), DType::kUint8);
  for (int i = 0; i < 6; ++i) bytes.data<uint8_t>()[i] = static_cast<uint8_t>(250 + i);
  NDArray flipped = RunForward("flip", {{"axis", "1"}}, {{"data", bytes}});
  REQUIRE(flipped.dtype() == DType::kUint8);
  CHECK(std::vector<uint8_t>(flipped.data<uint8_t>(), flipped.data<uint8_t>() + 6) ==
        std::vector<uint8_t>{252, 251, 250, 255, 254, 253});
  CHECK_THAT(ErrorOf([&] { RunForward("reverse", {{"axis", "3"}}, {{"data", x}}); }),
             Catch::Contains("reverse: axis 3 is out of range"));
}

TEST_CASE("SwapAxis exchanges two axes", "[ops][SwapAxis]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 2);
  for (auto [d1, d2] : {std::pair{0, 2}, std::pair{1, -1}, std::pair{1, 1}}) {
    INFO("dim1=" << d1 << " dim2=" << d2);
    int a = d1 < 0 ? d1 + 3 : d1, b = d2 < 0 ? d2 + 3 : d2;
    TShape os = x.shape();
    std::swap(os[a], os[b]);
    NDArray want(os);
    for (int64_t f = 0; f < want.Size(); ++f) {
      auto c = Unravel(f, os);
      std::swap(c[static_cast<size_t>(a)], c[static_cast<size_t>(b)]);
      want.SetFlat(f, x.GetFlat(Ravel(c, x.shape())));
    }
    KwArgs p = {{"dim1", std::to_string(d1)}, {"dim2", std::to_string(d2)}};
    RequireClose(RunForward("SwapAxis", p, {{"data", x}}), want, 0, 0);
    RequireClose(RunForward("swapaxes", p, {{"data", x}}), want, 0, 0);
  }
  CheckGradients("swapaxes", {{"dim1", "0"}, {"dim2", "1"}}, {{"data", x}});
  NDArray ints(TShape({2, 3}), DType::kInt32);
  for (int i = 0; i < 6; ++i) ints.data<int32_t>()[i] = (1 << 24) + i;  // beyond float32's integers
  NDArray swapped = RunForward("SwapAxis", {{"dim1", "0"}, {"dim2", "1"}}, {{"data", ints}});
  REQUIRE(swapped.dtype() == DType::kInt32);
  CHECK(swapped.data<int32_t>()[1] == (1 << 24) + 3);
  // Backward shape inference: the input from the output.
  Symbol s = Symbol::Create("SwapAxis", "s", {{"dim1", "0"}, {"dim2", "2"}}, {});
  Symbol sum = Symbol::Create("elemwise_add", "sum", {}, {{"lhs", s}, {"rhs", Symbol::Variable("b")}});
  auto r = InferShapePartial(sum, {{"s_data", TShape({-1, 3, 4})}, {"b", TShape({4, 3, 5})}});
  CHECK(r.arg_shapes[0] == TShape({5, 3, 4}));
  CHECK_THAT(ErrorOf([&] { RunForward("SwapAxis", {{"dim1", "3"}}, {{"data", x}}); }),
             Catch::Contains("SwapAxis (dim1): axis 3 is out of range"));
}

TEST_CASE("stack joins along a new axis", "[ops][stack]") {
  NDArray a = RandomArray(TShape({2, 3}), 3), b = RandomArray(TShape({2, 3}), 4), c = RandomArray(TShape({2, 3}), 5);
  std::vector<NDArray> in = {a, b, c};
  for (int axis : {0, 1, 2, -1, -3}) {
    INFO("axis=" << axis);
    int ax = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> od = {2, 3};
    od.insert(od.begin() + ax, 3);
    TShape os(od);
    NDArray want(os);
    for (int64_t f = 0; f < want.Size(); ++f) {
      auto co = Unravel(f, os);
      int64_t which = co[static_cast<size_t>(ax)];
      co.erase(co.begin() + ax);
      want.SetFlat(f, in[static_cast<size_t>(which)].GetFlat(Ravel(co, a.shape())));
    }
    KwArgs p = {{"num_args", "3"}, {"axis", std::to_string(axis)}};
    RequireClose(RunForward("stack", p, {{"arg0", a}, {"arg1", b}, {"arg2", c}}), want, 0, 0);
  }
  CheckGradients("stack", {{"num_args", "3"}, {"axis", "1"}}, {{"arg0", a}, {"arg1", b}, {"arg2", c}});
  // Inputs infer from each other and from the output.
  Symbol s = Symbol::Create("stack", "s", {{"num_args", "2"}, {"axis", "1"}}, {});
  auto r = InferShape(s, {{"s_arg0", TShape({2, 3})}});
  CHECK(r.arg_shapes[1] == TShape({2, 3}));
  CHECK(r.out_shapes[0] == TShape({2, 2, 3}));
  CHECK_THAT(ErrorOf([&] { InferShape(s, {{"s_arg0", TShape({2, 3})}, {"s_arg1", TShape({2, 4})}}); }),
             Catch::Contains("stack: all inputs must have the same shape"));
  CHECK_THAT(ErrorOf([&] { InferShape(Symbol::Create("stack", "t", {{"num_args", "1"}, {"axis", "3"}}, {}), {{"t_arg0", TShape({2, 3})}}); }),
             Catch::Contains("stack: axis 3 is out of range"));
}
