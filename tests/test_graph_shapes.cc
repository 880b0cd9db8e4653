// Shapes of the model-zoo graphs against layer arithmetic written here, independently of the
// operators' InferShape: every Convolution, Deconvolution and Pooling output is recomputed
// from its JSON parameters and its inferred input.
#include <catch2/catch.hpp>

#include <cmath>

#include <symbind/core/graph.h>
#include <symbind/io/symbol_json.h>
#include "shared_dir.h"

using namespace symbind;

namespace {
const std::string kSymbols = symbind_test::SharedDir() + "/models/symbols/";

std::vector<int64_t> Tuple(const KwArgs& d, const std::string& key, size_t n, int64_t fallback) {
  auto it = d.find(key);
  if (it == d.end()) return std::vector<int64_t>(n, fallback);
  TShape t = TShape::Parse(it->second);
  return t.dims();
}

std::string Get(const KwArgs& d, const std::string& key, const std::string& fallback) {
  auto it = d.find(key);
  return it == d.end() ? fallback : it->second;
}

bool IsTrue(const std::string& v) { return v == "True" || v == "true" || v == "1"; }

// Checks each spatial layer; returns how many were checked.
int CheckLayers(const Symbol& sym, const TShape& data) {
  Graph g(sym);
  std::vector<TShape> shapes = InferEntryShapes(g, {{"data", data}});
  int checked = 0;
  for (uint32_t nid = 0; nid < g.num_nodes(); ++nid) {
    const Node& n = *g.node(nid).node;
    if (n.is_variable()) continue;
    const std::string op = n.attrs.op->name;
    if (op != "Convolution" && op != "Pooling" && op != "Deconvolution") continue;
    const TShape& in = shapes[g.entry_id(g.node(nid).inputs[0])];
    const TShape& out = shapes[g.entry_id(nid, 0)];
    INFO(n.name() << " " << op << " in " << in << " out " << out);
    REQUIRE(in.ndim() == 4);
    const KwArgs& d = n.attrs.dict;
    const bool global = op == "Pooling" && IsTrue(Get(d, "global_pool", "False"));
    auto k = global ? std::vector<int64_t>{in[2], in[3]} : Tuple(d, "kernel", 2, 1);
    auto s = Tuple(d, "stride", 2, 1), p = Tuple(d, "pad", 2, 0), dil = Tuple(d, "dilate", 2, 1);
    if (global) p = {0, 0};
    for (int a = 0; a < 2; ++a) {
      int64_t x = in[2 + a], want;
      if (op == "Convolution") {
        want = (x + 2 * p[a] - dil[a] * (k[a] - 1) - 1) / s[a] + 1;
      } else if (op == "Deconvolution") {
        auto adj = Tuple(d, "adj", 2, 0);
        want = s[a] * (x - 1) + dil[a] * (k[a] - 1) + 1 - 2 * p[a] + adj[a];
      } else if (global) {
        want = 1;
      } else if (Get(d, "pooling_convention", "valid") == "full") {
        want = static_cast<int64_t>(std::ceil(static_cast<double>(x + 2 * p[a] - k[a]) / s[a])) + 1;
      } else {
        want = (x + 2 * p[a] - k[a]) / s[a] + 1;
      }
      CHECK(out[2 + a] == want);
    }
    if (op != "Pooling") CHECK(out[1] == std::stoll(Get(d, "num_filter", "0")));
    else CHECK(out[1] == in[1]);
    CHECK(out[0] == in[0]);
    ++checked;
  }
  return checked;
}
}  // namespace

TEST_CASE("model-zoo graphs: layer shapes follow the arithmetic at 224x224", "[graph][shape][real][shared]") {
  struct Case {
    std::string file;
    TShape out;
    int min_layers;
  };
  for (const Case& c : {Case{"resnet-18-symbol.json", TShape({1, 1000}), 20},
                        Case{"squeezenet_v1.1-symbol.json", TShape({1, 1000}), 25},
                        Case{"caffenet-symbol.json", TShape({1, 1000}), 8}}) {
    INFO(c.file);
    Symbol sym = LoadSymbolFile(kSymbols + c.file);
    CHECK(CheckLayers(sym, TShape({1, 3, 224, 224})) >= c.min_layers);
    CHECK(InferShape(sym, {{"data", TShape({1, 3, 224, 224})}}).out_shapes[0] == c.out);
  }
}

TEST_CASE("fcn32s: layer shapes follow the arithmetic and Crop restores every input size", "[graph][shape][real][shared]") {
  Symbol sym = LoadSymbolFile(kSymbols + "fcn32s-symbol.json");
  for (auto hw : std::vector<std::pair<int64_t, int64_t>>{{224, 224}, {500, 500}, {384, 512}, {321, 257}}) {
    INFO(hw.first << "x" << hw.second);
    TShape data({1, 3, hw.first, hw.second});
    CHECK(CheckLayers(sym, data) >= 18);
    CHECK(InferShape(sym, {{"data", data}}).out_shapes[0] == TShape({1, 21, hw.first, hw.second}));
  }
}
