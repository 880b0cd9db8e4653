// symbind::Invoke (executor/invoke.h): one registered op run on NDArrays, checked against
// the same op bound in an executor and against naive loops.
#include <catch2/catch.hpp>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Invoke: results equal the op bound in an executor", "[invoke]") {
  NDArray x = RandomArray(TShape({3, 5}), 1), w = RandomArray(TShape({4, 5}), 2),
          b = RandomArray(TShape({4}), 3);
  const KwArgs params{{"num_hidden", "4"}};
  NDArray got = Invoke("FullyConnected", params, {x, w, b})[0];
  RequireClose(got, RunForward("FullyConnected", params, {{"data", x}, {"weight", w}, {"bias", b}}), 0.0f,
               0.0f);

  // Named inputs bind by argument name, in any order.
  NDArray named = Invoke("FullyConnected", params, InvokeInputs{{}, {{"bias", b}, {"weight", w}, {"data", x}}})[0];
  RequireClose(named, got, 0.0f, 0.0f);
}

TEST_CASE("Invoke: an output given writes in place, also over an input", "[invoke]") {
  NDArray a = RandomArray(TShape({4, 4}), 4), b = RandomArray(TShape({4, 4}), 5);
  NDArray want(TShape({4, 4}));
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += a.GetFlat(i * 4 + k) * b.GetFlat(k * 4 + j);
      want.SetFlat(i * 4 + j, static_cast<float>(s));
    }
  // dot's kernel reads `a` while writing its output: the result must not see partial writes.
  std::vector<NDArray> out = Invoke("dot", {}, {a, b}, {a});
  CHECK(out[0].SharesStorageWith(a));
  RequireClose(a, want, 1e-5f, 1e-5f);
}

TEST_CASE("Invoke: sgd_mom_update updates weight and momentum like the formula", "[invoke]") {
  NDArray w = RandomArray(TShape({6}), 6), g = RandomArray(TShape({6}), 7), m = RandomArray(TShape({6}), 8);
  NDArray w0 = w.Copy(), m0 = m.Copy();
  Invoke("sgd_mom_update", {{"lr", "0.1"}, {"momentum", "0.9"}, {"wd", "0.01"}}, {w, g, m}, {w});
  for (int i = 0; i < 6; ++i) {
    const double mom = 0.9 * m0.GetFlat(i) - 0.1 * 0.01 * w0.GetFlat(i) - 0.1 * g.GetFlat(i);
    CHECK(m.GetFlat(i) == Approx(mom).epsilon(1e-5));
    CHECK(w.GetFlat(i) == Approx(w0.GetFlat(i) + mom).epsilon(1e-5));
  }
}

TEST_CASE("Invoke: random ops reproduce per seed and differ between seeds", "[invoke]") {
  const KwArgs params{{"shape", "(64,)"}};
  NDArray a = Invoke("_random_uniform", params, std::vector<NDArray>{}, {}, 11)[0];
  NDArray b = Invoke("_random_uniform", params, std::vector<NDArray>{}, {}, 11)[0];
  NDArray c = Invoke("_random_uniform", params, std::vector<NDArray>{}, {}, 12)[0];
  RequireClose(a, b, 0.0f, 0.0f);
  int same = 0;
  for (int i = 0; i < 64; ++i) same += a.GetFlat(i) == c.GetFlat(i);
  CHECK(same < 4);
  // The shape may come from the output array given instead.
  NDArray out(TShape({2, 3}));
  Invoke("_random_normal", {}, std::vector<NDArray>{}, {out}, 1);
  CHECK(out.shape() == TShape({2, 3}));
}

TEST_CASE("Invoke: bad calls throw errors naming the op and the problem", "[invoke][errors]") {
  NDArray x = RandomArray(TShape({3, 5}), 1), w = RandomArray(TShape({4, 5}), 2);
  CHECK_THROWS_WITH(Invoke("FullyConnected", {{"num_hidden", "4"}}, {x, w}),
                    Catch::Contains("Invoke('FullyConnected')") && Catch::Contains("input 'bias' not given"));
  CHECK_THROWS_WITH(Invoke("Activation", {{"act_type", "relu"}}, {x, w}),
                    Catch::Contains("takes 1 inputs (data) but 2 were given"));
  CHECK_THROWS_WITH(Invoke("Activation", {{"act_type", "relu"}}, InvokeInputs{{}, {{"date", x}}}),
                    Catch::Contains("date"));
  NDArray wrong(TShape({2, 2}));
  CHECK_THROWS_AS(Invoke("Activation", {{"act_type", "relu"}}, {x}, {wrong}), ShapeError);
  CHECK_THROWS_WITH(Invoke("Activation", {{"act_type", "relu"}}, {x}, {x, x}),
                    Catch::Contains("2 output arrays given, the op has 1"));
  CHECK_THROWS_WITH(Invoke("NoSuchOp", {}, {x}), Catch::Contains("NoSuchOp"));
  CHECK_THROWS_AS(Invoke("FullyConnected", {{"num_hidden", "4"}}, {x, RandomArray(TShape({4, 6}), 3),
                                                                    RandomArray(TShape({4}), 4)}),
                  ShapeError);
}

TEST_CASE("Invoke refuses a read-only output before the kernel runs", "[invoke][hostile]") {
  NDArray w = RandomArray(TShape({2, 3}), 1), g = RandomArray(TShape({2, 3}), 2);
  const NDArray before = w.Copy();
  const NDArray shared = ReadOnlyView(w, "a shared weight");
  CHECK_THROWS_WITH(Invoke("sgd_update", {{"lr", "0.1"}}, {shared, g}, {shared}),
                    Catch::Contains("the array is read-only (a shared weight)"));
  CHECK_THROWS_WITH(Invoke("relu", {}, {g}, {shared}), Catch::Contains("(relu) output 0: the array is read-only"));
  RequireClose(w, before, 0.0f, 0.0f);
}
