// Pooling: max, avg, sum and Lp against a naive reference, MXNet's border rules, gradients, shapes.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

#include <tbb/global_control.h>

#include <symbind/ops/kernels/conv.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {

struct PoolCase {
  std::vector<int64_t> kernel, stride, pad;
  std::string type = "max", convention = "valid";
  bool global = false;
  int p_value = 2;
  int include_pad = -1;  // -1: unset (MXNet default true)
  KwArgs Params() const {
    auto tup = [](const std::vector<int64_t>& v) {
      std::string s = "(";
      for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
      return s + (v.size() == 1 ? ",)" : ")");
    };
    KwArgs kw = {{"pool_type", type}, {"pooling_convention", convention}};
    if (!kernel.empty()) kw["kernel"] = tup(kernel);
    if (!stride.empty()) kw["stride"] = tup(stride);
    if (!pad.empty()) kw["pad"] = tup(pad);
    if (global) kw["global_pool"] = "True";
    if (type == "lp") kw["p_value"] = std::to_string(p_value);
    if (include_pad >= 0) kw["count_include_pad"] = include_pad ? "True" : "False";
    return kw;
  }
};

// Output spatial dims by MXNet's conventions.
std::vector<int64_t> PoolOut(const PoolCase& pc, const TShape& xs) {
  std::vector<int64_t> o;
  for (int i = 2; i < xs.ndim(); ++i) {
    if (pc.global) {
      o.push_back(1);
      continue;
    }
    size_t j = static_cast<size_t>(i - 2);
    int64_t x = xs[i], k = pc.kernel[j], s = pc.stride.empty() ? 1 : pc.stride[j],
            p = pc.pad.empty() ? 0 : pc.pad[j];
    if (pc.convention == "valid") o.push_back((x + 2 * p - k) / s + 1);
    else if (pc.convention == "full") o.push_back(static_cast<int64_t>(std::ceil(double(x + 2 * p - k) / s)) + 1);
    else o.push_back(static_cast<int64_t>(std::ceil(double(x) / s)));
  }
  return o;
}

// Naive pooling. Window per axis: [o*s - p, o*s - p + k); the avg divisor with padding counts
// the window clipped to [-p, x + p), without padding only in-image elements.
NDArray NaivePool(const NDArray& x, const PoolCase& pc) {
  const TShape& xs = x.shape();
  std::vector<int64_t> sp(xs.dims().begin() + 2, xs.dims().end());
  std::vector<int64_t> outv = PoolOut(pc, xs);
  Dims3 in = Align(sp, 1), out = Align(outv, 1);
  Dims3 k = pc.global ? in : Align(pc.kernel, 1);
  Dims3 s = (pc.global || pc.stride.empty()) ? Dims3{1, 1, 1} : Align(pc.stride, 1);
  Dims3 p = (pc.global || pc.pad.empty()) ? Dims3{0, 0, 0} : Align(pc.pad, 0);
  std::vector<int64_t> os = {xs[0], xs[1]};
  os.insert(os.end(), outv.begin(), outv.end());
  NDArray y{TShape(os)};
  const int64_t planes = xs[0] * xs[1];
  const bool include_pad = pc.include_pad != 0;
  int64_t idx = 0;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t o0 = 0; o0 < out[0]; ++o0)
      for (int64_t o1 = 0; o1 < out[1]; ++o1)
        for (int64_t o2 = 0; o2 < out[2]; ++o2) {
          Dims3 o = {o0, o1, o2};
          double mx = -FLT_MAX, sum = 0;
          int64_t valid = 0, padded = 1;
          for (int a = 0; a < 3; ++a) {
            int64_t lo = o[a] * s[a] - p[a], hi = lo + k[a];
            padded *= std::min(hi, in[a] + p[a]) - lo;
          }
          for (int64_t k0 = 0; k0 < k[0]; ++k0)
            for (int64_t k1 = 0; k1 < k[1]; ++k1)
              for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                int64_t i0 = o0 * s[0] - p[0] + k0, i1 = o1 * s[1] - p[1] + k1, i2 = o2 * s[2] - p[2] + k2;
                if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                double v = x.GetFlat(((pl * in[0] + i0) * in[1] + i1) * in[2] + i2);
                mx = std::max(mx, v);
                sum += pc.type == "lp" ? std::pow(v, pc.p_value) : v;
                ++valid;
              }
          double r;
          if (pc.type == "max") r = mx;
          else if (pc.type == "sum") r = sum;
          else if (pc.type == "avg") r = sum / (include_pad ? padded : valid);
          else r = pc.p_value == 1 ? sum : pc.p_value == 2 ? std::sqrt(sum) : std::cbrt(sum);
          y.SetFlat(idx++, static_cast<float>(r));
        }
  return y;
}

