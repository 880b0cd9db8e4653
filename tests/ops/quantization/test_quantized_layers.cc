// _contrib_quantized_conv, _contrib_quantized_fully_connected and _contrib_requantize against
// naive integer references, and a quantized convolution against its float32 original.
#include <nlohmann/json.hpp>

#include <symbind/io/symbol_json.h>

#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// int8 bias in the sums' units, truncated (docs/quantization.md).
int64_t BiasLevels(int bias8, DType data_type, float rd, float rw, float rb) {
  const float ds = (data_type == DType::kInt8 ? 127.5f : 255.5f) / rd, ws = 127.5f / rw;
  return static_cast<int64_t>(std::trunc(static_cast<float>(bias8) * (ds * ws * rb / 127.5f)));
}
}  // namespace

TEST_CASE("quantized FullyConnected: exact int32 sums, the bias rescaled, MXNet's product range", "[ops][quantization]") {
  for (DType type : {DType::kUint8, DType::kInt8}) {
    const int lo = type == DType::kUint8 ? 0 : -128, hi = type == DType::kUint8 ? 255 : 127;
    NDArray x = RandomLevels(TShape({3, 2, 5}), type, lo, hi, 21);
    NDArray w = RandomLevels(TShape({4, 10}), DType::kInt8, -127, 127, 22);
    NDArray b = RandomLevels(TShape({4}), DType::kInt8, -127, 127, 23);
    const float rd = 3.0f, rw = 0.5f, rb = 0.25f;
    auto out = RunAll("_contrib_quantized_fully_connected", {{"num_hidden", "4"}},
                      {{"data", x}, {"weight", w}, {"bias", b}, {"min_data", Range(type == DType::kUint8 ? 0 : -rd)},
                       {"max_data", Range(rd)}, {"min_weight", Range(-rw)}, {"max_weight", Range(rw)},
                       {"min_bias", Range(-rb)}, {"max_bias", Range(rb)}});
    REQUIRE(out[0].dtype() == DType::kInt32);
    REQUIRE(out[0].shape() == TShape({3, 4}));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t j = 0; j < 4; ++j) {
        int64_t s = BiasLevels(static_cast<int>(b.GetFlat(j)), type, rd, rw, rb);
        for (int64_t k = 0; k < 10; ++k)
          s += static_cast<int64_t>(x.GetFlat(r * 10 + k)) * static_cast<int64_t>(w.GetFlat(j * 10 + k));
        CHECK(static_cast<int64_t>(out[0].data<int32_t>()[r * 4 + j]) == s);
      }
    const float range = (rw / 127.0f) * (rd / (type == DType::kUint8 ? 255.0f : 127.0f)) * 2147483648.0f;
    CHECK(out[1].GetFlat(0) == -range);
    CHECK(out[2].GetFlat(0) == range);
  }
}

