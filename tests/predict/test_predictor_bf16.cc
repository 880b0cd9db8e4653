// PredictorOptions::precision = kBfloat16 on a small net (3x3, stride-2 3x3 and 1x1
// convolutions, a residual add, FullyConnected at batch 1 and 3): close to float32, not equal to
// it (the bf16 kernels did run), the same bits on 1 and 2 threads. Without AVX512_BF16 (or under
// SYMBIND_GEMM_ISA=avx2: ctest entry bf16_refused_avx2) the predictor refuses at construction.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include <symbind/core/error.h>
#include <symbind/executor/threading.h>
#include <symbind/ops/kernels/gemm_bf16.h>
#include <symbind/predict/predictor.h>

#include "../op_test_util.h"

using namespace symbind;

namespace {
Symbol Conv(const Symbol& x, int filters, const std::string& name, const std::string& kernel, const std::string& stride,
            const std::string& pad) {
  return OpBuilder("Convolution").SetParam("kernel", kernel).SetParam("stride", stride).SetParam("pad", pad)
      .SetParam("num_filter", filters).SetInput("data", x).CreateSymbol(name);
}
Symbol Relu(const Symbol& x, const std::string& name) {
  return OpBuilder("Activation").SetParam("act_type", "relu").SetInput("data", x).CreateSymbol(name);
}
Symbol SmallNet() {
  Symbol a = Relu(Conv(Symbol::Variable("data"), 16, "conv_a", "(3,3)", "(1,1)", "(1,1)"), "relu_a");
  Symbol b = Relu(Conv(a, 32, "conv_b", "(3,3)", "(2,2)", "(1,1)"), "relu_b");
  Symbol c = Conv(b, 32, "conv_c", "(1,1)", "(1,1)", "(0,0)");
  Symbol sum = Relu(OpBuilder("elemwise_add").SetInput("lhs", b).SetInput("rhs", c).CreateSymbol("add"), "relu_sum");
  return OpBuilder("FullyConnected").SetParam("num_hidden", 10).SetInput("data", sum).CreateSymbol("fc");
}

NDArray Run(int64_t batch, Precision precision, int threads) {
  PredictorOptions o;
  o.allow_missing = true;  // weights from N(0,1), seeded: the same for every predictor
  o.precision = precision;
  const int before = GetNumThreads();
  SetNumThreads(threads);
  Predictor p(SmallNet(), {}, {}, {{"data", TShape({batch, 3, 20, 20})}}, o);
  p.SetInput("data", symbind::test::RandomArray(TShape({batch, 3, 20, 20}), 11));
  p.Forward();
  SetNumThreads(before);
  return p.Output(0).Copy();
}
}  // namespace

TEST_CASE("Predictor precision bf16: close to float32, not float32, the same bits on any thread count", "[bf16]") {
  if (!Bf16Available()) {
    PredictorOptions o;
    o.allow_missing = true;
    o.precision = Precision::kBfloat16;
    REQUIRE_THROWS_AS(Predictor(SmallNet(), {}, {}, {{"data", TShape({1, 3, 20, 20})}}, o), Error);
    REQUIRE_THROWS_WITH(Predictor(SmallNet(), {}, {}, {{"data", TShape({1, 3, 20, 20})}}, o),
                        Catch::Contains("precision bf16 needs"));
    WARN("bf16 refused here: " << Bf16Unavailable());
    return;
  }
  for (int64_t batch : {1, 3}) {
    INFO("batch " << batch);
    const NDArray fp32 = Run(batch, Precision::kFloat32, 2);
    const NDArray bf16 = Run(batch, Precision::kBfloat16, 2), bf16_one = Run(batch, Precision::kBfloat16, 1);
    REQUIRE(bf16.shape() == fp32.shape());
    CHECK(std::memcmp(bf16.raw_data(), bf16_one.raw_data(), bf16.bytes()) == 0);
    double worst = 0, scale = 0;
    for (int64_t i = 0; i < fp32.Size(); ++i) {
      worst = std::max(worst, double(std::fabs(bf16.fdata()[i] - fp32.fdata()[i])));
      scale = std::max(scale, double(std::fabs(fp32.fdata()[i])));
    }
    INFO("max |bf16 - float32| " << worst << " of " << scale);
    CHECK(worst > 0);               // bf16 ran: its rounding shows
    CHECK(worst <= 0.02 * scale);   // 8-bit mantissas through four layers
  }
}