void CheckPoolForward(const PoolCase& pc, const TShape& xs, uint64_t seed) {
  NDArray x = RandomArray(xs, seed, pc.type == "lp" ? 0.1f : -1.0f, 1.0f);
  NDArray y = RunForward("Pooling", pc.Params(), {{"data", x}});
  RequireClose(y, NaivePool(x, pc), 1e-5f, 1e-4f);
}

// Same shape and the same bits (not only close): the 2-D fast path promises the general
// path's arithmetic.
void RequireSameBits(const NDArray& got, const NDArray& want, const std::string& what) {
  REQUIRE(got.shape() == want.shape());
  for (int64_t i = 0; i < got.Size(); ++i) {
    const float g = got.GetFlat(i), w = want.GetFlat(i);
    if (std::memcmp(&g, &w, sizeof g) != 0) FAIL(what << " element " << i << ": got " << g << ", want " << w);
  }
}

// Pooling forward with the fast paths on or off (conv::FastPathsEnabled also gates pooling's).
NDArray RunPool(const PoolCase& pc, const NDArray& x, bool fast) {
  const bool was = conv::FastPathsEnabled();
  conv::SetFastPathsEnabled(fast);
  NDArray y = RunForward("Pooling", pc.Params(), {{"data", x}});
  conv::SetFastPathsEnabled(was);
  return y;
}

}  // namespace

TEST_CASE("Pooling forward matches a naive reference", "[ops][pooling]") {
  for (std::string type : {"max", "avg", "sum"}) {
    INFO(type);
    PoolCase pc;
    pc.type = type;
    SECTION("2-D 2x2 stride 2 " + type) {
      pc.kernel = {2, 2}, pc.stride = {2, 2};
      CheckPoolForward(pc, TShape({2, 3, 6, 5}), 1);
    }
    SECTION("2-D full with pad " + type) {
      pc.kernel = {3, 3}, pc.stride = {2, 2}, pc.pad = {1, 1}, pc.convention = "full";
      CheckPoolForward(pc, TShape({2, 2, 8, 7}), 2);
    }
    SECTION("2-D valid, pad, no count_include_pad " + type) {
      pc.kernel = {3, 2}, pc.stride = {1, 2}, pc.pad = {1, 1}, pc.include_pad = 0;
      CheckPoolForward(pc, TShape({1, 2, 5, 6}), 3);
    }
    SECTION("default stride 1 " + type) {
      pc.kernel = {2, 3};
      CheckPoolForward(pc, TShape({1, 1, 4, 5}), 4);
    }
    SECTION("1-D " + type) {
      pc.kernel = {3}, pc.stride = {2}, pc.pad = {1}, pc.convention = "full";
      CheckPoolForward(pc, TShape({2, 3, 10}), 5);
    }
    SECTION("1-D same " + type) {
      pc.kernel = {3}, pc.stride = {2}, pc.convention = "same";
      CheckPoolForward(pc, TShape({2, 2, 9}), 6);
    }
    SECTION("3-D " + type) {
      pc.kernel = {2, 2, 3}, pc.stride = {2, 1, 2}, pc.pad = {1, 0, 1};
      CheckPoolForward(pc, TShape({1, 2, 4, 3, 6}), 7);
    }
    SECTION("global " + type) {
      pc.global = true;
      CheckPoolForward(pc, TShape({2, 3, 5, 4}), 8);
      CheckPoolForward(pc, TShape({2, 2, 7}), 9);
      CheckPoolForward(pc, TShape({1, 2, 3, 2, 4}), 10);
    }
  }
}

