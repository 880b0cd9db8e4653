// softmax, log_softmax, softmin and SoftmaxActivation: forward along an axis, gradients, shapes.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Naive (log-)softmax along `axis` of x / t.
NDArray NaiveSoftmax(const NDArray& x, int axis, double t, bool log) {
  const auto [outer, n, inner] = SplitAtAxis(x.shape(), axis);
  NDArray y(x.shape());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double z = 0;
      for (int64_t k = 0; k < n; ++k) z += std::exp(x.GetFlat((o * n + k) * inner + i) / t);
      for (int64_t k = 0; k < n; ++k) {
        int64_t at = (o * n + k) * inner + i;
        double v = x.GetFlat(at) / t;
        y.SetFlat(at, static_cast<float>(log ? v - std::log(z) : std::exp(v) / z));
      }
    }
  return y;
}
}  // namespace

TEST_CASE("softmax and log_softmax forward along an axis with temperature", "[ops][softmax]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 11, -3.0f, 3.0f);
  for (bool log : {false, true}) {
    std::string op = log ? "log_softmax" : "softmax";
    INFO(op);
    RequireClose(RunForward(op, {}, {{"data", x}}), NaiveSoftmax(x, 2, 1.0, log));
    RequireClose(RunForward(op, {{"axis", "1"}}, {{"data", x}}), NaiveSoftmax(x, 1, 1.0, log));
    RequireClose(RunForward(op, {{"axis", "0"}, {"temperature", "2.5"}}, {{"data", x}}),
                 NaiveSoftmax(x, 0, 2.5, log));
    RequireClose(RunForward(op, {{"axis", "-2"}, {"temperature", "None"}, {"use_length", "False"}}, {{"data", x}}),
                 NaiveSoftmax(x, 1, 1.0, log));
  }
}

TEST_CASE("softmax and log_softmax gradients", "[ops][softmax][grad]") {
  NDArray x = RandomArray(TShape({2, 3, 2}), 12, -2.0f, 2.0f);
  for (std::string op : {"softmax", "log_softmax"}) {
    INFO(op);
    CheckGradients(op, {}, {{"data", x}});
    CheckGradients(op, {{"axis", "1"}, {"temperature", "0.7"}}, {{"data", x}});
  }
}

TEST_CASE("softmin is the softmax of -x / temperature", "[ops][softmax]") {
  NDArray x = RandomArray(TShape({2, 3, 4}), 14, -3.0f, 3.0f);
  RequireClose(RunForward("softmin", {}, {{"data", x}}), NaiveSoftmax(x, 2, -1.0, false));
  RequireClose(RunForward("softmin", {{"axis", "0"}, {"temperature", "2.5"}}, {{"data", x}}),
               NaiveSoftmax(x, 0, -2.5, false));
  NDArray small = RandomArray(TShape({2, 3, 2}), 15, -2.0f, 2.0f);
  CheckGradients("softmin", {}, {{"data", small}});
  CheckGradients("softmin", {{"axis", "1"}, {"temperature", "0.7"}}, {{"data", small}});
}

TEST_CASE("softmax dtype, shapes and errors", "[ops][softmax][shape]") {
  NDArray x = RandomArray(TShape({2, 3}), 13);
  NDArray y = RunForward("softmax", {{"dtype", "float64"}}, {{"data", x}});
  CHECK(y.dtype() == DType::kFloat64);
  RequireClose(y.AsType(DType::kFloat32), NaiveSoftmax(x, 1, 1.0, false));
  CheckGradients("softmax", {{"dtype", "float64"}}, {{"data", x}});
  // float64 in and out computes in double: finite differences in float64 rely on it.
  NDArray x64 = x.AsType(DType::kFloat64);
  for (const char* op : {"softmax", "log_softmax", "softmin"}) {
    INFO(op);
    NDArray y64 = RunForward(op, {}, {{"data", x64}});
    REQUIRE(y64.dtype() == DType::kFloat64);
    const double sign = std::string(op) == "softmin" ? -1.0 : 1.0;
    for (int64_t r = 0; r < 2; ++r) {
      double z = 0;
      for (int64_t c = 0; c < 3; ++c) z += std::exp(sign * x64.data<double>()[r * 3 + c]);
      for (int64_t c = 0; c < 3; ++c) {
        const double v = sign * x64.data<double>()[r * 3 + c];
        const double want = std::string(op) == "log_softmax" ? v - std::log(z) : std::exp(v) / z;
        CHECK(y64.data<double>()[r * 3 + c] == Approx(want).epsilon(1e-14));
      }
    }
  }

  Symbol s = Symbol::Create("softmax", "sm", {{"axis", "2"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({2, 3})}}), Catch::Contains("axis 2 is out of range"));
  // use_length is softmax's alone, as in MXNet (log_softmax and softmin take one input).
  for (const char* op : {"log_softmax", "softmin"})
    CHECK_THROWS_WITH(Symbol::Create(op, "sm", {{"use_length", "True"}}, {}),
                      Catch::Contains("use_length=True") && Catch::Contains("only for softmax"));
  CHECK_THROWS_AS(Symbol::Create("log_softmax", "sm", {{"dtype", "int8"}}, {}), ParamError);
}

