// Hostile numbers in detection and sampling inputs (NaN, infinities, coordinates far outside):
// each op returns without reading out of bounds (run under ASan in CI), with the documented
// result for such points, or fails with a clear error.
#include <cmath>
#include <limits>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("Sampling ops: NaN and far grid points read zeros", "[ops][BilinearSampler][hostile]") {
  NDArray x = RandomArray(TShape({1, 2, 4, 4}), 1);
  NDArray grid(TShape({1, 2, 1, 4}), {kNaN, kInf, -1e30f, 0.0f, 0.0f, -kInf, 1e30f, kNaN});
  NDArray y = RunForward("BilinearSampler", {}, {{"data", x}, {"grid", grid}});
  for (int64_t i = 0; i < y.Size(); ++i) REQUIRE(y.GetFlat(i) == 0.0f);
  NDArray loc(TShape({1, 6}), {kNaN, 0, 0, 0, 1e30f, 0});
  NDArray st = RunForward("SpatialTransformer", {{"target_shape", "(2, 2)"}, {"transform_type", "affine"},
                                                 {"sampler_type", "bilinear"}}, {{"data", x}, {"loc", loc}});
  for (int64_t i = 0; i < st.Size(); ++i) REQUIRE(st.GetFlat(i) == 0.0f);
}

TEST_CASE("ROI ops: NaN and far regions", "[ops][ROIAlign][ROIPooling][hostile]") {
  NDArray x = RandomArray(TShape({1, 2, 5, 5}), 2);
  NDArray rois(TShape({3, 5}), {0, kNaN, 0, 3, 3, 0, -1e30f, -1e30f, -1e29f, -1e29f, 0, 0, 0, kInf, 2});
  NDArray pooled = RunForward("ROIPooling", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                              {{"data", x}, {"rois", rois}});
  for (int64_t i = 0; i < pooled.Size(); ++i) REQUIRE(std::isfinite(pooled.GetFlat(i)));
  NDArray aligned = RunForward("_contrib_ROIAlign",
                               {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}, {"sample_ratio", "2"}},
                               {{"data", x}, {"rois", rois}});
  REQUIRE(aligned.shape() == TShape({3, 2, 2, 2}));
  // The adaptive grid of a huge region would take ~1e29 samples, a huge sample_ratio 4e18:
  // errors, not a hang or an allocation failure.
  REQUIRE_THROWS_WITH(RunForward("_contrib_ROIAlign", {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}},
                                 {{"data", x}, {"rois", rois}}),
                      Catch::Contains("ROIAlign: roi 0 is 3 x nan (height x width) after scaling"));
  REQUIRE_THROWS_WITH(RunForward("_contrib_ROIAlign",
                                 {{"pooled_size", "(2, 2)"}, {"spatial_scale", "1"}, {"sample_ratio", "2000000000"}},
                                 {{"data", x}, {"rois", rois}}),
                      Catch::Contains("more than 1048576 in all"));
}

TEST_CASE("Proposal, box_nms and DeformableConvolution: NaN inputs", "[ops][Proposal][box_nms][hostile]") {
  NDArray cls = RandomArray(TShape({1, 2, 3, 3}), 3, 0.0f, 1.0f);
  cls.SetFlat(9, kNaN);
  cls.SetFlat(12, kNaN);
  NDArray deltas = RandomArray(TShape({1, 4, 3, 3}), 4);
  deltas.SetFlat(0, kNaN);
  deltas.SetFlat(11, 1e30f);
  NDArray info(TShape({1, 3}), {48, 48, 1});
  NDArray rois = RunForward("_contrib_Proposal", {{"scales", "(1,)"}, {"ratios", "(1,)"}, {"rpn_min_size", "1"},
                                                  {"rpn_post_nms_top_n", "5"}},
                            {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", info}});
  REQUIRE(rois.shape() == TShape({5, 5}));
  REQUIRE_THROWS_WITH(RunForward("_contrib_Proposal", {{"scales", "(1,)"}, {"ratios", "(1,)"}},
                                 {{"cls_prob", cls}, {"bbox_pred", deltas}, {"im_info", NDArray(TShape({1, 3}), {kNaN, 48, 1})}}),
                      Catch::Contains("im_info of image 0 must hold the image height and width, got nan x 48"));
  NDArray boxes(TShape({3, 6}), {kNaN, 0.9f, 0, 0, 1, 1, 1e30f, 0.8f, 0, 0, 1, 1, 0, kNaN, kNaN, 0, 1, 1});
  NDArray kept = RunForward("_contrib_box_nms", {{"id_index", "0"}}, {{"data", boxes}});
  REQUIRE(kept.shape() == TShape({3, 6}));
  NDArray off = RandomArray(TShape({1, 18, 3, 3}), 5);
  off.SetFlat(0, kNaN);
  off.SetFlat(1, 1e30f);
  off.SetFlat(2, -kInf);
  NDArray y = RunForward("_contrib_DeformableConvolution", {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", "2"}},
                         {{"data", RandomArray(TShape({1, 2, 3, 3}), 6)}, {"offset", off},
                          {"weight", RandomArray(TShape({2, 2, 3, 3}), 7)}, {"bias", RandomArray(TShape({2}), 8)}});
  for (int64_t i = 0; i < y.Size(); ++i) REQUIRE(std::isfinite(y.GetFlat(i)));
}
