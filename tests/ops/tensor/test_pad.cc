// Pad: every mode in 4-D and 5-D, gradients, shape inference and errors.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/symbol_json.h>

using namespace symbind;
using namespace symbind::test;

namespace {
int64_t NaivePadIndex(const std::string& mode, int64_t j, int64_t before, int64_t n) {
  int64_t i = j - before;
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return std::min<int64_t>(std::max<int64_t>(i, 0), n - 1);
  // numpy 'reflect': mirror about the edge elements without repeating them.
  if (i < 0) return -i;
  return 2 * (n - 1) - i;
}

NDArray NaivePad(const NDArray& x, const std::string& mode, const std::vector<int64_t>& pw, float cval) {
  const TShape& s = x.shape();
  std::vector<int64_t> os;
  for (int i = 0; i < s.ndim(); ++i) os.push_back(s[i] + pw[2 * i] + pw[2 * i + 1]);
  NDArray out{TShape(os)};
  int nd = s.ndim();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t flat = 0; flat < out.Size(); ++flat) {
    int64_t r = flat, src = 0, stride = 1;
    bool fill = false;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t j = r % os[d];
      r /= os[d];
      int64_t si = NaivePadIndex(mode, j, pw[2 * d], s[d]);
      if (si < 0) fill = true;
      src += si * stride;
      stride *= s[d];
    }
    out.SetFlat(flat, fill ? cval : x.GetFlat(src));
  }
  return out;
}
}  // namespace

TEST_CASE("Pad forward for every mode, 4-D and 5-D", "[ops][Pad]") {
  for (std::string mode : {"constant", "edge", "reflect"}) {
    INFO(mode);
    NDArray x4 = RandomArray(TShape({2, 2, 3, 4}), 19);
    std::vector<int64_t> pw4 = {0, 0, 0, 0, 2, 1, 1, 3};
    NDArray y4 = RunForward("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,2,1,1,3)"}, {"constant_value", "1.5"}},
                            {{"data", x4}});
    RequireClose(y4, NaivePad(x4, mode, pw4, 1.5f));
    NDArray x5 = RandomArray(TShape({1, 2, 3, 3, 4}), 20);
    std::vector<int64_t> pw5 = {0, 0, 0, 0, 1, 2, 2, 0, 1, 1};
    NDArray y5 = RunForward("pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,1,2,2,0,1,1)"}}, {{"data", x5}});
    RequireClose(y5, NaivePad(x5, mode, pw5, 0.0f));
  }
}

TEST_CASE("Pad gradients for every mode", "[ops][Pad][grad]") {
  for (std::string mode : {"constant", "edge", "reflect"}) {
    INFO(mode);
    CheckGradients("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,2,1,1,2)"}},
                   {{"data", RandomArray(TShape({1, 2, 3, 3}), 21)}});
    CheckGradients("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,1,1,0,2,2,1)"}},
                   {{"data", RandomArray(TShape({1, 1, 2, 3, 3}), 22)}});
  }
}

TEST_CASE("Pad shape inference and errors", "[ops][Pad][shape]") {
  Symbol pad = Symbol::Create("Pad", "pad0", {{"mode", "reflect"}, {"pad_width", "(0,0,0,0,1,2,3,4)"}},
                              {{"data", Symbol::Variable("data")}});
  CHECK(InferShape(pad, {{"data", TShape({2, 3, 5, 6})}}).out_shapes[0] == TShape({2, 3, 8, 13}));
  CHECK_THAT(ErrorOf([&] { InferShape(pad, {{"data", TShape({2, 3, 5, 4})}}); }),
             Catch::Contains("reflection padding only supports padding sizes smaller"));
  CHECK_THAT(ErrorOf([&] { InferShape(pad, {{"data", TShape({2, 3, 5})}}); }),
             Catch::Contains("only 4-D or 5-D"));
  Symbol bad = Symbol::Create("Pad", "pad1", {{"mode", "edge"}, {"pad_width", "(0,1,0,0,1,1,1,1)"}},
                              {{"data", Symbol::Variable("data")}});
  CHECK_THAT(ErrorOf([&] { InferShape(bad, {{"data", TShape({2, 3, 5, 6})}}); }),
             Catch::Contains("first two axes"));
  CHECK_THROWS_AS(Symbol::Create("Pad", "p", {{"mode", "wrap"}, {"pad_width", "(0,0,0,0,1,1,1,1)"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("Pad", "p", {{"mode", "edge"}}, {}), ParamError);
}
