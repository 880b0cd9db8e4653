// The single-weight optimizer updates, table-driven: each op runs through Invoke (the path
// MXImperativeInvoke takes) with its output aliased to the weight, as MXNet's Python optimizers
// call it, and the new weight, output and every state input updated in place are compared with
// a naive reference written in double from MXNet's documented formula.
#include <cmath>
#include <functional>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

// An op's inputs by name, as doubles; a reference updates the states and sets "out".
using Values = std::map<std::string, std::vector<double>>;

struct InputSpec {
  std::string name;
  float lo = -1.f, hi = 1.f;
  DType dtype = DType::kFloat32;
  TShape shape = TShape();  // empty: the weight's shape
};

struct UpdateCase {
  std::string op;
  KwArgs params;
  std::vector<InputSpec> inputs;
  // Updates the states in `v` and sets v["out"], element by element.
  std::function<void(Values& v, size_t i)> reference;
  bool out_is_weight = true;  // false: the output is a new array (lamb phase 1's g)
  float tol = 1e-5f;
};

double Clip(double g, double c) { return c >= 0 ? std::min(std::max(g, -c), c) : g; }
double Sign(double x) { return (x > 0) - (x < 0); }

InputSpec In(const std::string& name, float lo = -1.f, float hi = 1.f) { return {name, lo, hi}; }
InputSpec Half(const std::string& name) { return {name, -1.f, 1.f, DType::kFloat16}; }
InputSpec Scalar(const std::string& name, float lo, float hi) {
  return {name, lo, hi, DType::kFloat32, TShape({1})};
}

const double kLr = 0.1, kWd = 0.05, kRescale = 0.8, kClip = 0.6, kMomentum = 0.9;
const KwArgs kSgd{{"lr", "0.1"}, {"wd", "0.05"}, {"rescale_grad", "0.8"}, {"clip_gradient", "0.6"}};
KwArgs With(KwArgs base, const KwArgs& more) {
  for (auto& kv : more) base[kv.first] = kv.second;
  return base;
}

// sgd_mom_update's formula on element i of weight `w` (w itself for mp_*: weight32).
void SgdMomReference(Values& v, size_t i, const std::string& w, bool momentum) {
  double mom = momentum ? v["mom"][i] : 0.0;
  mom = (momentum ? kMomentum : 0.0) * mom - kLr * kWd * v[w][i] - kLr * Clip(kRescale * v["grad"][i], kClip);
  if (momentum) v["mom"][i] = mom;
  v[w][i] += mom;
  v["out"][i] = v[w][i];
}

void NagReference(Values& v, size_t i, const std::string& w) {
  const double g = Clip(kRescale * v["grad"][i], kClip) + kWd * v[w][i];
  // MXNet's doc: state = momentum*state + grad + wd*weight; weight -= lr*(grad + momentum*state),
  // stated here on the state scaled by -lr, as its kernel keeps it.
  const double mom = kMomentum * v["mom"][i] - kLr * g;
  v[w][i] = v[w][i] + kMomentum * mom - kLr * g;
  v["mom"][i] = mom;
  v["out"][i] = v[w][i];
}

void AdamWReference(Values& v, size_t i, const std::string& w) {
  const double rescale = v["rescale_grad"][0];
  const double g = Clip(rescale * v["grad"][i], 0.5);
  v["mean"][i] = 0.9 * v["mean"][i] + 0.1 * g;
  v["var"][i] = 0.99 * v["var"][i] + 0.01 * g * g;
  v[w][i] = v[w][i] - 0.7 * (0.01 * v["mean"][i] / (std::sqrt(v["var"][i]) + 1e-8) + 0.1 * v[w][i]);
  v["out"][i] = v[w][i];
}
const KwArgs kAdamW{{"lr", "0.01"}, {"beta1", "0.9"}, {"beta2", "0.99"}, {"eta", "0.7"},
                    {"wd", "0.1"}, {"clip_gradient", "0.5"}};

