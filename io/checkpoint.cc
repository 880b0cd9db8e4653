#include "checkpoint.h"

#include <cstdio>

#include "ndarray_file.h"
#include "symbol_json.h"

namespace symbind {

std::string CheckpointSymbolPath(const std::string& prefix) { return prefix + "-symbol.json"; }

std::string CheckpointParamsPath(const std::string& prefix, int epoch) {
  if (epoch < 0) throw Error(StrCat("checkpoint epoch must be non-negative; got ", epoch));
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04d", epoch);
  return prefix + "-" + buf + ".params";
}

void LoadCheckpoint(const std::string& prefix, int epoch, Symbol* symbol,
                    std::map<std::string, NDArray>* arg_params,
                    std::map<std::string, NDArray>* aux_params) {
  if (symbol) *symbol = LoadSymbolFile(CheckpointSymbolPath(prefix));
  if (!arg_params && !aux_params) return;
  std::map<std::string, NDArray> args, aux;
  LoadArgAuxParams(CheckpointParamsPath(prefix, epoch), &args, &aux);
  if (arg_params) *arg_params = std::move(args);
  if (aux_params) *aux_params = std::move(aux);
}

void LoadArgAuxParams(const std::string& path, std::map<std::string, NDArray>* args,
                      std::map<std::string, NDArray>* aux, bool map_read_only) {
  try {
    NDArrayLoadOptions options;
    options.map_read_only = map_read_only;
    SplitArgAux(LoadNDArrayMap(path, options), args, aux);
  } catch (const IOError& e) {
    // Name the file once: most loader messages already contain the path.
    const std::string msg = e.what();
    if (msg.find(path) != std::string::npos) throw;
    throw IOError(path + ": " + msg);
  }
}

void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params) {
  const std::string params_path = CheckpointParamsPath(prefix, epoch);
  SaveSymbolFile(CheckpointSymbolPath(prefix), symbol);
  SaveNDArrays(params_path, MergeArgAux(arg_params, aux_params));
}

}  // namespace symbind
