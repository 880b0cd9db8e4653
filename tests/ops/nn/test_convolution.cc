// Convolution and Deconvolution: forward against naive direct convolutions, gradients, shape
// inference, errors, and results independent of the thread count.
#include <array>
#include <cmath>

#include <tbb/global_control.h>

#include "conv_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

void CheckConvForward(const ConvCase& cc, const TShape& xs, uint64_t seed) {
  NDArray x = RandomArray(xs, seed), w = RandomArray(WeightShape(cc, xs[1]), seed + 1),
          b = RandomArray(TShape({cc.num_filter}), seed + 2);
  std::map<std::string, NDArray> in = {{"data", x}, {"weight", w}};
  if (!cc.no_bias) in["bias"] = b;
  NDArray y = RunForward("Convolution", cc.Params(), in);
  RequireClose(y, NaiveConv(x, w, cc.no_bias ? nullptr : &b, cc), 1e-4f, 1e-4f);
}

}  // namespace

TEST_CASE("Convolution forward matches a naive direct convolution", "[ops][convolution]") {
  SECTION("2-D with bias, batch 3") { CheckConvForward({{3, 3}}, TShape({3, 2, 6, 5}), 1); }
  SECTION("2-D batch 1 (parallel inside one image)") {
    CheckConvForward({{3, 3}, {1, 1}, {}, {1, 1}, 4}, TShape({1, 3, 7, 7}), 2);
  }
  SECTION("stride and asymmetric pad") {
    CheckConvForward({{3, 2}, {2, 3}, {}, {1, 2}, 3}, TShape({2, 2, 9, 8}), 3);
  }
  SECTION("dilation") { CheckConvForward({{3, 3}, {1, 2}, {2, 2}, {2, 1}, 2}, TShape({2, 2, 9, 9}), 4); }
  SECTION("grouped, num_group=2") {
    CheckConvForward({{3, 3}, {}, {}, {1, 1}, 4, 2}, TShape({2, 4, 5, 5}), 5);
  }
  SECTION("depthwise, num_group=C") {
    CheckConvForward({{3, 3}, {2, 2}, {}, {1, 1}, 6, 3, true}, TShape({2, 3, 7, 6}), 6);
  }
  SECTION("1x1 pointwise") { CheckConvForward({{1, 1}, {}, {}, {}, 5}, TShape({2, 3, 4, 4}), 7); }
  SECTION("1x1 with stride") { CheckConvForward({{1, 1}, {2, 2}, {}, {}, 2}, TShape({2, 3, 5, 5}), 8); }
  SECTION("1-D") { CheckConvForward({{3}, {2}, {2}, {1}, 3}, TShape({2, 2, 11}), 9); }
  SECTION("3-D") {
    CheckConvForward({{2, 3, 2}, {1, 2, 1}, {}, {1, 1, 0}, 2}, TShape({2, 2, 4, 5, 3}), 10);
  }
  SECTION("3-D dilated and grouped") {
    CheckConvForward({{2, 2, 2}, {}, {2, 1, 2}, {}, 4, 2, true}, TShape({1, 4, 4, 3, 5}), 11);
  }
  SECTION("caffenet conv1: 11x11 stride 4 on 3x35x35") {
    CheckConvForward({{11, 11}, {4, 4}, {}, {}, 4}, TShape({2, 3, 35, 35}), 12);
  }
  // Large outputs are computed in tiles of output rows (35 rows of 30 here: 35 + 35 + 10).
  SECTION("several row tiles, grouped, padded and dilated, batch 2") {
    CheckConvForward({{3, 3}, {}, {1, 2}, {0, 2}, 6, 2}, TShape({2, 64, 82, 30}), 13);
  }
  SECTION("several row tiles, 3-D") {
    CheckConvForward({{2, 3, 3}, {}, {}, {0, 1, 1}, 3}, TShape({1, 32, 3, 40, 30}), 14);
  }
}