TEST_CASE("quantized Convolution: exact int32 sums over groups, strides, padding and dilation", "[ops][quantization][quantized_conv]") {
  struct Case { int64_t n, c, h, w, f, k, s, p, d, g; bool no_bias; };
  // The depthwise ones (g = c = f) take float32's plane kernel (3x3, 5x5, 7x7 at stride 1 or 2) or
  // the plane-by-plane one: strides 1 to 3, dilation,
  // padding past the kernel's reach, widths around a vector's, and a kernel of over 512 taps
  // (int32 sums instead of exact float ones). One output pixel takes dot products instead of a
  // GEMM; RGB-like layers (3-4 channels, 7x7 and 3x3, rows of 16+) the float kernel for them.
  // ctest's quantized_conv_base runs the portable loops.
  for (DType type : {DType::kUint8, DType::kInt8})
  for (const Case& t : {Case{2, 3, 7, 6, 4, 3, 1, 1, 1, 1, false}, Case{1, 4, 9, 9, 6, 3, 2, 1, 2, 2, false},
                        Case{1, 8, 5, 5, 8, 3, 1, 1, 1, 8, true}, Case{2, 5, 4, 4, 3, 1, 1, 0, 1, 1, false},
                        Case{2, 6, 11, 19, 6, 3, 2, 1, 1, 6, false}, Case{1, 4, 10, 9, 4, 5, 1, 2, 2, 4, true},
                        Case{1, 3, 7, 33, 3, 3, 2, 0, 1, 3, false}, Case{1, 2, 3, 4, 2, 3, 1, 3, 1, 2, false},
                        Case{1, 2, 24, 25, 2, 23, 1, 1, 1, 2, true},  // 529 taps: past float's exact sums
                        Case{2, 20, 1, 1, 7, 1, 1, 0, 1, 1, false}, Case{1, 4, 3, 3, 6, 3, 1, 0, 1, 2, false},
                        Case{1, 3, 20, 40, 5, 7, 2, 3, 1, 1, false}, Case{2, 4, 9, 33, 3, 3, 1, 1, 1, 1, true},
                        Case{1, 3, 13, 17, 3, 3, 3, 1, 1, 3, false}, Case{1, 2, 14, 15, 2, 3, 2, 2, 2, 2, true},
                        Case{1, 4, 12, 13, 4, 5, 2, 2, 1, 4, false}, Case{2, 3, 15, 40, 3, 7, 1, 3, 1, 3, true}}) {
    INFO((type == DType::kUint8 ? "uint8" : "int8") << " data, " << t.c << " channels, groups " << t.g << ", stride " << t.s);
    const int lo = type == DType::kUint8 ? 0 : -128, hi = type == DType::kUint8 ? 255 : 127;
    const int64_t oh = (t.h + 2 * t.p - t.d * (t.k - 1) - 1) / t.s + 1, ow = (t.w + 2 * t.p - t.d * (t.k - 1) - 1) / t.s + 1;
    const int64_t gc = t.c / t.g, gf = t.f / t.g;
    NDArray x = RandomLevels(TShape({t.n, t.c, t.h, t.w}), type, lo, hi, 31);
    NDArray w = RandomLevels(TShape({t.f, gc, t.k, t.k}), DType::kInt8, -127, 127, 32);
    NDArray b = RandomLevels(TShape({t.f}), DType::kInt8, -127, 127, 33);
    const std::string k = "(" + std::to_string(t.k) + "," + std::to_string(t.k) + ")";
    KwArgs params{{"kernel", k}, {"num_filter", std::to_string(t.f)}, {"num_group", std::to_string(t.g)},
                  {"stride", "(" + std::to_string(t.s) + "," + std::to_string(t.s) + ")"},
                  {"pad", "(" + std::to_string(t.p) + "," + std::to_string(t.p) + ")"},
                  {"dilate", "(" + std::to_string(t.d) + "," + std::to_string(t.d) + ")"},
                  {"no_bias", t.no_bias ? "True" : "False"}};
    std::map<std::string, NDArray> in{{"data", x}, {"weight", w}, {"min_data", Range(lo == 0 ? 0 : -6)}, {"max_data", Range(6)},
                                      {"min_weight", Range(-0.3f)}, {"max_weight", Range(0.3f)}};
    if (!t.no_bias) {
      in["bias"] = b;
      in["min_bias"] = Range(-1);
      in["max_bias"] = Range(1);
    }
    auto out = RunAll("_contrib_quantized_conv", params, in);
    REQUIRE(out[0].shape() == TShape({t.n, t.f, oh, ow}));
    const int32_t* y = out[0].data<int32_t>();
    for (int64_t n = 0; n < t.n; ++n)
      for (int64_t f = 0; f < t.f; ++f)
        for (int64_t i = 0; i < oh; ++i)
          for (int64_t j = 0; j < ow; ++j) {
            int64_t s = t.no_bias ? 0 : BiasLevels(static_cast<int>(b.GetFlat(f)), type, 6, 0.3f, 1);
            const int64_t grp = f / gf;
            for (int64_t c = 0; c < gc; ++c)
              for (int64_t u = 0; u < t.k; ++u)
                for (int64_t v = 0; v < t.k; ++v) {
                  const int64_t yy = i * t.s - t.p + u * t.d, xx = j * t.s - t.p + v * t.d;
                  if (yy < 0 || yy >= t.h || xx < 0 || xx >= t.w) continue;
                  s += static_cast<int64_t>(x.GetFlat(((n * t.c + grp * gc + c) * t.h + yy) * t.w + xx)) *
                       static_cast<int64_t>(w.GetFlat(((f * gc + c) * t.k + u) * t.k + v));
                }
            REQUIRE(static_cast<int64_t>(y[((n * t.f + f) * oh + i) * ow + j]) == s);
          }
    const float range = (0.3f / 127.0f) * (6.0f / (lo == 0 ? 255.0f : 127.0f)) * 2147483648.0f;
    CHECK(out[2].GetFlat(0) == range);
  }
}