TEST_CASE("Lp pooling", "[ops][pooling]") {
  for (int p : {1, 2, 3}) {
    INFO("p=" << p);
    PoolCase pc;
    pc.type = "lp", pc.p_value = p, pc.kernel = {2, 2}, pc.stride = {1, 2}, pc.pad = {1, 0};
    CheckPoolForward(pc, TShape({2, 2, 4, 5}), 20 + p);
    NDArray x = RandomArray(TShape({1, 2, 3, 4}), 30 + p, 0.2f, 1.0f);
    CheckGradients("Pooling", pc.Params(), {{"data", x}});
  }
}

TEST_CASE("Avg pooling border divisors follow MXNet's pool.h", "[ops][pooling]") {
  // 1x4 input [1,2,3,4], kernel 3, stride 2, pad 1, full convention: 3 windows
  // [-1,2) [1,4) [3,6): divisors clipped to [-1, 5) are 3, 3, 2 with count_include_pad; 2, 3, 1
  // without.
  NDArray x(TShape({1, 1, 4}), {1, 2, 3, 4});
  KwArgs kw = {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"}, {"pool_type", "avg"},
               {"pooling_convention", "full"}};
  NDArray y = RunForward("Pooling", kw, {{"data", x}});
  REQUIRE(y.shape() == TShape({1, 1, 3}));
  CHECK(y.GetFlat(0) == Approx(3.0 / 3));
  CHECK(y.GetFlat(1) == Approx(9.0 / 3));
  CHECK(y.GetFlat(2) == Approx(4.0 / 2));
  kw["count_include_pad"] = "False";
  y = RunForward("Pooling", kw, {{"data", x}});
  CHECK(y.GetFlat(0) == Approx(3.0 / 2));
  CHECK(y.GetFlat(1) == Approx(9.0 / 3));
  CHECK(y.GetFlat(2) == Approx(4.0 / 1));
}

TEST_CASE("Max pooling backward routes to the first maximum", "[ops][pooling]") {
  NDArray x(TShape({1, 1, 2, 2}), {5, 5, 1, 5});
  auto exec = BindSingleOp("Pooling", {{"kernel", "(2,2)"}}, {{"data", x}});
  exec->Forward(true);
  exec->Backward({NDArray(TShape({1, 1, 1, 1}), {2.0f})});
  const NDArray& g = exec->grad_arrays()[0];
  CHECK(g.GetFlat(0) == 2.0f);
  CHECK(g.GetFlat(1) == 0.0f);
  CHECK(g.GetFlat(3) == 0.0f);
}

TEST_CASE("Max pooling backward with many ties routes each window to its first maximum", "[ops][pooling][grad]") {
  // Values from {0, 1, 2} on a 7x6 plane, 3x3 windows, stride 2, pad 1: most windows hold their
  // maximum several times; the gradient goes to the first in (row, column) order, computed
  // here naively.
  const int64_t H = 7, W = 6, OH = 4, OW = 3;
  std::vector<float> xs(static_cast<size_t>(H * W)), dys(static_cast<size_t>(OH * OW));
  for (int64_t i = 0; i < H * W; ++i) xs[static_cast<size_t>(i)] = static_cast<float>((i * 7 + i / 5) % 3);
  for (int64_t i = 0; i < OH * OW; ++i) dys[static_cast<size_t>(i)] = 1.0f + static_cast<float>(i);
  std::vector<float> want(xs.size(), 0.0f);
  for (int64_t oh = 0; oh < OH; ++oh)
    for (int64_t ow = 0; ow < OW; ++ow) {
      int64_t first = -1;
      for (int64_t h = std::max<int64_t>(0, oh * 2 - 1); h < std::min(H, oh * 2 + 2); ++h)
        for (int64_t w = std::max<int64_t>(0, ow * 2 - 1); w < std::min(W, ow * 2 + 2); ++w)
          if (first < 0 || xs[static_cast<size_t>(h * W + w)] > xs[static_cast<size_t>(first)]) first = h * W + w;
      want[static_cast<size_t>(first)] += dys[static_cast<size_t>(oh * OW + ow)];
    }
  auto exec = BindSingleOp("Pooling", {{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}},
                           {{"data", NDArray(TShape({1, 1, H, W}), xs)}});
  exec->Forward(true);
  REQUIRE(exec->outputs()[0].shape() == TShape({1, 1, OH, OW}));
  exec->Backward({NDArray(TShape({1, 1, OH, OW}), dys)});
  const NDArray& g = exec->grad_arrays()[0];
  for (int64_t i = 0; i < H * W; ++i) CHECK(g.GetFlat(i) == want[static_cast<size_t>(i)]);
}

