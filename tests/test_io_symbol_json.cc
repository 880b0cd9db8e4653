#include <fstream>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include <symbind/core/graph.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

#include "test_io_util.h"

using namespace symbind;
using json = nlohmann::json;

namespace {

// A test-only operator with an aux state, under a name no real op uses, so that the legacy
// aux-state upgrade can be tested before BatchNorm exists.
const Op& TestNormOp() {
  static Op& op = OpRegistry::Global()
                      .Register("_test_io_norm")
                      .set_arguments({"data", "gamma"})
                      .set_aux_states({"moving_mean"});
  return op;
}

std::string Slurp(const std::string& path) {
  std::ifstream is(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
}

// The operators a symbol file uses that are not registered (yet).
std::vector<std::string> MissingOps(const json& j) {
  std::set<std::string> missing;
  for (auto& n : j["nodes"]) {
    std::string op = n["op"];
    if (op != "null" && !OpRegistry::Global().Find(op)) missing.insert(op);
  }
  return {missing.begin(), missing.end()};
}

// MXNet's argument and aux-state lists computed from the JSON alone: a post-order DFS from
// the heads over inputs in order; in 0.8 files BatchNorm's moving_mean/moving_var are absent
// and follow the node's listed inputs.
void ExpectedLists(const json& j, std::vector<std::string>* args, std::vector<std::string>* aux) {
  const bool legacy = !j.contains("attrs");
  const auto& nodes = j["nodes"];
  std::vector<bool> seen(nodes.size(), false);
  std::function<void(size_t, bool)> visit = [&](size_t id, bool is_aux) {
    if (seen[id]) return;
    seen[id] = true;
    const auto& n = nodes[id];
    size_t k = 0;
    for (auto& in : n["inputs"]) {
      bool in_aux = n["op"] == "BatchNorm" && k >= 3;
      visit(in[0].get<size_t>(), in_aux);
      ++k;
    }
    if (n["op"] == "null") (is_aux ? aux : args)->push_back(n["name"]);
    if (legacy && n["op"] == "BatchNorm" && k == 3) {
      aux->push_back(n["name"].get<std::string>() + "_moving_mean");
      aux->push_back(n["name"].get<std::string>() + "_moving_var");
    }
  };
  for (auto& h : j["heads"]) visit(h[0].get<size_t>(), false);
}

std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

const char* kLegacyJSON = R"({
  "nodes": [
    {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
     "attr": {"lr_mult": "0.5"}},
    {"op": "null", "param": {}, "name": "fc1_weight", "inputs": [], "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "fc1_bias", "inputs": [], "backward_source_id": -1},
    {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "4"}, "name": "fc1",
     "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1,
     "attr": {"weight_lr_mult": "2", "ctx_group": "dev1"}},
    {"op": "null", "param": {}, "name": "n1_gamma", "inputs": [], "backward_source_id": -1},
    {"op": "_test_io_norm", "param": {}, "name": "n1", "inputs": [[3, 0], [4, 0]],
     "backward_source_id": -1},
    {"op": "Activation", "param": {"act_type": "relu"}, "name": "relu1", "inputs": [[5, 0]],
     "backward_source_id": -1},
    {"op": "null", "param": {}, "name": "softmax_label", "inputs": [], "backward_source_id": -1},
    {"op": "SoftmaxOutput", "param": {}, "name": "softmax", "inputs": [[6, 0], [7, 0]],
     "backward_source_id": -1}
  ],
  "arg_nodes": [0, 1, 2, 4, 7],
  "heads": [[8, 0]]
})";

}  // namespace

TEST_CASE("io: legacy 0.8 JSON loads with aux upgrade and hidden keys", "[io]") {
  TestNormOp();
  for (auto op : {"FullyConnected", "Activation", "SoftmaxOutput"})
    if (!OpRegistry::Global().Find(op)) {
      WARN("operator " << op << " not registered yet; skipping");
      return;
    }
  CHECK(SymbolJSONVersion(kLegacyJSON) == 800);
  Symbol s = LoadSymbolJSON(kLegacyJSON);
  CHECK(s.ListArguments() ==
        std::vector<std::string>{"data", "fc1_weight", "fc1_bias", "n1_gamma", "softmax_label"});
  CHECK(s.ListAuxiliaryStates() == std::vector<std::string>{"n1_moving_mean"});
  CHECK(s.ListOutputs() == std::vector<std::string>{"softmax_output"});

  Graph g(s);
  std::map<std::string, const Node*> by_name;
  for (auto& n : g.nodes()) by_name[n.node->name()] = n.node.get();
  CHECK(by_name.at("data")->user_attrs.at("__lr_mult__") == "0.5");
  CHECK(by_name.at("fc1_weight")->user_attrs.at("__lr_mult__") == "2");
  const Node* fc = by_name.at("fc1");
  CHECK(fc->user_attrs.at("__ctx_group__") == "dev1");
  CHECK(fc->attrs.dict == KwArgs{{"no_bias", "False"}, {"num_hidden", "4"}});
  CHECK(fc->attrs.parsed.value != nullptr);

  // Saved as 1.x, loaded again: same graph.
  std::string saved = SaveSymbolJSON(s);
  CHECK(SymbolJSONVersion(saved) == 10600);
  Symbol back = LoadSymbolJSON(saved);
  CHECK(back.ListArguments() == s.ListArguments());
  CHECK(back.ListAuxiliaryStates() == s.ListAuxiliaryStates());
  CHECK(SaveSymbolJSON(back) == saved);
  json j = json::parse(saved);
  CHECK(j["nodes"][0]["op"] == "null");
  CHECK(j["nodes"][0]["attrs"]["__lr_mult__"] == "0.5");
  CHECK(j["heads"] == json::parse("[[9, 0, 0]]"));
  CHECK(j["node_row_ptr"].size() == j["nodes"].size() + 1);
  CHECK(j["arg_nodes"].size() == 6);
}