void LambPhaseOneReference(Values& v, size_t i, const std::string& w, bool bias_correction) {
  const double g = Clip(kRescale * v["grad"][i], kClip);
  v["mean"][i] = 0.9 * v["mean"][i] + 0.1 * g;
  v["var"][i] = 0.99 * v["var"][i] + 0.01 * g * g;
  const double m = bias_correction ? v["mean"][i] / (1 - std::pow(0.9, 3)) : v["mean"][i];
  const double s = bias_correction ? v["var"][i] / (1 - std::pow(0.99, 3)) : v["var"][i];
  v["out"][i] = m / (std::sqrt(s) + 1e-6) + kWd * v[w][i];
}
const KwArgs kLamb1{{"beta1", "0.9"}, {"beta2", "0.99"}, {"t", "3"}, {"wd", "0.05"},
                    {"rescale_grad", "0.8"}, {"clip_gradient", "0.6"}};

void LambPhaseTwoReference(Values& v, size_t i, const std::string& w) {
  double r1 = std::min(std::max(v["r1"][0], 0.5), 2.0);  // lower_bound 0.5, upper_bound 2
  const double r2 = v["r2"][0];
  const double lr = r1 == 0 || r2 == 0 ? kLr : kLr * r1 / r2;
  v[w][i] -= lr * v["g"][i];
  v["out"][i] = v[w][i];
}
const KwArgs kLamb2{{"lr", "0.1"}, {"lower_bound", "0.5"}, {"upper_bound", "2"}};

