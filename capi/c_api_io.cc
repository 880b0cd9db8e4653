// MXNet's C API for data iterators and the key-value store (mxnet/c_api.h). Iterators:
// MNISTIter (idx files, plain or gzip) over symbind::MNISTIter. KVStore: the single-process "local"/"device" store.
#include <mxnet/c_api.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <map>
#include <string>
#include <vector>

#include <symbind/io/mnist.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

struct IterInfo {
  const char* name;
  const char* description;
  std::vector<std::string> arg_names, arg_types, arg_docs;
};
const std::vector<IterInfo>& Iterators() {
  static const std::vector<IterInfo> iters = {
      {"MNISTIter", "Iterates over MNIST-format idx files (plain or gzip) in batches.",
       {"image", "label", "batch_size", "shuffle", "flat", "seed", "silent"},
       {"string, optional, default='./train-images-idx3-ubyte'",
        "string, optional, default='./train-labels-idx1-ubyte'",
        "int, optional, default='128'", "boolean, optional, default=1",
        "boolean, optional, default=0", "int, optional, default='0'",
        "boolean, optional, default=0"},
       {"Images file", "Labels file", "Batch size", "Shuffle each epoch", "Flatten to (N, 784)",
        "Shuffle seed", "Quiet"}}};
  return iters;
}

struct DataIterBox {
  static constexpr HandleKind kKind = HandleKind::kDataIter;
  std::unique_ptr<MNISTIter> iter;
  std::vector<uint64_t> index;  // the current batch's sample indices, as MXNet returns them
};

bool ParseBool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "True") return true;
  if (v == "0" || v == "false" || v == "False") return false;
  throw Error(StrCat("MNISTIter: parameter '", key, "' expects a boolean, got '", v, "'"));
}

// The single-process store: values by key; a push sums the pushed arrays and hands the sum to
// the updater (or stores it), a pull copies the stored value out.
struct KVStoreBox {
  static constexpr HandleKind kKind = HandleKind::kKVStore;
  std::string type;
  std::map<std::string, NDArray> values;
  MXKVStoreUpdater* updater = nullptr;
  MXKVStoreStrUpdater* str_updater = nullptr;
  void* updater_handle = nullptr;
};

std::vector<std::string> IntKeys(uint32_t n, const int* keys) {
  if (n > 0) NotNull(keys, "keys");
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(std::to_string(keys[i]));
  return out;
}

std::vector<NDArray> Arrays(uint32_t n, NDArrayHandle* vals) {
  if (n > 0) NotNull(vals, "vals");
  std::vector<NDArray> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(FromHandle<NDArrayBox>(vals[i], "vals")->array);
  return out;
}

void Init(KVStoreBox* kv, const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  for (size_t i = 0; i < keys.size(); ++i) {
    if (kv->values.count(keys[i])) throw Error(StrCat("key ", keys[i], " is already initialised"));
    kv->values[keys[i]] = vals[i].Copy();
  }
}

const NDArray& Stored(KVStoreBox* kv, const std::string& key) {
  auto it = kv->values.find(key);
  if (it == kv->values.end()) throw Error(StrCat("key ", key, " has not been initialised"));
  return it->second;
}

void Push(KVStoreBox* kv, const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  // Several values for one key are summed first, as MXNet merges device copies.
  std::map<std::string, NDArray> merged;
  std::vector<std::string> order;
  for (size_t i = 0; i < keys.size(); ++i) {
    Stored(kv, keys[i]);
    auto it = merged.find(keys[i]);
    if (it == merged.end()) {
      merged[keys[i]] = vals[i].Copy();
      order.push_back(keys[i]);
    } else {
      float* dst = it->second.fdata();
      const float* src = vals[i].fdata();
      for (int64_t k = 0; k < vals[i].Size(); ++k) dst[k] += src[k];
    }
  }
  for (auto& key : order) {
    NDArray& local = kv->values[key];
    if (kv->updater || kv->str_updater) {
      NDArrayBox* recv = NewHandle<NDArrayBox>(merged[key]);
      NDArrayBox* stored = NewHandle<NDArrayBox>(local);
      char* end = nullptr;
      long numeric = std::strtol(key.c_str(), &end, 10);
      bool is_int = !key.empty() && *end == '\0';
      if (kv->updater && is_int) kv->updater(static_cast<int>(numeric), recv, stored, kv->updater_handle);
      else if (kv->str_updater) kv->str_updater(key.c_str(), recv, stored, kv->updater_handle);
      else throw Error(StrCat("key '", key, "' is a string but only an int-key updater is set"));
      FreeHandle<NDArrayBox>(recv);
      FreeHandle<NDArrayBox>(stored);
    } else {
      merged[key].CopyTo(&local);
    }
  }
}

