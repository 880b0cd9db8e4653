// MXNet's oneDNN subgraph operators (_sg_mkldnn_conv, _sg_mkldnn_fully_connected), from nested
// graphs written as MXNet 1.9.1's symbol files hold them: float against the unfused float ops,
// quantized against references of docs/quantization.md's formulas (direct loops, int64 sums).
#include <cmath>
#include <functional>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <symbind/core/error.h>
#include <symbind/io/symbol_json.h>
#include <symbind/ops/kernels/conv_int8.h>
#include <symbind/predict/predictor.h>

#include "../quantization/quant_test_util.h"

using namespace symbind;
using namespace symbind::test;
using json = nlohmann::json;

namespace {

// A nested graph in MXNet's JSON form: variables and operators in order, each operator reading
// the previous operator (or, for `reads`, the named earlier nodes).
struct Inner {
  json nodes = json::array();
  int Var(const std::string& name) {
    nodes.push_back({{"op", "null"}, {"name", name}, {"inputs", json::array()}});
    return int(nodes.size()) - 1;
  }
  int Op(const std::string& op, const std::string& name, const json& attrs, const std::vector<int>& reads) {
    json inputs = json::array();
    for (int r : reads) inputs.push_back({r, 0, 0});
    nodes.push_back({{"op", op}, {"name", name}, {"attrs", attrs}, {"inputs", inputs}});
    return int(nodes.size()) - 1;
  }
  std::string Text() const {
    json g = {{"nodes", nodes}, {"arg_nodes", json::array()}, {"heads", json::array({json::array({nodes.size() - 1, 0, 0})})}};
    return json::array({g}).dump();
  }
};

constexpr int kC = 4, kF = 6, kH = 7, kW = 7;

// Convolution(3x3, pad 1, bias) -> BatchNorm -> relu [-> + sum -> relu], as the oneDNN conv
// property nests it.
std::string ConvGraph(bool with_sum, bool with_act = true, bool with_postsum_act = true) {
  Inner g;
  const int data = g.Var("data0"), w = g.Var("conv0_weight0"), b = g.Var("conv0_bias0");
  const int conv = g.Op("Convolution", "conv0", {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", std::to_string(kF)}},
                        {data, w, b});
  const int gamma = g.Var("bn0_gamma0"), beta = g.Var("bn0_beta0"), mean = g.Var("bn0_moving_mean0"),
            var = g.Var("bn0_moving_var0");
  const int bn = g.Op("BatchNorm", "bn0", {{"eps", "0.001"}, {"fix_gamma", "False"}}, {conv, gamma, beta, mean, var});
  int last = with_act ? g.Op("Activation", "relu0", {{"act_type", "relu"}}, {bn}) : bn;
  if (with_sum) {
    const int sum = g.Var("sum0");
    last = g.Op("elemwise_add", "add0", json::object(), {last, sum});
    if (with_postsum_act) g.Op("Activation", "relu1", {{"act_type", "relu"}}, {last});
  }
  return g.Text();
}

struct ConvArrays {
  NDArray data, weight, bias, gamma, beta, mean, var, sum;
};
ConvArrays MakeConvArrays() {
  ConvArrays a;
  a.data = RandomArray(TShape({2, kC, kH, kW}), 1);
  a.weight = RandomArray(TShape({kF, kC, 3, 3}), 2, -0.5f, 0.5f);
  a.bias = RandomArray(TShape({kF}), 3, -0.2f, 0.2f);
  a.gamma = RandomArray(TShape({kF}), 4, 0.5f, 1.5f);
  a.beta = RandomArray(TShape({kF}), 5, -0.3f, 0.3f);
  a.mean = RandomArray(TShape({kF}), 6, -0.2f, 0.2f);
  a.var = RandomArray(TShape({kF}), 7, 0.5f, 1.5f);
  a.sum = RandomArray(TShape({2, kF, kH, kW}), 8);
  return a;
}

// BatchNorm folded into the weight and bias, as the subgraph op documents it.
void Fold(const ConvArrays& a, std::vector<float>* w, std::vector<float>* b) {
  const int64_t per = kC * 9;
  w->assign(a.weight.fdata(), a.weight.fdata() + a.weight.Size());
  b->assign(kF, 0.f);
  for (int c = 0; c < kF; ++c) {
    const float alpha = a.gamma.fdata()[c] / std::sqrt(a.var.fdata()[c] + 0.001f);
    for (int64_t i = 0; i < per; ++i) (*w)[size_t(c * per + i)] *= alpha;
    (*b)[size_t(c)] = a.beta.fdata()[c] + alpha * (a.bias.fdata()[c] - a.mean.fdata()[c]);
  }
}

// Direct 3x3 / pad 1 convolution of int levels into int64 sums.
template <typename X>
std::vector<int64_t> DirectConvSums(const X* x, const std::vector<int8_t>& w8) {
  std::vector<int64_t> out(size_t(2 * kF * kH * kW), 0);
  for (int n = 0; n < 2; ++n)
    for (int f = 0; f < kF; ++f)
      for (int y = 0; y < kH; ++y)
        for (int xx = 0; xx < kW; ++xx) {
          int64_t s = 0;
          for (int c = 0; c < kC; ++c)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                const int iy = y + ky - 1, ix = xx + kx - 1;
                if (iy < 0 || iy >= kH || ix < 0 || ix >= kW) continue;
                s += int64_t(w8[size_t(((f * kC + c) * 3 + ky) * 3 + kx)]) * x[((n * kC + c) * kH + iy) * kW + ix];
              }
          out[size_t(((n * kF + f) * kH + y) * kW + xx)] = s;
        }
  return out;
}

}  // namespace

