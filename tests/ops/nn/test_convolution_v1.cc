// Convolution_v1: a naive 2-D cross-correlation reference, gradients by finite differences,
// the v1 parameter set (2-D/3-D kernels only, no NCW layout).
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// out[n,f,y,x] = bias[f] + sum over the group's channels and the kernel window.
NDArray NaiveConv2D(const NDArray& x, const NDArray& w, const NDArray& b, int64_t stride, int64_t pad,
                    int64_t group) {
  const TShape& xs = x.shape();
  const TShape& ws = w.shape();
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], F = ws[0], K = ws[2];
  const int64_t OH = (H + 2 * pad - K) / stride + 1, OW = (W + 2 * pad - K) / stride + 1;
  const int64_t cg = C / group, fg = F / group;
  NDArray y(TShape({N, F, OH, OW}));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double s = b.GetFlat(f);
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < K; ++ky)
              for (int64_t kx = 0; kx < K; ++kx) {
                const int64_t iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                const int64_t ci = (f / fg) * cg + c;
                s += x.At({n, ci, iy, ix}) * w.At({f, c, ky, kx});
              }
          y.SetFlat(((n * F + f) * OH + oy) * OW + ox, static_cast<float>(s));
        }
  return y;
}
}  // namespace

TEST_CASE("Convolution_v1 computes a 2-D convolution", "[ops][Convolution_v1][grad]") {
  NDArray x = RandomArray(TShape({2, 4, 6, 5}), 1), w = RandomArray(TShape({6, 2, 3, 3}), 2),
          b = RandomArray(TShape({6}), 3);
  KwArgs p{{"kernel", "(3, 3)"}, {"num_filter", "6"}, {"num_group", "2"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}};
  RequireClose(RunForward("Convolution_v1", p, {{"data", x}, {"weight", w}, {"bias", b}}),
               NaiveConv2D(x, w, b, 2, 1, 2), 1e-4f);
  NDArray xs = RandomArray(TShape({1, 2, 4, 4}), 4), ws = RandomArray(TShape({3, 2, 2, 2}), 5);
  CheckGradients("Convolution_v1", {{"kernel", "(2, 2)"}, {"num_filter", "3"}, {"no_bias", "True"}},
                 {{"data", xs}, {"weight", ws}});
}

TEST_CASE("Convolution_v1 has MXNet's v1 parameters and infers weight shapes", "[ops][Convolution_v1][shape]") {
  Symbol s = Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}},
                            {{"data", Symbol::Variable("data")}});
  CHECK(s.ListArguments() == std::vector<std::string>{"data", "c_weight", "c_bias"});
  auto r = InferShape(s, {{"data", TShape({2, 3, 10, 10})}});
  CHECK(r.arg_shapes[1] == TShape({8, 3, 3, 3}));
  CHECK(r.out_shapes[0] == TShape({2, 8, 8, 8}));
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3,)"}, {"num_filter", "8"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"layout", "NCW"}}, {}),
                  ParamError);
  // Parameters of the current Convolution that v1 lacks are unknown keys.
  CHECK_THROWS_AS(Symbol::Create("Convolution_v1", "c", {{"kernel", "(3, 3)"}, {"num_filter", "8"}, {"foo", "1"}}, {}),
                  ParamError);
}
