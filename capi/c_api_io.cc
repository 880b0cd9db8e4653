// MXNet's C API for data iterators and the key-value store (mxnet/c_api.h). Iterators:
// io/data_iter.h's (MNISTIter, CSVIter), the same mxnet-cpp's MXDataIter makes. KVStore:
// train/kvstore.h's native store.
#include <mxnet/c_api.h>

#include <cstdlib>
#include <limits>
#include <memory>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <symbind/io/data_iter.h>
#include <symbind/train/kvstore.h>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

struct DataIterBox {
  static constexpr HandleKind kKind = HandleKind::kDataIter;
  std::unique_ptr<DataIter> iter;
  std::vector<uint64_t> index;  // the current batch's sample indices, as MXNet returns them
};

// The native KVStore (train/kvstore.h: "local", "device", "dist_sync" over MPI) with MXNet's
// C updater callbacks. The store is shared: mxnet-cpp's KVStore::GetHandle() gives a handle to
// the store its static methods use.
struct KVStoreBox {
  static constexpr HandleKind kKind = HandleKind::kKVStore;
  std::shared_ptr<KVStore> store;
  MXKVStoreUpdater* updater = nullptr;
  MXKVStoreStrUpdater* str_updater = nullptr;
  void* updater_handle = nullptr;
  enum KeyType { kNoKeys, kIntKeys, kStringKeys } key_type = kNoKeys;
  // The store may outlive this handle: it must not keep calling back through it.
  ~KVStoreBox() {
    if (store && (updater || str_updater)) store->SetUpdater(nullptr);
  }
};

// Hands a pushed sum and the stored value to the C updater as new NDArrayHandles, which
// belong to the updater (MXNet's frontends wrap and free them); an int-key updater gets the
// keys that are integers, as MXNet's does.
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
}

// As MXNet's stores: one handle takes int keys or string keys, not both (3 and "3" would
// name one value here).
void UseKeyType(KVStoreBox* kv, KVStoreBox::KeyType type) {
  if (kv->key_type == KVStoreBox::kNoKeys) kv->key_type = type;
  if (kv->key_type != type)
    throw Error(std::string("Mixed key types are not allowed: this store has ") +
                (kv->key_type == KVStoreBox::kIntKeys ? "int" : "string") + " keys");
}
std::vector<std::string> Keys(KVStoreBox* kv, uint32_t n, const int* keys) {
  if (n > 0) NotNull(keys, "keys");
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; ++i) out.push_back(std::to_string(keys[i]));
  UseKeyType(kv, KVStoreBox::kIntKeys);
  return out;
}
std::vector<std::string> Keys(KVStoreBox* kv, uint32_t n, const char** keys, const char* what = "keys") {
  std::vector<std::string> out = CStrings(n, keys, what);
  UseKeyType(kv, KVStoreBox::kStringKeys);
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

// MXNet's pull: outputs of row_sparse storage are left as they are when ignore_sparse (the
// default of MXKVStorePull; row_sparse_pull updates them), else pulled whole like the others.
void PullOutputs(KVStoreBox* kv, const std::vector<std::string>& keys, uint32_t num, NDArrayHandle* vals,
                 bool ignore_sparse) {
  if (num > 0) NotNull(vals, "vals");
  std::vector<std::string> pulled_keys;
  std::vector<NDArray> pulled;
  for (uint32_t i = 0; i < num; ++i) {
    const NDArrayBox* box = FromHandle<NDArrayBox>(vals[i], "vals");
    if (ignore_sparse && box->stype == kRowSparseStorage) continue;
    pulled_keys.push_back(keys[i]);
    pulled.push_back(box->array);
  }
  Pull(kv, pulled_keys, pulled);
}

// row_sparse_pull writes row_sparse arrays only, as MXNet's.
std::vector<NDArray> RowSparseOutputs(uint32_t num, NDArrayHandle* vals) {
  if (num > 0) NotNull(vals, "vals");
  std::vector<NDArray> arrays;
  for (uint32_t i = 0; i < num; ++i) {
    const NDArrayBox* box = FromHandle<NDArrayBox>(vals[i], "vals");
    if (box->stype != kRowSparseStorage)
      throw Error(StrCat("row_sparse_pull: output ", i, " is not a row_sparse array (pull a dense array with pull)"));
    arrays.push_back(box->array);
  }
  return arrays;
}

// MXNet's row_sparse pull: each output holds the rows `row_ids` names of the stored value and
// zeros elsewhere (its dense form; arrays here are dense whatever their storage type).
void PullRows(KVStoreBox* kv, const std::vector<std::string>& keys, const std::vector<NDArray>& outs,
              const std::vector<NDArray>& row_ids) {
  std::vector<NDArray> full;
  for (const NDArray& o : outs) full.emplace_back(o.shape(), o.dtype());
  Pull(kv, keys, full);
  for (size_t i = 0; i < outs.size(); ++i) {
    const int64_t num_rows = outs[i].shape().ndim() > 0 ? outs[i].shape()[0] : 0;
    std::vector<double> ids(static_cast<size_t>(row_ids[i].Size()));
    ConvertElements(row_ids[i].raw_data(), row_ids[i].dtype(), ids.data(), DType::kFloat64, ids.size());
    std::vector<int64_t> rows;
    for (double id : ids) {
      if (!(id >= 0 && id < static_cast<double>(num_rows)) || id != static_cast<double>(static_cast<int64_t>(id)))
        throw Error(StrCat("row_sparse pull of key '", keys[i], "': row id ", id, " is not a row of ",
                           outs[i].shape()));
      rows.push_back(static_cast<int64_t>(id));
    }
    NDArray kept(outs[i].shape(), outs[i].dtype());
    ScatterRows(GatherRows(full[i], rows), rows, &kept);
    NDArray dst = outs[i];
    kept.CopyTo(&dst);
  }
}

}  // namespace

