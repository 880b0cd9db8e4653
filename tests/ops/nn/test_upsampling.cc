// UpSampling: nearest and bilinear forward against naive references, gradients, shapes, errors.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/symbol_json.h>

using namespace symbind;
using namespace symbind::test;

TEST_CASE("UpSampling nearest forward, single and multi input", "[ops][UpSampling]") {
  NDArray x = RandomArray(TShape({2, 3, 2, 3}), 1);
  NDArray y = RunForward("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
                         {{"arg0", x}});
  REQUIRE(y.shape() == TShape({2, 3, 4, 6}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 6; ++j) CHECK(At4(y, n, c, i, j) == At4(x, n, c, i / 2, j / 2));

  // Two inputs: the second (1x smaller) is upsampled to the first's output size (scale 4).
  NDArray a = RandomArray(TShape({1, 2, 2, 2}), 2), b = RandomArray(TShape({1, 2, 1, 1}), 3);
  for (std::string mode : {"concat", "sum"}) {
    INFO(mode);
    NDArray z = RunForward("UpSampling",
                           {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"},
                            {"multi_input_mode", mode}},
                           {{"arg0", a}, {"arg1", b}});
    REQUIRE(z.shape() == TShape({1, mode == "sum" ? 2 : 4, 4, 4}));
    for (int64_t c = 0; c < z.shape()[1]; ++c)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t j = 0; j < 4; ++j) {
          double want;
          if (mode == "sum") want = At4(a, 0, c, i / 2, j / 2) + At4(b, 0, c, 0, 0);
          else want = c < 2 ? At4(a, 0, c, i / 2, j / 2) : At4(b, 0, c - 2, 0, 0);
          CHECK(At4(z, 0, c, i, j) == Approx(want).margin(1e-6));
        }
  }
}

TEST_CASE("UpSampling nearest gradients", "[ops][UpSampling][grad]") {
  CheckGradients("UpSampling", {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "1"}},
                 {{"arg0", RandomArray(TShape({1, 2, 2, 3}), 4)}});
  for (std::string mode : {"concat", "sum"})
    CheckGradients("UpSampling",
                   {{"scale", "2"}, {"sample_type", "nearest"}, {"num_args", "2"}, {"multi_input_mode", mode}},
                   {{"arg0", RandomArray(TShape({1, 2, 2, 2}), 5)}, {"arg1", RandomArray(TShape({1, 2, 1, 1}), 6)}});
}

namespace {
// Naive grouped transposed convolution (scatter form), as MXNet's bilinear path runs it.
NDArray NaiveBilinear(const NDArray& x, const NDArray& w, int s) {
  int64_t k = 2 * s - s % 2, p = static_cast<int64_t>(std::ceil((s - 1) / 2.0));
  const TShape& d = x.shape();
  int64_t OH = d[2] * s, OW = d[3] * s;
  std::vector<double> acc(static_cast<size_t>(d[0] * d[1] * OH * OW), 0.0);
  for (int64_t n = 0; n < d[0]; ++n)
    for (int64_t c = 0; c < d[1]; ++c)
      for (int64_t i = 0; i < d[2]; ++i)
        for (int64_t j = 0; j < d[3]; ++j)
          for (int64_t ky = 0; ky < k; ++ky)
            for (int64_t kx = 0; kx < k; ++kx) {
              int64_t oy = i * s - p + ky, ox = j * s - p + kx;
              if (oy < 0 || oy >= OH || ox < 0 || ox >= OW) continue;
              acc[((n * d[1] + c) * OH + oy) * OW + ox] +=
                  static_cast<double>(At4(x, n, c, i, j)) * w.GetFlat((c * k + ky) * k + kx);
            }
  NDArray out(TShape({d[0], d[1], OH, OW}));
  for (size_t i = 0; i < acc.size(); ++i) out.SetFlat(static_cast<int64_t>(i), static_cast<float>(acc[i]));
  return out;
}
}  // namespace

