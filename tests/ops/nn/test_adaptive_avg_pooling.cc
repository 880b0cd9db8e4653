// _contrib_AdaptiveAvgPooling2D: forward against a naive window average (bins
// [floor(o*I/O), ceil((o+1)*I/O))), shapes for every output_size form, gradient.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray NaiveAdaptiveAvg(const NDArray& x, int64_t OH, int64_t OW) {
  const TShape& s = x.shape();
  NDArray y(TShape({s[0], s[1], OH, OW}));
  for (int64_t p = 0; p < s[0] * s[1]; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t h0 = oh * s[2] / OH, h1 = ((oh + 1) * s[2] + OH - 1) / OH;  // exact floor / ceil
        int64_t w0 = ow * s[3] / OW, w1 = ((ow + 1) * s[3] + OW - 1) / OW;
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) sum += x.GetFlat((p * s[2] + h) * s[3] + w);
        y.SetFlat((p * OH + oh) * OW + ow, static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0))));
      }
  return y;
}
}  // namespace

TEST_CASE("AdaptiveAvgPooling2D matches naive windows", "[ops][AdaptiveAvgPooling2D]") {
  NDArray x = RandomArray(TShape({2, 3, 7, 5}), 1);
  struct Case {
    std::string size;
    int64_t oh, ow;
  };
  for (const Case& c : {Case{"", 1, 1}, Case{"3", 3, 3}, Case{"(4,2)", 4, 2}, Case{"(7,5)", 7, 5},
                        Case{"(10,8)", 10, 8}}) {
    INFO("output_size=" << c.size);
    KwArgs p;
    if (!c.size.empty()) p["output_size"] = c.size;
    RequireClose(RunForward("_contrib_AdaptiveAvgPooling2D", p, {{"data", x}}), NaiveAdaptiveAvg(x, c.oh, c.ow));
  }
  CheckGradients("_contrib_AdaptiveAvgPooling2D", {{"output_size", "(3,2)"}}, {{"data", RandomArray(TShape({1, 2, 5, 5}), 2)}});
  CHECK_THAT(ErrorOf([] { RunForward("_contrib_AdaptiveAvgPooling2D", {}, {{"data", NDArray(TShape({2, 3, 4}))}}); }),
             Catch::Contains("input must be 4-D (NCHW)"));
}