TEST_CASE("requantize: int32 sums to int8 over the calibrated range or the data's own", "[ops][quantization]") {
  NDArray acc = RandomLevels(TShape({2, 50}), DType::kInt32, -2000000, 1500000, 41);
  const float r_in = 40.0f;  // 2^31 stands for 40
  auto calibrated = RunAll("_contrib_requantize", {{"min_calib_range", "-0.02"}, {"max_calib_range", "0.03"}},
                           {{"data", acc}, {"min_range", Range(-r_in)}, {"max_range", Range(r_in)}});
  REQUIRE(calibrated[0].dtype() == DType::kInt8);
  const float scale = (r_in / 2147483648.0f) * (127.0f / 0.03f);
  for (int64_t i = 0; i < acc.Size(); ++i)
    CHECK(calibrated[0].GetFlat(i) == RoundClamp(static_cast<float>(acc.data<int32_t>()[i]) * scale, -128, 127));
  CHECK(calibrated[1].GetFlat(0) == -0.03f);
  CHECK(calibrated[2].GetFlat(0) == 0.03f);

  auto own = RunAll("_contrib_requantize", {{"out_type", "uint8"}},
                    {{"data", acc}, {"min_range", Range(-r_in)}, {"max_range", Range(r_in)}});
  REQUIRE(own[0].dtype() == DType::kUint8);
  int32_t largest = 0;
  for (int64_t i = 0; i < acc.Size(); ++i) largest = std::max(largest, std::abs(acc.data<int32_t>()[i]));
  const float t = static_cast<float>(largest) * r_in / 2147483648.0f;  // the largest magnitude, in float
  CHECK(own[2].GetFlat(0) == Approx(t).epsilon(1e-6));
  for (int64_t i = 0; i < acc.Size(); ++i) CHECK(own[0].GetFlat(i) <= 255);
}

TEST_CASE("quantized convolution, requantized and dequantized, follows the float32 convolution", "[ops][quantization]") {
  // data >= 0 (after a relu) as uint8, weights as int8, each over its own range.
  NDArray x = RandomArray(TShape({1, 6, 8, 8}), 51, 0.0f, 2.0f), w = RandomArray(TShape({5, 6, 3, 3}), 52, -0.4f, 0.4f);
  NDArray b = RandomArray(TShape({5}), 53, -0.2f, 0.2f);
  KwArgs conv{{"kernel", "(3,3)"}, {"num_filter", "5"}, {"pad", "(1,1)"}};
  NDArray want = RunForward("Convolution", conv, {{"data", x}, {"weight", w}, {"bias", b}});
  auto qx = RunAll("_contrib_quantize_v2", {{"out_type", "uint8"}, {"min_calib_range", "0"}, {"max_calib_range", "2"}},
                   {{"data", x}});
  auto qw = RunAll("_contrib_quantize", {{"out_type", "int8"}}, {{"data", w}, {"min_range", Range(-0.4f)}, {"max_range", Range(0.4f)}});
  auto qb = RunAll("_contrib_quantize", {{"out_type", "int8"}}, {{"data", b}, {"min_range", Range(-0.2f)}, {"max_range", Range(0.2f)}});
  auto acc = RunAll("_contrib_quantized_conv", conv,
                    {{"data", qx[0]}, {"weight", qw[0]}, {"bias", qb[0]}, {"min_data", qx[1]}, {"max_data", qx[2]},
                     {"min_weight", qw[1]}, {"max_weight", qw[2]}, {"min_bias", qb[1]}, {"max_bias", qb[2]}});
  // Calibrated as a calibration pass would: the float32 output's largest magnitude.
  float r = 0;
  for (int64_t i = 0; i < want.Size(); ++i) r = std::max(r, std::fabs(want.GetFlat(i)));
  auto q8 = RunAll("_contrib_requantize", {{"min_calib_range", std::to_string(-r)}, {"max_calib_range", std::to_string(r)}},
                   {{"data", acc[0]}, {"min_range", acc[1]}, {"max_range", acc[2]}});
  NDArray got = RunForward("_contrib_dequantize", {}, {{"data", q8[0]}, {"min_range", q8[1]}, {"max_range", q8[2]}});
  float worst = 0;
  for (int64_t i = 0; i < want.Size(); ++i) worst = std::max(worst, std::fabs(got.GetFlat(i) - want.GetFlat(i)));
  INFO("largest difference " << worst << " with outputs up to " << r);
  CHECK(worst < 2.5f * r / 127.5f);  // within a few output levels
}