TEST_CASE("_sg_mkldnn_conv quantized with int8_even_weights: even weight levels where the GEMM prefers them, "
          "exact sums for the weights used", "[ops][subgraph][quantize]") {
  // A 1x1 layer of 24 -> 20 channels (a GEMM on every CPU with AVX2), int8 data, calibrated relu.
  constexpr int C = 24, F = 20, H = 6, W = 5;
  Inner inner;
  const int data = inner.Var("data0"), weight = inner.Var("conv0_weight0"), bias = inner.Var("conv0_bias0");
  const int conv = inner.Op("Convolution", "conv0", {{"kernel", "(1,1)"}, {"num_filter", std::to_string(F)}},
                            {data, weight, bias});
  inner.Op("Activation", "relu0", {{"act_type", "relu"}}, {conv});
  const KwArgs params = {{"with_act", "true"}, {"quantized", "true"}, {"min_calib_range", "0"},
                         {"max_calib_range", "5"}, {"subgraphs", inner.Text()}};
  const NDArray w = RandomArray(TShape({F, C, 1, 1}), 21, -0.5f, 0.5f), b = RandomArray(TShape({F}), 22, -0.2f, 0.2f);
  const NDArray q = RandomLevels(TShape({1, C, H, W}), DType::kInt8, -128, 127, 23);
  const std::map<std::string, NDArray> in = {{"data", q},      {"weight", w},   {"bias", b},
                                             {"data_min", Range(-1)}, {"data_max", Range(1)}};
  const float data_scale = 127.5f, out_scale = 255.5f / 5;
  const conv::ConvGeom g = conv::ConvGeom::Planar(H, W, 1, 1, 0);
  for (bool asked : {false, true}) {
    // Even levels: 2 * round(w * s / 2) with s = 126 / max|w_c|, only where the kernels prefer them.
    const bool even = asked && quant::ConvInt8EvenWeights(C, F, 1, g);
    INFO("int8_even_weights " << asked << ", even levels " << even);
    const auto outs = RunAll("_sg_mkldnn_conv", params, in, asked);
    REQUIRE(outs[0].dtype() == DType::kUint8);
    int64_t wrong = 0, nonzero = 0;
    for (int f = 0; f < F; ++f) {
      float r = 0;
      for (int c = 0; c < C; ++c) r = std::max(r, std::fabs(w.fdata()[f * C + c]));
      float s = 127.5f / r;
      if (even) s *= 126.0f / 127.5f;
      std::vector<int64_t> w8(C);
      for (int c = 0; c < C; ++c) {
        const float v = w.fdata()[f * C + c];
        w8[size_t(c)] = even ? 2 * int64_t(RoundClamp(v * (s / 2), -64, 63)) : int64_t(RoundClamp(v * s, -128, 127));
      }
      const int64_t b32 = int64_t(std::nearbyint(b.fdata()[f] * data_scale * s));
      const float requant = out_scale / data_scale / s;
      for (int p = 0; p < H * W; ++p) {
        int64_t sum = b32;
        for (int c = 0; c < C; ++c) sum += w8[size_t(c)] * q.data<int8_t>()[c * H * W + p];
        const int want = int(RoundClamp(std::max(requant * float(sum), 0.0f), 0, 255));
        const int got = outs[0].data<uint8_t>()[f * H * W + p];
        wrong += got != want;
        nonzero += got != 0;
      }
    }
    CHECK(wrong == 0);
    CHECK(nonzero > F * H * W / 4);

    // PredictorOptions::int8_even_weights reaches the node: the same levels through a Predictor.
    json nodes = json::array();
    for (const char* v : {"data", "conv0_weight", "conv0_bias", "data_min", "data_max"})
      nodes.push_back({{"op", "null"}, {"name", v}, {"inputs", json::array()}});
    nodes[0]["attrs"] = {{"__dtype__", "5"}};  // int8 levels in, as MXNet's files type an int8 input
    json attrs = json::object();
    for (const auto& [k, v] : params)
      if (k != "subgraphs") attrs[k] = v;
    nodes.push_back({{"op", "_sg_mkldnn_conv"}, {"name", "conv0_quantized"}, {"attrs", attrs},
                     {"subgraphs", json::parse(inner.Text())},
                     {"inputs", {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {4, 0, 0}}}});
    const json file = {{"nodes", nodes}, {"arg_nodes", {0, 1, 2, 3, 4}}, {"heads", {{5, 0, 0}}}};
    PredictorOptions options;
    options.int8_even_weights = asked;
    Predictor predictor(LoadSymbolJSON(file.dump()),
                        {{"conv0_weight", w}, {"conv0_bias", b}, {"data_min", Range(-1)}, {"data_max", Range(1)}}, {},
                        {{"data", q.shape()}}, options);
    predictor.SetInput("data", q);
    predictor.Forward();
    const NDArray& through = predictor.Output(0);
    REQUIRE(through.dtype() == DType::kUint8);
    CHECK(std::equal(through.data<uint8_t>(), through.data<uint8_t>() + through.Size(), outs[0].data<uint8_t>()));
  }
}

