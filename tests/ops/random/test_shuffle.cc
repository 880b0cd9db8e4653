// _shuffle: a permutation of the first-axis slices (each slice intact), every order reachable,
// the same order for the same seed, any dtype, in place too.
#include <algorithm>
#include <set>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_shuffle permutes the slices along the first axis", "[ops][random]") {
  // 6 slices of 3 values, each slice tagged by its first value.
  NDArray x(TShape({6, 3}));
  for (int64_t i = 0; i < 18; ++i) x.fdata()[i] = static_cast<float>(10 * (i / 3) + i % 3);
  std::set<std::vector<float>> orders;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const NDArray y = Invoke("_shuffle", {}, {x}, {}, seed)[0];
    REQUIRE(y.shape() == x.shape());
    std::vector<float> firsts;
    for (int64_t r = 0; r < 6; ++r) {
      const float* row = y.fdata() + 3 * r;
      REQUIRE(row[1] == row[0] + 1);  // the slice moved whole
      REQUIRE(row[2] == row[0] + 2);
      firsts.push_back(row[0]);
    }
    std::vector<float> sorted = firsts;
    std::sort(sorted.begin(), sorted.end());
    REQUIRE(sorted == std::vector<float>{0, 10, 20, 30, 40, 50});  // a permutation
    orders.insert(firsts);
  }
  // 720 orders; 200 uniform draws repeat few of them (a fixed or near-fixed order would not).
  CHECK(orders.size() > 150);
  // The same seed, the same order; the input untouched.
  RequireClose(Invoke("_shuffle", {}, {x}, {}, 9)[0], Invoke("_shuffle", {}, {x}, {}, 9)[0], 0.f, 0.f);
  CHECK(x.fdata()[3] == 10.0f);
}

TEST_CASE("_shuffle keeps the dtype, runs in place and leaves single slices alone", "[ops][random]") {
  NDArray ints(TShape({4}), DType::kInt64);
  for (int64_t i = 0; i < 4; ++i) ints.data<int64_t>()[i] = i + 100;
  const NDArray y = Invoke("_shuffle", {}, {ints}, {}, 3)[0];
  CHECK(y.dtype() == DType::kInt64);
  std::vector<int64_t> v(y.data<int64_t>(), y.data<int64_t>() + 4);
  std::sort(v.begin(), v.end());
  CHECK(v == std::vector<int64_t>{100, 101, 102, 103});
  // In place: the output is the input array.
  NDArray z(TShape({5, 2}));
  for (int64_t i = 0; i < 10; ++i) z.fdata()[i] = static_cast<float>(i);
  Invoke("_shuffle", {}, {z}, {z}, 4);
  std::vector<float> firsts;
  for (int64_t r = 0; r < 5; ++r) {
    CHECK(z.fdata()[2 * r + 1] == z.fdata()[2 * r] + 1);
    firsts.push_back(z.fdata()[2 * r]);
  }
  std::sort(firsts.begin(), firsts.end());
  CHECK(firsts == std::vector<float>{0, 2, 4, 6, 8});
  NDArray one(TShape({1, 4}), {1.f, 2.f, 3.f, 4.f});
  RequireClose(Invoke("_shuffle", {}, {one}, {}, 5)[0], one, 0.f, 0.f);
}