// _contrib_quantized_batch_norm against its formula (docs/quantization.md), element by element,
// for int8 and uint8 data; and MXNet's symbol-file input order (the moving statistics after beta).
TEST_CASE("quantized BatchNorm: MXNet's oneDNN scale and shift of the levels, int8 out", "[ops][quantization]") {
  const int64_t C = 3;
  NDArray gamma(TShape({C}), std::vector<float>{0.8f, 1.3f, -0.4f}), beta(TShape({C}), std::vector<float>{0.1f, -0.2f, 0.3f});
  NDArray mean(TShape({C}), std::vector<float>{0.05f, -0.1f, 0.2f}), var(TShape({C}), std::vector<float>{0.9f, 1.7f, 0.3f});
  const float eps = 1e-3f, rd = 2.5f, ro = 3.0f;
  for (DType type : {DType::kInt8, DType::kUint8}) {
    INFO((type == DType::kInt8 ? "int8" : "uint8") << " data");
    const int lo = type == DType::kInt8 ? -128 : 0, hi = type == DType::kInt8 ? 127 : 255;
    NDArray x = RandomLevels(TShape({2, C, 5, 7}), type, lo, hi, 71);
    auto out = RunAll("_contrib_quantized_batch_norm",
                      {{"eps", "0.001"}, {"min_calib_range", "-2"}, {"max_calib_range", "3"}},
                      {{"data", x}, {"gamma", gamma}, {"beta", beta}, {"moving_mean", mean}, {"moving_var", var},
                       {"min_data", Range(lo == 0 ? 0.0f : -rd)}, {"max_data", Range(rd)}});
    REQUIRE(out[0].dtype() == DType::kInt8);
    CHECK(out[1].GetFlat(0) == -2.0f);
    CHECK(out[2].GetFlat(0) == 3.0f);
    int64_t wrong = 0;
    for (int64_t i = 0; i < x.Size(); ++i) {
      const int64_t c = (i / 35) % C;
      const float g = gamma.GetFlat(c), invstd = float(1.0 / std::sqrt(double(var.GetFlat(c)) + double(eps)));
      const float s = g * invstd * rd / ro / std::sqrt(1.0f + eps);
      const float t = (beta.GetFlat(c) - mean.GetFlat(c) * g * invstd) * 127.5f / ro;
      const float level = type == DType::kInt8 ? x.GetFlat(i) : float(RoundClamp(x.GetFlat(i) * (127.5f / 255.5f), -128, 127));
      wrong += out[0].GetFlat(i) != RoundClamp(level * s + t, -128, 127);
    }
    CHECK(wrong == 0);
  }
  REQUIRE_THROWS_WITH(RunAll("_contrib_quantized_batch_norm", {},
                             {{"data", RandomLevels(TShape({1, C, 2, 2}), DType::kInt8, -128, 127, 72)}, {"gamma", gamma},
                              {"beta", beta}, {"moving_mean", mean}, {"moving_var", var}, {"min_data", Range(-1)},
                              {"max_data", Range(1)}}),
                      Catch::Contains("min_calib_range and max_calib_range"));

  // MXNet's files list the moving statistics after beta; they bind as aux states.
  const std::string json = R"({"nodes": [
    {"op": "null", "name": "data", "inputs": []}, {"op": "null", "name": "bn_gamma", "inputs": []},
    {"op": "null", "name": "bn_beta", "inputs": []}, {"op": "null", "name": "bn_moving_mean", "inputs": []},
    {"op": "null", "name": "bn_moving_var", "inputs": []}, {"op": "null", "name": "min_d", "inputs": []},
    {"op": "null", "name": "max_d", "inputs": []},
    {"op": "_contrib_quantized_batch_norm", "name": "quantized_bn", "attrs": {"min_calib_range": "-2", "max_calib_range": "3"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 0], [4, 0, 0], [5, 0, 0], [6, 0, 0]]}],
    "arg_nodes": [0, 1, 2, 3, 4, 5, 6], "heads": [[7, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}})";
  const Symbol s = LoadSymbolJSON(json);
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "bn_gamma", "bn_beta", "min_d", "max_d"});
  CHECK(s.ListAuxiliaryStates() == std::vector<std::string>{"bn_moving_mean", "bn_moving_var"});
  // Written back in MXNet's order.
  const nlohmann::json again = nlohmann::json::parse(SaveSymbolJSON(s));
  std::vector<std::string> read;
  for (const auto& e : again["nodes"].back()["inputs"]) read.push_back(again["nodes"][e[0].get<size_t>()]["name"]);
  CHECK(read == std::vector<std::string>{"data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var", "min_d", "max_d"});
}