TEST_CASE("_sg_mkldnn_conv float: Convolution + BatchNorm + relu + sum + relu equal the unfused ops", "[ops][subgraph]") {
  const ConvArrays a = MakeConvArrays();
  for (bool with_sum : {false, true}) {
    INFO("with_sum " << with_sum);
    KwArgs params = {{"with_bn", "true"}, {"with_act", "true"}, {"subgraphs", ConvGraph(with_sum)}};
    std::map<std::string, NDArray> in = {{"data", a.data}, {"weight", a.weight}, {"bias", a.bias}, {"gamma", a.gamma},
                                         {"beta", a.beta}, {"mean", a.mean}, {"var", a.var}};
    if (with_sum) {
      params["with_sum"] = "true";
      params["with_postsum_act"] = "true";
      in["sum"] = a.sum;
    }
    const NDArray got = RunForward("_sg_mkldnn_conv", params, in);
    NDArray want = RunForward("Convolution", {{"kernel", "(3,3)"}, {"pad", "(1,1)"}, {"num_filter", std::to_string(kF)}},
                              {{"data", a.data}, {"weight", a.weight}, {"bias", a.bias}});
    want = RunForward("BatchNorm", {{"eps", "0.001"}, {"fix_gamma", "False"}},
                      {{"data", want}, {"gamma", a.gamma}, {"beta", a.beta}, {"moving_mean", a.mean}, {"moving_var", a.var}});
    for (int64_t i = 0; i < want.Size(); ++i) {
      float v = std::max(want.fdata()[i], 0.f);
      if (with_sum) v = std::max(v + a.sum.fdata()[i], 0.f);
      want.fdata()[i] = v;
    }
    RequireClose(got, want, 1e-5f, 1e-5f);
  }
}

