#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <ostream>
#include <typeindex>
#include <vector>

#include "checked_math.h"
#include "context.h"
#include "dtype.h"
#include "error.h"
#include "tshape.h"

namespace symbind {

// Reference-counted, 64-byte-aligned bytes. Several NDArrays (views) may share one.
class Storage {
 public:
  static constexpr size_t kAlignment = 64;
  // Throws OutOfMemoryError (naming `what`) when the allocation fails or is absurd.
  explicit Storage(size_t bytes, const std::string& what = "array");
  // Read-only bytes owned elsewhere (e.g. a memory-mapped model file), 64-byte aligned;
  // `owner` keeps them alive as long as this storage. `what` names them in errors.
  static std::shared_ptr<Storage> External(const void* data, size_t bytes,
                                           std::shared_ptr<const void> owner, std::string what);
  // Read-only bytes of a memory-mapped file (a .symbind's or a .params file's weights), as
  // External but aligned only as the caller needs (a .params file aligns its arrays to 4
  // bytes); their pages may also leave memory while unused (ReleaseResidentPages).
  static std::shared_ptr<Storage> MappedFile(const void* data, size_t bytes, std::shared_ptr<const void> owner,
                                             std::string what);
  // Read-only bytes computed by `fill` (given `bytes` writable bytes) when first read through
  // data(); until then they take no memory. A kernel that needs only a form of them (packed
  // weights) reads them through ReadOnce, which computes them into a transient buffer and keeps
  // nothing: a BatchNorm-folded weight then never exists beside its packed form. `fill` may run
  // more than once, from any thread, and must give the same bytes each time.
  static std::shared_ptr<Storage> Deferred(size_t bytes, std::function<void(void*)> fill, std::string what);
  // Writable bytes, zero at first, at the start of an address range reserved for `reserve`
  // bytes, whose pages take memory only once written. Grown() then gives more of the same
  // range without moving the bytes: arrays that view this storage stay valid (executors
  // sharing a Workspace block keep the one they were bound with, at the same address).
  // Throws OutOfMemoryError when not even `bytes` can be reserved.
  static std::shared_ptr<Storage> Reserved(size_t bytes, size_t reserve, std::string what);
  // A storage of `bytes` bytes over the same address, when they fit the reservation; else null.
  // Both see the same bytes (each counts its own writes: not for weights with derived forms).
  std::shared_ptr<Storage> Grown(size_t bytes) const;
  // Writable bytes owned elsewhere (an array shared through DLPack), any alignment; `owner`
  // keeps them alive as long as this storage.
  static std::shared_ptr<Storage> Borrowed(void* data, size_t bytes, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  // The bytes (Deferred ones are computed now, once, and kept).
  void* data() {
    if (deferred_ && !deferred_->filled.load(std::memory_order_acquire)) Fill();
    return data_;
  }
  // Where the bytes are, without computing Deferred ones: for telling storages and views apart.
  const void* address() const { return data_; }
  // Calls read(bytes): Deferred bytes not computed yet are computed into a transient buffer,
  // freed when read returns.
  void ReadOnce(const std::function<void(const void*)>& read);
  // Whether Deferred bytes have not been computed into this storage (tests; false for others).
  bool deferred_pending() const { return deferred_ && !deferred_->filled.load(std::memory_order_acquire); }
  size_t bytes() const { return bytes_; }
  // True for External storage: nothing may write into it.
  bool read_only() const { return read_only_; }
  // Throws Error naming `operation` when the storage is read-only.
  void CheckWritable(const char* operation) const;
  // A count of the writes made through symbind's doors (NDArray's writers, every kernel's
  // outputs, the C API's copies and data pointers): a kernel that derived a form of these bytes
  // (packed weights) makes it again only when the version moved. Bytes shared with another
  // framework (DLPack, both ways) may change unseen, so each read of their version gives a new one.
  uint64_t version() const {
    return writes_unseen_ ? version_.fetch_add(1, std::memory_order_relaxed) + 1
                          : version_.load(std::memory_order_relaxed);
  }
  void MarkWritten() { version_.fetch_add(1, std::memory_order_relaxed); }
  // From now on, writes may come from outside (the bytes were handed to another framework).
  void SetWritesUnseen() { writes_unseen_ = true; }

  // A form that kernels derive from read-only bytes (packed or transformed weights), kept here
  // so that every executor reading them (a Predictor's reshaped copies, the C predict API's
  // per-thread predictors) shares one copy. `key` says which bytes were read and how (offset,
  // shape, layout); make() runs once per type and key, under this storage's lock. Writable
  // storage keeps nothing (its bytes may change): it returns make()'s result.
  std::shared_ptr<const void> SharedDerivedForm(std::type_index type, const std::vector<int64_t>& key,
                                                const std::function<std::shared_ptr<const void>()>& make);
  // How many forms SharedDerivedForm holds (tests).
  size_t num_derived_forms() const;
  // The forms held, to store them (symbind convert --prepack), and a form read back from a
  // file, held as if SharedDerivedForm had made it (ignored by writable storage, or when the
  // type and key are held already).
  struct HeldForm {
    std::type_index type;
    std::vector<int64_t> key;
    std::shared_ptr<const void> value;
  };
  std::vector<HeldForm> DerivedFormsHeld() const;
  void AddDerivedForm(std::type_index type, std::vector<int64_t> key, std::shared_ptr<const void> value);
  // For MappedFile storage: the whole pages within [begin, begin + bytes) leave this process's
  // resident memory (they come back from the file when read again), for bytes read once (verified,
  // folded, packed) and not needed soon. Does nothing for other storage.
  void ReleaseResidentPages(const void* begin, size_t bytes) const;
  // For MappedFile storage: the whole 2 MiB blocks within [begin, begin + bytes), bytes the process
  // keeps reading (stored packed weights), may be mapped as huge pages: one fault per 2 MiB instead
  // of one per 4 KiB page (which a paravirtualised guest makes costly). Does nothing for other storage.
  void PreferHugePages(const void* begin, size_t bytes) const;

 private:
  Storage();
  static std::shared_ptr<Storage> Unchecked(const void* data, size_t bytes, std::shared_ptr<const void> owner,
                                            std::string what);
  struct DerivedForms;
  struct DeferredBytes {
    std::function<void(void*)> fill;
    std::once_flag once;
    std::atomic<bool> filled{false};
  };
  void Fill();
  void* data_ = nullptr;
  size_t bytes_ = 0;
  size_t reserved_ = 0;  // Reserved(): the bytes of the address range
  std::shared_ptr<const void> owner_;  // set for bytes owned elsewhere
  bool read_only_ = false;
  bool file_mapped_ = false;
  std::atomic<bool> writes_unseen_{false};
  mutable std::atomic<uint64_t> version_{0};
  std::string what_;
  std::unique_ptr<DerivedForms> derived_;  // read-only storage only
  std::unique_ptr<DeferredBytes> deferred_;
};

// An n-dimensional array: shape, dtype, context, and a view into shared storage.
// Copying an NDArray copies the handle, not the data (use Copy() for that).
class NDArray {
 public:
  NDArray() = default;  // the "none" array
  // Allocates zero-filled storage.
  explicit NDArray(const TShape& shape, DType dtype = DType::kFloat32,
                   Context ctx = Context::CPU());
  NDArray(const TShape& shape, const std::vector<float>& values);
  // A view of `shape` starting `offset` bytes into `storage` (which must hold it).
  static NDArray View(std::shared_ptr<Storage> storage, size_t offset, const TShape& shape,
                      DType dtype = DType::kFloat32, Context ctx = Context::CPU());

