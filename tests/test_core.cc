#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <optional>

#include <symbind/core/graph.h>
#include <symbind/core/huge_pages.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/param.h>
#include <symbind/core/symbol.h>

#include "proc_maps_util.h"

using namespace symbind;

TEST_CASE("TShape parses and prints tuples", "[core]") {
  CHECK(TShape::Parse("(3,3)") == TShape({3, 3}));
  CHECK(TShape::Parse("(3, 3)") == TShape({3, 3}));
  CHECK(TShape::Parse("[3,3]") == TShape({3, 3}));
  CHECK(TShape::Parse("(5,)") == TShape({5}));
  CHECK(TShape::Parse("()") == TShape(std::vector<int64_t>{}));
  CHECK(TShape({2, 3}).ToString() == "(2,3)");
  CHECK(TShape({5}).ToString() == "(5,)");
  CHECK(TShape().ToString() == "?");
  CHECK(TShape({2, -1}).ToString() == "(2,?)");
  CHECK_THROWS_AS(TShape::Parse("(3,x)"), ParamError);
  CHECK_FALSE(TShape({2, -1}).is_known());
  CHECK(TShape(std::vector<int64_t>{}).Size() == 1);
}

TEST_CASE("UnifyShapes merges unknown dims and rejects conflicts", "[core]") {
  TShape out;
  REQUIRE(UnifyShapes(TShape({2, -1}), TShape({-1, 5}), &out));
  CHECK(out == TShape({2, 5}));
  REQUIRE(UnifyShapes(TShape(), TShape({7}), &out));
  CHECK(out == TShape({7}));
  CHECK_FALSE(UnifyShapes(TShape({2, 3}), TShape({2, 4}), &out));
  CHECK_FALSE(UnifyShapes(TShape({2, 3}), TShape({2, 3, 1}), &out));
}

TEST_CASE("NDArray storage is aligned, views share it", "[core]") {
  NDArray a(TShape({4, 3}));
  CHECK(reinterpret_cast<uintptr_t>(a.raw_data()) % 64 == 0);
  for (int i = 0; i < 12; ++i) a.SetFlat(i, static_cast<float>(i));
  NDArray r = a.Reshape(TShape({3, 4}));
  CHECK(r.SharesStorageWith(a));
  CHECK(r.At({2, 3}) == 11.0f);
  NDArray s = a.Slice(1, 3);
  CHECK(s.shape() == TShape({2, 3}));
  CHECK(s.At({0, 0}) == 3.0f);
  s.SetFlat(0, 100.0f);
  CHECK(a.At({1, 0}) == 100.0f);
  NDArray c = a.Copy();
  c.SetFlat(0, -1.0f);
  CHECK(a.GetFlat(0) == 0.0f);
  CHECK_THROWS_AS(a.Reshape(TShape({5, 3})), Error);
  CHECK_THROWS_AS(a.Slice(2, 5), Error);
}

TEST_CASE("Deferred storage computes its bytes when first read, and ReadOnce keeps none", "[core]") {
  int fills = 0;
  auto storage = Storage::Deferred(6 * sizeof(float), [&fills](void* out) {
    ++fills;
    for (int i = 0; i < 6; ++i) static_cast<float*>(out)[i] = 0.5f * float(i);
  }, "six halves");
  const NDArray a = NDArray::View(storage, 0, TShape({2, 3}));
  const NDArray row = a.At(1);
  CHECK(storage->deferred_pending());
  CHECK(a.read_only());
  CHECK(row.address() == static_cast<const char*>(a.address()) + 3 * sizeof(float));  // identity computes nothing
  float sum = 0;
  storage->ReadOnce([&](const void* bytes) {
    for (int i = 0; i < 6; ++i) sum += static_cast<const float*>(bytes)[i];
  });
  CHECK(sum == 7.5f);
  CHECK(fills == 1);
  CHECK(storage->deferred_pending());  // computed into a transient buffer, not kept
  CHECK(row.ToVector() == std::vector<float>{1.5f, 2.0f, 2.5f});
  CHECK_FALSE(storage->deferred_pending());
  CHECK(a.GetFlat(5) == 2.5f);
  CHECK(fills == 2);  // kept after the first read through data()
  storage->ReadOnce([&](const void* bytes) { CHECK(bytes == a.address()); });
  CHECK(fills == 2);
  CHECK_THROWS_AS(a.Fill(0.0f), Error);
  CHECK_THROWS_AS(Storage::Deferred(4, nullptr, "nothing"), Error);
}