TEST_CASE("Convolution accepts and ignores cudnn_tune, cudnn_off, workspace and layout", "[ops][convolution]") {
  ConvCase cc{{3, 3}, {}, {}, {1, 1}, 2};
  NDArray x = RandomArray(TShape({2, 2, 4, 4}), 20), w = RandomArray(WeightShape(cc, 2), 21),
          b = RandomArray(TShape({2}), 22);
  KwArgs kw = cc.Params();
  kw["cudnn_tune"] = "fastest";
  kw["cudnn_off"] = "True";
  kw["workspace"] = "256";
  kw["layout"] = "NCHW";
  NDArray y = RunForward("Convolution", kw, {{"data", x}, {"weight", w}, {"bias", b}});
  RequireClose(y, NaiveConv(x, w, &b, cc), 1e-4f, 1e-4f);
}

TEST_CASE("Convolution gradients", "[ops][convolution][grad]") {
  auto check = [](const ConvCase& cc, const TShape& xs, uint64_t seed) {
    std::map<std::string, NDArray> in = {{"data", RandomArray(xs, seed)},
                                         {"weight", RandomArray(WeightShape(cc, xs[1]), seed + 1)}};
    if (!cc.no_bias) in["bias"] = RandomArray(TShape({cc.num_filter}), seed + 2);
    CheckGradients("Convolution", cc.Params(), in);
  };
  SECTION("2-D stride pad, batch 2") { check({{3, 3}, {2, 1}, {}, {1, 1}, 2}, TShape({2, 2, 5, 4}), 30); }
  SECTION("2-D batch 1") { check({{2, 2}, {}, {}, {}, 2}, TShape({1, 2, 3, 4}), 31); }
  SECTION("grouped dilated") { check({{2, 2}, {}, {2, 1}, {1, 0}, 4, 2}, TShape({2, 4, 4, 3}), 32); }
  SECTION("depthwise") { check({{3, 3}, {}, {}, {1, 1}, 2, 2, true}, TShape({2, 2, 3, 3}), 33); }
  SECTION("pointwise") { check({{1, 1}, {}, {}, {}, 3}, TShape({2, 2, 2, 3}), 34); }
  SECTION("1-D") { check({{3}, {2}, {}, {1}, 2}, TShape({3, 2, 7}), 35); }
  SECTION("3-D") { check({{2, 2, 2}, {}, {}, {1, 0, 0}, 2}, TShape({1, 2, 2, 3, 3}), 36); }
  SECTION("batch larger than the weight-gradient chunk count") {
    check({{2, 2}, {}, {}, {}, 1}, TShape({10, 1, 3, 3}), 37);
  }
}