TEST_CASE("_sg_mkldnn_conv quantized: per-channel int8 weights, exact sums, calibrated levels and sum fusion",
          "[ops][subgraph][quantize]") {
  const ConvArrays a = MakeConvArrays();
  std::vector<float> w, b;
  Fold(a, &w, &b);
  const int64_t per = kC * 9;
  const float d_range = 1.0f;  // the data's levels stand for x = q / 127.5
  const float data_scale = 127.5f / d_range;
  const NDArray q = RandomLevels(TShape({2, kC, kH, kW}), DType::kInt8, -128, 127, 9);
  const NDArray sum_q = RandomLevels(TShape({2, kF, kH, kW}), DType::kUint8, 0, 255, 10);
  const float sum_range = 4.0f;

  auto weights = [&](bool per_channel, std::vector<float>* scales, std::vector<int8_t>* w8, std::vector<int64_t>* b32) {
    float total = 0;
    for (float v : w) total = std::max(total, std::fabs(v));
    scales->clear();
    w8->clear();
    b32->clear();
    for (int c = 0; c < kF; ++c) {
      float r = 0;
      for (int64_t i = 0; i < per; ++i) r = std::max(r, std::fabs(w[size_t(c * per + i)]));
      const float s = 127.5f / (per_channel ? r : total);  // the biases here are far from 2^30 in sum units
      scales->push_back(s);
      for (int64_t i = 0; i < per; ++i) w8->push_back(int8_t(RoundClamp(w[size_t(c * per + i)] * s, -128, 127)));
      b32->push_back(int64_t(std::nearbyint(b[size_t(c)] * data_scale * s)));
    }
  };
  // The calibrated output's levels against the formula with per-channel weights and exact sums:
  // requant_c * (sums + b32_c) plus `added(i)` (the scaled sum input), relu, saturate and round.
  auto check_levels = [&](const std::vector<NDArray>& outs, bool relu, float o_range,
                          const std::function<float(size_t)>& added) {
    REQUIRE(outs[0].dtype() == (relu ? DType::kUint8 : DType::kInt8));
    std::vector<float> scales;
    std::vector<int8_t> w8;
    std::vector<int64_t> b32;
    weights(true, &scales, &w8, &b32);
    const auto sums = DirectConvSums(q.data<int8_t>(), w8);
    const float out_scale = (relu ? 255.5f : 127.5f) / o_range;
    int64_t wrong = 0, nonzero = 0;
    for (size_t i = 0; i < sums.size(); ++i) {
      const int c = int((i / (kH * kW)) % kF);
      const float requant = out_scale / data_scale / scales[size_t(c)];
      float v = requant * float(sums[i] + b32[size_t(c)]) + added(i);
      if (relu) v = std::max(v, 0.0f);
      const int want = int(RoundClamp(v, relu ? 0 : -128, relu ? 255 : 127));
      const int got = relu ? int(outs[0].data<uint8_t>()[i]) : int(outs[0].data<int8_t>()[i]);
      wrong += got != want;
      nonzero += got != 0;
    }
    CHECK(wrong == 0);
    CHECK(nonzero > int64_t(sums.size()) / 4);
    CHECK(outs[2].fdata()[0] == o_range);
  };
  const std::map<std::string, NDArray> base = {{"data", q},         {"weight", a.weight}, {"bias", a.bias},
                                               {"gamma", a.gamma},  {"beta", a.beta},     {"mean", a.mean},
                                               {"var", a.var},      {"data_min", Range(-d_range)},
                                               {"data_max", Range(d_range)}};

  SECTION("uncalibrated: int32 sums plus the bias, relu, MXNet's product range") {
    const auto outs = RunAll("_sg_mkldnn_conv", {{"with_bn", "true"}, {"with_act", "true"}, {"quantized", "true"},
                                                 {"subgraphs", ConvGraph(false)}}, base);
    REQUIRE(outs.size() == 3);
    REQUIRE(outs[0].dtype() == DType::kInt32);
    std::vector<float> scales;
    std::vector<int8_t> w8;
    std::vector<int64_t> b32;
    weights(false, &scales, &w8, &b32);
    const auto sums = DirectConvSums(q.data<int8_t>(), w8);
    int64_t wrong = 0;
    for (size_t i = 0; i < sums.size(); ++i) {
      const int64_t want = std::max<int64_t>(sums[i] + b32[(i / (kH * kW)) % kF], 0);
      wrong += outs[0].data<int32_t>()[i] != want;
    }
    CHECK(wrong == 0);
    float total = 0;
    for (float v : w) total = std::max(total, std::fabs(v));
    const float range = (total / 127.0f) * (d_range / 127.0f) * 2147483648.0f;
    CHECK(outs[2].fdata()[0] == Approx(range).epsilon(1e-6));
    CHECK(outs[1].fdata()[0] == -outs[2].fdata()[0]);
  }

  SECTION("calibrated without a sum: relu into uint8 levels, or no activation into int8 levels") {
    for (const bool relu : {true, false}) {
      INFO("relu " << relu);
      const float o_range = 6.0f;
      KwArgs params = {{"with_bn", "true"}, {"quantized", "true"}, {"min_calib_range", relu ? "0" : "-6"},
                       {"max_calib_range", "6"}, {"subgraphs", ConvGraph(false, relu)}};
      if (relu) params["with_act"] = "true";
      check_levels(RunAll("_sg_mkldnn_conv", params, base), relu, o_range, [](size_t) { return 0.0f; });
    }
  }

  SECTION("calibrated, with a uint8 sum and relu after it: uint8 levels of the calibrated range") {
    std::map<std::string, NDArray> in = base;
    in["sum"] = sum_q;
    in["sum_min"] = Range(0);
    in["sum_max"] = Range(sum_range);
    const float o_range = 12.0f;
    const auto outs = RunAll("_sg_mkldnn_conv", {{"with_bn", "true"}, {"with_act", "true"}, {"with_sum", "true"},
                                                 {"with_postsum_act", "true"}, {"quantized", "true"},
                                                 {"min_calib_range", "0"}, {"max_calib_range", "12"},
                                                 {"subgraphs", ConvGraph(true)}}, in);
    REQUIRE(outs[0].dtype() == DType::kUint8);
    CHECK(outs[1].fdata()[0] == 0.0f);
    CHECK(outs[2].fdata()[0] == o_range);
    std::vector<float> scales;
    std::vector<int8_t> w8;
    std::vector<int64_t> b32;
    weights(true, &scales, &w8, &b32);
    const auto sums = DirectConvSums(q.data<int8_t>(), w8);
    const float out_scale = 255.5f / o_range, sum_scale = out_scale / (255.5f / sum_range);
    int64_t wrong = 0;
    double worst_float = 0;
    const NDArray fused = RunForward("_sg_mkldnn_conv", {{"with_bn", "true"}, {"with_act", "true"}, {"with_sum", "true"},
                                                         {"with_postsum_act", "true"}, {"subgraphs", ConvGraph(true)}},
                                     {{"data", MapNaive(q, [&](double v) { return v / data_scale; })},
                                      {"weight", a.weight}, {"bias", a.bias}, {"gamma", a.gamma}, {"beta", a.beta},
                                      {"mean", a.mean}, {"var", a.var},
                                      {"sum", MapNaive(sum_q, [&](double v) { return v * sum_range / 255.5; })}});
    for (size_t i = 0; i < sums.size(); ++i) {
      const int c = int((i / (kH * kW)) % kF);
      const float requant = out_scale / data_scale / scales[size_t(c)];
      float v = std::max(requant * float(sums[i] + b32[size_t(c)]), 0.0f);
      v = std::max(v + sum_scale * float(sum_q.data<uint8_t>()[i]), 0.0f);
      const uint8_t want = uint8_t(RoundClamp(v, 0, 255));
      wrong += outs[0].data<uint8_t>()[i] != want;
      // and the levels stand for the float fused result, to within the quantization steps
      worst_float = std::max<double>(worst_float, std::fabs(outs[0].data<uint8_t>()[i] / out_scale -
                                                    std::min(fused.fdata()[i], o_range)));
    }
    CHECK(wrong == 0);
    CHECK(worst_float < 0.15);  // a few output levels of 0.047: the int8 weights' rounding over 36 products
  }

  SECTION("calibrated, with a sum and no activation before it (ResNet's blocks): int8 or uint8 sum, relu or none after") {
    for (const bool relu : {true, false})
      for (const DType sum_type : {DType::kUint8, DType::kInt8}) {
        INFO("relu after the sum " << relu << ", sum " << DTypeName(sum_type));
        const bool unsigned_sum = sum_type == DType::kUint8;
        const NDArray sum_levels = RandomLevels(TShape({2, kF, kH, kW}), sum_type, unsigned_sum ? 0 : -128,
                                                unsigned_sum ? 255 : 127, 11);
        std::map<std::string, NDArray> in = base;
        in["sum"] = sum_levels;
        in["sum_min"] = Range(unsigned_sum ? 0 : -sum_range);
        in["sum_max"] = Range(sum_range);
        const float o_range = 12.0f;
        KwArgs params = {{"with_bn", "true"}, {"with_sum", "true"}, {"quantized", "true"},
                         {"min_calib_range", relu ? "0" : "-12"}, {"max_calib_range", "12"},
                         {"subgraphs", ConvGraph(true, false, relu)}};
        if (relu) params["with_postsum_act"] = "true";
        const float sum_scale = ((relu ? 255.5f : 127.5f) / o_range) / ((unsigned_sum ? 255.5f : 127.5f) / sum_range);
        check_levels(RunAll("_sg_mkldnn_conv", params, in), relu, o_range, [&](size_t i) {
          return sum_scale * (unsigned_sum ? float(sum_levels.data<uint8_t>()[i]) : float(sum_levels.data<int8_t>()[i]));
        });
      }
  }
}

