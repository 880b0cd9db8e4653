// diag: numpy.diagonal for N-D inputs (each k, axis pair, negative axes) and numpy.diag for 1-D
// inputs, against naive loops; gradients by finite differences; the shape errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// numpy.diagonal of a row-major array: the other dims in order, then the diagonal.
NDArray NaiveDiagonal(const NDArray& x, int k, int a1, int a2) {
  const TShape& s = x.shape();
  const int nd = s.ndim();
  if (a1 < 0) a1 += nd;
  if (a2 < 0) a2 += nd;
  const int64_t len = std::max<int64_t>(0, std::min(s[a1] - std::max(0, -k), s[a2] - std::max(0, k)));
  std::vector<int64_t> rest, dims;
  for (int i = 0; i < nd; ++i)
    if (i != a1 && i != a2) rest.push_back(i), dims.push_back(s[i]);
  dims.push_back(len);
  NDArray out{TShape(dims)};
  std::vector<int64_t> st(nd, 1);
  for (int i = nd - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  for (int64_t o = 0; o < out.Size(); ++o) {
    int64_t r = o, t = r % len, src = 0;
    r /= len;
    for (size_t j = rest.size(); j-- > 0;) {
      src += (r % s[rest[j]]) * st[rest[j]];
      r /= s[rest[j]];
    }
    src += (t + std::max(0, -k)) * st[a1] + (t + std::max(0, k)) * st[a2];
    out.SetFlat(o, x.GetFlat(src));
  }
  return out;
}
}  // namespace

TEST_CASE("diag of a matrix and of N-D arrays matches numpy.diagonal", "[ops][diag][grad]") {
  NDArray m = RandomArray(TShape({4, 6}), 1);
  for (int k : {0, 2, -3, 5, -4}) {
    INFO("k " << k);
    RequireClose(RunForward("diag", {{"k", std::to_string(k)}}, {{"data", m}}), NaiveDiagonal(m, k, 0, 1));
  }
  NDArray x = RandomArray(TShape({3, 4, 5, 2}), 2);
  struct Case { int k, a1, a2; };
  for (Case c : {Case{0, 0, 1}, Case{1, 1, 0}, Case{-1, 1, 3}, Case{2, -2, 0}, Case{0, 3, 0}}) {
    INFO("k " << c.k << " axis1 " << c.a1 << " axis2 " << c.a2);
    const KwArgs p = {{"k", std::to_string(c.k)}, {"axis1", std::to_string(c.a1)}, {"axis2", std::to_string(c.a2)}};
    RequireClose(RunForward("diag", p, {{"data", x}}), NaiveDiagonal(x, c.k, c.a1, c.a2));
  }
  CheckGradients("diag", {{"k", "1"}}, {{"data", RandomArray(TShape({3, 4}), 3)}});
  CheckGradients("diag", {{"k", "-1"}, {"axis1", "2"}, {"axis2", "0"}}, {{"data", RandomArray(TShape({3, 2, 4}), 4)}});
}

TEST_CASE("diag of a vector builds numpy.diag's matrix", "[ops][diag][grad]") {
  NDArray v(TShape({3}), {1, 2, 3});
  for (int k : {0, 2, -1}) {
    INFO("k " << k);
    const int64_t n = 3 + std::abs(k);
    NDArray want(TShape({n, n}));
    want.Fill(0.0f);
    for (int64_t i = 0; i < 3; ++i) want.SetFlat((i + std::max(0, -k)) * n + i + std::max(0, k), v.GetFlat(i));
    RequireClose(RunForward("diag", {{"k", std::to_string(k)}}, {{"data", v}}), want);
    CheckGradients("diag", {{"k", std::to_string(k)}}, {{"data", v}});
  }
  // Any dtype.
  NDArray vi = v.AsType(DType::kInt64);
  NDArray d = Invoke("diag", {}, {vi})[0];
  CHECK(d.dtype() == DType::kInt64);
  CHECK(d.AsType(DType::kFloat32).GetFlat(4) == 2.0f);
}

TEST_CASE("diag rejects a diagonal that does not exist and equal axes", "[ops][diag]") {
  NDArray m = RandomArray(TShape({3, 4}), 1);
  CHECK_THROWS_WITH(Invoke("diag", {{"k", "5"}}, {m}), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(Invoke("diag", {{"axis1", "1"}, {"axis2", "-1"}}, {m}), Catch::Contains("same axis"));
  CHECK_THROWS_WITH(Invoke("diag", {{"axis1", "2"}}, {m}), Catch::Contains("out of range"));
}