KVStoreHandle SharedKVStoreHandle(const std::shared_ptr<KVStore>& store) {
  // One handle at a time, for the store mxnet-cpp uses now; never freed at exit (static
  // destructors of the handle table may already have run).
  static std::mutex mutex;
  static KVStoreHandle current = nullptr;
  static std::shared_ptr<KVStore> current_store;
  std::lock_guard<std::mutex> lock(mutex);
  if (current && current_store == store) return current;
  if (current) {
    try {
      FreeHandle<KVStoreBox>(current);
    } catch (const Error&) {
      // already freed by the program (against the rule in mxnet-cpp/kvstore.h): nothing to free
    }
  }
  current = NewHandle<KVStoreBox>(store);
  current_store = store;
  return current;
}

}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

// Iterators MXNet's Python package imports by name (mx.io) that symbind does not have: listed
// so that `import mxnet` succeeds, refused with this reason when created.
static const std::vector<DataIterInfo>& PlaceholderIters() {
  static const std::vector<DataIterInfo> iters = [] {
    const char* const names[] = {"ImageRecordIter", "ImageRecordIter_v1", "ImageRecordUInt8Iter",
                                 "ImageRecordUInt8Iter_v1", "ImageRecordInt8Iter", "ImageDetRecordIter",
                                 "LibSVMIter"};
    std::vector<DataIterInfo> out;
    for (const char* name : names) {
      bool present = false;
      for (auto& info : ListDataIters()) present |= info.name == name;
      if (!present)
        out.push_back(DataIterInfo{name, "Not supported by symbind: RecordIO image and LibSVM iterators",
                                   &EmptyParam::Schema(), nullptr});
    }
    return out;
  }();
  return iters;
}

int MXListDataIters(uint32_t* out_size, DataIterCreator** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_size, "out_size");
    NotNull(out_array, "out_array");
    static std::vector<DataIterCreator> creators = [] {
      std::vector<DataIterCreator> c;
      for (auto& info : ListDataIters()) c.push_back(const_cast<DataIterInfo*>(&info));
      for (auto& info : PlaceholderIters()) c.push_back(const_cast<DataIterInfo*>(&info));
      return c;
    }();
    *out_size = static_cast<uint32_t>(creators.size());
    *out_array = creators.data();
  });
}

static const DataIterInfo& IterOf(DataIterCreator creator) {
  NotNull(creator, "creator");
  for (auto& info : ListDataIters())
    if (&info == creator) return info;
  for (auto& info : PlaceholderIters())
    if (&info == creator) return info;
  throw Error("argument 'creator' is not a data iterator creator of this library");
}

