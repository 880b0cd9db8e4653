// _contrib_quantized_pooling, _act, _flatten, _embedding, _concat and _elemwise_add against
// element-by-element references.
#include "quant_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("quantized pooling: max exact, avg rounded half to even, the range passes through", "[ops][quantization][quantized_tensor_ops]") {
  NDArray x = RandomLevels(TShape({2, 3, 5, 5}), DType::kInt8, -128, 127, 61);
  for (const char* type : {"max", "avg"}) {
    auto out = RunAll("_contrib_quantized_pooling", {{"kernel", "(2,2)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}, {"pool_type", type}},
                      {{"data", x}, {"min_data", Range(-1.5f)}, {"max_data", Range(2)}});
    REQUIRE(out[0].dtype() == DType::kInt8);
    REQUIRE(out[0].shape() == TShape({2, 3, 3, 3}));
    const bool max = std::string(type) == "max";
    for (int64_t p = 0; p < 6; ++p)
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 3; ++j) {
          double best = -1e9, sum = 0;
          for (int64_t u = 0; u < 2; ++u)
            for (int64_t v = 0; v < 2; ++v) {
              const int64_t yy = i * 2 - 1 + u, xx = j * 2 - 1 + v;
              if (yy < 0 || yy >= 5 || xx < 0 || xx >= 5) continue;
              const double q = x.GetFlat((p * 5 + yy) * 5 + xx);
              best = std::max(best, q);
              sum += q;
            }
          // count_include_pad (MXNet's default): every window divides by 4.
          const double want = max ? best : RoundClamp(sum / 4.0, -128, 127);
          CHECK(out[0].GetFlat((p * 3 + i) * 3 + j) == want);
        }
    CHECK(out[1].GetFlat(0) == -1.5f);
    CHECK(out[2].GetFlat(0) == 2.0f);
  }
  REQUIRE_THROWS_WITH(RunAll("_contrib_quantized_pooling", {{"kernel", "(2,2)"}, {"pool_type", "lp"}, {"p_value", "2"}},
                             {{"data", x}, {"min_data", Range(-1)}, {"max_data", Range(1)}}),
                      Catch::Contains("'max' and 'avg' only"));
}

TEST_CASE("quantized max pooling of uint8: 'full' windows past the edge, global windows", "[ops][quantization][quantized_tensor_ops]") {
  NDArray x = RandomLevels(TShape({2, 2, 7, 7}), DType::kUint8, 0, 255, 64);
  auto full = RunAll("_contrib_quantized_pooling",
                     {{"kernel", "(3,3)"}, {"stride", "(3,3)"}, {"pooling_convention", "full"}, {"pool_type", "max"}},
                     {{"data", x}, {"min_data", Range(0)}, {"max_data", Range(3)}});
  REQUIRE(full[0].dtype() == DType::kUint8);
  REQUIRE(full[0].shape() == TShape({2, 2, 3, 3}));
  for (int64_t p = 0; p < 4; ++p)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        float best = -1;
        for (int64_t yy = i * 3; yy < std::min<int64_t>(i * 3 + 3, 7); ++yy)
          for (int64_t xx = j * 3; xx < std::min<int64_t>(j * 3 + 3, 7); ++xx)
            best = std::max(best, x.GetFlat((p * 7 + yy) * 7 + xx));
        CHECK(full[0].GetFlat((p * 3 + i) * 3 + j) == best);
      }
  auto global = RunAll("_contrib_quantized_pooling", {{"kernel", "(1,1)"}, {"global_pool", "True"}, {"pool_type", "max"}},
                       {{"data", x}, {"min_data", Range(0)}, {"max_data", Range(3)}});
  for (int64_t p = 0; p < 4; ++p) {
    float best = -1;
    for (int64_t i = 0; i < 49; ++i) best = std::max(best, x.GetFlat(p * 49 + i));
    CHECK(global[0].GetFlat(p) == best);
  }
}