TEST_CASE("SoftmaxActivation instance and channel modes", "[ops][SoftmaxActivation][grad]") {
  NDArray x2 = RandomArray(TShape({3, 4}), 14, -2.0f, 2.0f);
  RequireClose(RunForward("SoftmaxActivation", {}, {{"data", x2}}), NaiveSoftmax(x2, 1, 1.0, false));
  NDArray x3 = RandomArray(TShape({2, 3, 2}), 15, -2.0f, 2.0f);
  // instance mode softmaxes over the last axis (MXNet's FlatTo2D), channel mode over axis 1.
  RequireClose(RunForward("SoftmaxActivation", {{"mode", "instance"}}, {{"data", x3}}), NaiveSoftmax(x3, 2, 1.0, false));
  RequireClose(RunForward("SoftmaxActivation", {{"mode", "channel"}}, {{"data", x3}}), NaiveSoftmax(x3, 1, 1.0, false));
  CheckGradients("SoftmaxActivation", {}, {{"data", x2}});
  CheckGradients("SoftmaxActivation", {{"mode", "channel"}}, {{"data", x3}});
  Symbol s = Symbol::Create("SoftmaxActivation", "sa", {{"mode", "channel"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({2, 3})}}), Catch::Contains("at least 3 dimensions"));
}

namespace {
// Softmax of x / t along `axis` over each row's first lengths[row] entries (rows: the other
// axes in order), 0 past them; in double.
std::vector<double> NaiveMaskedSoftmax(const NDArray& x, int axis, const std::vector<int64_t>& lengths, double t) {
  const auto [outer, n, inner] = SplitAtAxis(x.shape(), axis);
  std::vector<double> y(static_cast<size_t>(x.Size()), 0.0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t len = lengths[static_cast<size_t>(o * inner + i)];
      double z = 0;
      for (int64_t k = 0; k < len; ++k) z += std::exp(x.GetFlat((o * n + k) * inner + i) / t);
      for (int64_t k = 0; k < len; ++k) {
        const int64_t at = (o * n + k) * inner + i;
        y[static_cast<size_t>(at)] = std::exp(x.GetFlat(at) / t) / z;
      }
    }
  return y;
}

NDArray Int32Array(const TShape& shape, const std::vector<int64_t>& values, DType dtype = DType::kInt32) {
  NDArray a(shape, dtype);
  for (size_t i = 0; i < values.size(); ++i) a.SetFlat(static_cast<int64_t>(i), static_cast<float>(values[i]));
  return a;
}
}  // namespace