TEST_CASE("_sg_mkldnn_conv and _fully_connected keep their derived weights until a source array is written",
          "[ops][subgraph][quantize]") {
  // One executor (whose node state keeps the folded, quantized and packed weights) against a
  // fresh one for every call, after writes through NDArray's doors to the weight, a BatchNorm
  // statistic and the data range, and for the float path too.
  ConvArrays a = MakeConvArrays();
  const NDArray q = RandomLevels(TShape({2, kC, kH, kW}), DType::kInt8, -128, 127, 9);
  NDArray d_max = Range(1.0f);
  const std::map<std::string, NDArray> inputs = {{"data", q},        {"weight", a.weight}, {"bias", a.bias},
                                                 {"gamma", a.gamma}, {"beta", a.beta},     {"mean", a.mean},
                                                 {"var", a.var},     {"data_min", Range(-1.0f)}, {"data_max", d_max}};
  const KwArgs quantized = {{"with_bn", "true"}, {"with_act", "true"}, {"quantized", "true"},
                            {"min_calib_range", "0"}, {"max_calib_range", "3"}, {"subgraphs", ConvGraph(false)}};
  auto kept = BindSingleOp("_sg_mkldnn_conv", quantized, inputs, {}, OpReq::kNull);
  auto check = [&] {
    kept->Forward(false);
    const auto fresh = RunAll("_sg_mkldnn_conv", quantized, inputs);
    RequireClose(kept->outputs()[0], fresh[0], 0, 0);
  };
  check();
  check();
  std::vector<float> w(a.weight.fdata(), a.weight.fdata() + a.weight.Size());
  for (float& v : w) v = -v * 0.5f;
  a.weight.SyncCopyFromCPU(w.data(), w.size());
  check();
  a.var.Fill(2.0f);
  check();
  d_max.Fill(2.5f);
  check();

  const ConvArrays f = MakeConvArrays();
  const std::map<std::string, NDArray> float_inputs = {{"data", f.data}, {"weight", f.weight}, {"bias", f.bias},
                                                       {"gamma", f.gamma}, {"beta", f.beta}, {"mean", f.mean},
                                                       {"var", f.var}};
  const KwArgs plain = {{"with_bn", "true"}, {"with_act", "true"}, {"subgraphs", ConvGraph(false)}};
  auto kept_float = BindSingleOp("_sg_mkldnn_conv", plain, float_inputs, {}, OpReq::kNull);
  for (int step = 0; step < 3; ++step) {
    if (step == 2) f.gamma.Fill(0.25f);
    kept_float->Forward(false);
    RequireClose(kept_float->outputs()[0], RunAll("_sg_mkldnn_conv", plain, float_inputs)[0], 0, 0);
  }
}

