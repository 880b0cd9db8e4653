// MXNet cpp-package compatibility: a single-process key-value store ("local", "device").
// As in MXNet's cpp-package the methods are static (one store per process); an instance,
// KVStore("local"), calls SetType and gives the same methods through the object.
// Push of several values for one key sums them; with an optimizer set, a push runs
// optimizer->Update(key, stored, pushed), otherwise the pushed value replaces the stored one.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/optimizer.h"

namespace mxnet {
namespace cpp {

class KVStore {
 public:
  explicit KVStore(const std::string& type = "local") { SetType(type); }
  static void SetType(const std::string& type);
  static void RunServer();
  static void Init(int key, const NDArray& val);
  static void Init(const std::string& key, const NDArray& val);
  static void Init(const std::vector<int>& keys, const std::vector<NDArray>& vals);
  static void Init(const std::vector<std::string>& keys, const std::vector<NDArray>& vals);
  static void Push(int key, const NDArray& val, int priority = 0);
  static void Push(const std::string& key, const NDArray& val, int priority = 0);
  static void Push(const std::vector<int>& keys, const std::vector<NDArray>& vals, int priority = 0);
  static void Push(const std::vector<std::string>& keys, const std::vector<NDArray>& vals,
                   int priority = 0);
  static void Pull(int key, NDArray* out, int priority = 0);
  static void Pull(const std::string& key, NDArray* out, int priority = 0);
  static void Pull(const std::vector<int>& keys, std::vector<NDArray>* outs, int priority = 0);
  static void Pull(const std::vector<std::string>& keys, std::vector<NDArray>* outs,
                   int priority = 0);
  static void SetOptimizer(std::unique_ptr<Optimizer> optimizer, bool local = false);
  static std::string GetType();
  static int GetRank() { return 0; }
  static int GetNumWorkers() { return 1; }
  static void Barrier() {}
  static std::string GetRole() { return "worker"; }
};

}  // namespace cpp
}  // namespace mxnet
