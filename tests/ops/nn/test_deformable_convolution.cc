// _contrib_DeformableConvolution: zero offsets equal Convolution, a naive reference with
// fractional offsets (groups, deformable groups, stride, dilation, padding, taps outside),
// finite-difference gradients for data, offset, weight and bias, torchvision's deform_conv2d
// (forward and every gradient; scripts/gen_detection_goldens.py), and shape errors.
#include <cmath>
#include <string>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/npy.h>

using namespace symbind;
using namespace symbind::test;

namespace {
// Bilinear value of plane (n, c) at (y, x): zero outside [0, H) x [0, W), the last row and
// column clamp (tent weights of the clamped point).
double Sample(const NDArray& x, int64_t n, int64_t c, double y, double xx) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  if (!(y >= 0 && xx >= 0 && y < H && xx < W)) return 0.0;
  return TentInterpolate(x, n, c, std::min(y, double(H - 1)), std::min(xx, double(W - 1)));
}

// DCNv2's value at (y, x): points in (-1, H) x (-1, W) blend their four neighbours, those
// outside the image reading zero.
double SampleV2(const NDArray& x, int64_t n, int64_t c, double y, double xx) {
  const int64_t H = x.shape()[2], W = x.shape()[3];
  if (!(y > -1 && xx > -1 && y < H && xx < W)) return 0.0;
  const double y0 = std::floor(y), x0 = std::floor(xx);
  double v = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      const int64_t yy = static_cast<int64_t>(y0) + dy, xc = static_cast<int64_t>(x0) + dx;
      if (yy < 0 || yy >= H || xc < 0 || xc >= W) continue;
      const double wy = dy ? y - y0 : 1 - (y - y0), wx = dx ? xx - x0 : 1 - (xx - x0);
      v += wy * wx * x.GetFlat(((n * x.shape()[1] + c) * H + yy) * W + xc);
    }
  return v;
}

struct Conf {
  int64_t k = 3, stride = 1, pad = 1, dilate = 1, group = 1, dgroup = 1, filters = 4;
  KwArgs Params() const {
    const std::string kk = "(" + std::to_string(k) + "," + std::to_string(k) + ")";
    auto pair = [](int64_t v) { return "(" + std::to_string(v) + "," + std::to_string(v) + ")"; };
    return {{"kernel", kk}, {"stride", pair(stride)}, {"pad", pair(pad)}, {"dilate", pair(dilate)},
            {"num_filter", std::to_string(filters)}, {"num_group", std::to_string(group)},
            {"num_deformable_group", std::to_string(dgroup)}};
  }
};

// With `mask`: DCNv2 (each tap times its mask, DCNv2's border rule).
NDArray NaiveDeformConv(const NDArray& x, const NDArray& off, const NDArray& w, const NDArray& b, const Conf& c,
                        const NDArray* mask = nullptr) {
  const TShape& s = x.shape();
  const int64_t N = s[0], C = s[1], OH = off.shape()[2], OW = off.shape()[3], F = c.filters;
  const int64_t Cg = C / c.group, Fg = F / c.group, Cd = C / c.dgroup;
  NDArray y(TShape({N, F, OH, OW}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double v = b.GetFlat(f);
          for (int64_t cc = 0; cc < Cg; ++cc) {
            const int64_t ch = (f / Fg) * Cg + cc, dg = ch / Cd;
            for (int64_t i = 0; i < c.k; ++i)
              for (int64_t j = 0; j < c.k; ++j) {
                const int64_t oc = dg * 2 * c.k * c.k + 2 * (i * c.k + j);
                const double dy = off.GetFlat(((n * off.shape()[1] + oc) * OH + oh) * OW + ow);
                const double dx = off.GetFlat(((n * off.shape()[1] + oc + 1) * OH + oh) * OW + ow);
                const double py = oh * c.stride - c.pad + i * c.dilate + dy;
                const double px = ow * c.stride - c.pad + j * c.dilate + dx;
                const int64_t mc = dg * c.k * c.k + i * c.k + j;
                const double m = mask ? mask->GetFlat(((n * mask->shape()[1] + mc) * OH + oh) * OW + ow) : 1.0;
                v += w.GetFlat(((f * Cg + cc) * c.k + i) * c.k + j) * m *
                     (mask ? SampleV2(x, n, ch, py, px) : Sample(x, n, ch, py, px));
              }
          }
          y.SetFlat(((n * F + f) * OH + oh) * OW + ow, float(v));
        }
  return y;
}

// Offsets whose fractional part stays in [0.2, 0.8] (finite differences never cross a pixel).
NDArray SafeOffsets(const TShape& s, uint64_t seed, float span) {
  NDArray o = RandomArray(s, seed, -span, span);
  NDArray u = RandomArray(s, seed + 1, 0.0f, 1.0f);
  for (int64_t i = 0; i < o.Size(); ++i) o.SetFlat(i, std::floor(o.GetFlat(i)) + 0.2f + 0.6f * u.GetFlat(i));
  return o;
}
}  // namespace