std::vector<UpdateCase> Cases() {
  return {
      {"sgd_update", kSgd, {In("weight"), In("grad")},
       [](Values& v, size_t i) { SgdMomReference(v, i, "weight", false); }},
      {"sgd_mom_update", With(kSgd, {{"momentum", "0.9"}}), {In("weight"), In("grad"), In("mom")},
       [](Values& v, size_t i) { SgdMomReference(v, i, "weight", true); }},
      {"mp_sgd_update", kSgd, {Half("weight"), Half("grad"), In("weight32")},
       [](Values& v, size_t i) { SgdMomReference(v, i, "weight32", false); }, true, 2e-3f},
      {"mp_sgd_mom_update", With(kSgd, {{"momentum", "0.9"}}),
       {Half("weight"), Half("grad"), In("mom"), In("weight32")},
       [](Values& v, size_t i) { SgdMomReference(v, i, "weight32", true); }, true, 2e-3f},
      {"nag_mom_update", With(kSgd, {{"momentum", "0.9"}}), {In("weight"), In("grad"), In("mom")},
       [](Values& v, size_t i) { NagReference(v, i, "weight"); }},
      {"mp_nag_mom_update", With(kSgd, {{"momentum", "0.9"}}),
       {Half("weight"), Half("grad"), In("mom"), In("weight32")},
       [](Values& v, size_t i) { NagReference(v, i, "weight32"); }, true, 2e-3f},
      {"adam_update",
       {{"lr", "0.01"}, {"beta1", "0.9"}, {"beta2", "0.99"}, {"epsilon", "1e-8"}, {"wd", "0.1"},
        {"rescale_grad", "0.8"}, {"clip_gradient", "0.5"}},
       {In("weight"), In("grad"), In("mean"), In("var", 0.f, 1.f)},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i] + 0.1 * v["weight"][i], 0.5);
         v["mean"][i] = 0.9 * v["mean"][i] + 0.1 * g;
         v["var"][i] = 0.99 * v["var"][i] + 0.01 * g * g;
         v["weight"][i] -= 0.01 * v["mean"][i] / (std::sqrt(v["var"][i]) + 1e-8);
         v["out"][i] = v["weight"][i];
       }},
      {"_adamw_update", kAdamW,
       {In("weight"), In("grad"), In("mean"), In("var", 0.f, 1.f), Scalar("rescale_grad", 0.5f, 2.f)},
       [](Values& v, size_t i) { AdamWReference(v, i, "weight"); }},
      {"_mp_adamw_update", kAdamW,
       {Half("weight"), Half("grad"), In("mean"), In("var", 0.f, 1.f), In("weight32"),
        Scalar("rescale_grad", 0.5f, 2.f)},
       [](Values& v, size_t i) { AdamWReference(v, i, "weight32"); }, true, 2e-3f},
      {"rmsprop_update",
       {{"lr", "0.1"}, {"gamma1", "0.9"}, {"epsilon", "1e-6"}, {"wd", "0.05"}, {"rescale_grad", "0.8"},
        {"clip_gradient", "0.6"}, {"clip_weights", "0.9"}},
       {In("weight"), In("grad"), In("n", 0.f, 1.f)},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i] + 0.05 * v["weight"][i], 0.6);
         v["n"][i] = 0.1 * g * g + 0.9 * v["n"][i];
         v["weight"][i] = Clip(v["weight"][i] - 0.1 * g / std::sqrt(v["n"][i] + 1e-6), 0.9);
         v["out"][i] = v["weight"][i];
       }},
      {"rmspropalex_update",
       {{"lr", "0.1"}, {"gamma1", "0.9"}, {"gamma2", "0.8"}, {"epsilon", "1e-6"}, {"wd", "0.05"},
        {"rescale_grad", "0.8"}, {"clip_gradient", "0.6"}},
       {In("weight"), In("grad"), In("n", 0.5f, 1.f), In("g", -0.2f, 0.2f), In("delta", -0.1f, 0.1f)},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i] + 0.05 * v["weight"][i], 0.6);
         v["n"][i] = 0.1 * g * g + 0.9 * v["n"][i];
         v["g"][i] = 0.1 * g + 0.9 * v["g"][i];
         v["delta"][i] = 0.8 * v["delta"][i] - 0.1 * g / std::sqrt(v["n"][i] - v["g"][i] * v["g"][i] + 1e-6);
         v["weight"][i] += v["delta"][i];
         v["out"][i] = v["weight"][i];
       }},
      {"ftrl_update",
       {{"lr", "0.1"}, {"lamda1", "0.3"}, {"beta", "1.5"}, {"wd", "0.05"}, {"rescale_grad", "0.8"},
        {"clip_gradient", "0.6"}},
       {In("weight"), In("grad"), In("z"), In("n", 0.f, 1.f)},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i], 0.6);
         double& z = v["z"][i];
         double& n = v["n"][i];
         z += g - (std::sqrt(n + g * g) - std::sqrt(n)) * v["weight"][i] / 0.1;
         n += g * g;
         v["weight"][i] = std::abs(z) > 0.3 ? (Sign(z) * 0.3 - z) / ((1.5 + std::sqrt(n)) / 0.1 + 0.05) : 0.0;
         v["out"][i] = v["weight"][i];
       }},
      {"ftml_update",
       {{"lr", "0.1"}, {"beta1", "0.6"}, {"beta2", "0.99"}, {"epsilon", "1e-6"}, {"t", "3"},
        {"wd", "0.05"}, {"rescale_grad", "0.8"}, {"clip_grad", "0.6"}},
       {In("weight"), In("grad"), In("d", 0.1f, 1.f), In("v", 0.f, 1.f), In("z")},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i] + 0.05 * v["weight"][i], 0.6);
         v["v"][i] = 0.99 * v["v"][i] + 0.01 * g * g;
         const double d_t = (1 - std::pow(0.6, 3)) / 0.1 * (std::sqrt(v["v"][i] / (1 - std::pow(0.99, 3))) + 1e-6);
         v["z"][i] = 0.6 * v["z"][i] + 0.4 * g - (d_t - 0.6 * v["d"][i]) * v["weight"][i];
         v["d"][i] = d_t;
         v["weight"][i] = -v["z"][i] / d_t;
         v["out"][i] = v["weight"][i];
       }},
      {"signsgd_update", kSgd, {In("weight"), In("grad")},
       [](Values& v, size_t i) {
         v["weight"][i] = (1 - kLr * kWd) * v["weight"][i] - kLr * Sign(v["grad"][i]);
         v["out"][i] = v["weight"][i];
       }},
      {"signum_update", With(kSgd, {{"momentum", "0.9"}, {"wd_lh", "0.02"}}),
       {In("weight"), In("grad"), In("mom")},
       [](Values& v, size_t i) {
         v["mom"][i] = kMomentum * v["mom"][i] -
                       (1 - kMomentum) * (kWd * v["weight"][i] + Clip(kRescale * v["grad"][i], kClip));
         v["weight"][i] = (1 - kLr * 0.02) * v["weight"][i] + kLr * Sign(v["mom"][i]);
         v["out"][i] = v["weight"][i];
       }},
      {"_sparse_adagrad_update",
       {{"lr", "0.1"}, {"epsilon", "1e-7"}, {"wd", "0.05"}, {"rescale_grad", "0.8"}, {"clip_gradient", "0.6"}},
       {In("weight"), In("grad"), In("history", 0.f, 1.f)},
       [](Values& v, size_t i) {
         const double g = Clip(0.8 * v["grad"][i], 0.6);
         v["history"][i] += g * g;
         v["weight"][i] -= 0.1 * (g / std::sqrt(v["history"][i] + 1e-7) + 0.05 * v["weight"][i]);
         v["out"][i] = v["weight"][i];
       }},
      {"lamb_update_phase1", kLamb1, {In("weight"), In("grad"), In("mean"), In("var", 0.f, 1.f)},
       [](Values& v, size_t i) { LambPhaseOneReference(v, i, "weight", true); }, false},
      {"lamb_update_phase1", With(kLamb1, {{"bias_correction", "False"}}),
       {In("weight"), In("grad"), In("mean"), In("var", 0.f, 1.f)},
       [](Values& v, size_t i) { LambPhaseOneReference(v, i, "weight", false); }, false},
      {"mp_lamb_update_phase1", kLamb1,
       {Half("weight"), Half("grad"), In("mean"), In("var", 0.f, 1.f), In("weight32")},
       [](Values& v, size_t i) { LambPhaseOneReference(v, i, "weight32", true); }, false, 2e-3f},
      {"lamb_update_phase2", kLamb2,
       {In("weight"), In("g"), Scalar("r1", 0.2f, 3.f), Scalar("r2", 0.5f, 2.f)},
       [](Values& v, size_t i) { LambPhaseTwoReference(v, i, "weight"); }},
      {"mp_lamb_update_phase2", kLamb2,
       {Half("weight"), In("g"), Scalar("r1", 0.2f, 3.f), Scalar("r2", 0.5f, 2.f), In("weight32")},
       [](Values& v, size_t i) { LambPhaseTwoReference(v, i, "weight32"); }, true, 2e-3f},
  };
}

