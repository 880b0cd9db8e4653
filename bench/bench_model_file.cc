// Writes a model with SimpleBind-initialised (seeded N(0,1)) parameters both as an MXNet
// checkpoint (PREFIX-symbol.json + PREFIX-0000.params) and as PREFIX.symbind, and prints the
// sizes. bench/model_file.sh then times `symbind run` on both and measures page sharing.
//   bench_model_file SYMBOL.json PREFIX --shape data=1,3,224,224
#include <cstdio>
#include <string>

#include <symbind/executor/executor.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/io/model_report.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>
#include "bench_util.h"

using namespace symbind;

int Main(int argc, char** argv) {
  if (argc != 5 || std::string(argv[3]) != "--shape") {
    std::fprintf(stderr, "usage: bench_model_file SYMBOL.json PREFIX --shape NAME=D0,D1,...\n");
    return 1;
  }
  const std::string prefix = argv[2];
  const auto shape = ParseShapeSpec(argv[4]);
  Model m;
  m.symbol = LoadSymbolFile(argv[1]);
  std::map<std::string, OpReq> no_grads;
  for (auto& n : m.symbol.ListArguments()) no_grads[n] = OpReq::kNull;
  SimpleBindOptions options;
  options.shapes.insert(shape);
  auto exec = SimpleBind(m.symbol, Context::CPU(), {}, {}, no_grads, {}, options);
  for (auto& kv : exec->arg_dict())
    if (kv.first != shape.first && kv.first.find("label") == std::string::npos) m.args[kv.first] = kv.second;
  m.aux = exec->aux_dict();
  SaveCheckpoint(prefix, 0, m.symbol, m.args, m.aux);
  SaveModel(prefix + ".symbind", m);
  const double pair = static_cast<double>(ReadFileToString(CheckpointSymbolPath(prefix)).size() +
                                          ReadFileToString(CheckpointParamsPath(prefix, 0)).size());
  const double one = static_cast<double>(ReadFileToString(prefix + ".symbind").size());
  std::printf("pair_bytes=%.0f symbind_bytes=%.0f size_ratio=%.5f\n", pair, one, one / pair);
  return 0;
}

int main(int argc, char** argv) { return symbind::bench::RunMain("bench_model_file", [&] { return Main(argc, argv); }); }