TEST_CASE("softmax use_length masks each row past its length", "[ops][softmax][grad]") {
  // (2, 4, 3) along axis 1: one length per (batch, column), 0 and the full 4 included.
  NDArray x = RandomArray(TShape({2, 4, 3}), 31, -3.0f, 3.0f);
  const std::vector<int64_t> lengths = {1, 4, 0, 2, 3, 4};
  struct Case {
    KwArgs params;
    double t;
    DType length_type;
  };
  const std::vector<Case> cases = {{{{"axis", "1"}, {"use_length", "True"}}, 1.0, DType::kInt32},
                                   {{{"axis", "-2"}, {"use_length", "True"}, {"temperature", "2.5"}}, 2.5, DType::kInt64}};
  for (const Case& c : cases) {
    INFO("temperature " << c.t);
    NDArray len = Int32Array(TShape({2, 3}), lengths, c.length_type);
    auto exec = BindSingleOp("softmax", c.params, {{"data", x}, {"length", len}});
    exec->Forward(true);
    const std::vector<double> want = NaiveMaskedSoftmax(x, 1, lengths, c.t);
    const NDArray& y = exec->outputs()[0];
    for (int64_t i = 0; i < x.Size(); ++i) CHECK(y.GetFlat(i) == Approx(want[static_cast<size_t>(i)]).margin(1e-6));
    // Gradient against central differences of the naive masked softmax, length untouched.
    NDArray head = RandomArray(x.shape(), 32);
    exec->Backward({head});
    const NDArray& g = exec->grad_arrays()[0];
    auto loss = [&](const NDArray& at) {
      const std::vector<double> v = NaiveMaskedSoftmax(at, 1, lengths, c.t);
      double s = 0;
      for (int64_t i = 0; i < at.Size(); ++i) s += v[static_cast<size_t>(i)] * head.GetFlat(i);
      return s;
    };
    for (int64_t i = 0; i < x.Size(); ++i) {
      NDArray hi = x.Copy(), lo = x.Copy();
      hi.SetFlat(i, x.GetFlat(i) + 1e-2f);
      lo.SetFlat(i, x.GetFlat(i) - 1e-2f);
      const double want_g = (loss(hi) - loss(lo)) / (static_cast<double>(hi.GetFlat(i)) - lo.GetFlat(i));
      CHECK(g.GetFlat(i) == Approx(want_g).margin(1e-3));
    }
    CHECK(exec->grad_arrays()[1].dtype() == c.length_type);
    for (int64_t i = 0; i < 6; ++i) CHECK(exec->grad_arrays()[1].GetFlat(i) == 0.0f);
  }
  // float64 data computes in double.
  NDArray x64 = x.AsType(DType::kFloat64);
  NDArray y64 = RunForward("softmax", {{"axis", "1"}, {"use_length", "True"}},
                           {{"data", x64}, {"length", Int32Array(TShape({2, 3}), lengths)}});
  REQUIRE(y64.dtype() == DType::kFloat64);
  const std::vector<double> want = NaiveMaskedSoftmax(x, 1, lengths, 1.0);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(y64.data<double>()[i] == Approx(want[static_cast<size_t>(i)]).epsilon(1e-13));
  // length's shape is data's without the axis, (1,) for 1-D data; inferred both ways.
  Symbol s = Symbol::Create("softmax", "sm", {{"axis", "1"}, {"use_length", "True"}},
                            {{"data", Symbol::Variable("data")}, {"length", Symbol::Variable("length")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "length"});
  auto shapes = InferShape(s, {{"data", TShape({2, 4, 3})}});
  CHECK(shapes.arg_shapes[1] == TShape({2, 3}));
  Symbol s1 = Symbol::Create("softmax", "sm", {{"use_length", "True"}},
                             {{"data", Symbol::Variable("data")}, {"length", Symbol::Variable("length")}});
  CHECK(InferShape(s1, {{"data", TShape({5})}}).arg_shapes[1] == TShape({1}));
  CHECK_THROWS_AS(InferShape(s, {{"data", TShape({2, 4, 3})}, {"length", TShape({2, 4})}}), ShapeError);
  // Bad lengths are errors: out of [0, n], or not an integer type.
  CHECK_THROWS_WITH(RunForward("softmax", {{"axis", "1"}, {"use_length", "True"}},
                               {{"data", x}, {"length", Int32Array(TShape({2, 3}), {1, 5, 0, 2, 3, 4})}}),
                    Catch::Contains("length[1] = 5 is outside [0, 4]"));
  CHECK_THROWS_WITH(RunForward("softmax", {{"axis", "1"}, {"use_length", "True"}},
                               {{"data", x}, {"length", Int32Array(TShape({2, 3}), {1, -1, 0, 2, 3, 4})}}),
                    Catch::Contains("length[1] = -1 is outside"));
  CHECK_THROWS_WITH(RunForward("softmax", {{"axis", "1"}, {"use_length", "True"}},
                               {{"data", x}, {"length", Int32Array(TShape({2, 3}), lengths, DType::kFloat32)}}),
                    Catch::Contains("must be int32 or int64"));
}
