// _histogram: counts and edges against a naive numpy.histogram (equal bins over a range, or
// given edges; the last bin closed), for float32 and float64 data; the parameter errors.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
std::vector<double> NaiveCounts(const NDArray& x, const std::vector<double>& edges) {
  std::vector<double> c(edges.size() - 1, 0);
  for (int64_t i = 0; i < x.Size(); ++i) {
    const double v = x.GetFlat(i);
    if (!(v >= edges.front() && v <= edges.back())) continue;
    size_t k = 0;
    while (k + 2 < edges.size() && v >= edges[k + 1]) ++k;
    c[k] += 1;
  }
  return c;
}
}  // namespace

TEST_CASE("_histogram counts like numpy.histogram", "[ops][histogram]") {
  NDArray x = RandomArray(TShape({4, 25}), 3, -3, 3);
  x.SetFlat(0, 2.5f);   // the upper edge: in the last bin
  x.SetFlat(1, -2.5f);  // the lower edge
  x.SetFlat(2, 0.5f);   // an inner edge: the upper bin
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    INFO(DTypeName(t));
    auto out = Invoke("_histogram", {{"bin_cnt", "5"}, {"range", "(-2.5, 2.5)"}}, {x.AsType(t)});
    REQUIRE(out.size() == 2);
    CHECK(out[0].dtype() == DType::kInt64);
    CHECK(out[1].dtype() == t);
    const std::vector<double> edges = {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5};
    RequireClose(out[1].AsType(DType::kFloat32), NDArray(TShape({6}), {-2.5f, -1.5f, -0.5f, 0.5f, 1.5f, 2.5f}));
    const std::vector<double> want = NaiveCounts(x, edges);
    for (int64_t k = 0; k < 5; ++k) CHECK(out[0].AsType(DType::kFloat32).GetFlat(k) == want[k]);

    NDArray bins(TShape({5}), {-1.0f, 0.5f, 2.0f, 2.25f, 50.0f});
    auto out2 = Invoke("_histogram", {}, {x.AsType(t), bins.AsType(t)});
    const std::vector<double> want2 = NaiveCounts(x, {-1.0, 0.5, 2.0, 2.25, 50.0});
    for (int64_t k = 0; k < 4; ++k) CHECK(out2[0].AsType(DType::kFloat32).GetFlat(k) == want2[k]);
    RequireClose(out2[1].AsType(DType::kFloat32), bins);
  }
}

TEST_CASE("_histogram rejects inconsistent parameters and bins", "[ops][histogram]") {
  NDArray x = RandomArray(TShape({5}), 1);
  CHECK_THROWS_WITH(Invoke("_histogram", {{"bin_cnt", "3"}}, {x}), Catch::Contains("both be given or neither"));
  CHECK_THROWS_WITH(Invoke("_histogram", {{"bin_cnt", "3"}, {"range", "(1, 0)"}}, {x}), Catch::Contains("min <= max"));
  CHECK_THROWS_WITH(Invoke("_histogram", {}, {x, NDArray(TShape({1}), {0.0f})}), Catch::Contains("at least 2 edges"));
  CHECK_THROWS_WITH(Invoke("_histogram", {}, {x, NDArray(TShape({3}), {0, 2, 1})}),
                    Catch::Contains("increase monotonically"));
}