NDArray MakeInput(const InputSpec& spec, const TShape& weight_shape, uint64_t seed) {
  const NDArray values = RandomArray(spec.shape.ndim() > 0 ? spec.shape : weight_shape, seed, spec.lo, spec.hi);
  return spec.dtype == DType::kFloat32 ? values : values.AsType(spec.dtype);
}

std::vector<double> AsDoubles(const NDArray& a) {
  const std::vector<float> f = a.ToVector();
  return std::vector<double>(f.begin(), f.end());
}

void CheckValues(const std::string& what, const NDArray& got, const std::vector<double>& want, float tol) {
  const std::vector<float> g = got.ToVector();
  REQUIRE(g.size() == want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    INFO(what << "[" << i << "]");
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace

TEST_CASE("Optimizer updates through Invoke match their formulas and update states in place",
          "[ops][optimizer][invoke]") {
  const TShape shape({3, 5});
  uint64_t seed = 100;
  for (const UpdateCase& c : Cases()) {
    SECTION(c.op + (c.params.count("bias_correction") ? " without bias correction" : "")) {
      std::vector<NDArray> inputs;
      Values want;
      for (const InputSpec& spec : c.inputs) {
        inputs.push_back(MakeInput(spec, shape, ++seed));
        want[spec.name] = AsDoubles(inputs.back());
      }
      want["out"].assign(static_cast<size_t>(shape.Size()), 0.0);
      for (size_t i = 0; i < want["out"].size(); ++i) c.reference(want, i);

      const NDArray weight_before = inputs[0].Copy();
      const std::vector<NDArray> outputs =
          c.out_is_weight ? Invoke(c.op, c.params, inputs, {inputs[0]}) : Invoke(c.op, c.params, inputs);
      REQUIRE(outputs.size() == 1);
      CHECK(outputs[0].dtype() == (c.out_is_weight ? inputs[0].dtype() : DType::kFloat32));
      CheckValues("out", outputs[0], want["out"], c.tol);
      if (c.out_is_weight) {
        CHECK(outputs[0].SharesStorageWith(inputs[0]));
      } else {
        RequireClose(inputs[0], weight_before, 0.f, 0.f);  // the weight is only read
      }
      // Every other input: states as the reference left them, the gradient unchanged.
      for (size_t k = 1; k < c.inputs.size(); ++k)
        CheckValues(c.inputs[k].name, inputs[k], want[c.inputs[k].name], c.tol);
    }
  }
}

TEST_CASE("Optimizer updates bound in an executor update their states like Invoke",
          "[ops][optimizer]") {
  // The symbolic path: the state is an argument the forward updates in place.
  const TShape shape({4, 3});
  NDArray w = RandomArray(shape, 1), g = RandomArray(shape, 2), mean = RandomArray(shape, 3),
          var = RandomArray(shape, 4, 0.f, 1.f);
  NDArray w2 = w.Copy(), mean2 = mean.Copy(), var2 = var.Copy();
  const KwArgs params{{"lr", "0.01"}, {"wd", "0.1"}};
  NDArray bound_out = RunForward("adam_update", params,
                                 {{"weight", w}, {"grad", g}, {"mean", mean}, {"var", var}});
  NDArray invoked_out = Invoke("adam_update", params, {w2, g, mean2, var2})[0];
  RequireClose(bound_out, invoked_out, 0.f, 0.f);
  RequireClose(mean, mean2, 0.f, 0.f);
  RequireClose(var, var2, 0.f, 0.f);
  CHECK(mean.GetFlat(0) != 0.f);
}

TEST_CASE("AdamW skips the update when rescale_grad is 0, NaN or infinite", "[ops][optimizer]") {
  const TShape shape({6});
  for (float rescale : {0.f, std::nanf(""), INFINITY}) {
    NDArray w = RandomArray(shape, 1), g = RandomArray(shape, 2), mean = RandomArray(shape, 3),
            var = RandomArray(shape, 4, 0.f, 1.f), scale(TShape({1}), std::vector<float>{rescale});
    const NDArray w0 = w.Copy(), mean0 = mean.Copy(), var0 = var.Copy();
    Invoke("_adamw_update", {{"lr", "0.1"}, {"eta", "1"}}, {w, g, mean, var, scale}, {w});
    RequireClose(w, w0, 0.f, 0.f);
    RequireClose(mean, mean0, 0.f, 0.f);
    RequireClose(var, var0, 0.f, 0.f);
  }
}

TEST_CASE("Optimizer updates reject mismatched shapes and dtypes", "[ops][optimizer][errors]") {
  NDArray w = RandomArray(TShape({3, 4}), 1), g = RandomArray(TShape({4, 3}), 2),
          mom = RandomArray(TShape({3, 4}), 3);
  CHECK_THROWS_AS(Invoke("sgd_mom_update", {{"lr", "0.1"}}, {w, g, mom}, {w}), ShapeError);
  // mp_*: weight32 and the states must be float32.
  NDArray w16 = w.AsType(DType::kFloat16), g16 = RandomArray(TShape({3, 4}), 4).AsType(DType::kFloat16);
  CHECK_THROWS_AS(Invoke("mp_sgd_mom_update", {{"lr", "0.1"}}, {w16, g16, mom, w16}), TypeError);
  // A non-mp update of a float16 weight computes through float32 copies (as MXNet's half_t).
  NDArray zeros16 = NDArray(TShape({3, 4}), DType::kFloat16);
  NDArray half = Invoke("adam_update", {{"lr", "0.1"}}, {w16, g16, zeros16, zeros16.Copy()})[0];
  NDArray full = Invoke("adam_update", {{"lr", "0.1"}},
                        {w16.AsType(DType::kFloat32), g16.AsType(DType::kFloat32), NDArray(TShape({3, 4})),
                         NDArray(TShape({3, 4}))})[0];
  CHECK(half.dtype() == DType::kFloat16);
  RequireClose(half.AsType(DType::kFloat32), full, 2e-3f, 2e-3f);
  // An integer weight is no weight.
  NDArray wi = w.AsType(DType::kInt32);
  CHECK_THROWS_WITH(Invoke("mp_sgd_update", {{"lr", "0.1"}}, {wi, wi, w}),
                    Catch::Contains("mp_sgd_update") && Catch::Contains("int32"));
  CHECK_THROWS_AS(Invoke("ftml_update", {{"lr", "0.1"}, {"t", "0"}}, {w, w, w, w, w}), ParamError);
}

TEST_CASE("Optimizer states of float64 and float16 arrays are updated in place as float32 ones",
          "[ops][optimizer][dtype]") {
  // Those dtypes compute through float32 copies; the states the op writes must come back.
  const TShape shape({3, 4});
  for (DType t : {DType::kFloat64, DType::kFloat16}) {
    INFO(DTypeName(t));
    NDArray w = RandomArray(shape, 1), g = RandomArray(shape, 2), mean = RandomArray(shape, 3),
            var = RandomArray(shape, 4, 0.f, 1.f);
    NDArray wt = w.AsType(t), gt = g.AsType(t), mean_t = mean.AsType(t), var_t = var.AsType(t);
    // The float32 run starts from the same (rounded) values.
    NDArray w32 = wt.AsType(DType::kFloat32), g32 = gt.AsType(DType::kFloat32),
            mean32 = mean_t.AsType(DType::kFloat32), var32 = var_t.AsType(DType::kFloat32);
    const KwArgs params{{"lr", "0.1"}, {"wd", "0.01"}};
    Invoke("adam_update", params, {wt, gt, mean_t, var_t}, {wt});
    Invoke("adam_update", params, {w32, g32, mean32, var32}, {w32});
    const float tol = t == DType::kFloat16 ? 2e-3f : 1e-6f;
    RequireClose(mean_t.AsType(DType::kFloat32), mean32, tol, tol);
    RequireClose(var_t.AsType(DType::kFloat32), var32, tol, tol);
    RequireClose(wt.AsType(DType::kFloat32), w32, tol, tol);
    RequireClose(gt.AsType(DType::kFloat32), g.AsType(t).AsType(DType::kFloat32), 0.f, 0.f);  // only read
  }
}

TEST_CASE("_multi_lamb_update and _multi_mp_lamb_update run both LAMB phases per tensor",
          "[ops][optimizer][invoke]") {
  for (bool mixed : {false, true}) {
    SECTION(mixed ? "_multi_mp_lamb_update" : "_multi_lamb_update") {
      const std::vector<TShape> shapes = {TShape({2, 3}), TShape({4})};
      const std::vector<double> lrs = {0.1, 0.2}, wds = {0.01, 0.0}, steps = {2, 5};
      const DType low = mixed ? DType::kFloat16 : DType::kFloat32;
      std::vector<NDArray> inputs, weights, means, masters;
      std::vector<std::vector<double>> want_w, want_mean;
      uint64_t seed = 40;
      for (size_t k = 0; k < shapes.size(); ++k) {
        NDArray w32 = RandomArray(shapes[k], ++seed), w = w32.AsType(low),
                g = RandomArray(shapes[k], ++seed).AsType(low), mean = RandomArray(shapes[k], ++seed),
                var = RandomArray(shapes[k], ++seed, 0.f, 1.f);
        for (const NDArray& a : {w, g, mean, var}) inputs.push_back(a);
        if (mixed) inputs.push_back(w32);
        weights.push_back(w);
        means.push_back(mean);
        masters.push_back(w32);
        // Phase 1 from the formula, then the trust ratio from the norms, then phase 2.
        const size_t n = static_cast<size_t>(w.Size());
        std::vector<double> step(n), m(n);
        double w_sq = 0, g_sq = 0;
        for (size_t i = 0; i < n; ++i) {
          const double grad = Clip(0.5 * g.GetFlat(i), -1);
          m[i] = 0.9 * mean.GetFlat(i) + 0.1 * grad;
          const double v = 0.99 * var.GetFlat(i) + 0.01 * grad * grad;
          const double src = mixed ? w32.GetFlat(i) : w.GetFlat(i);
          step[i] = m[i] / (1 - std::pow(0.9, steps[k])) / (std::sqrt(v / (1 - std::pow(0.99, steps[k]))) + 1e-6) +
                    wds[k] * src;
          w_sq += double(w.GetFlat(i)) * w.GetFlat(i);
          g_sq += step[i] * step[i];
        }
        const double lr = lrs[k] * std::sqrt(w_sq) / std::sqrt(g_sq);
        std::vector<double> nw(n);
        for (size_t i = 0; i < n; ++i) nw[i] = (mixed ? w32.GetFlat(i) : w.GetFlat(i)) - lr * step[i];
        want_w.push_back(nw);
        want_mean.push_back(m);
      }
      const std::string op = mixed ? "_multi_mp_lamb_update" : "_multi_lamb_update";
      Invoke(op,
             {{"learning_rates", "(0.1, 0.2)"}, {"wds", "(0.01, 0)"}, {"step_count", "[2, 5]"},
              {"beta2", "0.99"}, {"rescale_grad", "0.5"}, {"num_tensors", "2"}},
             inputs, weights);
      for (size_t k = 0; k < shapes.size(); ++k) {
        CheckValues("weight", weights[k], want_w[k], mixed ? 2e-3f : 1e-5f);
        CheckValues("mean", means[k], want_mean[k], 1e-5f);
        if (mixed) CheckValues("weight32", masters[k], want_w[k], 1e-5f);
      }
    }
  }
}

TEST_CASE("_multi_adamw_update steps each weight as _adamw_update does with its own lr, wd, eta",
          "[ops][optimizer][invoke]") {
  for (bool mixed : {false, true}) {
    SECTION(mixed ? "_multi_mp_adamw_update" : "_multi_adamw_update") {
      const std::vector<TShape> shapes = {TShape({3}), TShape({2, 2})};
      const std::vector<KwArgs> single = {{{"lr", "0.1"}, {"wd", "0.01"}, {"eta", "0.5"}},
                                          {{"lr", "0.2"}, {"wd", "0"}, {"eta", "1"}}};
      const DType low = mixed ? DType::kFloat16 : DType::kFloat32;
      NDArray scale(TShape({1}), std::vector<float>{0.5f});
      std::vector<NDArray> inputs, weights, expected_w, expected_states;
      uint64_t seed = 70;
      for (size_t k = 0; k < shapes.size(); ++k) {
        NDArray w32 = RandomArray(shapes[k], ++seed), w = w32.AsType(low),
                g = RandomArray(shapes[k], ++seed).AsType(low), mean = RandomArray(shapes[k], ++seed),
                var = RandomArray(shapes[k], ++seed, 0.f, 1.f);
        std::vector<NDArray> group = {w, g, mean, var};
        if (mixed) group.push_back(w32);
        for (const NDArray& a : group) inputs.push_back(a);
        weights.push_back(w);
        // The single-weight op on copies is the reference.
        std::vector<NDArray> copies;
        for (const NDArray& a : group) copies.push_back(a.Copy());
        copies.push_back(scale);
        Invoke(mixed ? "_mp_adamw_update" : "_adamw_update", single[k], copies, {copies[0]});
        expected_w.push_back(copies[0]);
        expected_states.push_back(copies[2]);
        expected_states.push_back(copies[3]);
        if (mixed) expected_states.push_back(copies[4]);
      }
      inputs.push_back(scale);
      Invoke(mixed ? "_multi_mp_adamw_update" : "_multi_adamw_update",
             {{"lrs", "(0.1, 0.2)"}, {"wds", "(0.01, 0)"}, {"etas", "(0.5, 1)"}, {"num_weights", "2"}},
             inputs, weights);
      const size_t stride = mixed ? 5 : 4;
      for (size_t k = 0; k < shapes.size(); ++k) {
        RequireClose(weights[k], expected_w[k], 0.f, 0.f);
        for (size_t j = 2; j < stride; ++j)
          RequireClose(inputs[k * stride + j], expected_states[k * (stride - 2) + j - 2], 0.f, 0.f);
      }
      CHECK(weights[0].GetFlat(0) != RandomArray(shapes[0], 71).AsType(low).GetFlat(0));
    }
  }
}
