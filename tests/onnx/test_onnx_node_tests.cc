// ONNX's own operator tests (Debian's libonnx-testdata, data/node/test_*): every case whose
// ops symbind imports is loaded, run on test_data_set_0's inputs and compared with its
// outputs. Cases that cannot pass are listed with a reason in node_tests_excluded.txt; any
// other failure fails the test, and so does a listed case that passes (the list stays true).
// SYMBIND_ONNX_NODE_REPORT=FILE writes every case's result there, one "name<TAB>result" line.
#ifdef SYMBIND_HAVE_ONNX
#include <catch2/catch.hpp>

#include <dirent.h>
#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include <symbind/io/onnx/onnx.h>
#include <symbind/io/onnx/onnx_tensor.h>
#include <symbind/predict/predictor.h>

#include "onnx_test_util.h"

namespace symbind {
namespace {

const char kNodeTestRoot[] = "/usr/share/libonnx-testdata/data/node";

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> SortedEntries(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind(prefix, 0) == 0) names.push_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

NDArray ReadTensorFile(const std::string& path) {
  onnx::TensorProto t;
  if (!t.ParseFromString(ReadFile(path))) throw IOError("cannot parse " + path);
  return onnx_io::FromTensorProto(t, "");
}


// Element-wise |got - want| <= atol + rtol |want| (NaN matching NaN); "" when all pass.
std::string Compare(const NDArray& got, const NDArray& want) {
  if (got.shape() != want.shape())
    return StrCat("shape ", got.shape().ToString(), ", expected ", want.shape().ToString());
  constexpr double rtol = 1e-4, atol = 1e-5;
  for (int64_t i = 0; i < want.Size(); ++i) {
    const double g = onnx_test::ValueAt(got, i), w = onnx_test::ValueAt(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w)))
      return StrCat("element ", i, ": ", g, ", expected ", w);
  }
  return "";
}

// Runs one case; "" when it passes, else what went wrong. The case's inputs are written into
// the model as initializers before import: ONNX's runner feeds shapes, axes, pads, scales and
// bounds as inputs, which symbind imports only from constants (its ops take them as
// attributes); the other inputs become parameters, bound as the data would be.
std::string RunNodeTest(const std::string& dir) {
  try {
    onnx::ModelProto proto;
    if (!proto.ParseFromString(ReadFile(dir + "/model.onnx"))) return "cannot parse model.onnx";
    std::set<std::string> initializers;
    for (const auto& t : proto.graph().initializer()) initializers.insert(t.name());
    int index = 0;
    for (const auto& in : proto.graph().input()) {
      if (initializers.count(in.name())) continue;
      onnx::TensorProto* t = proto.mutable_graph()->add_initializer();
      if (!t->ParseFromString(ReadFile(StrCat(dir, "/test_data_set_0/input_", index++, ".pb"))))
        return "cannot parse the input data";
      t->set_name(in.name());
    }
    std::string bytes;
    proto.SerializeToString(&bytes);
    const Model model = LoadOnnxBuffer(bytes.data(), bytes.size(), dir + "/model.onnx");
    Predictor p(model.symbol, model.args, model.aux, {});
    p.Forward();
    const int outputs = proto.graph().output_size();
    if (static_cast<int>(p.Outputs().size()) != outputs) return StrCat(p.Outputs().size(), " outputs, expected ", outputs);
    for (int i = 0; i < outputs; ++i) {
      const std::string diff = Compare(p.Output(i), ReadTensorFile(StrCat(dir, "/test_data_set_0/output_", i, ".pb")));
      if (!diff.empty()) return StrCat("output ", i, ": ", diff);
    }
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

// test name -> reason, from the committed list.
std::map<std::string, std::string> Exclusions() {
  std::ifstream in(std::string(SYMBIND_SOURCE_DIR) + "/tests/onnx/node_tests_excluded.txt");
  std::map<std::string, std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find_first_of(" \t");
    const size_t reason = line.find_first_not_of(" \t", space);
    REQUIRE(space != std::string::npos);
    REQUIRE(reason != std::string::npos);
    out[line.substr(0, space)] = line.substr(reason);
  }
  return out;
}

TEST_CASE("onnx: ONNX's node tests pass for every op symbind imports", "[onnx][onnx_node]") {
  if (!IsDirectory(kNodeTestRoot)) {
    WARN("skipped: " << kNodeTestRoot << " is missing (Debian package libonnx-testdata)");
    return;
  }
  const std::map<std::string, std::string> excluded = Exclusions();
  std::set<std::string> imported;
  for (const auto& op : OnnxImportedOps()) imported.insert(op);
  std::vector<std::string> failures, passing_but_excluded;
  int selected = 0, passed = 0, failed_as_listed = 0;
  const char* report_path = std::getenv("SYMBIND_ONNX_NODE_REPORT");
  std::ofstream report;
  if (report_path) report.open(report_path);
  for (const std::string& name : SortedEntries(kNodeTestRoot, "test_")) {
    const std::string dir = std::string(kNodeTestRoot) + "/" + name;
    onnx::ModelProto proto;
    if (!proto.ParseFromString(ReadFile(dir + "/model.onnx"))) continue;
    bool mapped = proto.graph().node_size() > 0;
    for (const auto& n : proto.graph().node())
      mapped = mapped && (n.domain().empty() || n.domain() == "ai.onnx") && imported.count(n.op_type());
    if (!mapped) continue;
    ++selected;
    const std::string error = RunNodeTest(dir);
    const bool listed = excluded.count(name) != 0;
    if (report_path) report << name << "\t" << (error.empty() ? std::string("pass") : error) << "\n";
    if (error.empty()) {
      ++passed;
      if (listed) passing_but_excluded.push_back(name);
    } else if (listed) {
      ++failed_as_listed;
    } else {
      failures.push_back(name + ": " + error);
    }
  }
  std::cout << "ONNX node tests for imported ops: " << selected << " cases, " << passed << " pass, "
            << failed_as_listed << " excluded (node_tests_excluded.txt), " << failures.size() << " unexpected failures\n";
  for (const auto& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
  for (const auto& name : passing_but_excluded) UNSCOPED_INFO(name << " passes: remove it from node_tests_excluded.txt");
  CHECK(passing_but_excluded.empty());
  CHECK(selected > 100);
}

}  // namespace
}  // namespace symbind
#endif  // SYMBIND_HAVE_ONNX