TEST_CASE("DeformableConvolution: zero offsets equal Convolution", "[ops][DeformableConvolution]") {
  Conf c;
  c.stride = 2; c.group = 2; c.dgroup = 2;
  NDArray x = RandomArray(TShape({2, 4, 7, 8}), 1);
  NDArray w = RandomArray(TShape({4, 2, 3, 3}), 2), b = RandomArray(TShape({4}), 3);
  NDArray off(TShape({2, 2 * 9 * 2, 4, 4}));
  off.Fill(0.0f);
  NDArray y = RunForward("_contrib_DeformableConvolution", c.Params(),
                         {{"data", x}, {"offset", off}, {"weight", w}, {"bias", b}});
  KwArgs conv = c.Params();
  conv.erase("num_deformable_group");
  NDArray ref = RunForward("Convolution", conv, {{"data", x}, {"weight", w}, {"bias", b}});
  RequireClose(y, ref, 1e-5f, 1e-4f, "vs Convolution");
}

TEST_CASE("DeformableConvolution: naive reference with fractional offsets", "[ops][DeformableConvolution]") {
  for (int variant = 0; variant < 3; ++variant) {
    Conf c;
    if (variant == 1) { c.group = 2; c.dgroup = 2; c.stride = 2; }
    if (variant == 2) { c.k = 2; c.dilate = 2; c.pad = 0; c.dgroup = 4; c.filters = 2; }
    CAPTURE(variant);
    NDArray x = RandomArray(TShape({2, 4, 6, 7}), 10 + variant);
    const int64_t OH = (6 + 2 * c.pad - (c.dilate * (c.k - 1) + 1)) / c.stride + 1;
    const int64_t OW = (7 + 2 * c.pad - (c.dilate * (c.k - 1) + 1)) / c.stride + 1;
    NDArray off = RandomArray(TShape({2, 2 * c.k * c.k * c.dgroup, OH, OW}), 20 + variant, -2.5f, 2.5f);
    NDArray w = RandomArray(TShape({c.filters, 4 / c.group, c.k, c.k}), 30 + variant);
    NDArray b = RandomArray(TShape({c.filters}), 40 + variant);
    NDArray y = RunForward("_contrib_DeformableConvolution", c.Params(),
                           {{"data", x}, {"offset", off}, {"weight", w}, {"bias", b}});
    RequireClose(y, NaiveDeformConv(x, off, w, b, c), 1e-5f, 1e-4f, "naive");
  }
}

TEST_CASE("DeformableConvolution: gradients by finite differences", "[ops][DeformableConvolution]") {
  Conf c;
  c.filters = 2; c.group = 2; c.dgroup = 2;
  NDArray x = RandomArray(TShape({1, 2, 4, 5}), 50);
  NDArray off = SafeOffsets(TShape({1, 2 * 9 * 2, 4, 5}), 51, 1.5f);
  NDArray w = RandomArray(TShape({2, 1, 3, 3}), 52), b = RandomArray(TShape({2}), 53);
  CheckGradients("_contrib_DeformableConvolution", c.Params(),
                 {{"data", x}, {"offset", off}, {"weight", w}, {"bias", b}});
  KwArgs nb = c.Params();
  nb["no_bias"] = "True";
  CheckGradients("_contrib_DeformableConvolution", nb, {{"data", x}, {"offset", off}, {"weight", w}});
}

