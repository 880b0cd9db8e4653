// _image_normalize: (x - mean[c]) / std[c] for 3-D and 4-D inputs, per-channel and single
// values; gradient 1 / std[c] by finite differences; the shape errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_image_normalize subtracts the mean and divides by the std per channel", "[ops][image_normalize][grad]") {
  const double mean[3] = {0, 1, 2}, stdv[3] = {3, 2, 1};
  for (const TShape& s : {TShape({3, 2, 4}), TShape({2, 3, 2, 2})}) {
    INFO(s);
    NDArray x = RandomArray(s, 1, 0, 1);
    const int64_t plane = s[s.ndim() - 1] * s[s.ndim() - 2];
    NDArray want(s);
    for (int64_t i = 0; i < x.Size(); ++i) {
      const int64_t c = (i / plane) % 3;
      want.SetFlat(i, static_cast<float>((x.GetFlat(i) - mean[c]) / stdv[c]));
    }
    const KwArgs p = {{"mean", "(0, 1, 2)"}, {"std", "(3, 2, 1)"}};
    RequireClose(RunForward("_image_normalize", p, {{"data", x}}), want);
    CheckGradients("_image_normalize", p, {{"data", x}});
  }
  NDArray x = RandomArray(TShape({1, 2, 2}), 2);
  RequireClose(RunForward("_image_normalize", {{"mean", "1.0"}, {"std", "2.0"}}, {{"data", x}}),
               MapNaive(x, [](double v) { return (v - 1) / 2; }));
  NDArray h = Invoke("_image_normalize", {{"mean", "1.0"}, {"std", "2.0"}}, {x.AsType(DType::kFloat16)})[0];
  CHECK(h.dtype() == DType::kFloat16);
}

TEST_CASE("_image_normalize rejects other ranks, channel counts and parameter lengths", "[ops][image_normalize]") {
  CHECK_THROWS_WITH(Invoke("_image_normalize", {{"mean", "0"}, {"std", "1"}}, {RandomArray(TShape({3, 4}), 1)}),
                    Catch::Contains("(channels, height, width)"));
  CHECK_THROWS_WITH(Invoke("_image_normalize", {{"mean", "0"}, {"std", "1"}}, {RandomArray(TShape({2, 4, 4}), 1)}),
                    Catch::Contains("must be 1 or 3"));
  // MXNet's default mean has 4 values: it fits neither 1 nor 3 channels.
  CHECK_THROWS_WITH(Invoke("_image_normalize", {}, {RandomArray(TShape({3, 4, 4}), 1)}),
                    Catch::Contains("mean must have 1 or 3 elements"));
}
