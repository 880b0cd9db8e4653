// _contrib_DeformablePSROIPooling: a naive reference (sample points written out, tent-function
// interpolation after MXNet's clamping) for the output and the hidden top_count, with and
// without offsets, finite-difference gradients for data and trans, and shape errors.
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/executor/invoke.h>

using namespace symbind;
using namespace symbind::test;

namespace {
NDArray Rois(const std::vector<float>& v) { return NDArray(TShape({int64_t(v.size() / 5), 5}), v); }

// Every output of one imperative call, the hidden top_count included.
std::vector<NDArray> AllOutputs(const KwArgs& params, const std::vector<NDArray>& inputs) {
  InvokedCall call;
  InvokeOptions options;
  options.record = &call;
  Invoke("_contrib_DeformablePSROIPooling", params, InvokeInputs{inputs, {}}, {}, options);
  return call.outputs;
}

struct Config {
  int64_t D, G, P, part, spp;
  double scale, trans_std;
};

KwArgs Params(const Config& c, bool no_trans) {
  return {{"output_dim", std::to_string(c.D)}, {"group_size", std::to_string(c.G)},
          {"pooled_size", std::to_string(c.P)}, {"part_size", std::to_string(c.part)},
          {"sample_per_part", std::to_string(c.spp)}, {"spatial_scale", std::to_string(c.scale)},
          {"trans_std", std::to_string(c.trans_std)}, {"no_trans", no_trans ? "True" : "False"}};
}

// Output (and sample counts) of every bin: the region from round(x1) * scale - 0.5 to
// (round(x2) + 1) * scale - 0.5 (at least 0.1), bin (ph, pw) shifted by its class's offsets
// times trans_std and the region's size, sample (ih, iw) at the bin's start plus (ih, iw) /
// sample_per_part of a bin; points beyond half a pixel outside are dropped, the rest clamped.
std::pair<NDArray, NDArray> NaiveDeformable(const NDArray& x, const NDArray& rois, const NDArray* trans, const Config& c) {
  const TShape& s = x.shape();
  const int64_t R = rois.shape()[0], H = s[2], W = s[3], P = c.P;
  const int64_t part = c.part ? c.part : P;
  const int64_t classes = trans ? trans->shape()[1] / 2 : 1;
  NDArray y(TShape({R, c.D, P, P})), count(TShape({R, c.D, P, P}));
  for (int64_t r = 0; r < R; ++r) {
    const double b = rois.GetFlat(r * 5);
    auto corner = [&](int k, double plus) { return (std::round(rois.GetFlat(r * 5 + k)) + plus) * c.scale - 0.5; };
    const double x0 = corner(1, 0), y0 = corner(2, 0);
    const double rw = std::max(corner(3, 1) - x0, 0.1), rh = std::max(corner(4, 1) - y0, 0.1);
    for (int64_t ch = 0; ch < c.D; ++ch)
      for (int64_t ph = 0; ph < P; ++ph)
        for (int64_t pw = 0; pw < P; ++pw) {
          const int64_t cls = ch / (c.D / classes);
          const int64_t parth = int64_t(std::floor(double(ph) / P * part)), partw = int64_t(std::floor(double(pw) / P * part));
          double tx = 0, ty = 0;
          if (trans) {
            tx = trans->GetFlat(((r * 2 * classes + 2 * cls) * part + parth) * part + partw) * c.trans_std;
            ty = trans->GetFlat(((r * 2 * classes + 2 * cls + 1) * part + parth) * part + partw) * c.trans_std;
          }
          const int64_t gh = std::min(ph * c.G / P, c.G - 1), gw = std::min(pw * c.G / P, c.G - 1);
          const int64_t src = (ch * c.G + gh) * c.G + gw;
          double sum = 0;
          int64_t n = 0;
          for (int64_t ih = 0; ih < c.spp && b > -1; ++ih)
            for (int64_t iw = 0; iw < c.spp; ++iw) {
              double yy = y0 + ph * rh / P + ty * rh + ih * rh / P / c.spp;
              double xx = x0 + pw * rw / P + tx * rw + iw * rw / P / c.spp;
              if (yy < -0.5 || yy > H - 0.5 || xx < -0.5 || xx > W - 0.5) continue;
              yy = std::min(std::max(yy, 0.0), double(H - 1));
              xx = std::min(std::max(xx, 0.0), double(W - 1));
              sum += TentInterpolate(x, int64_t(b), src, yy, xx);
              ++n;
            }
          const int64_t o = ((r * c.D + ch) * P + ph) * P + pw;
          y.SetFlat(o, n ? float(sum / n) : 0.0f);
          count.SetFlat(o, float(n));
        }
  }
  return {y, count};
}
}  // namespace

