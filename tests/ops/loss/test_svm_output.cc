// SVMOutput: forward is the identity; backward the L1 / L2 SVM gradient for the labels, checked
// against a naive per-element reference for each margin, coefficient and objective.
#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// d loss / d y for one element: the label's class wants y >= margin, the others y <= -margin.
double NaiveSvmGrad(double y, bool is_label, double margin, double coef, bool linear) {
  const double sign = is_label ? 1 : -1, slack = margin - sign * y;
  if (slack <= 0) return 0;
  return coef * (linear ? -sign : -2 * sign * slack);
}
}  // namespace

TEST_CASE("SVMOutput forward is the data, backward the SVM gradient", "[ops][svm_output][grad]") {
  NDArray x = RandomArray(TShape({4, 5}), 3, -2, 2);
  NDArray label(TShape({4}), {0, 4, 2, 2});
  for (bool linear : {false, true})
    for (auto mc : {std::pair<double, double>{1, 1}, {0.5, 2.5}}) {
      INFO("use_linear " << linear << " margin " << mc.first << " coefficient " << mc.second);
      const KwArgs params = {{"use_linear", linear ? "True" : "False"},
                             {"margin", std::to_string(mc.first)},
                             {"regularization_coefficient", std::to_string(mc.second)}};
      for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
        auto exec = BindSingleOp("SVMOutput", params, {{"data", x}, {"label", label}}, {"label"}, req);
        NDArray before = exec->grad_arrays()[0].Copy();
        exec->Forward(true);
        RequireClose(exec->outputs()[0], x);
        exec->Backward();  // a loss head: no head gradient
        NDArray want(x.shape());
        for (int64_t r = 0; r < 4; ++r)
          for (int64_t j = 0; j < 5; ++j) {
            double g = NaiveSvmGrad(x.GetFlat(r * 5 + j), j == label.GetFlat(r), mc.first, mc.second, linear);
            if (req == OpReq::kAdd) g += before.GetFlat(r * 5 + j);
            want.SetFlat(r * 5 + j, static_cast<float>(g));
          }
        RequireClose(exec->grad_arrays()[0], want);
      }
    }
}

TEST_CASE("SVMOutput infers the label shape and rejects labels out of range", "[ops][svm_output]") {
  Symbol s = SingleOpSymbol("SVMOutput", {});
  auto shapes = InferShape(s, {{"op_data", TShape({2, 3, 4})}});
  CHECK(shapes.arg_shapes[1] == TShape({2, 3}));
  auto exec = BindSingleOp("SVMOutput", {}, {{"data", RandomArray(TShape({2, 3}), 1)},
                                             {"label", NDArray(TShape({2}), {1, 3})}}, {"label"});
  exec->Forward(true);
  CHECK_THROWS_WITH(exec->Backward(), Catch::Contains("label 3 of row 1 is out of range for 3 classes"));
}
