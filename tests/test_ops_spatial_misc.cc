// UpSampling, Crop and Pad: forward against naive references, gradients by finite differences,
// shape inference and error messages.
#include <cmath>

#include "op_test_util.h"
#include "shape_test_util.h"

#include <symbind/io/symbol_json.h>

using namespace symbind;
using namespace symbind::test;

namespace {
float At4(const NDArray& a, int64_t n, int64_t c, int64_t y, int64_t x) {
  const TShape& s = a.shape();
  return a.GetFlat(((n * s[1] + c) * s[2] + y) * s[3] + x);
}

}  // namespace

// ------------------------------------------------------------------------------------------
// UpSampling

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

// ------------------------------------------------------------------------------------------
// Crop

TEST_CASE("Crop forward with h_w, crop_like and center_crop", "[ops][Crop]") {
  NDArray x = RandomArray(TShape({2, 2, 6, 7}), 11);
  struct Case {
    KwArgs params;
    bool like;
    int64_t oy, ox;
  };
  std::vector<Case> cases = {
      {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"offset", "(2, 1)"}}, false, 2, 1},
      {{{"num_args", "1"}, {"h_w", "(3, 4)"}, {"center_crop", "True"}}, false, 1, 1},  // floor(3/2)
      {{{"num_args", "2"}, {"offset", "(1, 3)"}}, true, 1, 3},
      {{{"num_args", "2"}, {"center_crop", "True"}}, true, 1, 1}};
  NDArray like = RandomArray(TShape({1, 5, 3, 4}), 12);
  for (auto& c : cases) {
    std::map<std::string, NDArray> in = {{"arg0", x}};
    if (c.like) in["arg1"] = like;
    NDArray y = RunForward("Crop", c.params, in);
    REQUIRE(y.shape() == TShape({2, 2, 3, 4}));
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t ch = 0; ch < 2; ++ch)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 4; ++j) CHECK(At4(y, n, ch, i, j) == At4(x, n, ch, i + c.oy, j + c.ox));
  }
}

TEST_CASE("Crop gradients: zero padding for data, zero for crop_like", "[ops][Crop][grad]") {
  CheckGradients("Crop", {{"num_args", "1"}, {"h_w", "(2, 3)"}, {"offset", "(1, 2)"}},
                 {{"arg0", RandomArray(TShape({1, 2, 4, 5}), 13)}});
  CheckGradients("Crop", {{"num_args", "2"}, {"center_crop", "True"}},
                 {{"arg0", RandomArray(TShape({1, 2, 5, 5}), 14)}, {"arg1", RandomArray(TShape({1, 1, 2, 3}), 15)}});
}

// fcn32s-symbol.json: node "upscore" is Crop{num_args: "2", offset: "(19, 19)"} over
// (bigscore, data), restoring the input's 500x500.
TEST_CASE("Crop as configured in fcn32s", "[ops][Crop][shape]") {
  KwArgs fcn = {{"num_args", "2"}, {"offset", "(19, 19)"}};
  Symbol crop = Symbol::Create("Crop", "upscore", fcn, {},
                               {Symbol::Variable("bigscore"), Symbol::Variable("data")});
  CHECK(crop.ListArguments() == std::vector<std::string>{"bigscore", "data"});
  auto r = InferShape(crop, {{"bigscore", TShape({1, 21, 576, 576})}, {"data", TShape({1, 3, 500, 500})}});
  CHECK(r.out_shapes[0] == TShape({1, 21, 500, 500}));
  // Same parameters on a small case: forward and gradients.
  NDArray big = RandomArray(TShape({1, 2, 24, 23}), 16), data = RandomArray(TShape({1, 3, 4, 3}), 17);
  NDArray y = RunForward("Crop", fcn, {{"arg0", big}, {"arg1", data}});
  REQUIRE(y.shape() == TShape({1, 2, 4, 3}));
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 3; ++j) CHECK(At4(y, 0, c, i, j) == At4(big, 0, c, i + 19, j + 19));
  GradCheckOptions opt;
  opt.no_grad = {"arg1"};
  CheckGradients("Crop", fcn, {{"arg0", RandomArray(TShape({1, 1, 24, 23}), 18)}, {"arg1", data}}, opt);
  std::string err = ErrorOf([&] {
    InferShape(crop, {{"bigscore", TShape({1, 21, 510, 576})}, {"data", TShape({1, 3, 500, 500})}});
  });
  CHECK_THAT(err, Catch::Contains("offset (19,19) does not fit"));
}

TEST_CASE("Crop node of the real fcn32s graph", "[ops][Crop][shape]") {
  Symbol net = LoadSymbolFile(std::string(SYMBIND_SHARED_DIR) + "/models/symbols/fcn32s-symbol.json");
  Symbol internals = net.GetInternals();
  Symbol bigscore = internals["bigscore_output"], upscore = internals["upscore_output"];
  const Node& crop = *upscore.outputs()[0].node;
  CHECK(crop.attrs.op->name == "Crop");
  CHECK(crop.attrs.dict == KwArgs{{"num_args", "2"}, {"offset", "(19, 19)"}});
  auto shapes = InferShape(Symbol::Group({bigscore, upscore}), {{"data", TShape({1, 3, 500, 500})}});
  // bigscore (Deconvolution's output) leaves room for the (19, 19) offset.
  CHECK(shapes.out_shapes[0][2] >= 500 + 19);
  CHECK(shapes.out_shapes[0][3] >= 500 + 19);
  CHECK(shapes.out_shapes[1] == TShape({1, 21, 500, 500}));
}