void Pull(KVStoreBox* kv, const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  for (size_t i = 0; i < keys.size(); ++i) {
    NDArray dst = vals[i];
    Stored(kv, keys[i]).CopyTo(&dst);
  }
}

}  // namespace
}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXListDataIters(uint32_t* out_size, DataIterCreator** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    NotNull(out_array, "out_array");
    static std::vector<DataIterCreator> creators = [] {
      std::vector<DataIterCreator> c;
      for (auto& info : Iterators()) c.push_back(const_cast<IterInfo*>(&info));
      return c;
    }();
    *out_size = static_cast<uint32_t>(creators.size());
    *out_array = creators.data();
  });
}

static const IterInfo& IterOf(DataIterCreator creator) {
  for (auto& info : Iterators())
    if (&info == creator) return info;
  throw Error("argument 'creator' is not a data iterator creator of this library");
}

int MXDataIterGetIterInfo(DataIterCreator creator, const char** name, const char** description,
                          uint32_t* num_args, const char*** arg_names,
                          const char*** arg_type_infos, const char*** arg_descriptions) {
  return Guarded(__func__, [&] {
    const IterInfo& info = IterOf(creator);
    thread_local std::vector<const char*> names, types, docs;
    names.clear();
    types.clear();
    docs.clear();
    for (size_t i = 0; i < info.arg_names.size(); ++i) {
      names.push_back(info.arg_names[i].c_str());
      types.push_back(info.arg_types[i].c_str());
      docs.push_back(info.arg_docs[i].c_str());
    }
    *NotNull(name, "name") = info.name;
    *NotNull(description, "description") = info.description;
    *NotNull(num_args, "num_args") = static_cast<uint32_t>(names.size());
    *NotNull(arg_names, "arg_names") = names.data();
    *NotNull(arg_type_infos, "arg_type_infos") = types.data();
    *NotNull(arg_descriptions, "arg_descriptions") = docs.data();
  });
}

// Parameters MNISTIter does not use (input_shape, num_parts, ...) are ignored, as MXNet's
// iterators ignore what they do not know.
int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char** keys,
                         const char** vals, DataIterHandle* out) {
  return Guarded(__func__, [&] {
    IterOf(handle);
    NotNull(out, "out");
    std::vector<std::string> k = CStrings(num_param, keys, "keys"), v = CStrings(num_param, vals, "vals");
    std::string image = "./train-images-idx3-ubyte", label = "./train-labels-idx1-ubyte";
    int64_t batch_size = 128;
    bool shuffle = true, flat = false;
    uint64_t seed = 0;
    for (uint32_t i = 0; i < num_param; ++i) {
      if (k[i] == "image") image = v[i];
      else if (k[i] == "label") label = v[i];
      else if (k[i] == "batch_size") batch_size = std::stoll(v[i]);
      else if (k[i] == "shuffle") shuffle = ParseBool(k[i], v[i]);
      else if (k[i] == "flat") flat = ParseBool(k[i], v[i]);
      else if (k[i] == "seed") seed = std::stoull(v[i]);
    }
    if (batch_size < 1 || batch_size > std::numeric_limits<int>::max())
      throw Error(StrCat("MNISTIter: batch_size must be a positive int, got ", batch_size));
    auto it = std::make_unique<DataIterBox>();
    it->iter = std::make_unique<MNISTIter>(LoadMNIST(image, label), static_cast<int>(batch_size),
                                           shuffle, seed, flat);
    *out = it.release();
    RegisterHandle(*out, HandleKind::kDataIter);
  });
}

int MXDataIterFree(DataIterHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<DataIterBox>(handle); });
}

int MXDataIterBeforeFirst(DataIterHandle handle) {
  return Guarded(__func__, [&] {
    FromHandle<DataIterBox>(handle)->iter->Reset();
  });
}

// The last batch is completed by wrapping around and reports its padding (MXNet's
// last_batch_handle="pad").
int MXDataIterNext(DataIterHandle handle, int* out) {
  return Guarded(__func__, [&] {
    DataIterBox* it = FromHandle<DataIterBox>(handle);
    *NotNull(out, "out") = it->iter->Next();
  });
}

