// Dropout: identity in inference, training masks and scaling, shared axes, gradients.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("Dropout is the identity in inference and with p = 0", "[ops][Dropout][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 17);
  RequireClose(RunForward("Dropout", {}, {{"data", x}}), x, 0.0f, 0.0f);
  RequireClose(RunForward("Dropout", {{"p", "0"}}, {{"data", x}}, 0, true), x, 0.0f, 0.0f);
  CheckGradients("Dropout", {{"p", "0.3"}}, {{"data", x}});
  GradCheckOptions train;
  train.is_train = true;
  CheckGradients("Dropout", {{"p", "0"}}, {{"data", x}}, train);
}

TEST_CASE("Dropout training: mask fraction, scaling, reproducibility, gradient", "[ops][Dropout]") {
  NDArray x = RandomArray(TShape({100, 50}), 18, 0.5f, 1.5f);
  for (std::string p : {"0.5", "0.2"}) {
    INFO("p " << p);
    double pv = std::stod(p);
    for (bool always : {false, true}) {
      KwArgs kw{{"p", p}, {"mode", always ? "always" : "training"}, {"cudnn_off", "False"}};
      auto e1 = BindSingleOp("Dropout", kw, {{"data", x}});
      auto e2 = BindSingleOp("Dropout", kw, {{"data", x}});
      e1->Forward(!always);  // mode=always drops in inference too
      e2->Forward(!always);
      const NDArray& y = e1->outputs()[0];
      RequireClose(y, e2->outputs()[0], 0.0f, 0.0f, "same seed, same mask");
      int64_t dropped = 0;
      for (int64_t i = 0; i < x.Size(); ++i) {
        if (y.GetFlat(i) == 0.0f) ++dropped;
        else REQUIRE(y.GetFlat(i) == Approx(x.GetFlat(i) / (1 - pv)).epsilon(1e-6));
      }
      CHECK(static_cast<double>(dropped) / x.Size() == Approx(pv).margin(0.03));
      NDArray head = RandomArray(x.shape(), 19);
      e1->Backward({head});
      for (int64_t i = 0; i < x.Size(); ++i) {
        float want = y.GetFlat(i) == 0.0f ? 0.0f : head.GetFlat(i) / static_cast<float>(1 - pv);
        REQUIRE(e1->grad_arrays()[0].GetFlat(i) == Approx(want).epsilon(1e-6));
      }
      NDArray first = y.Copy();
      e1->Forward(!always);
      bool differs = false;
      for (int64_t i = 0; i < x.Size() && !differs; ++i) differs = first.GetFlat(i) != e1->outputs()[0].GetFlat(i);
      CHECK(differs);  // each run draws a new mask
    }
  }
}

TEST_CASE("Dropout with p = 1 in training gives NaN (0 * inf), as MXNet's kernel computes it", "[ops][Dropout]") {
  NDArray x = RandomArray(TShape({4, 5}), 20, 0.5f, 1.5f);
  auto e = BindSingleOp("Dropout", {{"p", "1"}}, {{"data", x}});
  e->Forward(true);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(std::isnan(e->outputs()[0].GetFlat(i)));
  e->Forward(false);  // inference: the identity
  RequireClose(e->outputs()[0], x, 0.0f, 0.0f);
}

TEST_CASE("Dropout axes share the mask along the given axes", "[ops][Dropout][shape]") {
  NDArray x = RandomArray(TShape({4, 6, 5}), 20, 0.5f, 1.5f);
  NDArray y = RunForward("Dropout", {{"p", "0.5"}, {"axes", "(1,)"}}, {{"data", x}}, 0, true);
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t k = 0; k < 5; ++k) {
      bool kept = y.At({n, 0, k}) != 0.0f;
      for (int64_t c = 0; c < 6; ++c) REQUIRE((y.At({n, c, k}) != 0.0f) == kept);
    }
  Symbol s = Symbol::Create("Dropout", "dp", {{"axes", "(0, 2)"}}, {{"data", Symbol::Variable("data")}});
  CHECK(s.ListOutputs() == std::vector<std::string>{"dp_output"});
  CHECK(InferShape(s, {{"data", TShape({4, 6, 5})}}).out_shapes[0] == TShape({4, 6, 5}));
  Symbol bad = Symbol::Create("Dropout", "dp", {{"axes", "(3,)"}}, {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(bad, {{"data", TShape({4, 6, 5})}}), Catch::Contains("out of range"));
  CHECK_THROWS_WITH(Symbol::Create("Dropout", "dp", {{"p", "1.5"}}, {}), Catch::Contains("should be in range"));
}