TEST_CASE("Pooling gradients", "[ops][pooling][grad]") {
  struct G {
    PoolCase pc;
    TShape xs;
  };
  std::vector<G> cases;
  for (std::string type : {"max", "avg", "sum"}) {
    PoolCase a;
    a.type = type, a.kernel = {3, 3}, a.stride = {2, 2}, a.pad = {1, 1}, a.convention = "full";
    cases.push_back({a, TShape({1, 2, 4, 5})});
    PoolCase b;
    b.type = type, b.kernel = {2}, b.stride = {1}, b.include_pad = 0, b.pad = {1};
    cases.push_back({b, TShape({2, 1, 5})});
    PoolCase c;
    c.type = type, c.kernel = {2, 2, 2}, c.stride = {1, 2, 1};
    cases.push_back({c, TShape({1, 1, 3, 3, 3})});
    PoolCase d;
    d.type = type, d.global = true;
    cases.push_back({d, TShape({2, 2, 3, 3})});
  }
  uint64_t seed = 40;
  for (auto& c : cases) {
    INFO(c.pc.type << " " << c.xs);
    CheckGradients("Pooling", c.pc.Params(), {{"data", DistinctArray(c.xs, seed++)}});
  }
}

TEST_CASE("Pooling output shapes of classic networks", "[ops][pooling][shape]") {
  auto out = [](const KwArgs& kw, const TShape& d) {
    Symbol s = Symbol::Create("Pooling", "pool", kw, {{"data", Symbol::Variable("data")}});
    return InferShape(s, {{"data", d}}).out_shapes[0];
  };
  // caffenet/alexnet pool1: 3x3 stride 2 full on 55x55 -> 27x27; valid also 27.
  CHECK(out({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}},
            TShape({1, 96, 55, 55})) == TShape({1, 96, 27, 27}));
  // squeezenet: 3x3 stride 2 full on 111 -> 55, on 54 -> 27 (valid gives 26).
  CHECK(out({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}},
            TShape({1, 64, 111, 111})) == TShape({1, 64, 55, 55}));
  CHECK(out({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pooling_convention", "full"}},
            TShape({1, 128, 54, 54})) == TShape({1, 128, 27, 27}));
  CHECK(out({{"kernel", "(3,3)"}, {"stride", "(2,2)"}}, TShape({1, 128, 54, 54})) == TShape({1, 128, 26, 26}));
  // resnet-18: 3x3 stride 2 pad 1 max on 112 -> 56; global avg on 7x7 -> 1x1.
  CHECK(out({{"kernel", "(3,3)"}, {"stride", "(2,2)"}, {"pad", "(1,1)"}}, TShape({2, 64, 112, 112})) ==
        TShape({2, 64, 56, 56}));
  CHECK(out({{"global_pool", "True"}, {"pool_type", "avg"}}, TShape({2, 512, 7, 7})) == TShape({2, 512, 1, 1}));
  CHECK(out({{"global_pool", "True"}, {"kernel", "(7,7)"}, {"pool_type", "avg"}}, TShape({2, 512, 5, 5})) ==
        TShape({2, 512, 1, 1}));
  // same (1-D): ceil(x / s).
  CHECK(out({{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pooling_convention", "same"}}, TShape({1, 2, 9})) ==
        TShape({1, 2, 5}));
  // 3-D.
  CHECK(out({{"kernel", "(2,2,2)"}, {"stride", "(2,2,2)"}}, TShape({1, 3, 4, 5, 6})) == TShape({1, 3, 2, 2, 3}));
}

TEST_CASE("Pooling errors", "[ops][pooling][error]") {
  auto make = [](const KwArgs& kw) {
    return Symbol::Create("Pooling", "pool", kw, {{"data", Symbol::Variable("data")}});
  };
  try {
    InferShape(make({{"kernel", "(5,5)"}, {"pad", "(1,1)"}}), {{"data", TShape({1, 1, 2, 8})}});
    FAIL("expected a ShapeError");
  } catch (const ShapeError& e) {
    std::string m = e.what();
    CHECK(m.find("kernel size (5) exceeds input (2 padded to 4)") != std::string::npos);
    CHECK(m.find("(1,1,2,8)") != std::string::npos);
  }
  CHECK_THROWS_AS(InferShape(make({{"kernel", "(2,2)"}}), {{"data", TShape({1, 1, 8})}}), ShapeError);
  CHECK_THROWS_WITH(InferShape(make({{"kernel", "(2,2)"}, {"pooling_convention", "same"}}),
                               {{"data", TShape({1, 1, 8, 8})}}),
                    Catch::Contains("same"));
  CHECK_THROWS_AS(make({{"pool_type", "max"}}), ParamError);  // no kernel, no global_pool
  CHECK_THROWS_AS(make({{"kernel", "(2,2)"}, {"pool_type", "lp"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(2,2)"}, {"pool_type", "lp"}, {"p_value", "4"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(2,2)"}, {"pool_type", "median"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(2,2)"}, {"layout", "NHWC"}}), ParamError);
  CHECK_THROWS_AS(make({{"kernel", "(2,2)"}, {"stride", "(0,1)"}}), ParamError);
  CHECK_THROWS_WITH(make({{"kernel", "(2,2)"}, {"pad", "(1,)"}}),
                    Catch::Contains("Padding must have the same number of dimensions"));
  CHECK_THROWS_WITH(make({{"kernel", "(2,)"}, {"pad", "(0,1)"}}),
                    Catch::Contains("Padding must have the same number of dimensions"));
  // Zero pads past the kernel's rank, as MXNet scripts pass them, are dropped.
  CHECK(InferShape(make({{"kernel", "(2,)"}, {"stride", "(2,)"}, {"pad", "(0,0,0)"},
                         {"pooling_convention", "same"}}),
                   {{"data", TShape({1, 1, 10})}}).out_shapes[0] == TShape({1, 1, 5}));
  // Accepted and ignored.
  CHECK_NOTHROW(make({{"kernel", "(2,2)"}, {"cudnn_off", "True"}, {"layout", "NCHW"}}));
}

TEST_CASE("Pooling: a window past int64 is a shape error, not a wrapped index", "[ops][pooling][error]") {
  // Two windows along x, the second starting at 2^63-1: the kernels computed o * s - p + k.
  for (const char* op : {"Pooling", "Pooling_v1"}) {
    INFO(op);
    Symbol s = Symbol::Create(op, "pool", {{"kernel", "(1,2)"}, {"stride", "(1,9223372036854775807)"},
                                           {"pooling_convention", "full"}}, {{"data", Symbol::Variable("data")}});
    CHECK_THROWS_WITH(InferShape(s, {{"data", TShape({1, 1, 1, 3})}}),
                      Catch::Contains(StrCat(op, ": end of window 1 in spatial dim 1: 9223372036854775807 + 2 overflows int64")));
  }
}

// The 2-D max/avg fast path (ops/kernels/pool.cc) over the shapes it takes: 2x2 and 3x3
// windows, strides 1 and 2, padding, both conventions, planes narrower than a vector and wider
// than several (stride-2 max pooling on AVX-512 reads 32-48 columns per 16 outputs: 71 and 112
// take several blocks and a partial one), odd sizes. Each case against the general path (same bits) and the naive
// reference (max exact, avg within 1e-6).
TEST_CASE("Pooling 2-D fast path equals the general path", "[ops][pooling]") {
#ifdef SYMBIND_SANITIZER_BUILD
  // The sweep runs once per instruction set; under the sanitizers a narrower set of sizes
  // still takes every column path (narrow, one block, several blocks and a partial one).
  const std::vector<int64_t> heights = {2, 3, 11}, widths = {2, 5, 17, 40, 71};
#else
  const std::vector<int64_t> heights = {2, 3, 6, 11}, widths = {2, 3, 5, 8, 17, 33, 40, 71, 112};
#endif
  int cases = 0;
  uint64_t seed = 100;
  for (const std::string type : {"max", "avg"})
    for (int include_pad : {1, 0}) {
      if (type == "max" && include_pad == 0) continue;
      for (int64_t k : {2, 3})
        for (int64_t sh : {1, 2})
          for (int64_t sw : {1, 2})
            for (int64_t pad = 0; pad < k; ++pad)
              for (const std::string convention : {"valid", "full"}) {
                PoolCase pc;
                pc.type = type, pc.convention = convention, pc.include_pad = include_pad;
                pc.kernel = {k, k}, pc.stride = {sh, sw}, pc.pad = {pad, pad};
                for (int64_t h : heights)
                  for (int64_t w : widths) {
                    if (h + 2 * pad < k || w + 2 * pad < k) continue;
                    const std::string what = StrCat(type, " include_pad ", include_pad, " k ", k,
                                                    " stride ", sh, ",", sw, " pad ", pad, " ",
                                                    convention, " ", h, "x", w);
                    INFO(what);
                    const NDArray x = RandomArray(TShape({2, 3, h, w}), ++seed);
                    const NDArray fast = RunPool(pc, x, true);
                    RequireSameBits(fast, RunPool(pc, x, false), what);
                    NDArray naive = NaivePool(x, pc);
                    // A window with no input element (full convention, pad, no include_pad):
                    // MXNet divides each term, so nothing is summed and the output is 0, where
                    // the naive reference divides 0 by 0.
                    for (int64_t i = 0; i < naive.Size(); ++i)
                      if (std::isnan(naive.GetFlat(i))) naive.SetFlat(i, 0.0f);
                    if (type == "max") RequireSameBits(fast, naive, what);
                    else RequireClose(fast, naive, 1e-6f, 1e-6f, what);
                    ++cases;
                  }
              }
    }
  CHECK(cases > 1000);
}

// Max pooling ignores NaN (every maximum starts at -FLT_MAX and keeps its running value when
// either is NaN): the fast path agrees with the general one bit for bit on planes of NaN, +0,
// -0, ties and -FLT_MAX, for each window and stride, but for the sign of a zero maximum where a
// window holds both zeros (the fast path takes columns first: pool.h).
TEST_CASE("Max pooling fast path keeps the general path's NaN and signed-zero results", "[ops][pooling]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {nan, 0.0f, -0.0f, 1.0f, 1.0f, -FLT_MAX, -2.0f, nan, -0.0f};
  NDArray x(TShape({1, 2, 9, 75}));
  uint64_t state = 17;
  for (int64_t i = 0; i < x.Size(); ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x.SetFlat(i, values[(state >> 33) % values.size()]);
  }
  for (int64_t k : {2, 3})
    for (int64_t stride : {1, 2})
      for (int64_t pad = 0; pad < k; ++pad) {
        PoolCase pc;
        pc.kernel = {k, k}, pc.stride = {stride, stride}, pc.pad = {pad, pad};
        const std::string what = StrCat("k ", k, " stride ", stride, " pad ", pad);
        const NDArray fast = RunPool(pc, x, true), general = RunPool(pc, x, false);
        for (int64_t i = 0; i < fast.Size(); ++i) {
          const float f = fast.GetFlat(i), g = general.GetFlat(i);
          if (std::memcmp(&f, &g, sizeof f) != 0 && !(f == 0.0f && g == 0.0f))
            FAIL(what << " element " << i << ": got " << f << ", want " << g);
        }
      }
}

TEST_CASE("Pooling 2-D fast path is bit-identical for 1, 2 and 4 threads", "[ops][pooling]") {
  for (const std::string type : {"max", "avg"}) {
    PoolCase pc;
    pc.type = type, pc.kernel = {3, 3}, pc.stride = {2, 2}, pc.pad = {1, 1};
    const NDArray x = RandomArray(TShape({2, 24, 57, 57}), 7);
    std::vector<NDArray> ys;
    for (int threads : {1, 2, 4}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      ys.push_back(RunPool(pc, x, true));
    }
    RequireSameBits(ys[1], ys[0], type + " 2 threads");
    RequireSameBits(ys[2], ys[0], type + " 4 threads");
  }
}

// Global avg pooling sums in 16 fixed partial sums (ops/kernels/pool.cc): within rounding of the
// naive reference (double sums), for planes shorter than, equal to and longer than 16, and the
// same bits for 1, 2 and 4 threads.
TEST_CASE("Global avg pooling fast path", "[ops][pooling]") {
  PoolCase pc;
  pc.type = "avg", pc.global = true;
  uint64_t seed = 300;
  for (const std::vector<int64_t>& spatial :
       std::vector<std::vector<int64_t>>{{1, 1}, {3, 5}, {4, 4}, {1, 17}, {7, 7}, {13, 13}, {31}, {2, 3, 5}}) {
    std::vector<int64_t> dims = {2, 5};
    dims.insert(dims.end(), spatial.begin(), spatial.end());
    const std::string what = StrCat("spatial ", TShape(spatial));
    INFO(what);
    const NDArray x = RandomArray(TShape(dims), ++seed, 0.5f, 1.5f);
    RequireClose(RunPool(pc, x, true), NaivePool(x, pc), 0.0f, 1e-6f, what);
    RequireClose(RunPool(pc, x, true), RunPool(pc, x, false), 0.0f, 1e-6f, what);
  }
  const NDArray x = RandomArray(TShape({2, 200, 13, 13}), 9);
  std::vector<NDArray> ys;
  for (int threads : {1, 2, 4}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
    ys.push_back(RunPool(pc, x, true));
  }
  RequireSameBits(ys[1], ys[0], "2 threads");
  RequireSameBits(ys[2], ys[0], "4 threads");
}

// Under kAdd the fast paths add each pooled value to what the output held: the same bits as
// the written result added afterwards.
TEST_CASE("Pooling fast paths add into the output under kAdd", "[ops][pooling]") {
  const Op& op = OpRegistry::Global().Get("Pooling");
  PoolCase max_3x3, avg_2x2, global_avg;
  max_3x3.kernel = {3, 3}, max_3x3.stride = {2, 2}, max_3x3.pad = {1, 1};
  avg_2x2.type = "avg", avg_2x2.kernel = {2, 2}, avg_2x2.stride = {2, 2};
  global_avg.type = "avg", global_avg.global = true;
  uint64_t seed = 500;
  for (const PoolCase* pc : {&max_3x3, &avg_2x2, &global_avg}) {
    INFO(pc->type << (pc->global ? " global" : ""));
    const NDArray x = RandomArray(TShape({2, 3, 13, 21}), ++seed);
    const NDArray written = RunPool(*pc, x, true);
    const NDArray out = RandomArray(written.shape(), ++seed);
    NDArray want(written.shape());
    for (int64_t i = 0; i < want.Size(); ++i) want.SetFlat(i, out.GetFlat(i) + written.GetFlat(i));
    NodeAttrs attrs;
    attrs.op = &op;
    attrs.name = "pool";
    attrs.dict = pc->Params();
    op.ParseAttrs(&attrs);
    const bool was = conv::FastPathsEnabled();
    conv::SetFastPathsEnabled(true);
    op.forward(OpContext{}, attrs, {x}, {OpReq::kAdd}, {out});
    conv::SetFastPathsEnabled(was);
    RequireSameBits(out, want, "kAdd");
  }
}
