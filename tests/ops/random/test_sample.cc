// The samplers: every distribution's sample mean and variance against its formula (enough
// draws that a wrong parameterization is far outside the tolerance), the dtype and shape rules
// of _random_*, _random_*_like and _sample_*, reproducibility per seed, and bad parameters.
#include <cmath>
#include <set>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

std::vector<double> Doubles(const NDArray& a) {
  const std::vector<float> f = a.ToVector();
  return std::vector<double>(f.begin(), f.end());
}

struct Moments {
  double mean = 0, variance = 0;
};
Moments MomentsOf(const NDArray& a) {
  const std::vector<double> v = Doubles(a);
  Moments m;
  for (double x : v) m.mean += x;
  m.mean /= static_cast<double>(v.size());
  for (double x : v) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

struct DistCase {
  std::string name;
  KwArgs params;
  double mean, variance;
  bool integral;
};

const std::vector<DistCase> kCases = {
    {"uniform", {{"low", "-1"}, {"high", "3"}}, 1.0, 16.0 / 12, false},
    {"normal", {{"loc", "2"}, {"scale", "0.5"}}, 2.0, 0.25, false},
    {"gamma", {{"alpha", "2"}, {"beta", "3"}}, 6.0, 18.0, false},  // shape * scale, shape * scale^2
    {"exponential", {{"lam", "4"}}, 0.25, 1.0 / 16, false},       // rate 4
    {"poisson", {{"lam", "3"}}, 3.0, 3.0, true},
    // failures before k successes, p the success probability: k(1-p)/p, k(1-p)/p^2
    {"negative_binomial", {{"k", "3"}, {"p", "0.4"}}, 4.5, 11.25, true},
    // mean mu, variance mu + alpha*mu^2
    {"generalized_negative_binomial", {{"mu", "2"}, {"alpha", "0.5"}}, 2.0, 4.0, true},
};

}  // namespace

TEST_CASE("Samplers draw with their distribution's mean and variance", "[ops][random]") {
  const int64_t n = 40000;
  for (const DistCase& c : kCases) {
    SECTION(c.name) {
      KwArgs params = c.params;
      params["shape"] = StrCat("(", n, ",)");
      const NDArray a = Invoke("_random_" + c.name, params, std::vector<NDArray>{}, {}, 7)[0];
      const Moments m = MomentsOf(a);
      // Standard errors at n = 40000 are under 1% of these moments' scale; 5% tolerates noise only.
      CHECK(m.mean == Approx(c.mean).epsilon(0.05));
      CHECK(m.variance == Approx(c.variance).epsilon(0.08));
      if (c.integral)
        for (double x : Doubles(a)) REQUIRE(x == std::floor(x));

      // _random_<d>_like: data's shape and dtype, the same draws for the same seed.
      KwArgs like_params = c.params;
      NDArray data(TShape({n}), DType::kFloat64);
      const NDArray like = Invoke("_random_" + c.name + "_like", like_params, {data}, {}, 7)[0];
      CHECK(like.dtype() == DType::kFloat64);
      CHECK(like.shape() == TShape({n}));
      RequireClose(like.AsType(DType::kFloat32), a, 1e-6f, 1e-6f);
    }
  }
}

TEST_CASE("_sample_* draws per element of its parameter arrays", "[ops][random]") {
  // Two normal distributions far apart: each row's draws sit around its own mean.
  NDArray mu(TShape({2}), {-10.f, 10.f}), sigma(TShape({2}), {1.f, 2.f});
  const NDArray s = Invoke("_sample_normal", {{"shape", "(5000,)"}}, {mu, sigma}, {}, 3)[0];
  REQUIRE(s.shape() == TShape({2, 5000}));
  const Moments low = MomentsOf(s.At(0)), high = MomentsOf(s.At(1));
  CHECK(low.mean == Approx(-10).margin(0.1));
  CHECK(high.mean == Approx(10).margin(0.2));
  CHECK(high.variance == Approx(4).epsilon(0.1));
  // One-parameter distributions take one input; dtype picks the output's.
  NDArray lam(TShape({3}), {1.f, 2.f, 3.f});
  const NDArray e = Invoke("_sample_exponential", {{"shape", "(2, 2)"}, {"dtype", "float16"}}, {lam}, {}, 3)[0];
  CHECK(e.shape() == TShape({3, 2, 2}));
  CHECK(e.dtype() == DType::kFloat16);
  CHECK_THROWS_AS(Invoke("_sample_uniform", {}, {mu, NDArray(TShape({3}))}), ShapeError);
  CHECK_THROWS_WITH(Invoke("_sample_uniform", {}, {mu, NDArray(TShape({2}))}),
                    Catch::Contains("low (10) must be below high (0)"));
}

TEST_CASE("Samplers honour dtype, reproduce per seed and reject bad parameters", "[ops][random][errors]") {
  const NDArray h = Invoke("_random_uniform", {{"shape", "(3, 4)"}, {"dtype", "float16"}, {"ctx", "cpu(0)"}},
                           std::vector<NDArray>{}, {}, 1)[0];
  CHECK(h.dtype() == DType::kFloat16);
  // Without dtype the output given decides (initializers of float16 weights).
  NDArray w(TShape({8}), DType::kFloat16);
  Invoke("normal", {{"loc", "5"}}, std::vector<NDArray>{}, {w}, 2);
  CHECK(MomentsOf(w).mean == Approx(5).margin(1.5));

  const KwArgs ints{{"low", "-3"}, {"high", "4"}, {"shape", "(2000,)"}};
  const NDArray r = Invoke("_random_randint", ints, std::vector<NDArray>{}, {}, 5)[0];
  CHECK(r.dtype() == DType::kInt32);
  std::set<double> seen;
  for (double x : Doubles(r)) seen.insert(x);
  CHECK(seen == std::set<double>{-3, -2, -1, 0, 1, 2, 3});
  KwArgs ints64 = ints;
  ints64["dtype"] = "int64";
  CHECK(Invoke("_random_randint", ints64, std::vector<NDArray>{}, {}, 5)[0].dtype() == DType::kInt64);
  RequireClose(Invoke("_random_randint", ints, std::vector<NDArray>{}, {}, 5)[0], r, 0.f, 0.f);

  CHECK_THROWS_WITH(Invoke("_random_randint", {{"low", "4"}, {"high", "4"}, {"shape", "(2,)"}},
                           std::vector<NDArray>{}),
                    Catch::Contains("low must be below high"));
  CHECK_THROWS_WITH(Invoke("_random_gamma", {{"alpha", "-1"}, {"shape", "(2,)"}}, std::vector<NDArray>{}),
                    Catch::Contains("_random_gamma: alpha and beta must be positive"));
  CHECK_THROWS_AS(Invoke("_random_poisson", {{"dtype", "int32"}, {"shape", "(2,)"}}, std::vector<NDArray>{}),
                  ParamError);
  CHECK_THROWS_AS(Invoke("_random_normal_like", {}, {NDArray(TShape({2}), DType::kInt32)}), TypeError);
}