TEST_CASE("quantized global avg pooling: each plane's exact sum over its size, rounded half to even", "[ops][quantization][quantized_tensor_ops]") {
  for (DType type : {DType::kInt8, DType::kUint8}) {
    const int lo = type == DType::kInt8 ? -128 : 0, hi = type == DType::kInt8 ? 127 : 255;
    NDArray x = RandomLevels(TShape({2, 5, 4, 6}), type, lo, hi, 68);
    // Plane 0 sums to 60 and plane 1 to 84 over 24 levels: 2.5 and 3.5, ties that go to the even level.
    for (int64_t i = 0; i < 24; ++i) x.SetFlat(i, i < 23 ? 2 : 14), x.SetFlat(24 + i, i < 23 ? 3 : 15);
    for (const char* global : {"True", "False"}) {  // a 4x6 window over a 4x6 plane is the same pooling
      auto out = RunAll("_contrib_quantized_pooling", {{"kernel", "(4,6)"}, {"global_pool", global}, {"pool_type", "avg"}},
                        {{"data", x}, {"min_data", Range(lo == 0 ? 0.0f : -1.0f)}, {"max_data", Range(1)}});
      REQUIRE(out[0].dtype() == type);
      REQUIRE(out[0].shape() == TShape({2, 5, 1, 1}));
      for (int64_t p = 0; p < 10; ++p) {
        double sum = 0;
        for (int64_t i = 0; i < 24; ++i) sum += x.GetFlat(p * 24 + i);
        CHECK(out[0].GetFlat(p) == RoundClamp(sum / 24.0, lo, hi));
      }
      CHECK(out[0].GetFlat(0) == 2);
      CHECK(out[0].GetFlat(1) == 4);
    }
  }
}

TEST_CASE("quantized max pooling: 3x3 windows, stride 2, padding, planes wider than a vector", "[ops][quantization][quantized_tensor_ops]") {
  struct Case {
    int64_t H, W, pad;
    const char* convention;
  };
  // Rows of one vector and a tail; more than 63 outputs per row (two picks on VBMI CPUs); 'full'
  // windows past the last column and row; no padding (SqueezeNet's).
  for (const Case c : {Case{23, 37, 1, "valid"}, Case{9, 150, 1, "valid"}, Case{8, 131, 0, "full"}, Case{7, 64, 0, "valid"}})
    for (DType type : {DType::kInt8, DType::kUint8}) {
      INFO(c.H << "x" << c.W << " pad " << c.pad << " " << c.convention << (type == DType::kInt8 ? " int8" : " uint8"));
      const int lo = type == DType::kInt8 ? -128 : 0, hi = type == DType::kInt8 ? 127 : 255;
      NDArray x = RandomLevels(TShape({2, 3, c.H, c.W}), type, lo, hi, 66);
      const std::string pad = "(" + std::to_string(c.pad) + "," + std::to_string(c.pad) + ")";
      auto out = RunAll("_contrib_quantized_pooling",
                        {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", pad}, {"pool_type", "max"},
                         {"pooling_convention", c.convention}},
                        {{"data", x}, {"min_data", Range(lo == 0 ? 0.0f : -1.0f)}, {"max_data", Range(1)}});
      const int64_t OH = out[0].shape()[2], OW = out[0].shape()[3];
      int64_t wrong = 0;
      for (int64_t p = 0; p < 6; ++p)
        for (int64_t i = 0; i < OH; ++i)
          for (int64_t j = 0; j < OW; ++j) {
            float best = -1e9f;
            for (int64_t yy = std::max<int64_t>(i * 2 - c.pad, 0); yy < std::min<int64_t>(i * 2 - c.pad + 3, c.H); ++yy)
              for (int64_t xx = std::max<int64_t>(j * 2 - c.pad, 0); xx < std::min<int64_t>(j * 2 - c.pad + 3, c.W); ++xx)
                best = std::max(best, x.GetFlat((p * c.H + yy) * c.W + xx));
            wrong += out[0].GetFlat((p * OH + i) * OW + j) != best;
          }
      CHECK(wrong == 0);
    }
}

