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
#include <symbind/train/kvstore.h>

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

// The native KVStore (train/kvstore.h: "local", "device", "dist_sync" over MPI) with MXNet's
// C updater callbacks.
struct KVStoreBox {
  static constexpr HandleKind kKind = HandleKind::kKVStore;
  std::unique_ptr<KVStore> store;
  MXKVStoreUpdater* updater = nullptr;
  MXKVStoreStrUpdater* str_updater = nullptr;
  void* updater_handle = nullptr;
};

// Hands a pushed sum and the stored value to the C updater as temporary NDArrayHandles; an
// int-key updater gets the keys that are integers, as MXNet's does.
void RunCUpdater(const KVStoreBox& kv, const std::string& key, const NDArray& pushed, NDArray* stored) {
  char* end = nullptr;
  const long numeric = std::strtol(key.c_str(), &end, 10);
  const bool is_int = !key.empty() && *end == '\0';
  if (!(kv.updater && is_int) && !kv.str_updater)
    throw Error(StrCat("key '", key, "' is a string but only an int-key updater is set"));
  NDArrayBox* recv = NewHandle<NDArrayBox>(pushed);
  NDArrayBox* local = NewHandle<NDArrayBox>(*stored);
  if (kv.updater && is_int) kv.updater(static_cast<int>(numeric), recv, local, kv.updater_handle);
  else kv.str_updater(key.c_str(), recv, local, kv.updater_handle);
  FreeHandle<NDArrayBox>(recv);
  FreeHandle<NDArrayBox>(local);
}

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

void Pull(KVStoreBox* kv, const std::vector<std::string>& keys, const std::vector<NDArray>& vals) {
  std::vector<NDArray> outs = vals;  // handles to the callers' storage
  std::vector<NDArray*> out_ptrs;
  for (auto& a : outs) out_ptrs.push_back(&a);
  kv->store->Pull(keys, out_ptrs);
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
    std::unique_ptr<KVStore> store = KVStore::Create(t);
    KVStoreBox* kv = NewHandle<KVStoreBox>();
    kv->store = std::move(store);
    *out = kv;
  });
}

int MXKVStoreFree(KVStoreHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<KVStoreBox>(handle); });
}

int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] { FromHandle<KVStoreBox>(handle)->store->Init(IntKeys(num, keys), Arrays(num, vals)); });
}
int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] {
    FromHandle<KVStoreBox>(handle)->store->Init(CStrings(num, keys, "keys"), Arrays(num, vals));
  });
}
int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] { FromHandle<KVStoreBox>(handle)->store->Push(IntKeys(num, keys), Arrays(num, vals)); });
}
int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    FromHandle<KVStoreBox>(handle)->store->Push(CStrings(num, keys, "keys"), Arrays(num, vals));
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
    kv->store->SetUpdater([kv](const std::string& key, const NDArray& pushed, NDArray* stored) {
      RunCUpdater(*kv, key, pushed, stored);
    });
  });
}
int MXKVStoreGetType(KVStoreHandle handle, const char** type) {
  return Guarded(__func__, [&] { *NotNull(type, "type") = FromHandle<KVStoreBox>(handle)->store->type().c_str(); });
}
int MXKVStoreGetRank(KVStoreHandle handle, int* ret) {
  return Guarded(__func__, [&] { *NotNull(ret, "ret") = FromHandle<KVStoreBox>(handle)->store->rank(); });
}
int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret) {
  return Guarded(__func__, [&] { *NotNull(ret, "ret") = FromHandle<KVStoreBox>(handle)->store->num_workers(); });
}
int MXKVStoreBarrier(KVStoreHandle handle) {
  return Guarded(__func__, [&] { FromHandle<KVStoreBox>(handle)->store->Barrier(); });
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