TEST_CASE("DeformablePSROIPooling: naive reference for output and top_count", "[ops][DeformablePSROIPooling]") {
  // Inside, past every border (samples dropped and clamped), tiny and reversed (0.1 after
  // scaling), skipped (negative batch), truncated batch -0.5 (image 0).
  NDArray rois = Rois({0, 2, 3, 13, 11, 1, -6, -4, 30, 24, 1, 5, 5, 5, 5, 0, 9, 9, 3, 3,
                       -1, 0, 0, 8, 8, -0.5f, 1, 1, 9, 7});
  const int64_t R = 6;
  for (const Config& c : {Config{2, 3, 3, 0, 2, 0.5, 0.1}, Config{4, 2, 2, 1, 3, 0.625, 0.2},
                          Config{2, 2, 3, 2, 1, 1.0, 0.05}, Config{1, 3, 2, 4, 4, 0.5, 1.0}}) {
    CAPTURE(c.D, c.G, c.P, c.part, c.spp, c.scale);
    NDArray x = RandomArray(TShape({2, c.D * c.G * c.G, 7, 8}), 21);
    const int64_t part = c.part ? c.part : c.P;
    for (int64_t classes : {int64_t{1}, c.D}) {
      NDArray trans = RandomArray(TShape({R, 2 * classes, part, part}), 22, -2, 2);
      const std::vector<NDArray> got = AllOutputs(Params(c, false), {x, rois, trans});
      const auto want = NaiveDeformable(x, rois, &trans, c);
      RequireClose(got[0], want.first, 1e-5f, 1e-4f, "output");
      RequireClose(got[1], want.second, 0, 0, "top_count");
    }
    const std::vector<NDArray> got = AllOutputs(Params(c, true), {x, rois});
    const auto want = NaiveDeformable(x, rois, nullptr, c);
    RequireClose(got[0], want.first, 1e-5f, 1e-4f, "no_trans output");
    RequireClose(got[1], want.second, 0, 0, "no_trans top_count");
  }
}

TEST_CASE("DeformablePSROIPooling: gradients by finite differences", "[ops][DeformablePSROIPooling]") {
  // Regions whose samples sit at half pixels, offsets below 0.4 pixel: every sample stays
  // inside the image and off pixel boundaries, where MXNet's trans gradient is the derivative.
  NDArray x = RandomArray(TShape({2, 8, 10, 9}), 23);
  NDArray rois = Rois({0, 1, 1, 4, 4, 1, 3, 1, 6, 8, -1, 0, 0, 4, 4});
  const Config c{2, 2, 2, 0, 2, 1.0, 0.05};
  NDArray trans = RandomArray(TShape({3, 4, 2, 2}), 24);
  GradCheckOptions o;
  o.no_grad = {"rois"};
  CheckGradients("_contrib_DeformablePSROIPooling", Params(c, false), {{"data", x}, {"rois", rois}, {"trans", trans}}, o);
  // One class for both channels, a single part.
  const Config one{2, 2, 2, 1, 2, 1.0, 0.05};
  CheckGradients("_contrib_DeformablePSROIPooling", Params(one, false),
                 {{"data", x}, {"rois", rois}, {"trans", RandomArray(TShape({3, 2, 1, 1}), 25)}}, o);
  // Without offsets, also past the borders (dropped and clamped samples): the data gradient.
  NDArray far = Rois({0, -5, -3, 6, 7, 1, 4, 5, 14, 13});
  CheckGradients("_contrib_DeformablePSROIPooling", Params(Config{2, 2, 2, 0, 3, 0.7, 0}, true),
                 {{"data", x}, {"rois", far}}, o);
}

