// The bodies of the libFuzzer targets, shared with tests/test_fuzz_regression.cc, which replays
// the committed crash inputs (fuzz/regression/) through exactly the same code in every normal
// test run. Each body returns normally for any input the library handles correctly: a
// rejected input throws the documented symbind exception, which is caught here. Anything else
// (another exception, a broken round trip, a sanitizer report) is a finding; round-trip
// mismatches throw FuzzInvariantBroken, which libFuzzer reports as a crash (uncaught).
#pragma once
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <symbind/core/op.h>
#include <symbind/io/model_file.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>

namespace symbind::fuzz {

struct FuzzInvariantBroken : std::logic_error {
  using std::logic_error::logic_error;
};

inline void Require(bool cond, const char* what) {
  if (!cond) throw FuzzInvariantBroken(what);
}

// The .params (NDArray list) loader, and a save/load round trip of whatever it accepts.
inline void NDArrayFileTarget(const uint8_t* data, size_t size) {
  symbind::NDArrayLoadOptions options;
  options.max_dense_bytes_from_sparse = uint64_t{64} << 20;  // under libFuzzer's malloc limit
  symbind::NDArrayFile f;
  try {
    f = symbind::LoadNDArrayBuffer(data, size, options);
  } catch (const symbind::IOError&) {
    return;
  }
  // Anything loaded must save and load back to the same arrays.
  const std::string saved = symbind::SaveNDArraysToString(f.arrays, f.names);
  symbind::NDArrayFile back = symbind::LoadNDArrayBuffer(saved.data(), saved.size());
  Require(back.arrays.size() == f.arrays.size(), "round trip changed the array count");
  for (size_t i = 0; i < f.arrays.size(); ++i) {
    const symbind::NDArray &a = f.arrays[i], &b = back.arrays[i];
    Require(a.is_none() == b.is_none(), "round trip changed a none array");
    if (a.is_none()) continue;
    Require(a.shape() == b.shape() && a.dtype() == b.dtype() &&
                std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0,
            "round trip changed an array");
  }
}

// The symbol JSON loader, and save/load of whatever it accepts.
inline void SymbolJSONTarget(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  symbind::Symbol s;
  try {
    s = symbind::LoadSymbolJSON(text);
  } catch (const symbind::Error&) {
    return;
  }
  // The graph may still be unusable (ops may reject their inputs); saving it either works
  // and loads back or throws symbind::Error.
  try {
    const std::string saved = symbind::SaveSymbolJSON(s);
    symbind::Symbol back = symbind::LoadSymbolJSON(saved);
    Require(symbind::SaveSymbolJSON(back) == saved, "save/load/save is not stable");
    Require(back.ListArguments() == s.ListArguments(), "round trip changed the arguments");
  } catch (const symbind::Error&) {
  }
}

// The .symbind model loader (verifier and own checks), and a save/load round trip of whatever
// it accepts: same arrays bit for bit, same graph.
inline void ModelFileTarget(const uint8_t* data, size_t size) {
  symbind::Model m;
  try {
    m = symbind::LoadModelBuffer(data, size, "fuzz input");
  } catch (const symbind::Error&) {
    return;
  }
  std::string graph;
  try {
    graph = symbind::SaveSymbolJSON(m.symbol);
  } catch (const symbind::Error&) {
    return;  // names that are not UTF-8 cannot be written as JSON; the binary format is fine
  }
  const std::string saved = symbind::SaveModelToString(m);
  symbind::Model back = symbind::LoadModelBuffer(saved.data(), saved.size(), "round trip");
  Require(symbind::SaveSymbolJSON(back.symbol) == graph, "round trip changed the graph");
  Require(back.input_shapes == m.input_shapes, "round trip changed the input shapes");
  for (auto maps : {std::make_pair(&m.args, &back.args), std::make_pair(&m.aux, &back.aux)}) {
    Require(maps.first->size() == maps.second->size(), "round trip changed the parameter count");
    for (auto& kv : *maps.first) {
      auto it = maps.second->find(kv.first);
      Require(it != maps.second->end(), "round trip lost a parameter");
      const symbind::NDArray &a = kv.second, &b = it->second;
      Require(a.shape() == b.shape() && a.dtype() == b.dtype() &&
                  std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) == 0,
              "round trip changed a parameter");
    }
  }
}

// Operator parameter parsing. The first byte picks a registered operator; the rest is
// "key=value" lines given to its parameter parser. Lines are also fed to TShape::Parse.
inline void ParamTarget(const uint8_t* data, size_t size) {
  if (size == 0) return;
  static const std::vector<const symbind::Op*> ops = symbind::OpRegistry::Global().ListOps();
  if (ops.empty()) return;
  const symbind::Op* op = ops[data[0] % ops.size()];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  symbind::NodeAttrs attrs;
  attrs.op = op;
  attrs.name = "fuzz";
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) attrs.dict[line.substr(0, eq)] = line.substr(eq + 1);
    try {
      symbind::TShape::Parse(line);
    } catch (const symbind::Error&) {
    }
    pos = end + 1;
  }
  try {
    op->ParseAttrs(&attrs);
    // A parsed op must answer its structural queries.
    op->ListArguments(attrs);
    op->ListAuxStates(attrs);
    op->ListOutputs(attrs);
    op->NumVisibleOutputs(attrs);
  } catch (const symbind::Error&) {
  }
}

}  // namespace symbind::fuzz
