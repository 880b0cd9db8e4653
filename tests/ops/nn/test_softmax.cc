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
  CHECK_THROWS_WITH(Symbol::Create("softmax", "sm", {{"use_length", "True"}}, {}),
                    Catch::Contains("use_length=True"));
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