TEST_CASE("DeformablePSROIPooling: shapes and errors", "[ops][DeformablePSROIPooling]") {
  const Config c{2, 3, 3, 0, 2, 0.0625, 0.1};
  auto infer = [&](const TShape& d, const TShape& r, const TShape& t) {
    return InferShape(SingleOpSymbol("_contrib_DeformablePSROIPooling", Params(c, false)),
                      {{"op_data", d}, {"op_rois", r}, {"op_trans", t}});
  };
  const auto ok = infer(TShape({1, 18, 14, 14}), TShape({4, 5}), TShape({4, 4, 3, 3}));
  REQUIRE(ok.out_shapes[0] == TShape({4, 2, 3, 3}));
  REQUIRE(SingleOpSymbol("_contrib_DeformablePSROIPooling", Params(c, true)).ListArguments() ==
          std::vector<std::string>{"op_data", "op_rois"});
  REQUIRE(SingleOpSymbol("_contrib_DeformablePSROIPooling", Params(c, false)).ListOutputs() ==
          std::vector<std::string>{"op_output"});
  REQUIRE_THROWS_WITH(infer(TShape({1, 17, 14, 14}), TShape({4, 5}), TShape({4, 4, 3, 3})),
                      Catch::Contains("data has 17 channels, but output_dim * group_size^2 = 2 * 3^2 = 18 are read"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 18, 14, 14}), TShape({4, 5}), TShape({4, 6, 3, 3})),
                      Catch::Contains("num_classes dividing output_dim = 2"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 18, 14, 14}), TShape({4, 5}), TShape({3, 4, 3, 3})),
                      Catch::Contains("one row per roi"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 18, 14, 14}), TShape({4, 5}), TShape({4, 4, 2, 3})),
                      Catch::Contains("part_size x part_size parts"));
  REQUIRE_THROWS_WITH(infer(TShape({1, 18, 14, 14}), TShape({4, 5}), TShape({4, 3, 3, 3})),
                      Catch::Contains("trans should be (num_rois, 2 * num_classes, part_size, part_size) = (4, 2 * num_classes, 3, 3)"));
  KwArgs bad = Params(c, false);
  bad["sample_per_part"] = "0";
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_DeformablePSROIPooling", bad), Catch::Contains("sample_per_part"));
  bad = Params(c, false);
  bad.erase("group_size");
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_DeformablePSROIPooling", bad), Catch::Contains("group_size"));
  // A batch index past the data and a non-finite corner are errors; NaN offsets drop samples.
  NDArray x = RandomArray(TShape({1, 18, 5, 5}), 26);
  auto run = [&](const NDArray& rois, const NDArray& trans) {
    return RunForward("_contrib_DeformablePSROIPooling", Params(c, false), {{"data", x}, {"rois", rois}, {"trans", trans}});
  };
  NDArray zeros(TShape({1, 4, 3, 3}));
  zeros.Fill(0.0f);
  REQUIRE_THROWS_WITH(run(Rois({1, 0, 0, 2, 2}), zeros), Catch::Contains("roi 0 has batch index 1, but the data holds 1 images"));
  REQUIRE_THROWS_WITH(run(Rois({0, 0, INFINITY, 2, 2}), zeros), Catch::Contains("roi 0 has a non-finite coordinate"));
  NDArray nan_trans(TShape({1, 4, 3, 3}));
  nan_trans.Fill(NAN);
  NDArray y = run(Rois({0, 0, 0, 40, 40}), nan_trans);
  for (int64_t i = 0; i < y.Size(); ++i) REQUIRE(y.GetFlat(i) == 0.0f);
}

TEST_CASE("DeformablePSROIPooling: an empty image gives zeros", "[ops][DeformablePSROIPooling]") {
  const Config c{1, 1, 2, 0, 2, 1.0, 0.1};
  NDArray x(TShape({1, 1, 0, 3})), trans(TShape({1, 2, 2, 2}));
  trans.Fill(0.0f);
  const std::vector<NDArray> got = AllOutputs(Params(c, false), {x, Rois({0, 0, 0, 2, 2}), trans});
  for (int64_t i = 0; i < got[0].Size(); ++i) REQUIRE(got[0].GetFlat(i) == 0.0f);
  for (int64_t i = 0; i < got[1].Size(); ++i) REQUIRE(got[1].GetFlat(i) == 0.0f);
}