TEST_CASE("UpSampling bilinear is a grouped deconvolution", "[ops][UpSampling]") {
  // MXNet's documented example: ones input, ones 4x4 kernel, scale 2.
  NDArray ones(TShape({1, 1, 3, 3}));
  ones.Fill(1.0f);
  NDArray k(TShape({1, 1, 4, 4}));
  k.Fill(1.0f);
  KwArgs p = {{"scale", "2"}, {"sample_type", "bilinear"}, {"num_filter", "1"}, {"num_args", "2"}};
  NDArray y = RunForward("UpSampling", p, {{"data", ones}, {"weight", k}});
  std::vector<float> row0 = {1, 2, 2, 2, 2, 1}, row1 = {2, 4, 4, 4, 4, 2};
  for (int64_t j = 0; j < 6; ++j) {
    CHECK(At4(y, 0, 0, 0, j) == row0[j]);
    CHECK(At4(y, 0, 0, 3, j) == row1[j]);
    CHECK(At4(y, 0, 0, 5, j) == row0[j]);
  }
  for (int s : {2, 3}) {
    INFO("scale " << s);
    int64_t kk = 2 * s - s % 2;
    NDArray x = RandomArray(TShape({2, 3, 3, 2}), 7), w = RandomArray(TShape({3, 1, kk, kk}), 8);
    KwArgs ps = {{"scale", std::to_string(s)}, {"sample_type", "bilinear"}, {"num_filter", "3"},
                 {"num_args", "2"}};
    RequireClose(RunForward("UpSampling", ps, {{"data", x}, {"weight", w}}), NaiveBilinear(x, w, s));
  }
}

TEST_CASE("UpSampling bilinear gradients", "[ops][UpSampling][grad]") {
  for (int s : {2, 3}) {
    int64_t kk = 2 * s - s % 2;
    CheckGradients("UpSampling",
                   {{"scale", std::to_string(s)}, {"sample_type", "bilinear"}, {"num_filter", "2"}, {"num_args", "2"}},
                   {{"data", RandomArray(TShape({1, 2, 2, 2}), 9)}, {"weight", RandomArray(TShape({2, 1, kk, kk}), 10)}});
  }
}

TEST_CASE("UpSampling shape inference, arguments and errors", "[ops][UpSampling][shape]") {
  Symbol bil = Symbol::Create("UpSampling", "up",
                              {{"scale", "4"}, {"sample_type", "bilinear"}, {"num_filter", "5"}, {"num_args", "2"}},
                              {{"data", Symbol::Variable("data")}});
  CHECK(bil.ListArguments() == std::vector<std::string>{"data", "up_weight"});
  auto r = InferShape(bil, {{"data", TShape({2, 5, 3, 4})}});
  CHECK(r.arg_shapes[1] == TShape({5, 1, 8, 8}));
  CHECK(r.out_shapes[0] == TShape({2, 5, 12, 16}));

  // key_var_num_args: positional inputs set num_args.
  Symbol near = Symbol::Create("UpSampling", "near", {{"scale", "2"}, {"sample_type", "nearest"}}, {},
                               {Symbol::Variable("a"), Symbol::Variable("b")});
  CHECK(near.ListArguments() == std::vector<std::string>{"a", "b"});
  auto rn = InferShape(near, {{"a", TShape({1, 2, 4, 4})}, {"b", TShape({1, 3, 2, 2})}});
  CHECK(rn.out_shapes[0] == TShape({1, 5, 8, 8}));
  std::string err = ErrorOf([&] { InferShape(near, {{"a", TShape({1, 2, 4, 4})}, {"b", TShape({1, 3, 3, 3})}}); });
  CHECK_THAT(err, Catch::Contains("cannot be upsampled"));
  err = ErrorOf([&] { InferShape(bil, {{"data", TShape({2, 4, 3, 4})}}); });
  CHECK_THAT(err, Catch::Contains("num_filter must equal the number of channels"));
  CHECK_THROWS_AS(Symbol::Create("UpSampling", "u", {{"scale", "0"}, {"sample_type", "nearest"}, {"num_args", "1"}}, {}),
                  ParamError);
}