TEST_CASE("Large arrays and workspace blocks ask for huge pages", "[core]") {
  if (!symbind_test::KernelHasHugePages()) {
    WARN("skipped: this kernel has no transparent huge pages");
    return;
  }
#ifndef SYMBIND_SANITIZER_BUILD  // the sanitizer's allocator serves calloc from mappings of its own
  const NDArray big(TShape({int64_t{3} << 20}));  // 12 MiB: at least one whole 2 MiB block inside
  CHECK(symbind_test::VmFlagsAt(static_cast<const char*>(big.raw_data()) + (6 << 20)).find(" hg ") != std::string::npos);
#endif
  const std::shared_ptr<Storage> block = Storage::Reserved(size_t{1} << 20, size_t{64} << 20, "a test block");
  CHECK(symbind_test::VmFlagsAt(static_cast<const char*>(block->address()) + (4 << 20)).find(" hg ") != std::string::npos);
  // Derived weights: zeroed, aligned, a 2 MiB-aligned mapping of their own from 2 MiB on.
  for (size_t floats : {size_t{1}, size_t{1000}, (size_t{2} << 20) / 4 - 1, (size_t{5} << 20) / 4 + 3}) {
    INFO(floats);
    const std::shared_ptr<float> w = AllocateZeroedFloats(floats, "test weights");
    const uintptr_t at = reinterpret_cast<uintptr_t>(w.get());
    CHECK(at % 64 == 0);
    CHECK(std::all_of(w.get(), w.get() + floats, [](float v) { return v == 0.0f; }));
    w.get()[floats - 1] = 1.0f;  // all of it writable
    if (floats * sizeof(float) >= kHugePageAllocationBytes) {
      CHECK(at % (size_t{2} << 20) == 0);
      CHECK(symbind_test::VmFlagsAt(w.get()).find(" hg ") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(AllocateZeroedFloats(std::numeric_limits<size_t>::max() / 2, "too many"), OutOfMemoryError);
}

TEST_CASE("NDArray copies between dtypes", "[core]") {
  NDArray f(TShape({4}), std::vector<float>{1.5f, -2.0f, 3.0f, 0.0f});
  for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt8,
                  DType::kInt64, DType::kUint8, DType::kBool}) {
    NDArray g = f.AsType(t);
    CHECK(g.dtype() == t);
    CHECK(g.bytes() == 4 * DTypeSize(t));
  }
  CHECK(f.AsType(DType::kFloat16).GetFlat(0) == 1.5f);
  CHECK(f.AsType(DType::kInt32).GetFlat(1) == -2.0f);
  CHECK(f.AsType(DType::kBool).GetFlat(3) == 0.0f);
  // Out-of-range floats to integers as numpy's astype gives them on x86 (checked with numpy):
  // toward zero, the low byte for 8-bit types, the lowest value for NaN or beyond the range.
  NDArray wide(TShape({5}), std::vector<float>{-2.0f, 300.0f, -2.7f, 200.0f, -129.0f});
  CHECK(wide.AsType(DType::kUint8).ToVector() == std::vector<float>{254, 44, 254, 200, 127});
  CHECK(wide.AsType(DType::kInt8).ToVector() == std::vector<float>{-2, 44, -2, -56, 127});
  NDArray huge(TShape({3}), std::vector<float>{std::nanf(""), 3e9f, 1e20f});
  CHECK(huge.AsType(DType::kInt32).ToVector() == std::vector<float>{-2147483648.0f, -2147483648.0f, -2147483648.0f});
  CHECK(huge.AsType(DType::kInt64).ToVector() == std::vector<float>{-9223372036854775808.0f, 3e9f, -9223372036854775808.0f});
  std::vector<float> back(4);
  f.SyncCopyToCPU(back.data(), 4);
  CHECK(back[2] == 3.0f);
  CHECK_THROWS_AS(f.data<double>(), Error);
}

TEST_CASE("Absurd allocations fail with OutOfMemoryError before allocating", "[core]") {
  CHECK_THROWS_AS(NDArray(TShape({1000000, 1000000, 1000})), OutOfMemoryError);
}

TEST_CASE("half precision conversions round trip", "[core]") {
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 0.000061035156f, 1e-7f})
    CHECK(HalfToFloat(FloatToHalf(v)) == Approx(v).margin(1e-7));
  CHECK(BFloat16ToFloat(FloatToBFloat16(3.0f)) == 3.0f);
}