TEST_CASE("_sg_mkldnn_conv reads and writes MXNet's symbol files: nested graph and input order", "[ops][subgraph][io]") {
  // data, weight, bias, gamma, beta, mean, var, sum: mean and var among the arguments, as MXNet lists them.
  json nodes = json::array();
  for (const char* v : {"data", "conv0_weight", "conv0_bias", "bn0_gamma", "bn0_beta", "bn0_moving_mean", "bn0_moving_var", "res"})
    nodes.push_back({{"op", "null"}, {"name", v}, {"inputs", json::array()}});
  json inputs = json::array();
  for (int i = 0; i < 8; ++i) inputs.push_back({i, 0, 0});
  nodes.push_back({{"op", "_sg_mkldnn_conv"}, {"name", "sg_mkldnn_conv_bn_add_act_0"},
                   {"attrs", {{"with_bn", "true"}, {"with_act", "true"}, {"with_sum", "true"}, {"with_postsum_act", "true"}}},
                   {"subgraphs", json::parse(ConvGraph(true))}, {"inputs", inputs}});
  const json file = {{"nodes", nodes}, {"arg_nodes", {0, 1, 2, 3, 4, 5, 6, 7}}, {"heads", {{8, 0, 0}}},
                     {"attrs", {{"mxnet_version", {"int", 10901}}}}};
  const Symbol s = LoadSymbolJSON(file.dump());
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "conv0_weight", "conv0_bias", "bn0_gamma", "bn0_beta", "res"});
  CHECK(s.ListAuxiliaryStates() == std::vector<std::string>{"bn0_moving_mean", "bn0_moving_var"});

  // Written back: the same nested graph and MXNet's input order.
  const json again = json::parse(SaveSymbolJSON(s));
  const json& node = again["nodes"][8];
  CHECK(node["subgraphs"] == json::parse(ConvGraph(true)));
  CHECK_FALSE(node["attrs"].contains("subgraphs"));
  std::vector<std::string> read;
  for (const auto& e : node["inputs"]) read.push_back(again["nodes"][e[0].get<size_t>()]["name"]);
  CHECK(read == std::vector<std::string>{"data", "conv0_weight", "conv0_bias", "bn0_gamma", "bn0_beta",
                                         "bn0_moving_mean", "bn0_moving_var", "res"});

  // And it runs through the Predictor with the statistics as aux states, as MXNet's .params store them.
  const ConvArrays a = MakeConvArrays();
  Predictor p(s, {{"conv0_weight", a.weight}, {"conv0_bias", a.bias}, {"bn0_gamma", a.gamma}, {"bn0_beta", a.beta}},
              {{"bn0_moving_mean", a.mean}, {"bn0_moving_var", a.var}},
              {{"data", a.data.shape()}, {"res", a.sum.shape()}});
  p.SetInput("data", a.data);
  p.SetInput("res", a.sum);
  p.Forward();
  const NDArray direct = RunForward("_sg_mkldnn_conv", {{"with_bn", "true"}, {"with_act", "true"}, {"with_sum", "true"},
                                                        {"with_postsum_act", "true"}, {"subgraphs", ConvGraph(true)}},
                                    {{"data", a.data}, {"weight", a.weight}, {"bias", a.bias}, {"gamma", a.gamma},
                                     {"beta", a.beta}, {"mean", a.mean}, {"var", a.var}, {"sum", a.sum}});
  RequireClose(p.Output(0), direct, 0, 0);
}