int MXDataIterGetIterInfo(DataIterCreator creator, const char** name, const char** description,
                          uint32_t* num_args, const char*** arg_names,
                          const char*** arg_type_infos, const char*** arg_descriptions) {
  return Guarded(__func__, [&] {
    const DataIterInfo& info = IterOf(creator);
    NotNull(name, "name");
    NotNull(description, "description");
    NotNull(num_args, "num_args");
    NotNull(arg_names, "arg_names");
    NotNull(arg_type_infos, "arg_type_infos");
    NotNull(arg_descriptions, "arg_descriptions");
    thread_local std::vector<std::string> types;
    thread_local std::vector<const char*> names, type_ptrs, docs;
    names.clear();
    types.clear();
    type_ptrs.clear();
    docs.clear();
    for (auto& field : info.params->fields()) {
      names.push_back(field->name().c_str());
      types.push_back(field->TypeInfo());
      docs.push_back(field->doc().c_str());
    }
    for (auto& t : types) type_ptrs.push_back(t.c_str());
    *name = info.name.c_str();
    *description = info.description.c_str();
    *num_args = static_cast<uint32_t>(names.size());
    *arg_names = names.data();
    *arg_type_infos = type_ptrs.data();
    *arg_descriptions = docs.data();
  });
}

// Parameters the iterator does not declare are ignored, as MXNet's iterators ignore them.
int MXDataIterCreateIter(DataIterCreator handle, uint32_t num_param, const char** keys,
                         const char** vals, DataIterHandle* out) {
  return Guarded(__func__, [&] {
    const DataIterInfo& info = IterOf(handle);
    NotNull(out, "out");
    if (!info.create)
      throw Error(StrCat("data iterator '", info.name, "' is not supported by symbind (RecordIO image and "
                         "LibSVM iterators; use NDArrayIter, CSVIter or MNISTIter)"));
    std::vector<std::string> k = CStrings(num_param, keys, "keys"), v = CStrings(num_param, vals, "vals");
    KwArgs params;
    for (uint32_t i = 0; i < num_param; ++i) params[k[i]] = v[i];
    std::unique_ptr<DataIter> iter = CreateDataIter(info.name, params);
    *out = NewHandle<DataIterBox>(std::move(iter), std::vector<uint64_t>());
  });
}

int MXDataIterFree(DataIterHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<DataIterBox>(handle); });
}

static DataIter& Iter(DataIterHandle handle) { return *FromHandle<DataIterBox>(handle)->iter; }

int MXDataIterBeforeFirst(DataIterHandle handle) {
  return Guarded(__func__, [&] { Iter(handle).Reset(); });
}

int MXDataIterNext(DataIterHandle handle, int* out) {
  return Guarded(__func__, [&] {
    DataIter& iter = Iter(handle);
    NotNull(out, "out");
    *out = iter.Next();
  });
}

int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    DataIter& iter = Iter(handle);
    NotNull(out, "out");
    *out = NewHandle<NDArrayBox>(iter.data());
  });
}

int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out) {
  return Guarded(__func__, [&] {
    DataIter& iter = Iter(handle);
    NotNull(out, "out");
    *out = NewHandle<NDArrayBox>(iter.label());
  });
}

int MXDataIterGetPadNum(DataIterHandle handle, int* pad) {
  return Guarded(__func__, [&] {
    DataIter& iter = Iter(handle);
    NotNull(pad, "pad");
    *pad = iter.pad();
  });
}

int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size) {
  return Guarded(__func__, [&] {
    DataIterBox* box = FromHandle<DataIterBox>(handle);
    NotNull(out_index, "out_index");
    NotNull(out_size, "out_size");
    std::vector<int64_t> index = box->iter->index();
    box->index.assign(index.begin(), index.end());
    *out_index = box->index.data();
    *out_size = box->index.size();
  });
}

int MXKVStoreCreate(const char* type, KVStoreHandle* out) {
  return Guarded(__func__, [&] {
    std::string t = CString(type, "type");
    NotNull(out, "out");
    std::shared_ptr<KVStore> store = KVStore::Create(t);
    *out = NewHandle<KVStoreBox>(std::move(store));
  });
}

int MXKVStoreFree(KVStoreHandle handle) {
  return Guarded(__func__, [&] { FreeHandle<KVStoreBox>(handle); });
}

