// broadcast_axis / broadcast_to / broadcast_like: forward against a naive index map,
// shapes, finite-difference gradients (summed over stretched axes), errors.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// y[i] = x[i with every stretched coordinate set to 0].
NDArray NaiveBroadcast(const NDArray& x, const TShape& os) {
  const TShape& is = x.shape();
  NDArray y(os);
  for (int64_t f = 0; f < os.Size(); ++f) {
    int64_t rem = f, src = 0, stride = 1;
    for (int d = os.ndim() - 1; d >= 0; --d) {
      int64_t c = rem % os[d];
      rem /= os[d];
      src += (is[d] == 1 ? 0 : c) * stride;
      stride *= is[d];
    }
    y.SetFlat(f, x.GetFlat(src));
  }
  return y;
}
}  // namespace

TEST_CASE("broadcast_axis, broadcast_to and broadcast_like", "[ops][broadcast_to]") {
  NDArray x = RandomArray(TShape({2, 1, 3, 1}), 1);
  TShape want_shape({2, 4, 3, 5});
  NDArray want = NaiveBroadcast(x, want_shape);
  RequireClose(RunForward("broadcast_axis", {{"axis", "(1,3)"}, {"size", "(4,5)"}}, {{"data", x}}), want, 0, 0);
  RequireClose(RunForward("broadcast_axes", {{"axis", "(-3,-1)"}, {"size", "(4,5)"}}, {{"data", x}}), want, 0, 0);
  RequireClose(RunForward("broadcast_to", {{"shape", "(0,4,0,5)"}}, {{"data", x}}), want, 0, 0);
  RequireClose(RunForward("broadcast_to", {{"shape", "(2,4,3,5)"}}, {{"data", x}}), want, 0, 0);
  NDArray like(want_shape);
  RequireClose(RunForward("broadcast_like", {}, {{"lhs", x}, {"rhs", like}}), want, 0, 0);
  NDArray like2(TShape({5, 4}));
  RequireClose(RunForward("broadcast_like", {{"lhs_axes", "(1,3)"}, {"rhs_axes", "(1,0)"}}, {{"lhs", x}, {"rhs", like2}}),
               want, 0, 0);

  NDArray small = RandomArray(TShape({2, 1, 3}), 2);
  CheckGradients("broadcast_axis", {{"axis", "1"}, {"size", "4"}}, {{"data", small}});
  CheckGradients("broadcast_to", {{"shape", "(0,3,0)"}}, {{"data", small}});
  CheckGradients("broadcast_like", {}, {{"lhs", small}, {"rhs", RandomArray(TShape({2, 3, 3}), 3)}});
}

TEST_CASE("broadcast_to family errors", "[ops][broadcast_to][errors]") {
  NDArray x = RandomArray(TShape({2, 3}), 1);
  CHECK_THAT(ErrorOf([&] { RunForward("broadcast_axis", {{"axis", "1"}, {"size", "4"}}, {{"data", x}}); }),
             Catch::Contains("broadcasting axis 1 of input (2,3) must have size 1"));
  CHECK_THAT(ErrorOf([&] { RunForward("broadcast_axis", {{"axis", "(0,1)"}, {"size", "4"}}, {{"data", x}}); }),
             Catch::Contains("must have the same length"));
  CHECK_THAT(ErrorOf([&] { RunForward("broadcast_to", {{"shape", "(4,3)"}}, {{"data", x}}); }),
             Catch::Contains("cannot broadcast axis 0 of size 2"));
  CHECK_THAT(ErrorOf([&] { RunForward("broadcast_to", {{"shape", "(2,3,1)"}}, {{"data", x}}); }),
             Catch::Contains("the ranks differ"));
  CHECK_THAT(ErrorOf([&] { RunForward("broadcast_like", {}, {{"lhs", x}, {"rhs", NDArray(TShape({2, 4}))}}); }),
             Catch::Contains("cannot broadcast axis 1 of size 3"));
}