TEST_CASE("_sg_mkldnn_fully_connected: float, tensor-wise int8 with float or calibrated output, channel-wise",
          "[ops][subgraph][quantize]") {
  Inner g;
  const int x = g.Var("data0"), w = g.Var("fc_weight0"), b = g.Var("fc_bias0");
  const int fc = g.Op("FullyConnected", "fc", {{"num_hidden", "5"}}, {x, w, b});
  g.Op("Activation", "relu", {{"act_type", "relu"}}, {fc});
  const std::string graph = g.Text();
  const NDArray data = RandomArray(TShape({3, 8}), 21);
  const NDArray weight = RandomArray(TShape({5, 8}), 22), bias = RandomArray(TShape({5}), 23, -0.5f, 0.5f);
  NDArray want = RunForward("FullyConnected", {{"num_hidden", "5"}}, {{"data", data}, {"weight", weight}, {"bias", bias}});
  for (int64_t i = 0; i < want.Size(); ++i) want.fdata()[i] = std::max(want.fdata()[i], 0.f);

  const NDArray fp32 = RunForward("_sg_mkldnn_fully_connected", {{"with_eltwise", "true"}, {"subgraphs", graph}},
                                  {{"data", data}, {"weight", weight}, {"bias", bias}});
  RequireClose(fp32, want, 1e-6f, 1e-6f);

  // Quantized as MXNet's flow stores it: int8 data at 127.5 / 1, int8 weight and bias at 127 / R.
  auto levels = [](const NDArray& v, float scale) {
    NDArray q(v.shape(), DType::kInt8);
    for (int64_t i = 0; i < v.Size(); ++i) q.data<int8_t>()[i] = int8_t(RoundClamp(v.fdata()[i] * scale, -128, 127));
    return q;
  };
  auto max_abs = [](const NDArray& v) {
    float m = 0;
    for (int64_t i = 0; i < v.Size(); ++i) m = std::max(m, std::fabs(v.fdata()[i]));
    return m;
  };
  const float rw = max_abs(weight), rb = max_abs(bias);
  const std::map<std::string, NDArray> in = {
      {"data", levels(data, 127.5f)},       {"weight", levels(weight, 127.0f / rw)}, {"bias", levels(bias, 127.0f / rb)},
      {"min_data", Range(-1)},              {"max_data", Range(1)},
      {"min_weight", Range(-rw)},           {"max_weight", Range(rw)},
      {"min_bias", Range(-rb)},             {"max_bias", Range(rb)}};
  const NDArray as_float = RunForward("_sg_mkldnn_fully_connected",
                                      {{"quantized", "True"}, {"enable_float_output", "True"}, {"with_eltwise", "True"},
                                       {"subgraphs", graph}}, in);
  REQUIRE(as_float.dtype() == DType::kFloat32);
  RequireClose(as_float, want, 0.06f, 0.0f);  // 8 products of 1/127-steps
  const auto calibrated = RunAll("_sg_mkldnn_fully_connected",
                                 {{"quantized", "True"}, {"with_eltwise", "True"}, {"min_calib_range", "0"},
                                  {"max_calib_range", "4"}, {"subgraphs", graph}}, in);
  REQUIRE(calibrated[0].dtype() == DType::kUint8);
  for (int64_t i = 0; i < want.Size(); ++i)
    CHECK(std::fabs(calibrated[0].data<uint8_t>()[i] * 4.0f / 255.5f - std::min(want.fdata()[i], 4.0f)) < 0.07f);
  const NDArray channel_wise = RunForward("_sg_mkldnn_fully_connected",
                                          {{"quantized", "True"}, {"channel_wise_quantize", "True"},
                                           {"enable_float_output", "True"}, {"with_eltwise", "True"}, {"subgraphs", graph}},
                                          {{"data", levels(data, 127.5f)}, {"weight", weight}, {"bias", bias},
                                           {"min_data", Range(-1)}, {"max_data", Range(1)}});
  RequireClose(channel_wise, want, 0.06f, 0.0f);

  // One executor keeps its quantized weights until the weight, the weight's range or the data's
  // range is written; each result equals a fresh executor's.
  const KwArgs tensor_wise = {{"quantized", "True"}, {"enable_float_output", "True"}, {"with_eltwise", "True"},
                              {"subgraphs", graph}};
  auto kept = BindSingleOp("_sg_mkldnn_fully_connected", tensor_wise, in, {}, OpReq::kNull);
  for (int step = 0; step < 4; ++step) {
    if (step == 1) in.at("weight").Fill(3.0f);
    if (step == 2) in.at("max_weight").Fill(2 * rw);
    if (step == 3) in.at("max_data").Fill(0.5f);
    kept->Forward(false);
    RequireClose(kept->outputs()[0], RunForward("_sg_mkldnn_fully_connected", tensor_wise, in), 0, 0);
  }
}

