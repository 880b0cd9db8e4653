// Correlation against a naive loop over padded copies of the inputs (FlowNet's definition, as
// MXNet's CPU kernel), for multiply and absolute difference, strides, kernels and padding;
// gradients by finite differences; float16 runs; the shape errors.
#include <cmath>

#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
struct CorrCase { int k, md, s1, s2, pad; bool mul; };

NDArray NaiveCorrelation(const NDArray& a, const NDArray& b, const CorrCase& c) {
  const TShape& s = a.shape();
  const int64_t n = s[0], ch = s[1], h = s[2], w = s[3], ph = h + 2 * c.pad, pw = w + 2 * c.pad;
  auto padded = [&](const NDArray& x, int64_t in, int64_t cc, int64_t y, int64_t xx) -> double {
    y -= c.pad;
    xx -= c.pad;
    return y >= 0 && y < h && xx >= 0 && xx < w ? x.GetFlat(((in * ch + cc) * h + y) * w + xx) : 0.0;
  };
  const int64_t border = c.md + (c.k - 1) / 2;
  const int64_t th = (ph - 2 * border + c.s1 - 1) / c.s1, tw = (pw - 2 * border + c.s1 - 1) / c.s1;
  const int64_t r = c.md / c.s2, gw = 2 * r + 1;
  NDArray out(TShape({n, gw * gw, th, tw}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t tc = 0; tc < gw * gw; ++tc)
      for (int64_t i = 0; i < th; ++i)
        for (int64_t j = 0; j < tw; ++j) {
          const int64_t x1 = j * c.s1 + c.md, y1 = i * c.s1 + c.md;
          const int64_t x2 = x1 + (tc % gw - r) * c.s2, y2 = y1 + (tc / gw - r) * c.s2;
          double sum = 0;
          for (int hh = 0; hh < c.k; ++hh)
            for (int ww = 0; ww < c.k; ++ww)
              for (int64_t cc = 0; cc < ch; ++cc) {
                const double v1 = padded(a, in, cc, y1 + hh, x1 + ww), v2 = padded(b, in, cc, y2 + hh, x2 + ww);
                sum += c.mul ? v1 * v2 : std::fabs(v1 - v2);
              }
          out.SetFlat(((in * gw * gw + tc) * th + i) * tw + j, static_cast<float>(sum / (c.k * c.k * ch)));
        }
  return out;
}

KwArgs Params(const CorrCase& c) {
  return {{"kernel_size", std::to_string(c.k)}, {"max_displacement", std::to_string(c.md)},
          {"stride1", std::to_string(c.s1)}, {"stride2", std::to_string(c.s2)},
          {"pad_size", std::to_string(c.pad)}, {"is_multiply", c.mul ? "True" : "False"}};
}
}  // namespace

TEST_CASE("Correlation matches the naive FlowNet correlation", "[ops][correlation][grad]") {
  NDArray a = RandomArray(TShape({2, 2, 6, 5}), 1, 0, 1), b = RandomArray(TShape({2, 2, 6, 5}), 2, 0, 1);
  for (const CorrCase& c : {CorrCase{1, 2, 1, 1, 2, false}, CorrCase{1, 2, 1, 1, 2, true}, CorrCase{1, 4, 1, 2, 4, true},
                            CorrCase{3, 1, 1, 1, 2, true}, CorrCase{3, 1, 2, 1, 2, false}, CorrCase{3, 1, 2, 1, 1, true}}) {
    INFO("kernel " << c.k << " max_displacement " << c.md << " stride1 " << c.s1 << " stride2 " << c.s2 << " pad "
                   << c.pad << " multiply " << c.mul);
    RequireClose(RunForward("Correlation", Params(c), {{"data1", a}, {"data2", b}}), NaiveCorrelation(a, b, c));
    // data1 above data2 and both clear of the zero padding: |data1 - data2| has no kink nearby.
    NDArray ga = RandomArray(TShape({1, 2, 4, 3}), 3, 1, 2), gb = RandomArray(TShape({1, 2, 4, 3}), 4, -2, -1);
    CheckGradients("Correlation", Params(c), {{"data1", ga}, {"data2", gb}});
  }
  // float16 in, float16 out.
  const CorrCase c{3, 1, 1, 1, 2, true};
  NDArray h = Invoke("Correlation", Params(c), {a.AsType(DType::kFloat16), b.AsType(DType::kFloat16)})[0];
  CHECK(h.dtype() == DType::kFloat16);
  RequireClose(h.AsType(DType::kFloat32), NaiveCorrelation(a, b, c), 5e-3f, 5e-3f);
}

TEST_CASE("Correlation rejects windows that do not fit and even kernels", "[ops][correlation]") {
  NDArray a = RandomArray(TShape({1, 1, 3, 3}), 1);
  CHECK_THROWS_WITH(Invoke("Correlation", {{"max_displacement", "3"}}, {a, a}), Catch::Contains("do not fit"));
  CHECK_THROWS_WITH(Invoke("Correlation", {{"kernel_size", "2"}}, {a, a}), Catch::Contains("odd"));
  CHECK_THROWS_WITH(Invoke("Correlation", {}, {a, RandomArray(TShape({1, 1, 3, 4}), 2)}), Catch::Contains("data"));
}