static MNISTIter& Iter(DataIterHandle handle) { return *FromHandle<DataIterBox>(handle)->iter; }

int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArray d = Iter(handle).data();
    *NotNull(out, "out") = NewHandle<NDArrayBox>(d);
  });
}

int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    NDArray l = Iter(handle).label();
    *NotNull(out, "out") = NewHandle<NDArrayBox>(l);
  });
}

int MXDataIterGetPadNum(DataIterHandle handle, int* pad) {
  return Guarded(__func__, [&] {
    *NotNull(pad, "pad") = Iter(handle).pad();
  });
}

int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size) {
  return Guarded(__func__, [&] {
    DataIterBox* it = FromHandle<DataIterBox>(handle);
    const auto& index = it->iter->index();
    it->index.assign(index.begin(), index.end());
    *NotNull(out_index, "out_index") = it->index.data();
    *NotNull(out_size, "out_size") = it->index.size();
  });
}

int MXKVStoreCreate(const char* type, KVStoreHandle* out) {
  return Guarded(__func__, [&] {
    std::string t = CString(type, "type");
    NotNull(out, "out");
    if (t != "local" && t != "device" && t.rfind("local_", 0) != 0)
      throw Error(StrCat("kvstore type '", t, "' is not supported: only the single-process "
                         "'local' and 'device' stores"));
    KVStoreBox* kv = NewHandle<KVStoreBox>();
    kv->type = t;
    *out = kv;
  });
}

int MXKVStoreFree(KVStoreHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<KVStoreBox>(handle); });
}

int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] { Init(FromHandle<KVStoreBox>(handle), IntKeys(num, keys), Arrays(num, vals)); });
}
int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] {
    Init(FromHandle<KVStoreBox>(handle), CStrings(num, keys, "keys"), Arrays(num, vals));
  });
}
int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] { Push(FromHandle<KVStoreBox>(handle), IntKeys(num, keys), Arrays(num, vals)); });
}
int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    Push(FromHandle<KVStoreBox>(handle), CStrings(num, keys, "keys"), Arrays(num, vals));
  });
}
int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] { Pull(FromHandle<KVStoreBox>(handle), IntKeys(num, keys), Arrays(num, vals)); });
}
int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    Pull(FromHandle<KVStoreBox>(handle), CStrings(num, keys, "keys"), Arrays(num, vals));
  });
}
int MXKVStoreSetUpdater(KVStoreHandle handle, MXKVStoreUpdater updater, void* updater_handle) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->updater = updater;
    kv->updater_handle = updater_handle;
  });
}
int MXKVStoreGetType(KVStoreHandle handle, const char** type) {
  return Guarded(__func__, [&] { *NotNull(type, "type") = FromHandle<KVStoreBox>(handle)->type.c_str(); });
}
int MXKVStoreGetRank(KVStoreHandle handle, int* ret) {
  return Guarded(__func__, [&] {
    FromHandle<KVStoreBox>(handle);
    *NotNull(ret, "ret") = 0;
  });
}
int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret) {
  return Guarded(__func__, [&] {
    FromHandle<KVStoreBox>(handle);
    *NotNull(ret, "ret") = 1;
  });
}
int MXKVStoreBarrier(KVStoreHandle handle) {
  return Guarded(__func__, [&] { FromHandle<KVStoreBox>(handle); });
}
int MXKVStoreIsWorkerNode(int* ret) { return Guarded(__func__, [&] { *NotNull(ret, "ret") = 1; }); }
int MXKVStoreIsServerNode(int* ret) { return Guarded(__func__, [&] { *NotNull(ret, "ret") = 0; }); }
int MXKVStoreIsSchedulerNode(int* ret) { return Guarded(__func__, [&] { *NotNull(ret, "ret") = 0; }); }
int MXKVStoreRunServer(KVStoreHandle, MXKVStoreServerController, void*) {
  return Guarded(__func__, [] {
    throw Error("distributed kvstore servers are not supported: symbind's store is single-process");
  });
}
int MXKVStoreSendCommmandToServers(KVStoreHandle, int, const char*) {
  return Guarded(__func__, [] {
    throw Error("distributed kvstore servers are not supported: symbind's store is single-process");
  });
}
