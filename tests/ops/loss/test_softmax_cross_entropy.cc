// softmax_cross_entropy: forward, gradient and shapes.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("softmax_cross_entropy forward, gradient and shapes", "[ops][softmax_cross_entropy][grad]") {
  NDArray x = RandomArray(TShape({3, 4}), 3, -2, 2), label(TShape({3}), {2, 0, 3});
  auto p = NaiveSoftmax(x, 3, 4, 1);
  double want = 0;
  for (int r = 0; r < 3; ++r) want -= std::log(p[static_cast<size_t>(r * 4 + static_cast<int>(label.GetFlat(r)))]);
  NDArray y = RunForward("softmax_cross_entropy", {}, {{"data", x}, {"label", label}});
  REQUIRE(y.shape() == TShape({1}));
  CHECK(y.GetFlat(0) == Approx(want).epsilon(1e-5));
  // MXNet's example.
  NDArray ex(TShape({2, 3}), {1, 2, 3, 11, 7, 5}), exl(TShape({2}), {2, 0});
  CHECK(RunForward("softmax_cross_entropy", {}, {{"data", ex}, {"label", exl}}).GetFlat(0) ==
        Approx(0.4281871).epsilon(1e-5));
  // An ordinary op: the head gradient scales the gradient.
  GradCheckOptions opt;
  opt.no_grad = {"label"};
  CheckGradients("softmax_cross_entropy", {}, {{"data", x}, {"label", label}}, opt);

  // No gradient for the label, as MXNet.
  auto exec = BindSingleOp("softmax_cross_entropy", {}, {{"data", x}, {"label", label}});
  exec->Forward(true);
  CHECK_THROWS_WITH(exec->Backward(), Catch::Contains("Cannot take gradient wrt label"));

  auto infer = [](const TShape& d, const TShape& l) {
    Symbol s = Symbol::Create("softmax_cross_entropy", "ce", {}, {{"data", Symbol::Variable("d")}, {"label", Symbol::Variable("l")}});
    return InferShape(s, {{"d", d}, {"l", l}});
  };
  auto r = Symbol::Create("softmax_cross_entropy", "ce", {}, {{"data", Symbol::Variable("d")}});
  auto inferred = InferShape(r, {{"d", TShape({5, 7})}});
  CHECK(inferred.arg_shapes[1] == TShape({5}));
  CHECK(inferred.out_shapes[0] == TShape({1}));
  CHECK_THROWS_WITH(infer(TShape({5, 7, 2}), TShape({5})), Catch::Contains("only accept 2D data"));
  CHECK_THROWS_AS(infer(TShape({5, 7}), TShape({4})), ShapeError);
  CHECK_THROWS_WITH(RunForward("softmax_cross_entropy", {}, {{"data", x}, {"label", NDArray(TShape({3}), {0, 4, 1})}}),
                    Catch::Contains("not in [0, 4)"));
}
