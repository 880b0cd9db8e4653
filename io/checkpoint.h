// MXNet checkpoints (mx.model.save_checkpoint / load_checkpoint):
//   "<prefix>-symbol.json" and "<prefix>-<epoch as %04d>.params", the latter holding
//   "arg:<name>" and "aux:<name>" arrays.
#pragma once
#include <map>
#include <string>

#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>

namespace symbind {

std::string CheckpointSymbolPath(const std::string& prefix);
std::string CheckpointParamsPath(const std::string& prefix, int epoch);

// Any output may be null to skip it (a null `symbol` skips reading the JSON file).
void LoadCheckpoint(const std::string& prefix, int epoch, Symbol* symbol,
                    std::map<std::string, NDArray>* arg_params,
                    std::map<std::string, NDArray>* aux_params);
// A .params file of "arg:" / "aux:" arrays split into the two maps (IOError naming `path`);
// with `map_read_only`, views of the mapped file (NDArrayLoadOptions::map_read_only).
void LoadArgAuxParams(const std::string& path, std::map<std::string, NDArray>* args,
                      std::map<std::string, NDArray>* aux, bool map_read_only = false);
void SaveCheckpoint(const std::string& prefix, int epoch, const Symbol& symbol,
                    const std::map<std::string, NDArray>& arg_params,
                    const std::map<std::string, NDArray>& aux_params);

}  // namespace symbind