int MXKVStoreInit(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Init(Keys(kv, num, keys), Arrays(num, vals));
  });
}
int MXKVStoreInitEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Init(Keys(kv, num, keys), Arrays(num, vals));
  });
}
int MXKVStorePush(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Push(Keys(kv, num, keys), Arrays(num, vals));
  });
}
int MXKVStorePushEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Push(Keys(kv, num, keys), Arrays(num, vals));
  });
}
int MXKVStorePull(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullOutputs(kv, Keys(kv, num, keys), num, vals, true);
  });
}
int MXKVStorePullEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullOutputs(kv, Keys(kv, num, keys), num, vals, true);
  });
}
// MXNet's push-then-pull and init-then-pull in one call (values under vkeys, results into
// outs under okeys).
int MXKVStorePushPullEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum, const char** okeys,
                        NDArrayHandle* vals, NDArrayHandle* outs, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Push(Keys(kv, vnum, vkeys, "vkeys"), Arrays(vnum, vals));
    Pull(kv, Keys(kv, onum, okeys, "okeys"), Arrays(onum, outs));
  });
}
int MXKVStorePushPull(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum, const int* okeys,
                      NDArrayHandle* vals, NDArrayHandle* outs, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Push(Keys(kv, vnum, vkeys), Arrays(vnum, vals));
    Pull(kv, Keys(kv, onum, okeys), Arrays(onum, outs));
  });
}
int MXKVStoreBroadcastEx(KVStoreHandle handle, mx_uint vnum, const char** vkeys, mx_uint onum, const char** okeys,
                         NDArrayHandle* vals, NDArrayHandle* outs, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Init(Keys(kv, vnum, vkeys, "vkeys"), Arrays(vnum, vals));
    Pull(kv, Keys(kv, onum, okeys, "okeys"), Arrays(onum, outs));
  });
}
int MXKVStoreBroadcast(KVStoreHandle handle, mx_uint vnum, const int* vkeys, mx_uint onum, const int* okeys,
                       NDArrayHandle* vals, NDArrayHandle* outs, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->store->Init(Keys(kv, vnum, vkeys), Arrays(vnum, vals));
    Pull(kv, Keys(kv, onum, okeys), Arrays(onum, outs));
  });
}
int MXKVStorePullWithSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals, int,
                            bool ignore_sparse) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullOutputs(kv, Keys(kv, num, keys), num, vals, ignore_sparse);
  });
}
int MXKVStorePullWithSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals, int,
                              bool ignore_sparse) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullOutputs(kv, Keys(kv, num, keys), num, vals, ignore_sparse);
  });
}
int MXKVStorePullRowSparseEx(KVStoreHandle handle, uint32_t num, const char** keys, NDArrayHandle* vals,
                             const NDArrayHandle* row_ids, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullRows(kv, Keys(kv, num, keys), RowSparseOutputs(num, vals), Arrays(num, const_cast<NDArrayHandle*>(row_ids)));
  });
}
int MXKVStorePullRowSparse(KVStoreHandle handle, uint32_t num, const int* keys, NDArrayHandle* vals,
                           const NDArrayHandle* row_ids, int) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    PullRows(kv, Keys(kv, num, keys), RowSparseOutputs(num, vals), Arrays(num, const_cast<NDArrayHandle*>(row_ids)));
  });
}
int MXKVStoreSetGradientCompression(KVStoreHandle handle, uint32_t num_params, const char** keys,
                                    const char** vals) {
  return Guarded(__func__, [&] {
    FromHandle<KVStoreBox>(handle);
    CStrings(num_params, keys, "keys");
    CStrings(num_params, vals, "vals");
    throw Error("gradient compression is not supported by symbind");
  });
}

int MXKVStoreSetUpdaterEx(KVStoreHandle handle, MXKVStoreUpdater updater, MXKVStoreStrUpdater str_updater,
                          void* updater_handle) {
  return Guarded(__func__, [&] {
    KVStoreBox* kv = FromHandle<KVStoreBox>(handle);
    kv->updater = updater;
    kv->str_updater = str_updater;
    kv->updater_handle = updater_handle;
    kv->store->SetUpdater([kv](const std::string& key, const NDArray& pushed, NDArray* stored) {
      RunCUpdater(*kv, key, pushed, stored);
    });
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