namespace {
struct DemoParam : Parameter<DemoParam> {
  int num_hidden;
  bool no_bias;
  float p;
  TShape kernel;
  int act;
  std::optional<int> axis;
  static void Declare(ParamDeclarer<DemoParam>& d) {
    d.field("num_hidden", &DemoParam::num_hidden).lower_bound(1).describe("Number of hidden units.");
    d.field("no_bias", &DemoParam::no_bias).set_default(false).describe("Disable the bias.");
    d.field("p", &DemoParam::p).set_default(0.5f).set_range(0, 1).describe("A probability.");
    d.field("kernel", &DemoParam::kernel).set_default(TShape({1, 1})).describe("Kernel size.");
    d.field("act", &DemoParam::act).add_enum("relu", 0).add_enum("tanh", 1).set_default(0).describe("Activation.");
    d.field("axis", &DemoParam::axis).set_default(std::nullopt).describe("Axis or None.");
  }
};
}  // namespace

TEST_CASE("Parameters parse ints, bools, tuples, enums", "[core][param]") {
  DemoParam p = DemoParam::Parse({{"num_hidden", "10"}, {"no_bias", "True"}, {"kernel", "(3, 3)"},
                                  {"act", "tanh"}, {"axis", "-1"}});
  CHECK(p.num_hidden == 10);
  CHECK(p.no_bias);
  CHECK(p.kernel == TShape({3, 3}));
  CHECK(p.act == 1);
  CHECK(*p.axis == -1);
  CHECK(p.p == 0.5f);
  CHECK(DemoParam::Parse({{"num_hidden", "1"}, {"no_bias", "0"}, {"kernel", "[2,2]"}}).kernel ==
        TShape({2, 2}));
  CHECK(DemoParam::Parse({{"num_hidden", "1"}, {"no_bias", "1"}}).no_bias);
  CHECK_FALSE(DemoParam::Parse({{"num_hidden", "1"}, {"no_bias", "False"}}).no_bias);
  KwArgs back = p.ToKwArgs();
  CHECK(back["no_bias"] == "True");
  CHECK(back["kernel"] == "(3, 3)");
  CHECK(back["act"] == "tanh");
  CHECK(back["axis"] == "-1");
}

TEST_CASE("Float parameters print as text that reads back as the same float", "[core][param]") {
  CHECK(ParamValue<float>::Print(0.0001f) == "0.0001");
  CHECK(ParamValue<float>::Print(0.9f) == "0.9");
  for (float v : {1.0f / 3.0f, 0.1f + 0.2f, 123456.79f, 1e-8f, 3.4e38f}) {
    float back = 0;
    REQUIRE(ParamValue<float>::Parse(ParamValue<float>::Print(v), &back));
    CHECK(back == v);
  }
}

TEST_CASE("NodeAttrs::param checks the struct it is asked for", "[core][param]") {
  Symbol fc = Symbol::Create("FullyConnected", "fc1", {{"num_hidden", "4"}},
                             {{"data", Symbol::Variable("data")}});
  const NodeAttrs& attrs = fc.outputs()[0].node->attrs;
  CHECK_THROWS_AS(attrs.param<DemoParam>(), Error);
  CHECK_THROWS_WITH(attrs.param<DemoParam>(),
                    Catch::StartsWith("param<(anonymous namespace)::DemoParam>() on node 'fc1' (FullyConnected), whose "
                                      "parameters are a ") &&
                        Catch::Contains("FullyConnectedParam"));
  // The struct the op registered reads fine (an op without parameters holds an EmptyParam).
  Symbol copy = Symbol::Create("_copy", "c", {}, {{"data", Symbol::Variable("data")}});
  CHECK_NOTHROW(copy.outputs()[0].node->attrs.param<EmptyParam>());
  CHECK_THROWS_WITH(copy.outputs()[0].node->attrs.param<DemoParam>(),
                    Catch::Contains("(_copy), whose parameters are a symbind::EmptyParam"));
  NodeAttrs unparsed;
  unparsed.name = "raw";
  CHECK_THROWS_WITH(unparsed.param<EmptyParam>(),
                    "param<symbind::EmptyParam>() on node 'raw' (variable), whose parameters were "
                    "never parsed (Op::ParseAttrs)");
}

