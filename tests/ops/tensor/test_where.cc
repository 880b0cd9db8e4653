// where: full and 1-D conditions, gradients.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

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
