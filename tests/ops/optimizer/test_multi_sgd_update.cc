// The fused multi-weight SGD updates (multi_*, preloaded_multi_*) through Invoke with every
// output aliased to its weight, as MXNet's SGD optimizer calls them: each weight and state must
// end as the naive per-weight SGD formula leaves it, with that weight's lr and wd. Then
// multi_sum_sq and multi_lars against their formulas.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

double Clip(double g, double c) { return c >= 0 ? std::min(std::max(g, -c), c) : g; }

struct Variant {
  std::string op;
  bool momentum, mixed, preloaded;
};

}  // namespace

TEST_CASE("multi_* SGD updates step every weight with its own lr and wd", "[ops][optimizer][invoke]") {
  const std::vector<Variant> variants = {
      {"multi_sgd_update", false, false, false},
      {"multi_sgd_mom_update", true, false, false},
      {"multi_mp_sgd_update", false, true, false},
      {"multi_mp_sgd_mom_update", true, true, false},
      {"preloaded_multi_sgd_update", false, false, true},
      {"preloaded_multi_sgd_mom_update", true, false, true},
      {"preloaded_multi_mp_sgd_update", false, true, true},
      {"preloaded_multi_mp_sgd_mom_update", true, true, true},
  };
  const std::vector<TShape> shapes = {TShape({2, 3}), TShape({5}), TShape({1, 2, 2})};
  const std::vector<double> lrs = {0.1, 0.05, 0.2}, wds = {0.0, 0.1, 0.01};
  const double momentum = 0.9, rescale = 0.5, clip = 0.4;
  for (const Variant& v : variants) {
    SECTION(v.op) {
      const DType low = v.mixed ? DType::kFloat16 : DType::kFloat32;
      std::vector<NDArray> inputs, weights, moms, masters;
      std::vector<std::vector<double>> want_w, want_mom;
      uint64_t seed = 1;
      for (size_t k = 0; k < shapes.size(); ++k) {
        NDArray w32 = RandomArray(shapes[k], ++seed);
        NDArray w = w32.AsType(low), g = RandomArray(shapes[k], ++seed).AsType(low),
                mom = RandomArray(shapes[k], ++seed);
        inputs.push_back(w);
        inputs.push_back(g);
        if (v.momentum) inputs.push_back(mom);
        if (v.mixed) inputs.push_back(w32);
        weights.push_back(w);
        moms.push_back(mom);
        masters.push_back(w32);
        // The naive rule, from the values as stored (float16 weights step their float32 copy).
        std::vector<double> wk, mk;
        for (int64_t i = 0; i < w.Size(); ++i) {
          double m = v.momentum ? mom.GetFlat(i) : 0.0;
          const double wi = v.mixed ? w32.GetFlat(i) : w.GetFlat(i);
          m = (v.momentum ? momentum : 0.0) * m - lrs[k] * wds[k] * wi - lrs[k] * Clip(rescale * g.GetFlat(i), clip);
          wk.push_back(wi + m);
          mk.push_back(m);
        }
        want_w.push_back(wk);
        want_mom.push_back(mk);
      }
      KwArgs params{{"num_weights", "3"}, {"rescale_grad", "0.5"}, {"clip_gradient", "0.4"}};
      if (v.momentum) params["momentum"] = "0.9";
      if (v.preloaded) {
        inputs.push_back(NDArray(TShape({3}), std::vector<float>{0.1f, 0.05f, 0.2f}));
        inputs.push_back(NDArray(TShape({3}), std::vector<float>{0.0f, 0.1f, 0.01f}));
      } else {
        params["lrs"] = "(0.1, 0.05, 0.2)";
        params["wds"] = "[0.0, 0.1, 0.01]";  // Python passes lists as well as tuples
      }
      const std::vector<NDArray> out = Invoke(v.op, params, inputs, weights);
      REQUIRE(out.size() == 3);
      const float tol = v.mixed ? 2e-3f : 1e-6f;
      for (size_t k = 0; k < shapes.size(); ++k) {
        CHECK(out[k].SharesStorageWith(weights[k]));
        CHECK(out[k].dtype() == low);
        for (int64_t i = 0; i < weights[k].Size(); ++i) {
          INFO("weight " << k << " element " << i);
          CHECK(weights[k].GetFlat(i) == Approx(want_w[k][i]).margin(tol));
          if (v.momentum) CHECK(moms[k].GetFlat(i) == Approx(want_mom[k][i]).margin(1e-6));
          if (v.mixed) CHECK(masters[k].GetFlat(i) == Approx(want_w[k][i]).margin(1e-6));
        }
      }
    }
  }
}