TEST_CASE("DeformableConvolution: agrees with torchvision deform_conv2d, forward and gradients",
          "[ops][DeformableConvolution][goldens]") {
  const std::string pre = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/deformconv_";
  Conf c;
  c.stride = 2; c.group = 2; c.dgroup = 2;
  auto exec = BindSingleOp("_contrib_DeformableConvolution", c.Params(),
                           {{"data", LoadNpy(pre + "data.npy")}, {"offset", LoadNpy(pre + "offset.npy")},
                            {"weight", LoadNpy(pre + "weight.npy")}, {"bias", LoadNpy(pre + "bias.npy")}});
  exec->Forward(true);
  RequireClose(exec->outputs()[0], LoadNpy(pre + "output.npy"), 1e-5f, 1e-4f, "output");
  exec->Backward({LoadNpy(pre + "head.npy")});
  const char* names[] = {"data", "offset", "weight", "bias"};  // ListArguments order
  for (int i = 0; i < 4; ++i) {
    CAPTURE(names[i]);
    RequireClose(exec->grad_arrays()[i], LoadNpy(pre + names[i] + "_grad.npy"), 1e-4f, 1e-4f, "gradient");
  }
}

TEST_CASE("DeformableConvolution: shapes and errors", "[ops][DeformableConvolution]") {
  Conf c;
  auto sym = SingleOpSymbol("_contrib_DeformableConvolution", c.Params());
  // data, offset, weight, bias: offset, weight and bias follow from the data.
  auto r = InferShape(sym, {{"op_data", TShape({2, 4, 6, 7})}});
  REQUIRE(r.arg_shapes[1] == TShape({2, 18, 6, 7}));
  REQUIRE(r.arg_shapes[2] == TShape({4, 4, 3, 3}));
  REQUIRE(r.out_shapes[0] == TShape({2, 4, 6, 7}));
  // Backwards, as MXNet: the batch and (stride 1) the spatial size of the data from the output.
  Symbol sum = Symbol::Create("elemwise_add", "add", {},
                              {{"lhs", sym}, {"rhs", Symbol::Variable("other")}});
  auto back = InferShape(sum, {{"op_data", TShape({-1, 4, -1, 7})}, {"other", TShape({2, 4, 6, 7})}});
  REQUIRE(back.arg_shapes[0] == TShape({2, 4, 6, 7}));
  REQUIRE(back.arg_shapes[1] == TShape({2, 18, 6, 7}));
  REQUIRE_THROWS_WITH(SingleOpSymbol("_contrib_DeformableConvolution", {{"kernel", "(3,3,3)"}, {"num_filter", "2"}}),
                      Catch::Contains("only 2-D kernels"));
  c.dgroup = 3;
  REQUIRE_THROWS_WITH(InferShape(SingleOpSymbol("_contrib_DeformableConvolution", c.Params()),
                                 {{"op_data", TShape({2, 4, 6, 7})}}),
                      Catch::Contains("num_deformable_group (3)"));
  c.dgroup = 1;
  REQUIRE_THROWS(InferShape(SingleOpSymbol("_contrib_DeformableConvolution", c.Params()),
                            {{"op_data", TShape({2, 4, 6, 7})}, {"op_offset", TShape({2, 18, 5, 7})}}));
}