// ------------------------------------------------------------------------------------------
// Pad

namespace {
int64_t NaivePadIndex(const std::string& mode, int64_t j, int64_t before, int64_t n) {
  int64_t i = j - before;
  if (i >= 0 && i < n) return i;
  if (mode == "constant") return -1;
  if (mode == "edge") return std::min<int64_t>(std::max<int64_t>(i, 0), n - 1);
  // numpy 'reflect': mirror about the edge elements without repeating them.
  if (i < 0) return -i;
  return 2 * (n - 1) - i;
}

NDArray NaivePad(const NDArray& x, const std::string& mode, const std::vector<int64_t>& pw, float cval) {
  const TShape& s = x.shape();
  std::vector<int64_t> os;
  for (int i = 0; i < s.ndim(); ++i) os.push_back(s[i] + pw[2 * i] + pw[2 * i + 1]);
  NDArray out{TShape(os)};
  int nd = s.ndim();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t flat = 0; flat < out.Size(); ++flat) {
    int64_t r = flat, src = 0, stride = 1;
    bool fill = false;
    for (int d = nd - 1; d >= 0; --d) {
      int64_t j = r % os[d];
      r /= os[d];
      int64_t si = NaivePadIndex(mode, j, pw[2 * d], s[d]);
      if (si < 0) fill = true;
      src += si * stride;
      stride *= s[d];
    }
    out.SetFlat(flat, fill ? cval : x.GetFlat(src));
  }
  return out;
}
}  // namespace

TEST_CASE("Pad forward for every mode, 4-D and 5-D", "[ops][Pad]") {
  for (std::string mode : {"constant", "edge", "reflect"}) {
    INFO(mode);
    NDArray x4 = RandomArray(TShape({2, 2, 3, 4}), 19);
    std::vector<int64_t> pw4 = {0, 0, 0, 0, 2, 1, 1, 3};
    NDArray y4 = RunForward("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,2,1,1,3)"}, {"constant_value", "1.5"}},
                            {{"data", x4}});
    RequireClose(y4, NaivePad(x4, mode, pw4, 1.5f));
    NDArray x5 = RandomArray(TShape({1, 2, 3, 3, 4}), 20);
    std::vector<int64_t> pw5 = {0, 0, 0, 0, 1, 2, 2, 0, 1, 1};
    NDArray y5 = RunForward("pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,1,2,2,0,1,1)"}}, {{"data", x5}});
    RequireClose(y5, NaivePad(x5, mode, pw5, 0.0f));
  }
}

TEST_CASE("Pad gradients for every mode", "[ops][Pad][grad]") {
  for (std::string mode : {"constant", "edge", "reflect"}) {
    INFO(mode);
    CheckGradients("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,2,1,1,2)"}},
                   {{"data", RandomArray(TShape({1, 2, 3, 3}), 21)}});
    CheckGradients("Pad", {{"mode", mode}, {"pad_width", "(0,0,0,0,1,1,0,2,2,1)"}},
                   {{"data", RandomArray(TShape({1, 1, 2, 3, 3}), 22)}});
  }
}

TEST_CASE("Pad shape inference and errors", "[ops][Pad][shape]") {
  Symbol pad = Symbol::Create("Pad", "pad0", {{"mode", "reflect"}, {"pad_width", "(0,0,0,0,1,2,3,4)"}},
                              {{"data", Symbol::Variable("data")}});
  CHECK(InferShape(pad, {{"data", TShape({2, 3, 5, 6})}}).out_shapes[0] == TShape({2, 3, 8, 13}));
  CHECK_THAT(ErrorOf([&] { InferShape(pad, {{"data", TShape({2, 3, 5, 4})}}); }),
             Catch::Contains("reflection padding only supports padding sizes smaller"));
  CHECK_THAT(ErrorOf([&] { InferShape(pad, {{"data", TShape({2, 3, 5})}}); }),
             Catch::Contains("only 4-D or 5-D"));
  Symbol bad = Symbol::Create("Pad", "pad1", {{"mode", "edge"}, {"pad_width", "(0,1,0,0,1,1,1,1)"}},
                              {{"data", Symbol::Variable("data")}});
  CHECK_THAT(ErrorOf([&] { InferShape(bad, {{"data", TShape({2, 3, 5, 6})}}); }),
             Catch::Contains("first two axes"));
  CHECK_THROWS_AS(Symbol::Create("Pad", "p", {{"mode", "wrap"}, {"pad_width", "(0,0,0,0,1,1,1,1)"}}, {}), ParamError);
  CHECK_THROWS_AS(Symbol::Create("Pad", "p", {{"mode", "edge"}}, {}), ParamError);
}