TEST_CASE("quantized relu: max(q, 0) as int8, uint8 levels above 127 saturate as in MXNet", "[ops][quantization][quantized_tensor_ops]") {
  // Sizes past a vector's 32 levels, with a tail. quantize_round_base runs the portable loop.
  NDArray big_u = RandomLevels(TShape({1001}), DType::kUint8, 0, 255, 67);
  auto bu = RunAll("_contrib_quantized_act", {{"act_type", "relu"}}, {{"data", big_u}, {"min_data", Range(0)}, {"max_data", Range(1)}});
  for (int64_t i = 0; i < big_u.Size(); ++i) CHECK(bu[0].GetFlat(i) == std::min(127.0f, big_u.GetFlat(i)));
  NDArray s = RandomLevels(TShape({1003}), DType::kInt8, -128, 127, 62);
  auto out = RunAll("_contrib_quantized_act", {{"act_type", "relu"}}, {{"data", s}, {"min_data", Range(-1)}, {"max_data", Range(1)}});
  REQUIRE(out[0].dtype() == DType::kInt8);
  for (int64_t i = 0; i < s.Size(); ++i) CHECK(out[0].GetFlat(i) == std::max(0.0f, s.GetFlat(i)));
  NDArray u(TShape({3}), DType::kUint8);
  u.SetFlat(0, 5), u.SetFlat(1, 127), u.SetFlat(2, 200);
  auto uo = RunAll("_contrib_quantized_act", {{"act_type", "relu"}}, {{"data", u}, {"min_data", Range(0)}, {"max_data", Range(1)}});
  CHECK(uo[0].GetFlat(0) == 5);
  CHECK(uo[0].GetFlat(2) == 127);
  REQUIRE_THROWS_WITH(RunAll("_contrib_quantized_act", {{"act_type", "tanh"}}, {{"data", s}, {"min_data", Range(-1)}, {"max_data", Range(1)}}),
                      Catch::Contains("'relu' only"));
}

TEST_CASE("quantized flatten keeps the levels, type and range", "[ops][quantization][quantized_tensor_ops]") {
  NDArray x = RandomLevels(TShape({2, 3, 4}), DType::kUint8, 0, 255, 63);
  auto out = RunAll("_contrib_quantized_flatten", {}, {{"data", x}, {"min_data", Range(0)}, {"max_data", Range(7)}});
  REQUIRE(out[0].shape() == TShape({2, 12}));
  REQUIRE(out[0].dtype() == DType::kUint8);
  for (int64_t i = 0; i < x.Size(); ++i) CHECK(out[0].GetFlat(i) == x.GetFlat(i));
  CHECK(out[2].GetFlat(0) == 7.0f);
}

TEST_CASE("quantized embedding gathers int8 rows, indices clipped, the weight's range passes through",
          "[ops][quantization][quantized_tensor_ops]") {
  const NDArray weight = RandomLevels(TShape({5, 67}), DType::kInt8, -128, 127, 66);
  const std::vector<float> rows{0, 4, 2, 7, -1, 3.6f};  // 7 and -1 clip to 4 and 0; 3.6 truncates to 3
  const std::vector<int64_t> taken{0, 4, 2, 4, 0, 3};
  for (DType index_type : {DType::kFloat32, DType::kInt32}) {
    NDArray data(TShape({2, 3}), index_type);
    for (int64_t i = 0; i < 6; ++i) data.SetFlat(i, rows[size_t(i)]);
    auto out = RunAll("_contrib_quantized_embedding", {{"input_dim", "5"}, {"output_dim", "67"}},
                      {{"data", data}, {"weight", weight}, {"min_weight", Range(-2.5f)}, {"max_weight", Range(2.5f)}});
    REQUIRE(out[0].dtype() == DType::kInt8);
    REQUIRE(out[0].shape() == TShape({2, 3, 67}));
    int64_t wrong = 0;
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t j = 0; j < 67; ++j) wrong += out[0].GetFlat(i * 67 + j) != weight.GetFlat(taken[size_t(i)] * 67 + j);
    CHECK(wrong == 0);
    CHECK(out[1].GetFlat(0) == -2.5f);
    CHECK(out[2].GetFlat(0) == 2.5f);
  }
  // A float32 weight is refused (the op reads int8 levels).
  REQUIRE_THROWS(RunAll("_contrib_quantized_embedding", {{"input_dim", "5"}, {"output_dim", "67"}},
                        {{"data", NDArray(TShape({2}), std::vector<float>{0, 1})},
                         {"weight", NDArray(TShape({5, 67}), DType::kFloat32)},
                         {"min_weight", Range(-1)},
                         {"max_weight", Range(1)}}));
}

