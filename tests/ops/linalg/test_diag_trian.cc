// _linalg_extractdiag / makediag and _linalg_extracttrian / maketrian: every offset of small
// matrices, batched, against numpy's diagonal / diagflat / tril / triu written as loops.
#include "linalg_test_util.h"

using namespace symbind;
using namespace symbind::test;
using namespace symbind::test::la;

TEST_CASE("linalg extractdiag and makediag at every offset", "[ops][linalg][diag]") {
  for (int64_t n = 1; n <= 4; ++n)
    for (int64_t k = 1 - n; k < n; ++k) {
      INFO("n=" << n << " offset=" << k);
      std::vector<Dense> as, diags, made;
      const int64_t len = n - std::abs(k);
      for (uint64_t i = 0; i < 2; ++i) {
        as.push_back(RandomDense(n, n, 190 + i));
        Dense d(1, len), m(n, n);
        for (int64_t j = 0; j < len; ++j) {
          const int64_t r = k < 0 ? j - k : j, c = k > 0 ? j + k : j;
          d(0, j) = as.back()(r, c);
          m(r, c) = d(0, j);
        }
        diags.push_back(d);
        made.push_back(m);
      }
      const KwArgs p = {{"offset", std::to_string(k)}};
      const NDArray a = Stack(as, TShape({2, n, n}));
      const NDArray d = Invoke("_linalg_extractdiag", p, {a})[0];
      CHECK(d.shape() == TShape({2, len}));
      RequireNear(d, diags, 0);
      const NDArray m = Invoke("linalg_makediag", p, {d})[0];
      CHECK(m.shape() == TShape({2, n, n}));
      RequireNear(m, made, 0);
      CheckGradients64("_linalg_extractdiag", p, {{"A", a}});
      CheckGradients64("_linalg_makediag", p, {{"A", d}});
    }
  CHECK_THROWS_AS(Invoke("_linalg_extractdiag", {{"offset", "3"}}, {NDArray(TShape({3, 3}), DType::kFloat64)}), ShapeError);
}

TEST_CASE("linalg extracttrian and maketrian in MXNet's order", "[ops][linalg][trian]") {
  // A lower triangle row by row, an upper one column by column.
  Dense a(3, 3);
  a.v = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto extract = [&](KwArgs p) { return Doubles(Invoke("_linalg_extracttrian", p, {Stack(a)})[0]); };
  CHECK(extract({}) == std::vector<double>{1, 4, 5, 7, 8, 9});
  CHECK(extract({{"lower", "False"}}) == std::vector<double>{1, 2, 5, 3, 6, 9});
  CHECK(extract({{"offset", "-1"}}) == std::vector<double>{4, 7, 8});
  CHECK(extract({{"offset", "1"}}) == std::vector<double>{2, 3, 6});
  for (int64_t n = 1; n <= 4; ++n)
    for (int64_t k = 1 - n; k < n; ++k)
      for (bool lower : {true, false}) {
        if (k != 0 && !lower) continue;
        INFO("n=" << n << " offset=" << k << " lower=" << lower);
        const bool takes_lower = k < 0 || (k == 0 && lower);
        std::vector<Dense> as, want;
        for (uint64_t i = 0; i < 2; ++i) {
          as.push_back(RandomDense(n, n, 200 + i));
          Dense t(n, n);  // numpy's tril(a, k) or triu(a, k)
          for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < n; ++c)
              if (takes_lower ? c - r <= k : c - r >= k) t(r, c) = as.back()(r, c);
          want.push_back(t);
        }
        const KwArgs p = Flags({{"lower", lower}}, {{"offset", std::to_string(k)}});
        const NDArray a3 = Stack(as, TShape({2, n, n}));
        const NDArray v = Invoke("_linalg_extracttrian", p, {a3})[0];
        const int64_t m = n - std::abs(k);
        CHECK(v.shape() == TShape({2, m * (m + 1) / 2}));
        RequireNear(Invoke("linalg_maketrian", p, {v})[0], want, 0);
        CheckGradients64("_linalg_extracttrian", p, {{"A", a3}});
        CheckGradients64("_linalg_maketrian", p, {{"A", v}});
      }
  CHECK_THROWS_WITH(Invoke("_linalg_maketrian", {}, {NDArray(TShape({2, 4}), DType::kFloat64)}),
                    Catch::Contains("triangle"));
}