TEST_CASE("Convolution shape inference", "[ops][convolution][shape]") {
  Symbol c = Symbol::Create("Convolution", "conv1",
                            {{"kernel", "(3,3)"}, {"num_filter", "8"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(c.ListArguments() == std::vector<std::string>{"data", "conv1_weight", "conv1_bias"});
  auto r = InferShape(c, {{"data", TShape({4, 3, 9, 8})}});
  CHECK(r.arg_shapes == std::vector<TShape>{TShape({4, 3, 9, 8}), TShape({8, 3, 3, 3}), TShape({8})});
  CHECK(r.out_shapes[0] == TShape({4, 8, 5, 4}));

  // Grouped, no bias, dilated 1-D.
  Symbol g = Symbol::Create("Convolution", "g",
                            {{"kernel", "(3,)"}, {"num_filter", "6"}, {"num_group", "3"},
                             {"dilate", "(2,)"}, {"no_bias", "True"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(g.ListArguments() == std::vector<std::string>{"data", "g_weight"});
  auto rg = InferShape(g, {{"data", TShape({2, 9, 10})}});
  CHECK(rg.arg_shapes[1] == TShape({6, 3, 3}));
  CHECK(rg.out_shapes[0] == TShape({2, 6, 6}));

  // 3-D.
  Symbol c3 = Symbol::Create("Convolution", "c3", {{"kernel", "(3,3,3)"}, {"num_filter", "2"}},
                             {{"data", Symbol::Variable("data")}});
  CHECK(InferShape(c3, {{"data", TShape({1, 4, 5, 6, 7})}}).out_shapes[0] == TShape({1, 2, 3, 4, 5}));

  // Backward: the batch and the stride-1 spatial dims flow from the output to the data.
  Symbol c1 = Symbol::Create("Convolution", "c", {{"kernel", "(3,3)"}, {"num_filter", "4"},
                                                  {"pad", "(1,0)"}, {"stride", "(1,2)"}},
                             {{"data", Symbol::Variable("data")}});
  Symbol sum = Symbol::Create("elemwise_add", "add", {}, {{"lhs", c1}, {"rhs", Symbol::Variable("other")}});
  auto rb = InferShapePartial(sum, {{"data", TShape({-1, 3, -1, -1})}, {"other", TShape({5, 4, 6, 3})}});
  CHECK(rb.arg_shapes[0] == TShape({5, 3, 6, -1}));
  // The channels flow back from the weight, times the groups.
  auto rw = InferShapePartial(g, {{"data", TShape({2, -1, 10})}, {"g_weight", TShape({6, 3, 3})}});
  CHECK(rw.arg_shapes[0] == TShape({2, 9, 10}));
}

TEST_CASE("Convolution errors", "[ops][convolution][error]") {
  Symbol c = Symbol::Create("Convolution", "conv", {{"kernel", "(5,5)"}, {"num_filter", "2"}, {"pad", "(1,1)"}},
                            {{"data", Symbol::Variable("data")}});
  try {
    InferShape(c, {{"data", TShape({1, 1, 2, 8})}});
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK(m.find("kernel size exceeds input") != std::string::npos);
    CHECK(m.find("(1,1,2,8)") != std::string::npos);
    CHECK(m.find("padded input 4") != std::string::npos);
  }
  CHECK_THROWS_AS(InferShape(c, {{"data", TShape({1, 1, 8})}}), ShapeError);
  Symbol gr = Symbol::Create("Convolution", "g", {{"kernel", "(1,1)"}, {"num_filter", "4"}, {"num_group", "2"}},
                             {{"data", Symbol::Variable("data")}});
  CHECK_THROWS_WITH(InferShape(gr, {{"data", TShape({1, 3, 4, 4})}}),
                    Catch::Contains("must be divisible by num_group"));
  auto make = [](const KwArgs& kw) {
    return Symbol::Create("Convolution", "x", kw, {{"data", Symbol::Variable("data")}});
  };
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "NHWC"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "NCW"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"layout", "CHWN"}}), ParamError);
  CHECK_THROWS_WITH(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"stride", "(1,1,1)"}}),
                    Catch::Contains("Stride must have the same number of dimensions"));
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "0"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(0,3)"}, {"num_filter", "2"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(1,1,1,1)"}, {"num_filter", "2"}}), ParamError);
  CHECK_THROWS_AS(make({{"num_filter", "2"}}), ParamError);
}

// ---------------------------------------------------------------------------------------------
// Deconvolution