TEST_CASE("Parameter errors use dmlc's wording", "[core][param]") {
  try {
    DemoParam::Parse({{"num_hidden", "10"}, {"x", "1"}});
    FAIL("no error");
  } catch (const ParamError& e) {
    std::string m = e.what();
    CHECK(m.find("Cannot find argument 'x'") == 0);
    CHECK(m.find("num_hidden : int, >= 1, required") != std::string::npos);
    CHECK(m.find("Number of hidden units.") != std::string::npos);
    CHECK(m.find("no_bias : boolean, optional, default=0") != std::string::npos);
  }
  // The rest of dmlc's type strings, as MXSymbolGetAtomicSymbolInfo returns them.
  const ParamSchema& schema = DemoParam::Schema();
  CHECK(schema.Find("act")->TypeInfo() == "{'relu', 'tanh'},optional, default='relu'");
  CHECK(schema.Find("axis")->TypeInfo() == "int or None, optional, default='None'");
  CHECK(schema.Find("p")->TypeInfo() == "float, in [0, 1], optional, default=0.5");
  CHECK_THROWS_WITH(DemoParam::Parse({{"num_hidden", "abc"}}),
                    "Invalid Parameter format for num_hidden expect int but value='abc'");
  CHECK_THROWS_WITH(DemoParam::Parse({{"num_hidden", "0"}}),
                    "value 0 for Parameter num_hidden should be greater equal to 1");
  CHECK_THROWS_WITH(DemoParam::Parse({{"num_hidden", "2"}, {"p", "1.5"}}),
                    "value 1.5 for Parameter p should be in range [0, 1]");
  CHECK_THROWS_WITH(DemoParam::Parse({{"num_hidden", "2"}, {"act", "relux"}}),
                    Catch::Contains("Invalid Input: 'relux', valid values are: {'relu', 'tanh'}"));
  CHECK_THROWS_WITH(DemoParam::Parse({}), Catch::Contains("Required parameter num_hidden"));
  CHECK_THROWS_WITH(DemoParam::Parse({{"num_hidden", "2"}, {"kernel", "(3,x)"}}),
                    "Invalid Parameter format for kernel expect Shape(tuple) but value='(3,x)'");
}

namespace {
// One field of each floating kind, and one that takes NaN and infinities.
struct RealParam : Parameter<RealParam> {
  float f, fill;
  double d;
  std::optional<double> maybe;
  std::vector<float> tuple;
  static void Declare(ParamDeclarer<RealParam>& p) {
    p.field("f", &RealParam::f).set_default(0.0f);
    p.field("d", &RealParam::d).set_default(0.0);
    p.field("maybe", &RealParam::maybe).set_default(std::nullopt);
    p.field("tuple", &RealParam::tuple).set_default({});
    p.field("fill", &RealParam::fill).set_default(0.0f).allow_non_finite();
  }
};
}  // namespace

TEST_CASE("Float parameters are finite unless the field allows NaN and infinities", "[core][param]") {
  // NaN and inf were accepted by every float field and poisoned whatever the op computed.
  for (const char* field : {"f", "d", "maybe", "tuple"})
    for (const char* value : {"nan", "inf", "-inf", "1e39"}) {
      const bool tuple = std::string(field) == "tuple";
      const std::string text = tuple ? StrCat("(1, ", value, ")") : value;
      INFO(field << "=" << text);
      // 1e39 is finite as a double, infinite as a float.
      if (std::string(field) == "d" || std::string(field) == "maybe") {
        if (std::string(value) == "1e39") continue;
      }
      CHECK_THROWS_WITH(RealParam::Parse({{field, text}}),
                        StrCat("value ", text, " for Parameter ", field, " should be a finite number"));
    }
  CHECK(std::isinf(RealParam::Parse({{"fill", "-inf"}}).fill));
  CHECK(std::isnan(RealParam::Parse({{"fill", "nan"}}).fill));
  CHECK(RealParam::Parse({{"maybe", "None"}, {"tuple", "(1.5, 2)"}, {"d", "1e300"}}).d == 1e300);
  // The ops that take non-finite values in MXNet opt in; others refuse them.
  auto parse = [](const std::string& op, const KwArgs& kw) { Symbol::Create(op, "n", kw, {}); };
  CHECK_NOTHROW(parse("clip", {{"a_min", "-inf"}, {"a_max", "inf"}}));
  CHECK_NOTHROW(parse("_full", {{"shape", "(2,)"}, {"value", "nan"}}));
  CHECK_NOTHROW(parse("_plus_scalar", {{"scalar", "inf"}}));
  CHECK_NOTHROW(parse("SequenceMask", {{"value", "-inf"}}));
  CHECK_NOTHROW(parse("Pad", {{"mode", "constant"}, {"pad_width", "(0,0,0,0,1,1,1,1)"}, {"constant_value", "-inf"}}));
  CHECK_THROWS_AS(parse("LeakyReLU", {{"slope", "nan"}}), ParamError);
  CHECK_THROWS_AS(parse("BatchNorm", {{"eps", "inf"}}), ParamError);
}