TEST_CASE("io: 1.x JSON with user attributes round-trips", "[io]") {
  for (auto op : {"FullyConnected", "Activation"})
    if (!OpRegistry::Global().Find(op)) {
      WARN("operator " << op << " not registered yet; skipping");
      return;
    }
  Symbol x = Symbol::Variable("x", {{"__shape__", "(2,3)"}, {"__dtype__", "0"}});
  Symbol fc = OpBuilder("FullyConnected").SetParam("num_hidden", 5).SetInput("data", x)
                  .CreateSymbol("fc");
  fc.SetAttr("__lr_mult__", "0.1");
  Symbol act = OpBuilder("Activation").SetParam("act_type", "tanh").SetInput("data", fc)
                   .CreateSymbol("act");
  Symbol grp = Symbol::Group({act, fc});
  std::string text = SaveSymbolJSON(grp);
  Symbol back = LoadSymbolJSON(text);
  CHECK(back.ListArguments() == grp.ListArguments());
  CHECK(back.ListOutputs() == grp.ListOutputs());
  CHECK(SaveSymbolJSON(back) == text);
  std::string v;
  REQUIRE(back[1].GetAttr("__lr_mult__", &v));
  CHECK(v == "0.1");
  Graph g(back);
  CHECK(g.node(0).node->user_attrs.at("__shape__") == "(2,3)");
  CHECK(g.node(0).node->attrs.dict.empty());

  // Through a file; a 2.0 version number is read the same way.
  const std::string path = symbind_test::TempPath("sym.json");
  SaveSymbolFile(path, grp);
  CHECK(LoadSymbolFile(path).ListArguments() == grp.ListArguments());
  std::remove(path.c_str());
  json j = json::parse(text);
  j["attrs"]["mxnet_version"] = json::array({"int", 20000});
  CHECK(LoadSymbolJSON(j.dump()).ListOutputs() == grp.ListOutputs());
}

TEST_CASE("io: real symbol files load with MXNet's argument and aux lists", "[io][shared]") {
  const std::string dir = symbind_test::SharedDir() + "/models/";
  const std::vector<std::string> files = {
      "mtcnn/det1-symbol.json",        "mtcnn/det2-symbol.json",
      "mtcnn/det3-symbol.json",        "symbols/resnet-18-symbol.json",
      "symbols/squeezenet_v1.1-symbol.json", "symbols/caffenet-symbol.json",
      "symbols/fcn32s-symbol.json"};
  for (auto& f : files) {
    INFO(f);
    json j = json::parse(Slurp(dir + f));
    CHECK(SymbolJSONVersion(j.dump()) == (j.contains("attrs") ? 10500 : 800));
    std::vector<std::string> args, aux;
    ExpectedLists(j, &args, &aux);
    if (f == "symbols/resnet-18-symbol.json") {
      REQUIRE(aux.size() >= 2);
      CHECK(aux[0] == "bn_data_moving_mean");
      CHECK(aux[1] == "bn_data_moving_var");
    }
    auto missing = MissingOps(j);
    if (!missing.empty()) {
      WARN(f << ": skipping, operators not registered yet: " << missing[0] << " ...");
      // Still loads far enough to name the first unknown operator.
      std::string err = ErrorOf([&] { LoadSymbolFile(dir + f); });
      CHECK(Contains(err, "unknown operator"));
      continue;
    }
    Symbol s = LoadSymbolFile(dir + f);
    CHECK(s.ListArguments() == args);
    CHECK(s.ListAuxiliaryStates() == aux);
    Symbol back = LoadSymbolJSON(SaveSymbolJSON(s));
    CHECK(back.ListArguments() == args);
    CHECK(back.ListAuxiliaryStates() == aux);
    CHECK(SaveSymbolJSON(back) == SaveSymbolJSON(s));
  }
}