TEST_CASE("multi_sgd_update names its inputs as MXNet does and checks lrs against num_weights",
          "[ops][optimizer][errors]") {
  NodeAttrs attrs;
  attrs.op = &OpRegistry::Global().Get("multi_mp_sgd_mom_update");
  attrs.dict = {{"lrs", "(1, 2)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}};
  attrs.op->ParseAttrs(&attrs);
  CHECK(attrs.op->ListArguments(attrs) ==
        std::vector<std::string>{"weight_0", "grad_0", "mom_0", "weight32_0", "weight_1", "grad_1",
                                 "mom_1", "weight32_1"});
  CHECK(attrs.op->ListOutputs(attrs) == std::vector<std::string>{"output0", "output1"});

  NDArray w = RandomArray(TShape({4}), 1), g = RandomArray(TShape({4}), 2);
  CHECK_THROWS_WITH(Invoke("multi_sgd_update", {{"lrs", "(0.1)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}},
                           {w, g, w, g}),
                    Catch::Contains("lrs must hold num_weights learning rates (got lrs=(0.1,), num_weights=2)"));
  NDArray short_grad = RandomArray(TShape({3}), 3);
  CHECK_THROWS_AS(Invoke("multi_sgd_update", {{"lrs", "(0.1, 0.1)"}, {"wds", "(0, 0)"}, {"num_weights", "2"}},
                         {w, g, w, short_grad}),
                  ShapeError);
}

TEST_CASE("multi_sum_sq and multi_lars follow their formulas", "[ops][optimizer]") {
  NDArray a = RandomArray(TShape({3, 4}), 1), b = RandomArray(TShape({7}), 2).AsType(DType::kFloat16),
          c(TShape({2}));  // all zeros
  NDArray sums = Invoke("multi_sum_sq", {{"num_arrays", "3"}}, {a, b, c})[0];
  REQUIRE(sums.shape() == TShape({3}));
  CHECK(sums.dtype() == DType::kFloat32);
  const NDArray* arrays[] = {&a, &b, &c};
  for (int k = 0; k < 3; ++k) {
    double want = 0;
    for (int64_t i = 0; i < arrays[k]->Size(); ++i) want += double(arrays[k]->GetFlat(i)) * arrays[k]->GetFlat(i);
    CHECK(sums.GetFlat(k) == Approx(want).epsilon(1e-6));
  }

  // Weight norms 2, 0, 3; gradient norms 1, 1, 0: only the first gets a LARS rate.
  NDArray lrs(TShape({3}), {0.1f, 0.2f, 0.3f}), w_sq(TShape({3}), {4.f, 0.f, 9.f}),
          g_sq(TShape({3}), {1.f, 1.f, 0.f}), wds(TShape({3}), {0.01f, 0.01f, 0.01f});
  NDArray rates = Invoke("multi_lars", {{"eta", "0.5"}, {"eps", "1e-3"}, {"rescale_grad", "2"}},
                         {lrs, w_sq, g_sq, wds})[0];
  CHECK(rates.GetFlat(0) == Approx(0.1 * 0.5 * 2 / (1 * 2 + 0.01 * 2 + 1e-3)).epsilon(1e-6));
  CHECK(rates.GetFlat(1) == Approx(0.2f));
  CHECK(rates.GetFlat(2) == Approx(0.3f));
}