namespace {
struct DeconvCase : ConvCase {
  std::vector<int64_t> adj, target;
  KwArgs DParams() const {
    KwArgs kw = Params();
    if (!adj.empty()) kw["adj"] = Tup(adj);
    if (!target.empty()) kw["target_shape"] = Tup(target);
    return kw;
  }
};

// Scatter form: y[n, f, i*s - p + k*d] += x[n, c, i] * w[c, f', k] (+ bias), output cropped to
// `out` (padding on the low side, adj/crop on the high side).
NDArray NaiveDeconv(const NDArray& x, const NDArray& w, const NDArray* b, const DeconvCase& cc,
                    Dims3 p, const std::vector<int64_t>& out_spatial) {
  const TShape& xs = x.shape();
  const int64_t N = xs[0], C = xs[1], F = cc.num_filter, G = cc.num_group;
  Dims3 in = Align(Spatial(xs), 1), k = cc.K(), s = cc.S(), d = cc.D(), out = Align(out_spatial, 1);
  std::vector<int64_t> os = {N, F};
  os.insert(os.end(), out_spatial.begin(), out_spatial.end());
  std::vector<double> acc(static_cast<size_t>(N * F * out[0] * out[1] * out[2]), 0.0);
  const int64_t Cg = C / G, Fg = F / G;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t fl = 0; fl < Fg; ++fl)
        for (int64_t i0 = 0; i0 < in[0]; ++i0)
          for (int64_t i1 = 0; i1 < in[1]; ++i1)
            for (int64_t i2 = 0; i2 < in[2]; ++i2)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    int64_t o0 = i0 * s[0] - p[0] + k0 * d[0], o1 = i1 * s[1] - p[1] + k1 * d[1],
                            o2 = i2 * s[2] - p[2] + k2 * d[2];
                    if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 || o2 >= out[2])
                      continue;
                    int64_t f = (c / Cg) * Fg + fl;
                    double xv = x.GetFlat((((n * C + c) * in[0] + i0) * in[1] + i1) * in[2] + i2);
                    double wv = w.GetFlat((((c * Fg + fl) * k[0] + k0) * k[1] + k1) * k[2] + k2);
                    acc[static_cast<size_t>((((n * F + f) * out[0] + o0) * out[1] + o1) * out[2] + o2)] +=
                        xv * wv;
                  }
  NDArray y{TShape(os)};
  for (int64_t i = 0; i < y.Size(); ++i) {
    int64_t f = (i / (out[0] * out[1] * out[2])) % F;
    y.SetFlat(i, static_cast<float>(acc[static_cast<size_t>(i)] + (b ? b->GetFlat(f) : 0.0)));
  }
  return y;
}

TShape DeconvWeightShape(const DeconvCase& cc, int64_t C) {
  std::vector<int64_t> w = {C, cc.num_filter / cc.num_group};
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  return TShape(w);
}

std::vector<int64_t> DeconvOut(const DeconvCase& cc, const TShape& xs) {
  Dims3 in = Align(Spatial(xs), 1), k = cc.K(), s = cc.S(), d = cc.D(), p = cc.P();
  Dims3 a = cc.adj.empty() ? Dims3{0, 0, 0} : Align(cc.adj, 0);
  std::vector<int64_t> o;
  for (size_t i = 3 - cc.kernel.size(); i < 3; ++i)
    o.push_back(s[i] * (in[i] - 1) + d[i] * (k[i] - 1) + 1 - 2 * p[i] + a[i]);
  return o;
}

void CheckDeconvForward(const DeconvCase& cc, const TShape& xs, uint64_t seed) {
  NDArray x = RandomArray(xs, seed), w = RandomArray(DeconvWeightShape(cc, xs[1]), seed + 1),
          b = RandomArray(TShape({cc.num_filter}), seed + 2);
  std::map<std::string, NDArray> in = {{"data", x}, {"weight", w}};
  KwArgs kw = cc.DParams();
  kw["no_bias"] = cc.no_bias ? "True" : "False";
  if (!cc.no_bias) in["bias"] = b;
  NDArray y = RunForward("Deconvolution", kw, in);
  RequireClose(y, NaiveDeconv(x, w, cc.no_bias ? nullptr : &b, cc, cc.P(), DeconvOut(cc, xs)), 1e-4f,
               1e-4f);
}

DeconvCase DC(ConvCase c, std::vector<int64_t> adj = {}, std::vector<int64_t> target = {}) {
  DeconvCase d;
  static_cast<ConvCase&>(d) = c;
  d.adj = std::move(adj);
  d.target = std::move(target);
  return d;
}
}  // namespace