TEST_CASE("subgraph ops: every documented input exists for some flags, and every input is documented",
          "[ops][subgraph][facts]") {
  Inner fc_graph;
  const int x = fc_graph.Var("data0"), w = fc_graph.Var("w0"), b = fc_graph.Var("b0");
  fc_graph.Op("FullyConnected", "fc", {{"num_hidden", "5"}}, {x, w, b});
  struct Variant {
    std::string op;
    KwArgs params;
  };
  std::vector<Variant> variants;
  for (const char* quantized : {"false", "true"}) {
    variants.push_back({"_sg_mkldnn_conv", {{"with_bn", "true"}, {"with_act", "true"}, {"with_sum", "true"},
                                            {"with_postsum_act", "true"}, {"quantized", quantized},
                                            {"subgraphs", ConvGraph(true)}}});
    variants.push_back({"_sg_mkldnn_fully_connected", {{"quantized", quantized}, {"subgraphs", fc_graph.Text()}}});
  }
  std::map<std::string, std::set<std::string>> seen;
  for (const auto& v : variants) {
    const Symbol s = Symbol::Create(v.op, "op", v.params, {});
    for (const auto& names : {s.ListArguments(), s.ListAuxiliaryStates()})
      for (const std::string& full : names) {
        const std::string input = full.substr(3);
        seen[v.op].insert(input);
        INFO(v.op << " input " << input);
        CHECK_FALSE(OpRegistry::Global().Get(v.op).ArgumentDoc(input).empty());
      }
  }
  for (const auto& [op, inputs] : seen)
    for (const auto& [input, doc] : OpRegistry::Global().Get(op).argument_docs) {
      INFO(op << " documents " << input);
      CHECK(inputs.count(input));
    }
}

TEST_CASE("subgraph ops refuse a missing or inconsistent nested graph", "[ops][subgraph]") {
  const std::map<std::string, NDArray> in = {{"data", RandomArray(TShape({1, kC, 5, 5}), 1)},
                                             {"weight", RandomArray(TShape({kF, kC, 3, 3}), 2)}};
  CHECK_THROWS_WITH(RunForward("_sg_mkldnn_conv", {}, in), Catch::Contains("needs the nested graph"));
  CHECK_THROWS_WITH(RunForward("_sg_mkldnn_conv", {{"subgraphs", "[{"}}, in), Catch::Contains("is not valid JSON"));
  CHECK_THROWS_WITH(RunForward("_sg_mkldnn_conv", {{"with_bn", "false"}, {"subgraphs", ConvGraph(false)}}, in),
                    Catch::Contains("with_bn is false but the nested graph has BatchNorm"));
  Inner g;
  const int x = g.Var("data0");
  g.Op("Pooling", "p", {{"kernel", "(2,2)"}}, {x});
  CHECK_THROWS_WITH(RunForward("_sg_mkldnn_conv", {{"subgraphs", g.Text()}}, in),
                    Catch::Contains("the nested graph has no Convolution"));
  Inner u;
  const int y = u.Var("data0");
  u.Op("NoSuchOp", "p", json::object(), {y});
  CHECK_THROWS_WITH(RunForward("_sg_mkldnn_fully_connected", {{"subgraphs", u.Text()}}, in),
                    Catch::Contains("unknown operator 'NoSuchOp'"));
}