TEST_CASE("quantized concat rescales each input to the joint range", "[ops][quantization][quantized_tensor_ops]") {
  // Rows of 2 x 21 and 3 x 21 levels: vectors of 32 and a tail.
  NDArray a = RandomLevels(TShape({2, 2, 21}), DType::kUint8, 0, 255, 64);
  NDArray b = RandomLevels(TShape({2, 3, 21}), DType::kInt8, -128, 127, 65);
  auto out = RunAll("_contrib_quantized_concat", {{"num_args", "2"}, {"dim", "1"}},
                    {{"arg0", a}, {"arg1", b}, {"arg0_min", Range(0)}, {"arg0_max", Range(2)}, {"arg1_min", Range(-3)},
                     {"arg1_max", Range(1)}});
  REQUIRE(out[0].dtype() == DType::kInt8);  // any int8 input makes the output int8
  REQUIRE(out[0].shape() == TShape({2, 5, 21}));
  CHECK(out[1].GetFlat(0) == -3.0f);
  CHECK(out[2].GetFlat(0) == 2.0f);
  const float out_scale = 127.5f / 3.0f;
  int64_t wrong = 0;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 5; ++c)
      for (int64_t k = 0; k < 21; ++k) {
        const double want = c < 2 ? RoundClamp(a.GetFlat((n * 2 + c) * 21 + k) * (out_scale / (255.5f / 2.0f)), -128, 127)
                                  : RoundClamp(b.GetFlat((n * 3 + c - 2) * 21 + k) * (out_scale / (127.5f / 3.0f)), -128, 127);
        wrong += out[0].GetFlat((n * 5 + c) * 21 + k) != want;
      }
  CHECK(wrong == 0);
  // Inputs already on the output's levels (the same type and range) are copied as they are.
  auto same = RunAll("_contrib_quantized_concat", {{"num_args", "2"}, {"dim", "1"}},
                     {{"arg0", b}, {"arg1", b}, {"arg0_min", Range(-3)}, {"arg0_max", Range(3)}, {"arg1_min", Range(-3)},
                      {"arg1_max", Range(3)}});
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 63; ++i) {
      CHECK(same[0].GetFlat(n * 126 + i) == b.GetFlat(n * 63 + i));
      CHECK(same[0].GetFlat(n * 126 + 63 + i) == b.GetFlat(n * 63 + i));
    }
}