TEST_CASE("ModulatedDeformableConvolution: a naive DCNv2 with masks and taps across the border",
          "[ops][ModulatedDeformableConvolution]") {
  Conf c;
  c.stride = 2; c.group = 2; c.dgroup = 2; c.dilate = 2; c.pad = 2;
  NDArray x = RandomArray(TShape({2, 4, 7, 6}), 61);
  NDArray w = RandomArray(TShape({4, 2, 3, 3}), 62), b = RandomArray(TShape({4}), 63);
  NDArray off = RandomArray(TShape({2, 2 * 9 * 2, 4, 3}), 64, -2.5f, 2.5f);
  NDArray mask = RandomArray(TShape({2, 9 * 2, 4, 3}), 65, 0.0f, 1.0f);
  const std::map<std::string, NDArray> in{{"data", x}, {"offset", off}, {"mask", mask}, {"weight", w}, {"bias", b}};
  RequireClose(RunForward("_contrib_ModulatedDeformableConvolution", c.Params(), in),
               NaiveDeformConv(x, off, w, b, c, &mask), 1e-4f, 1e-4f);
  // Stride 1, a mask of ones.
  c.pad = 1; c.dilate = 1; c.stride = 1;
  NDArray off1(TShape({2, 2 * 9 * 2, 7, 6})), ones1(TShape({2, 9 * 2, 7, 6}));
  off1.Fill(0.25f);
  ones1.Fill(1.0f);
  RequireClose(RunForward("_contrib_ModulatedDeformableConvolution", c.Params(),
                          {{"data", x}, {"offset", off1}, {"mask", ones1}, {"weight", w}, {"bias", b}}),
               NaiveDeformConv(x, off1, w, b, c, &ones1), 1e-4f, 1e-4f);
  // Gradients of every input by finite differences (taps off pixel boundaries).
  c = Conf();
  c.filters = 2;
  NDArray xs = RandomArray(TShape({1, 2, 4, 5}), 66), ws = RandomArray(TShape({2, 2, 3, 3}), 67),
          bs = RandomArray(TShape({2}), 68);
  NDArray offs = SafeOffsets(TShape({1, 18, 4, 5}), 69, 1.8f), masks = RandomArray(TShape({1, 9, 4, 5}), 70, 0.2f, 1.0f);
  CheckGradients("_contrib_ModulatedDeformableConvolution", c.Params(),
                 {{"data", xs}, {"offset", offs}, {"mask", masks}, {"weight", ws}, {"bias", bs}});
}

TEST_CASE("ModulatedDeformableConvolution: agrees with torchvision deform_conv2d with a mask, forward and gradients",
          "[ops][ModulatedDeformableConvolution][goldens]") {
  const std::string pre = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/detection/mdeformconv_";
  Conf c;
  c.group = 2; c.dgroup = 2;
  auto exec = BindSingleOp("_contrib_ModulatedDeformableConvolution", c.Params(),
                           {{"data", LoadNpy(pre + "data.npy")}, {"offset", LoadNpy(pre + "offset.npy")},
                            {"mask", LoadNpy(pre + "mask.npy")}, {"weight", LoadNpy(pre + "weight.npy")},
                            {"bias", LoadNpy(pre + "bias.npy")}});
  exec->Forward(true);
  RequireClose(exec->outputs()[0], LoadNpy(pre + "output.npy"), 1e-5f, 1e-4f, "output");
  exec->Backward({LoadNpy(pre + "head.npy")});
  const char* names[] = {"data", "offset", "mask", "weight", "bias"};  // ListArguments order
  for (int i = 0; i < 5; ++i) {
    CAPTURE(names[i]);
    RequireClose(exec->grad_arrays()[i], LoadNpy(pre + names[i] + "_grad.npy"), 1e-4f, 1e-4f, "gradient");
  }
}

TEST_CASE("ModulatedDeformableConvolution: shapes and errors", "[ops][ModulatedDeformableConvolution]") {
  Conf c;
  c.dgroup = 2;
  KwArgs p = c.Params();
  p["im2col_step"] = "32";
  auto sym = SingleOpSymbol("_contrib_ModulatedDeformableConvolution", p);
  CHECK(sym.ListArguments() == std::vector<std::string>{"op_data", "op_offset", "op_mask", "op_weight", "op_bias"});
  auto r = InferShape(sym, {{"op_data", TShape({2, 4, 6, 7})}});
  CHECK(r.arg_shapes[1] == TShape({2, 36, 6, 7}));
  CHECK(r.arg_shapes[2] == TShape({2, 18, 6, 7}));
  CHECK(r.arg_shapes[3] == TShape({4, 4, 3, 3}));
  CHECK_THROWS_WITH(InferShape(sym, {{"op_data", TShape({2, 4, 6, 7})}, {"op_mask", TShape({2, 9, 6, 7})}}),
                    Catch::Contains("mask"));
  CHECK_THROWS_AS(SingleOpSymbol("_contrib_ModulatedDeformableConvolution", {{"kernel", "(3,3)"}, {"num_filter", "2"},
                                                                              {"im2col_step", "0"}}),
                  ParamError);
}
