#include "mxnet-cpp/kvstore.h"

#include <map>
#include <mutex>
#include <stdexcept>

namespace mxnet {
namespace cpp {

namespace {

struct Store {
  std::mutex mu;
  std::string type = "local";
  std::map<std::string, NDArray> values;
  std::map<std::string, int> index;  // optimizer state index per key
  std::unique_ptr<Optimizer> optimizer;
};

Store& S() {
  static Store s;
  return s;
}

int IndexOf(Store& s, const std::string& key) {
  auto it = s.index.find(key);
  if (it != s.index.end()) return it->second;
  int i;
  try {
    size_t pos = 0;
    i = std::stoi(key, &pos);
    if (pos != key.size()) throw std::invalid_argument(key);
  } catch (const std::exception&) {
    i = 1000000 + static_cast<int>(s.index.size());
  }
  s.index[key] = i;
  return i;
}

void InitKey(const std::string& key, const NDArray& val) {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.values.count(key)) throw std::runtime_error("KVStore: key " + key + " initialised twice");
  s.values[key] = val.Copy();
  IndexOf(s, key);
}

void PushKeys(const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  if (keys.size() != vals.size()) throw std::runtime_error("KVStore::Push: keys and values differ in number");
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  std::map<std::string, NDArray> merged;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!s.values.count(keys[i])) throw std::runtime_error("KVStore::Push: key " + keys[i] + " not initialised");
    auto it = merged.find(keys[i]);
    if (it == merged.end()) merged[keys[i]] = vals[i].Copy();
    else it->second += vals[i];
  }
  for (auto& kv : merged) {
    NDArray& stored = s.values[kv.first];
    if (s.optimizer) s.optimizer->Update(IndexOf(s, kv.first), stored, kv.second);
    else kv.second.CopyTo(&stored);
  }
}

void PullKeys(const std::vector<std::string>& keys, std::vector<NDArray*> outs) {
  auto& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  for (size_t i = 0; i < keys.size(); ++i) {
    auto it = s.values.find(keys[i]);
    if (it == s.values.end()) throw std::runtime_error("KVStore::Pull: key " + keys[i] + " not initialised");
    it->second.CopyTo(outs[i]);
  }
}

std::vector<std::string> Names(const std::vector<int>& keys) {
  std::vector<std::string> out;
  for (int k : keys) out.push_back(std::to_string(k));
  return out;
}

}  // namespace

void KVStore::SetType(const std::string& type) {
  if (type != "local" && type != "device" && type.rfind("local", 0) != 0)
    throw std::runtime_error("KVStore: symbind supports the single-process types 'local' and 'device', not '" +
                             type + "'");
  std::lock_guard<std::mutex> lock(S().mu);
  S().type = type;
}
void KVStore::RunServer() { throw std::runtime_error("KVStore::RunServer: symbind has no distributed kvstore"); }
void KVStore::Init(int key, const NDArray& val) { InitKey(std::to_string(key), val); }
void KVStore::Init(const std::string& key, const NDArray& val) { InitKey(key, val); }
void KVStore::Init(const std::vector<int>& keys, const std::vector<NDArray>& vals) {
  Init(Names(keys), vals);
}
void KVStore::Init(const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  if (keys.size() != vals.size()) throw std::runtime_error("KVStore::Init: keys and values differ in number");
  for (size_t i = 0; i < keys.size(); ++i) InitKey(keys[i], vals[i]);
}
void KVStore::Push(int key, const NDArray& val, int) { PushKeys({std::to_string(key)}, {val}); }
void KVStore::Push(const std::string& key, const NDArray& val, int) { PushKeys({key}, {val}); }
void KVStore::Push(const std::vector<int>& keys, const std::vector<NDArray>& vals, int) {
  PushKeys(Names(keys), vals);
}
void KVStore::Push(const std::vector<std::string>& keys, const std::vector<NDArray>& vals, int) {
  PushKeys(keys, vals);
}
void KVStore::Pull(int key, NDArray* out, int) { PullKeys({std::to_string(key)}, {out}); }
void KVStore::Pull(const std::string& key, NDArray* out, int) { PullKeys({key}, {out}); }
void KVStore::Pull(const std::vector<int>& keys, std::vector<NDArray>* outs, int) {
  Pull(Names(keys), outs);
}
void KVStore::Pull(const std::vector<std::string>& keys, std::vector<NDArray>* outs, int) {
  outs->resize(keys.size());
  std::vector<NDArray*> ptrs;
  for (auto& o : *outs) ptrs.push_back(&o);
  PullKeys(keys, ptrs);
}
void KVStore::SetOptimizer(std::unique_ptr<Optimizer> optimizer, bool) {
  std::lock_guard<std::mutex> lock(S().mu);
  S().optimizer = std::move(optimizer);
}
std::string KVStore::GetType() {
  std::lock_guard<std::mutex> lock(S().mu);
  return S().type;
}

}  // namespace cpp
}  // namespace mxnet