TEST_CASE("io: symbol JSON errors name the place", "[io]") {
  SECTION("malformed JSON gives the byte position") {
    std::string err = ErrorOf([] { LoadSymbolJSON("{\"nodes\": [1, 2,, 3]}"); });
    CHECK(Contains(err, "malformed JSON at byte 17"));
  }
  SECTION("structure") {
    CHECK(Contains(ErrorOf([] { LoadSymbolJSON("[1]"); }), "not an object"));
    CHECK(Contains(ErrorOf([] { LoadSymbolJSON("{\"heads\": []}"); }), "nodes"));
    CHECK(Contains(ErrorOf([] { LoadSymbolJSON(R"({"nodes": [], "heads": []})"); }),
                   "heads"));
    CHECK(Contains(ErrorOf([] { LoadSymbolJSON(R"({"nodes": [{"op": "null"}], "heads": []})"); }),
                   "node 0 has no \"name\""));
    CHECK(Contains(ErrorOf([] { LoadSymbolJSON(std::string(1000, '[') + std::string(1000, ']')); }),
                   "nesting deeper"));
  }
  SECTION("unknown operator names node and op") {
    std::string err = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "NoSuchOp", "name": "bad1", "inputs": [[0, 0]]}], "heads": [[1, 0]]})");
    });
    CHECK(Contains(err, "node 1 'bad1'"));
    CHECK(Contains(err, "unknown operator 'NoSuchOp'"));
  }
  SECTION("inputs referencing missing or later nodes, outputs out of range") {
    std::string later = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": [[1, 0]]},
        {"op": "null", "name": "y", "inputs": []}], "heads": [[1, 0]]})");
    });
    CHECK(Contains(later, "node 0 'x'"));
    std::string head = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
        "heads": [[3, 0]]})");
    });
    CHECK(Contains(head, "head 0 references node 3, which is missing"));
    std::string index = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
        "heads": [[0, 1, 0]]})");
    });
    CHECK(Contains(index, "uses output 1 of node 0 'x', which has 1 output"));
    std::string neg = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []}],
        "heads": [[0, -1]]})");
    });
    CHECK(Contains(neg, "non-negative integers"));
  }
  if (!OpRegistry::Global().Find("FullyConnected")) {
    WARN("FullyConnected not registered yet; skipping parameter errors");
    return;
  }
  SECTION("unknown parameter names the node and lists the possible arguments") {
    std::string err = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "FullyConnected", "name": "fc9", "attrs": {"num_hidden": "2", "bogus": "1"},
         "inputs": [[0, 0]]}], "heads": [[1, 0]], "attrs": {"mxnet_version": ["int", 10600]}})");
    });
    CHECK(Contains(err, "node 1 'fc9'"));
    CHECK(Contains(err, "bogus"));
    CHECK(Contains(err, "num_hidden"));
    CHECK_THROWS_AS(LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "FullyConnected", "name": "fc9", "attrs": {"bogus": "1"},
         "inputs": [[0, 0]]}], "heads": [[1, 0]]})"),
                    ParamError);
  }
  SECTION("1.x files must list every input") {
    std::string err = ErrorOf([] {
      LoadSymbolJSON(R"({"nodes": [{"op": "null", "name": "x", "inputs": []},
        {"op": "FullyConnected", "name": "fc9", "attrs": {"num_hidden": "2"},
         "inputs": [[0, 0]]}], "heads": [[1, 0]], "attrs": {"mxnet_version": ["int", 10600]}})");
    });
    CHECK(Contains(err, "node 1 'fc9' (FullyConnected) has 1 inputs but the operator takes 3"));
  }
}

TEST_CASE("io: JSON before 0.9.4 gets the inputs' default initializers, later JSON as written", "[io]") {
  auto prelu_json = [](const std::string& version_attrs) {
    return R"({"nodes": [{"op": "null", "name": "data", "inputs": []},
                         {"op": "null", "name": "act_gamma", "inputs": []},
                         {"op": "LeakyReLU", "name": "act", "param": {"act_type": "prelu"},
                          "inputs": [[0, 0], [1, 0]]}],
               "arg_nodes": [0, 1], "heads": [[2, 0]])" + version_attrs + "}";
  };
  auto gamma_init = [](const Symbol& s) {
    std::string value;
    s.GetInternals()["act_gamma"].GetAttr("__init__", &value);
    return value;
  };
  CHECK(gamma_init(LoadSymbolJSON(prelu_json(""))) == R"(["Constant", {"value": 0.25}])");
  CHECK(gamma_init(LoadSymbolJSON(prelu_json(R"(, "attrs": {"mxnet_version": ["int", 10901]})"))).empty());
}