TEST_CASE("quantized elemwise_add: calibrated to int8, otherwise int32 over the sum of the ranges", "[ops][quantization][quantized_tensor_ops]") {
  // 70 levels: two vectors of 32 and a tail.
  NDArray a = RandomLevels(TShape({70}), DType::kInt8, -128, 127, 66), b = RandomLevels(TShape({70}), DType::kInt8, -128, 127, 67);
  std::map<std::string, NDArray> in{{"lhs", a}, {"rhs", b}, {"lhs_min", Range(-1)}, {"lhs_max", Range(1)},
                                    {"rhs_min", Range(-2)}, {"rhs_max", Range(0.5f)}};
  const float as = 127.5f / 1.0f, bs = 127.5f / 2.0f;
  auto cal = RunAll("_contrib_quantized_elemwise_add", {{"min_calib_range", "-2.5"}, {"max_calib_range", "2.5"}}, in);
  REQUIRE(cal[0].dtype() == DType::kInt8);
  const float os = 127.5f / 2.5f;
  for (int64_t i = 0; i < a.Size(); ++i)
    CHECK(cal[0].GetFlat(i) == RoundClamp(a.GetFlat(i) * (os / as) + b.GetFlat(i) * (os / bs), -128, 127));
  auto raw = RunAll("_contrib_quantized_elemwise_add", {}, in);
  REQUIRE(raw[0].dtype() == DType::kInt32);
  CHECK(raw[2].GetFlat(0) == 3.0f);
  for (int64_t i = 0; i < a.Size(); ++i) {
    // Back in float, the sum of the dequantized inputs.
    const double value = raw[0].data<int32_t>()[i] * (3.0 / 2147483648.0);
    CHECK(value == Approx(a.GetFlat(i) / as + b.GetFlat(i) / bs).margin(1e-6));
  }
}

TEST_CASE("quantized elemwise_mul: int32 products, int8 truncated over the calibrated range, or float32", "[ops][quantization][quantized_tensor_ops]") {
  NDArray a = RandomLevels(TShape({3, 37}), DType::kInt8, -128, 127, 81);
  NDArray b = RandomLevels(TShape({3, 37}), DType::kInt8, -128, 127, 82);
  const std::map<std::string, NDArray> in{{"lhs", a}, {"rhs", b}, {"lhs_min", Range(-2)}, {"lhs_max", Range(1.5f)},
                                          {"rhs_min", Range(-0.5f)}, {"rhs_max", Range(0.25f)}};
  const float sa = 127.5f / 2.0f, sb = 127.5f / 0.5f;
  auto raw = RunAll("_contrib_quantized_elemwise_mul", {}, in);
  REQUIRE(raw[0].dtype() == DType::kInt32);
  const float range = (2.0f / 127.0f) * (0.5f / 127.0f) * 2147483648.0f;
  CHECK(raw[1].GetFlat(0) == -range);
  CHECK(raw[2].GetFlat(0) == range);
  auto calibrated = RunAll("_contrib_quantized_elemwise_mul", {{"min_calib_range", "-0.3"}, {"max_calib_range", "0.4"}}, in);
  REQUIRE(calibrated[0].dtype() == DType::kInt8);
  CHECK(calibrated[2].GetFlat(0) == 0.4f);
  auto as_float = RunAll("_contrib_quantized_elemwise_mul", {{"enable_float_output", "True"}}, in);
  REQUIRE(as_float.size() == 1);
  REQUIRE(as_float[0].dtype() == DType::kFloat32);
  const float to_int8 = 127.5f / 0.4f / sa / sb, to_float = float(1.0 / sa / sb);
  int64_t wrong = 0;
  for (int64_t i = 0; i < a.Size(); ++i) {
    const int32_t product = int32_t(a.GetFlat(i)) * int32_t(b.GetFlat(i));
    wrong += raw[0].data<int32_t>()[i] != product;
    wrong += calibrated[0].GetFlat(i) != std::trunc(std::min(127.0f, std::max(-128.0f, float(product) * to_int8)));
    wrong += as_float[0].GetFlat(i) != float(product) * to_float;
  }
  CHECK(wrong == 0);
  NDArray u = RandomLevels(TShape({3, 37}), DType::kUint8, 0, 255, 83);
  REQUIRE_THROWS_AS(RunAll("_contrib_quantized_elemwise_mul", {}, {{"lhs", u}, {"rhs", b}, {"lhs_min", Range(0)},
                                                                   {"lhs_max", Range(1)}, {"rhs_min", Range(-1)},
                                                                   {"rhs_max", Range(1)}}),
                    TypeError);
}