TEST_CASE("Naming the outputs of a node is linear in their number", "[core][symbol][hostile]") {
  // EntryName listed all 65536 output names of a SliceChannel to name each one: 65536^2 strings.
  Symbol split = Symbol::Create("SliceChannel", "s", {{"num_outputs", "65536"}}, {{"data", Symbol::Variable("data")}});
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::string> names = split.ListOutputs();
  const ShapeInferResult r = InferShapePartial(split, {});  // names every unknown entry
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(seconds < 20);
  REQUIRE(names.size() == 65536);
  CHECK(names[65535] == "s_output65535");
  CHECK_FALSE(r.complete());
  CHECK(EntryName(split.outputs()[7]) == "s_output7");
}

TEST_CASE("Symbol::ReplaceVariables substitutes inputs by name in a copy", "[core][symbol]") {
  Symbol data = Symbol::Variable("data");
  Symbol fc = Symbol::Create("FullyConnected", "fc", {{"num_hidden", "3"}}, {{"data", data}});
  Symbol pixels = Symbol::Variable("pixels");
  Symbol scaled = Symbol::Create("_mul_scalar", "scaled", {{"scalar", "2"}}, {{"data", pixels}});
  Symbol composed = fc.ReplaceVariables({{"data", scaled}});
  CHECK(composed.ListArguments() == std::vector<std::string>{"pixels", "fc_weight", "fc_bias"});
  CHECK(fc.ListArguments() == std::vector<std::string>{"data", "fc_weight", "fc_bias"});  // unchanged
  // A variable that is the whole symbol is replaced too.
  CHECK(data.ReplaceVariables({{"data", pixels}}).ListArguments() == std::vector<std::string>{"pixels"});
  CHECK_THROWS_WITH(fc.ReplaceVariables({{"nope", pixels}}), Catch::Contains("no such input"));
  Symbol two = Symbol::Group({pixels, scaled});
  CHECK_THROWS_WITH(fc.ReplaceVariables({{"data", two}}), Catch::Contains("must have one"));
}

TEST_CASE("Composing an op gives its input variables MXNet's default initializers", "[core][symbol]") {
  auto init_of = [](const Symbol& s, const std::string& input) {
    Symbol internals = s.GetInternals();
    std::string value;
    internals[input].GetAttr("__init__", &value);
    return value;
  };
  Symbol data = Symbol::Variable("data");
  Symbol bn = Symbol::Create("BatchNorm", "bn", {}, {{"data", data}});
  CHECK(init_of(bn, "bn_moving_mean") == R"(["zero", {}])");
  CHECK(init_of(bn, "bn_moving_var") == R"(["one", {}])");
  CHECK(init_of(bn, "bn_gamma").empty());  // gamma has none: the caller's initializer decides
  Symbol prelu = Symbol::Create("LeakyReLU", "act", {{"act_type", "prelu"}}, {{"data", data}});
  CHECK(init_of(prelu, "act_gamma") == R"(["Constant", {"value": 0.25}])");
  // A variable given with its own initializer keeps it.
  Symbol mean = Symbol::Variable("mean", {{"__init__", R"(["constant", {"value": 2}])"}});
  Symbol bn2 = Symbol::Create("BatchNorm", "bn2", {}, {{"data", data}, {"moving_mean", mean}});
  CHECK(init_of(bn2, "mean") == R"(["constant", {"value": 2}])");
}

TEST_CASE("An op without parameters keeps unknown keys and reads none, as MXNet's do", "[core][param]") {
  Symbol x = Symbol::Variable("x"), y = Symbol::Variable("y");
  Symbol m = Symbol::Create("broadcast_maximum", "m", {{"axis", "1"}}, {{"lhs", x}, {"rhs", y}});
  CHECK(m.ListArguments() == std::vector<std::string>{"x", "y"});
  // An op with parameters still refuses a key it does not know.
  CHECK_THROWS_WITH(Symbol::Create("Activation", "a", {{"act_type", "relu"}, {"axis", "1"}}, {{"data", x}}),
                    Catch::Contains("Cannot find argument 'axis'"));
}
