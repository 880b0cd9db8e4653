// pick: forward against a naive loop, clip and wrap, float and int indices, keepdims, shape
// inference both ways, finite-difference gradient.
#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// out[o, i] = x[o, j(o, i), i] with j from index (clip or wrap), x viewed (outer, n, inner).
NDArray NaivePick(const NDArray& x, const NDArray& index, int axis, bool wrap, const TShape& out_shape) {
  const TShape& s = x.shape();
  int64_t outer = s.ProdDims(0, axis), n = s[axis], inner = s.ProdDims(axis + 1, s.ndim());
  NDArray out(out_shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t j = static_cast<int64_t>(index.GetFlat(o * inner + i));
      if (wrap) j = ((j % n) + n) % n;
      else j = std::min<int64_t>(std::max<int64_t>(j, 0), n - 1);
      out.SetFlat(o * inner + i, x.GetFlat((o * n + j) * inner + i));
    }
  return out;
}
}  // namespace

TEST_CASE("pick matches a naive loop", "[ops][pick]") {
  NDArray x = RandomArray(TShape({3, 4, 5}), 1);
  for (int axis : {0, 1, 2, -1}) {
    int ax = axis < 0 ? axis + 3 : axis;
    TShape is = x.shape();
    is[ax] = 1;
    NDArray index = RandomArray(is, 2 + ax, -6.0f, 9.0f);  // out of range both ways
    for (bool wrap : {false, true}) {
      for (bool keepdims : {false, true}) {
        INFO("axis=" << axis << " wrap=" << wrap << " keepdims=" << keepdims);
        std::vector<int64_t> od = x.shape().dims();
        if (keepdims) od[static_cast<size_t>(ax)] = 1;
        else od.erase(od.begin() + ax);
        NDArray idx = index.Reshape(TShape(od));
        KwArgs p = {{"axis", std::to_string(axis)}, {"mode", wrap ? "wrap" : "clip"},
                    {"keepdims", keepdims ? "True" : "False"}};
        NDArray y = RunForward("pick", p, {{"data", x}, {"index", idx}});
        RequireClose(y, NaivePick(x, idx, ax, wrap, TShape(od)), 0, 0);
      }
    }
  }
  // MXNet's documented example; integer indices work as float ones.
  NDArray d(TShape({3, 2}), {1, 2, 3, 4, 5, 6});
  NDArray i(TShape({3}), DType::kInt32);
  i.SetFlat(0, 0);
  i.SetFlat(1, 1);
  i.SetFlat(2, 0);
  RequireClose(RunForward("pick", {{"axis", "1"}}, {{"data", d}, {"index", i}}), NDArray(TShape({3}), {1, 4, 5}));
  RequireClose(RunForward("pick", {{"axis", "0"}}, {{"data", d}, {"index", NDArray(TShape({2}), {0, 1})}}),
               NDArray(TShape({2}), {1, 4}));
}

TEST_CASE("pick shapes and gradient", "[ops][pick][grad]") {
  Symbol s = Symbol::Create("pick", "p", {{"axis", "1"}}, {{"data", Symbol::Variable("data")}});
  auto r = InferShapePartial(s, {{"data", TShape({3, 4, 5})}});
  CHECK(r.out_shapes[0] == TShape({3, 5}));
  r = InferShape(s, {{"data", TShape({3, 4, 5})}, {"p_index", TShape({3, 1, 5})}});
  CHECK(r.out_shapes[0] == TShape({3, 5}));
  CHECK_THAT(ErrorOf([&] { InferShape(s, {{"data", TShape({3, 4, 5})}, {"p_index", TShape({3, 4})}}); }),
             Catch::Contains("Shape inconsistent"));
  CHECK_THAT(ErrorOf([&] { InferShapePartial(Symbol::Create("pick", "p", {{"axis", "None"}}, {}), {{"p_data", TShape({3, 4})}}); }),
             Catch::Contains("axis=None is not supported"));
  NDArray x = RandomArray(TShape({3, 4, 2}), 3);
  NDArray idx(TShape({3, 2}), {0, 3, 1, 1, 5, -2});  // 5 and -2 clip
  GradCheckOptions opt;
  opt.no_grad = {"index"};
  CheckGradients("pick", {{"axis", "1"}}, {{"data", x}, {"index", idx}}, opt);
  CheckGradients("pick", {{"axis", "1"}, {"mode", "wrap"}, {"keepdims", "True"}},
                 {{"data", x}, {"index", idx.Reshape(TShape({3, 1, 2}))}}, opt);
}