TEST_CASE("Deconvolution forward matches a naive scatter", "[ops][deconvolution]") {
  SECTION("2-D stride 2 pad 1 with bias") {
    CheckDeconvForward(DC({{3, 3}, {2, 2}, {}, {1, 1}, 3}), TShape({2, 2, 4, 3}), 40);
  }
  SECTION("2-D batch 1, no bias, adj") {
    CheckDeconvForward(DC({{4, 4}, {2, 3}, {}, {1, 0}, 2, 1, true}, {1, 2}), TShape({1, 3, 3, 3}), 41);
  }
  SECTION("grouped and dilated") {
    CheckDeconvForward(DC({{3, 2}, {1, 2}, {2, 1}, {}, 4, 2}), TShape({2, 4, 3, 3}), 42);
  }
  SECTION("depthwise") { CheckDeconvForward(DC({{3, 3}, {2, 2}, {}, {}, 3, 3, true}), TShape({2, 3, 3, 2}), 43); }
  SECTION("1x1") { CheckDeconvForward(DC({{1, 1}, {}, {}, {}, 3}), TShape({2, 2, 3, 3}), 44); }
  SECTION("1-D") { CheckDeconvForward(DC({{4}, {3}, {}, {1}, 2}, {2}), TShape({2, 3, 5}), 45); }
}

TEST_CASE("Deconvolution target_shape derives pad and adj", "[ops][deconvolution]") {
  // kernel 4 stride 2 on 5: full size 2*4+4 = 12; target 9 -> 3 to remove: adj 1, pad 2.
  DeconvCase cc = DC({{4, 4}, {2, 2}, {}, {}, 2, 1, true}, {}, {9, 10});
  NDArray x = RandomArray(TShape({1, 2, 5, 5}), 46), w = RandomArray(DeconvWeightShape(cc, 2), 47);
  NDArray y = RunForward("Deconvolution", cc.DParams(), {{"data", x}, {"weight", w}});
  CHECK(y.shape() == TShape({1, 2, 9, 10}));
  RequireClose(y, NaiveDeconv(x, w, nullptr, cc, {0, 2, 1}, {9, 10}), 1e-4f, 1e-4f);
  // `pad` is ignored when target_shape is set.
  cc.pad = {3, 3};
  RequireClose(RunForward("Deconvolution", cc.DParams(), {{"data", x}, {"weight", w}}), y);
}

TEST_CASE("Deconvolution gradients", "[ops][deconvolution][grad]") {
  auto check = [](const DeconvCase& cc, const TShape& xs, uint64_t seed) {
    std::map<std::string, NDArray> in = {{"data", RandomArray(xs, seed)},
                                         {"weight", RandomArray(DeconvWeightShape(cc, xs[1]), seed + 1)}};
    KwArgs kw = cc.DParams();
    if (!cc.no_bias) in["bias"] = RandomArray(TShape({cc.num_filter}), seed + 2);
    CheckGradients("Deconvolution", kw, in);
  };
  SECTION("2-D stride pad bias") { check(DC({{3, 3}, {2, 2}, {}, {1, 1}, 2}, {1, 0}), TShape({2, 2, 3, 2}), 50); }
  SECTION("grouped dilated batch 1") { check(DC({{2, 2}, {}, {2, 1}, {}, 4, 2, true}), TShape({1, 2, 2, 3}), 51); }
  SECTION("1-D") { check(DC({{3}, {2}, {}, {}, 2, 1, true}), TShape({2, 2, 3}), 52); }
  SECTION("1x1") { check(DC({{1, 1}, {}, {}, {}, 2}), TShape({2, 3, 2, 2}), 53); }
}

