// _sample_multinomial: draws per distribution with the given class frequencies, the output shape
// and dtype rules, the log-probability output and its gradient (head / p per draw, summed per
// class), and bad probabilities.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_sample_multinomial draws classes with their probabilities", "[ops][random]") {
  NDArray p(TShape({2, 4}), {0.1f, 0.2f, 0.3f, 0.4f, 0.7f, 0.f, 0.f, 0.3f});
  const int64_t n = 20000;
  const std::vector<NDArray> out =
      Invoke("_sample_multinomial", {{"shape", StrCat("(", n, ",)")}, {"get_prob", "true"}}, {p}, {}, 5);
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape() == TShape({2, n}));
  CHECK(out[0].dtype() == DType::kInt32);
  CHECK(out[1].dtype() == DType::kFloat32);
  for (int64_t i = 0; i < 2; ++i) {
    std::vector<double> freq(4, 0.0);
    for (int64_t j = 0; j < n; ++j) {
      const int32_t c = out[0].data<int32_t>()[i * n + j];
      REQUIRE(c >= 0);
      REQUIRE(c < 4);
      freq[static_cast<size_t>(c)] += 1.0 / n;
      // The second output: log of the drawn class's probability.
      REQUIRE(out[1].fdata()[i * n + j] == Approx(std::log(p.fdata()[i * 4 + c])).margin(1e-6));
    }
    for (int64_t c = 0; c < 4; ++c) CHECK(freq[static_cast<size_t>(c)] == Approx(p.fdata()[i * 4 + c]).margin(0.015));
  }
}

TEST_CASE("_sample_multinomial shapes, dtypes and outputs", "[ops][random]") {
  NDArray p1(TShape({3}), {0.5f, 0.25f, 0.25f});
  const std::vector<NDArray> one = Invoke("_sample_multinomial", {}, {p1}, {}, 1);
  REQUIRE(one.size() == 1);  // no get_prob: one output
  CHECK(one[0].shape() == TShape({1}));
  CHECK(Invoke("_sample_multinomial", {{"shape", "(2, 5)"}}, {p1}, {}, 1)[0].shape() == TShape({2, 5}));
  NDArray p3(TShape({2, 3, 4}));
  p3.Fill(0.25f);
  const NDArray s = Invoke("_sample_multinomial", {{"shape", "(7,)"}, {"dtype", "float64"}}, {p3}, {}, 1)[0];
  CHECK(s.shape() == TShape({2, 3, 7}));
  CHECK(s.dtype() == DType::kFloat64);
  CHECK(Invoke("_sample_multinomial", {{"dtype", "uint8"}}, {p3}, {}, 1)[0].dtype() == DType::kUint8);
  // The same seed, the same draws.
  RequireClose(Invoke("_sample_multinomial", {{"shape", "(50,)"}}, {p1}, {}, 8)[0].AsType(DType::kFloat32),
               Invoke("_sample_multinomial", {{"shape", "(50,)"}}, {p1}, {}, 8)[0].AsType(DType::kFloat32), 0.f, 0.f);
  CHECK_THROWS_WITH(Invoke("_sample_multinomial", {}, {NDArray(TShape({2}), {0.5f, -0.5f})}),
                    Catch::Contains("probabilities must be finite and not negative"));
  CHECK_THROWS_AS(Invoke("_sample_multinomial", {}, {NDArray(TShape({2}), DType::kInt32)}), TypeError);
  // More classes than the output dtype holds exactly.
  NDArray many(TShape({256}));
  many.Fill(1.0f / 256);
  CHECK_THROWS_WITH(Invoke("_sample_multinomial", {{"dtype", "uint8"}}, {many}), Catch::Contains("sufficient precision"));
  CHECK(Invoke("_sample_multinomial", {{"dtype", "int32"}}, {many}, {}, 1)[0].dtype() == DType::kInt32);
}

TEST_CASE("_sample_multinomial's log-probability passes head / p to each drawn class", "[ops][random]") {
  NDArray p(TShape({2, 3}), {0.2f, 0.3f, 0.5f, 0.6f, 0.3f, 0.1f});
  auto exec = BindSingleOp("_sample_multinomial", {{"shape", "(40,)"}, {"get_prob", "true"}}, {{"data", p}});
  exec->Forward(true);
  const NDArray samples = exec->outputs()[0].Copy();
  NDArray head0(samples.shape()), head1(samples.shape());
  head0.Fill(1.0f);
  for (int64_t k = 0; k < head1.Size(); ++k) head1.fdata()[k] = 0.5f + 0.01f * static_cast<float>(k);
  exec->Backward({head0, head1});
  const NDArray grad = exec->grad_dict().at("op_data");
  // Naive: each draw adds its head gradient over its class's probability.
  std::vector<double> want(6, 0.0);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 40; ++j) {
      const int64_t k = i * 40 + j, c = samples.data<int32_t>()[k];
      want[static_cast<size_t>(i * 3 + c)] += head1.fdata()[k] / p.fdata()[i * 3 + c];
    }
  for (size_t k = 0; k < 6; ++k) CHECK(grad.fdata()[k] == Approx(want[k]).epsilon(1e-5));
  // Without get_prob the samples have no gradient.
  auto plain = BindSingleOp("_sample_multinomial", {{"shape", "(4,)"}}, {{"data", p}});
  plain->Forward(true);
  NDArray h(plain->outputs()[0].shape());
  h.Fill(1.0f);
  plain->Backward({h});
  for (int64_t k = 0; k < 6; ++k) CHECK(plain->grad_dict().at("op_data").fdata()[k] == 0.0f);
}
