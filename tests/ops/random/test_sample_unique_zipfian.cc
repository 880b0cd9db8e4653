// _sample_unique_zipfian: distinct classes per row, in range, drawn with the probabilities of
// round(exp(u * log(range_max))) - 1, the draws counted.
#include <algorithm>
#include <cmath>
#include <set>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_sample_unique_zipfian draws distinct log-uniform classes and counts the draws", "[ops][random]") {
  const int64_t range = 50, rows = 400, per_row = 10;
  const std::vector<NDArray> out = Invoke("_sample_unique_zipfian", {{"range_max", "50"}, {"shape", "(400, 10)"}},
                                          std::vector<NDArray>{}, {}, 17);
  REQUIRE(out.size() == 2);
  REQUIRE(out[0].shape() == TShape({rows, per_row}));
  REQUIRE(out[1].shape() == TShape({rows}));
  CHECK(out[0].dtype() == DType::kInt64);
  CHECK(out[1].dtype() == DType::kInt64);
  const int64_t* s = out[0].data<int64_t>();
  const int64_t* tries = out[1].data<int64_t>();
  std::vector<double> counts(static_cast<size_t>(range), 0.0);
  double total_tries = 0;
  for (int64_t r = 0; r < rows; ++r) {
    std::set<int64_t> row(s + r * per_row, s + (r + 1) * per_row);
    REQUIRE(row.size() == static_cast<size_t>(per_row));  // no class twice in a row
    REQUIRE(*row.begin() >= 0);
    REQUIRE(*row.rbegin() < range);
    REQUIRE(tries[r] >= per_row);
    total_tries += static_cast<double>(tries[r]);
  }
  // Before removing repeats, class c comes with about p_c; the first draw of each row is never
  // a repeat, so its frequency over the rows estimates p_c.
  for (int64_t r = 0; r < rows; ++r) counts[static_cast<size_t>(s[r * per_row])] += 1;
  // Class c is drawn when exp(u * log(range)) rounds to c + 1.
  auto p = [&](double c) {
    return (std::log(std::min(c + 1.5, double(range))) - std::log(std::max(c + 0.5, 1.0))) / std::log(double(range));
  };
  CHECK(counts[0] / rows == Approx(p(0)).margin(0.04));  // about 0.10
  CHECK(counts[1] / rows == Approx(p(1)).margin(0.04));  // about 0.13
  double tail = 0, tail_p = 0;
  for (int64_t c = 25; c < range; ++c) {
    tail += counts[static_cast<size_t>(c)] / rows;
    tail_p += p(static_cast<double>(c));
  }
  CHECK(tail == Approx(tail_p).margin(0.05));
  // Repeats are drawn again, so rows take more draws than classes on average.
  CHECK(total_tries / rows > per_row);
}

TEST_CASE("_sample_unique_zipfian takes as many draws as PyTorch's log-uniform candidate sampler", "[ops][random]") {
  // MXNet's test of the same sampler: 8192 distinct classes of 793472 take 14500 to 17000 draws
  // (its reference counts from PyTorch's implementation).
  const std::vector<NDArray> out = Invoke("_sample_unique_zipfian", {{"range_max", "793472"}, {"shape", "(4, 8192)"}},
                                          std::vector<NDArray>{}, {}, 3);
  for (int64_t r = 0; r < 4; ++r) {
    const int64_t tries = out[1].data<int64_t>()[r];
    CHECK(tries > 14500);
    CHECK(tries < 17000);
    std::set<int64_t> row(out[0].data<int64_t>() + r * 8192, out[0].data<int64_t>() + (r + 1) * 8192);
    CHECK(row.size() == 8192u);
  }
}

TEST_CASE("_sample_unique_zipfian refuses shapes it cannot fill", "[ops][random][errors]") {
  CHECK_THROWS_WITH(Invoke("_sample_unique_zipfian", {{"range_max", "5"}, {"shape", "(2, 6)"}}, std::vector<NDArray>{}),
                    Catch::Contains("cannot exceed range_max"));
  CHECK_THROWS_WITH(Invoke("_sample_unique_zipfian", {{"range_max", "5"}, {"shape", "(6,)"}}, std::vector<NDArray>{}),
                    Catch::Contains("must be 2-D"));
  // As many samples as classes: every class once.
  const NDArray all = Invoke("_sample_unique_zipfian", {{"range_max", "4"}, {"shape", "(3, 4)"}},
                             std::vector<NDArray>{}, {}, 2)[0];
  for (int64_t r = 0; r < 3; ++r) {
    std::set<int64_t> row(all.data<int64_t>() + 4 * r, all.data<int64_t>() + 4 * r + 4);
    CHECK(row == std::set<int64_t>{0, 1, 2, 3});
  }
}