TEST_CASE("Deconvolution shape inference and errors", "[ops][deconvolution][shape]") {
  Symbol d = Symbol::Create("Deconvolution", "up",
                            {{"kernel", "(4,4)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"num_filter", "6"},
                             {"num_group", "2"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(d.ListArguments() == std::vector<std::string>{"data", "up_weight"});  // no_bias defaults to True
  auto r = InferShape(d, {{"data", TShape({2, 4, 5, 7})}});
  CHECK(r.arg_shapes[1] == TShape({4, 3, 4, 4}));
  CHECK(r.out_shapes[0] == TShape({2, 6, 10, 14}));

  Symbol b = Symbol::Create("Deconvolution", "b", {{"kernel", "(3,)"}, {"num_filter", "2"}, {"no_bias", "False"},
                                                   {"adj", "(1,)"}, {"stride", "(2,)"}},
                            {{"data", Symbol::Variable("data")}});
  auto rb = InferShape(b, {{"data", TShape({1, 3, 4})}});
  CHECK(rb.arg_shapes == std::vector<TShape>{TShape({1, 3, 4}), TShape({3, 2, 3}), TShape({2})});
  CHECK(rb.out_shapes[0] == TShape({1, 2, 10}));

  // fcn32s's upscore: kernel 64, stride 32, adj 31.
  Symbol up = Symbol::Create("Deconvolution", "upscore",
                             {{"kernel", "(64, 64)"}, {"stride", "(32, 32)"}, {"adj", "(31, 31)"},
                              {"num_filter", "21"}, {"workspace", "1024"}},
                             {{"data", Symbol::Variable("data")}});
  auto ru = InferShape(up, {{"data", TShape({1, 21, 7, 9})}});
  CHECK(ru.arg_shapes[1] == TShape({21, 21, 64, 64}));
  CHECK(ru.out_shapes[0] == TShape({1, 21, 287, 351}));

  auto make = [](const KwArgs& kw) {
    return Symbol::Create("Deconvolution", "x", kw, {{"data", Symbol::Variable("data")}});
  };
  CHECK_THROWS_WITH(InferShape(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"adj", "(1,1)"}}),
                               {{"data", TShape({1, 1, 3, 3})}}),
                    Catch::Contains("must be smaller than the stride"));
  CHECK_THROWS_WITH(InferShape(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"target_shape", "(20,20)"}}),
                               {{"data", TShape({1, 1, 3, 3})}}),
                    Catch::Contains("too big target shape"));
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "2"}, {"adj", "(1,)"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(3,3)"}, {"num_filter", "200000"}}), ParamError);
}

TEST_CASE("Convolution family results do not depend on the thread count", "[ops][convolution][deconvolution]") {
  auto run = [](const std::string& op, const KwArgs& kw, const std::map<std::string, NDArray>& in) {
    auto exec = BindSingleOp(op, kw, in);
    exec->Forward(true);
    exec->Backward({RandomArray(exec->outputs()[0].shape(), 99)});
    std::vector<float> all = exec->outputs()[0].ToVector();
    for (auto& g : exec->grad_arrays()) {
      auto v = g.ToVector();
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  ConvCase cc{{3, 3}, {1, 1}, {}, {1, 1}, 16, 2};
  std::map<std::string, NDArray> in = {{"data", RandomArray(TShape({11, 8, 12, 12}), 60)},
                                       {"weight", RandomArray(WeightShape(cc, 8), 61)},
                                       {"bias", RandomArray(TShape({16}), 62)}};
  std::map<std::string, NDArray> one = {{"data", RandomArray(TShape({1, 32, 30, 30}), 63)},
                                        {"weight", RandomArray(TShape({64, 32, 3, 3}), 64)}};
  KwArgs one_kw = {{"kernel", "(3,3)"}, {"num_filter", "64"}, {"no_bias", "True"}};
  KwArgs de_kw = {{"kernel", "(4,4)"}, {"stride", "(2,2)"}, {"num_filter", "6"}};
  std::map<std::string, NDArray> de = {{"data", RandomArray(TShape({5, 8, 9, 9}), 65)},
                                       {"weight", RandomArray(TShape({8, 6, 4, 4}), 66)}};
  std::vector<float> a1, b1, c1;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    a1 = run("Convolution", cc.Params(), in);
    b1 = run("Convolution", one_kw, one);
    c1 = run("Deconvolution", de_kw, de);
  }
  CHECK(run("Convolution", cc.Params(), in) == a1);
  CHECK(run("Convolution", one_kw, one) == b1);
  CHECK(run("Deconvolution", de_kw, de) == c1);
}