  bool is_none() const { return !storage_; }
  const TShape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context ctx() const { return ctx_; }
  int64_t Size() const { return is_none() ? 0 : shape_.Size(); }
  size_t bytes() const { return static_cast<size_t>(Size()) * DTypeSize(dtype_); }

  void* raw_data() const;
  // Where the array's bytes are, without computing Deferred storage (identity only).
  const void* address() const;
  // Typed pointer; throws when T is not this array's dtype.
  template <typename T>
  T* data() const {
    if (DTypeOf<T>::value != dtype_)
      throw Error(StrCat("NDArray of dtype ", DTypeName(dtype_), " accessed as ",
                         DTypeName(DTypeOf<T>::value)));
    return static_cast<T*>(raw_data());
  }
  float* fdata() const { return data<float>(); }

  // A view with a new shape of the same size sharing storage.
  NDArray Reshape(const TShape& shape) const;
  // A view of rows [begin, end) along axis 0 sharing storage.
  NDArray Slice(int64_t begin, int64_t end) const;
  // Row `i` along axis 0, with that axis dropped.
  NDArray At(int64_t i) const;

  // Deep copy.
  NDArray Copy() const;
  // Copies values into `dst`, which must have the same shape (dtype converted).
  void CopyTo(NDArray* dst) const;
  NDArray AsType(DType dtype) const;
  void SyncCopyFromCPU(const void* src, size_t num_elements);
  void SyncCopyToCPU(void* dst, size_t num_elements) const;
  std::vector<float> ToVector() const;  // converted to float32

  void Fill(float value) const;

  // Element access by flat index or by multi-index, as float (for tests and tools).
  float GetFlat(int64_t i) const;
  void SetFlat(int64_t i, float v) const;
  float At(std::initializer_list<int64_t> index) const;

  // True for views of read-only storage (weights memory-mapped from a .symbind file): Fill,
  // SetFlat, SyncCopyFromCPU and CopyTo into them throw; Copy() gives a writable array.
  bool read_only() const { return storage_ && storage_->read_only(); }

  // Records a write made through a raw pointer (fdata()), so that kernels holding forms derived
  // from this array see it (Storage::version). NDArray's own writers call it.
  void MarkWritten() const {
    if (storage_) storage_->MarkWritten();
  }

  // True when both handles view the same bytes.
  bool SharesStorageWith(const NDArray& o) const { return storage_ && storage_ == o.storage_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

 private:
  NDArray(std::shared_ptr<Storage> st, size_t offset, TShape shape, DType dtype, Context ctx)
      : storage_(std::move(st)), offset_(offset), shape_(std::move(shape)), dtype_(dtype),
        ctx_(ctx) {}
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;  // bytes
  TShape shape_;
  DType dtype_ = DType::kFloat32;
  Context ctx_;
};

// Prints shape, dtype and (up to a limit) the values.
std::ostream& operator<<(std::ostream& os, const NDArray& a);

// `a`'s bytes as a read-only array (no copy; the view keeps a's storage alive), named `what` in
// errors. For arrays nothing else will write: writes into `a` are not seen through the view, so
// kernels derive their packed or transformed forms of it once, shared by every executor.
// Arrays already read-only, empty or not 64-byte aligned are returned as they are.
NDArray ReadOnlyView(const NDArray& a, const std::string& what);

}  // namespace symbind
