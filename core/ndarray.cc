#include "ndarray.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <mutex>

#include <sys/mman.h>
#include <unistd.h>

#include "huge_pages.h"

namespace symbind {
namespace {
// From this size on, storage comes from calloc (below it, memset is cheaper than the extra word).
// Not under AddressSanitizer: calloc's block is over-allocated to align it, and a read past the
// array into that slack would go unreported.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SYMBIND_ASAN_STORAGE 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(SYMBIND_ASAN_STORAGE)
constexpr size_t kCallocBytes = SIZE_MAX;
#else
constexpr size_t kCallocBytes = size_t{64} << 10;
#endif
}  // namespace

std::string Context::ToString() const {
  const char* t = dev_type == kGPU ? "gpu" : dev_type == kCPUPinned ? "cpu_pinned"
                  : dev_type == kCPUShared ? "cpu_shared" : "cpu";
  return StrCat(t, "(", dev_id, ")");
}

bool Context::Parse(const std::string& text, Context* out) {
  const size_t open = text.find('(');
  if (open == std::string::npos || text.size() < open + 3 || text.back() != ')') return false;
  const std::string type = text.substr(0, open), id = text.substr(open + 1, text.size() - open - 2);
  if (id.empty() || id.size() > 6 || id.find_first_not_of("0123456789") != std::string::npos) return false;
  static const std::pair<const char*, DeviceType> kTypes[] = {
      {"cpu", kCPU}, {"gpu", kGPU}, {"cpu_pinned", kCPUPinned}, {"cpu_shared", kCPUShared}};
  for (const auto& t : kTypes)
    if (type == t.first) {
      *out = Context{t.second, std::atoi(id.c_str())};
      return true;
    }
  return false;
}

std::ostream& operator<<(std::ostream& os, const Context& c) { return os << c.ToString(); }

Storage::Storage(size_t bytes, const std::string& what) : bytes_(bytes) {
  // Beyond 2^46 bytes (64 TiB) no machine can help; refuse before asking the allocator.
  if (bytes > (size_t{1} << 46))
    throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
  size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded == 0) rounded = kAlignment;
  if (rounded >= kCallocBytes) {
    // calloc does not write memory fresh from the kernel, which is zero already: a predictor's
    // bind allocates every activation at once, and their pages are first touched by the ops
    // that write them. Memory the allocator reuses is cleared as before.
    void* raw = std::calloc(1, rounded + kAlignment);
    if (!raw) throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
    data_ = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(raw) + kAlignment - 1) / kAlignment * kAlignment);
    if (bytes >= kHugePageAllocationBytes) symbind::PreferHugePages(data_, bytes);
    owner_ = std::shared_ptr<const void>(raw, [](const void* p) { std::free(const_cast<void*>(p)); });
    return;
  }
  data_ = std::aligned_alloc(kAlignment, rounded);
  if (!data_) throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
  std::memset(data_, 0, rounded);
}

struct Storage::DerivedForms {
  using Form = HeldForm;
  std::mutex mutex;
  std::vector<Form> forms;  // a handful per weight array: a linear search is enough
  // The form held for `type` and `key`, or null; the caller holds `mutex`.
  const Form* Find(std::type_index type, const std::vector<int64_t>& key) const {
    for (const Form& f : forms)
      if (f.type == type && f.key == key) return &f;
    return nullptr;
  }
};

Storage::Storage() = default;

std::shared_ptr<Storage> Storage::External(const void* data, size_t bytes,
                                           std::shared_ptr<const void> owner, std::string what) {
  if (reinterpret_cast<uintptr_t>(data) % kAlignment != 0)
    throw Error(StrCat("Storage::External: ", what, " is not ", kAlignment, "-byte aligned"));
  return Unchecked(data, bytes, std::move(owner), std::move(what));
}

std::shared_ptr<Storage> Storage::Unchecked(const void* data, size_t bytes, std::shared_ptr<const void> owner,
                                            std::string what) {
  if (!owner) throw Error("Storage::External needs an owner that keeps the bytes alive");
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = const_cast<void*>(data);  // never written: every writer calls CheckWritable
  s->bytes_ = bytes;
  s->owner_ = std::move(owner);
  s->read_only_ = true;
  s->what_ = std::move(what);
  s->derived_ = std::make_unique<DerivedForms>();
  return s;
}

std::shared_ptr<Storage> Storage::MappedFile(const void* data, size_t bytes, std::shared_ptr<const void> owner,
                                             std::string what) {
  std::shared_ptr<Storage> s = Unchecked(data, bytes, std::move(owner), std::move(what));
  s->file_mapped_ = true;
  return s;
}

std::shared_ptr<Storage> Storage::Deferred(size_t bytes, std::function<void(void*)> fill, std::string what) {
  if (!fill) throw Error("Storage::Deferred needs a function that computes the bytes");
  // Pages that are never touched take no memory; PROT_NONE until filled, so that a read which
  // bypasses data() faults instead of seeing zeros.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = std::max<size_t>(page, (bytes + page - 1) / page * page);
  void* p = mmap(nullptr, mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) throw OutOfMemoryError(StrCat("cannot reserve ", bytes, " bytes for ", what));
  std::shared_ptr<const void> owner(p, [mapped](const void* q) { munmap(const_cast<void*>(q), mapped); });
  std::shared_ptr<Storage> s = Unchecked(p, bytes, std::move(owner), std::move(what));
  s->deferred_ = std::make_unique<DeferredBytes>();
  s->deferred_->fill = std::move(fill);
  return s;
}

void Storage::Fill() {
  std::call_once(deferred_->once, [this] {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t mapped = std::max<size_t>(page, (bytes_ + page - 1) / page * page);
    if (mprotect(data_, mapped, PROT_READ | PROT_WRITE) != 0)
      throw OutOfMemoryError(StrCat("cannot make the bytes of ", what_, " writable to compute them"));
    deferred_->fill(data_);
    mprotect(data_, mapped, PROT_READ);  // read-only from now on: a stray write faults
    deferred_->filled.store(true, std::memory_order_release);
  });
}

void Storage::ReadOnce(const std::function<void(const void*)>& read) {
  if (!deferred_pending() || bytes_ == 0) return read(data());
  // Its own mapping when large, returned to the system afterwards: not left in the heap.
  const std::string what = "computing " + what_;
  const std::shared_ptr<float> buffer = AllocateZeroedFloats((bytes_ + sizeof(float) - 1) / sizeof(float), what.c_str());
  deferred_->fill(buffer.get());
  read(buffer.get());
}

void Storage::ReleaseResidentPages(const void* begin, size_t bytes) const {
  if (!file_mapped_ || bytes == 0) return;
  static const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin), hi = lo + bytes;
  const uintptr_t own_lo = reinterpret_cast<uintptr_t>(data_), own_hi = own_lo + bytes_;
  if (lo < own_lo || hi > own_hi) return;  // not these bytes
  const uintptr_t first = (lo + page - 1) / page * page, last = hi / page * page;
  // A private read-only mapping: dropped pages are read from the file again when touched.
  if (first < last) madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void Storage::PreferHugePages(const void* begin, size_t bytes) const {
  const uintptr_t lo = reinterpret_cast<uintptr_t>(begin), own_lo = reinterpret_cast<uintptr_t>(data_);
  if (!file_mapped_ || bytes == 0 || lo < own_lo || lo + bytes > own_lo + bytes_) return;  // not these bytes
  symbind::PreferHugePages(begin, bytes);
}

std::shared_ptr<Storage> Storage::Reserved(size_t bytes, size_t reserve, std::string what) {
  if (bytes > (size_t{1} << 46)) throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto pages = [page](size_t n) { return std::max<size_t>(page, (n + page - 1) / page * page); };
  // A strict overcommit policy may refuse the whole range: then only what is asked for.
  size_t mapped = pages(std::max(bytes, reserve));
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED && mapped > pages(bytes)) {
    mapped = pages(bytes);
    p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  if (p == MAP_FAILED) throw OutOfMemoryError(StrCat("cannot allocate ", bytes, " bytes for ", what));
  symbind::PreferHugePages(p, mapped);  // a block is written whole every forward
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = p;
  s->bytes_ = bytes;
  s->reserved_ = mapped;
  s->owner_ = std::shared_ptr<const void>(p, [mapped](const void* q) { munmap(const_cast<void*>(q), mapped); });
  s->what_ = std::move(what);
  return s;
}

std::shared_ptr<Storage> Storage::Grown(size_t bytes) const {
  if (reserved_ == 0 || bytes > reserved_) return nullptr;
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data_;
  s->bytes_ = bytes;
  s->reserved_ = reserved_;
  s->owner_ = owner_;
  s->what_ = what_;
  return s;
}

std::shared_ptr<Storage> Storage::Borrowed(void* data, size_t bytes, std::shared_ptr<void> owner) {
  if (!owner) throw Error("Storage::Borrowed needs an owner that keeps the bytes alive");
  if (!data && bytes > 0) throw Error("Storage::Borrowed: null data");
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->bytes_ = bytes;
  s->owner_ = std::move(owner);
  s->writes_unseen_ = true;
  return s;
}

std::shared_ptr<const void> Storage::SharedDerivedForm(std::type_index type, const std::vector<int64_t>& key,
                                                       const std::function<std::shared_ptr<const void>()>& make) {
  if (!derived_) return make();
  const std::lock_guard<std::mutex> lock(derived_->mutex);
  if (const DerivedForms::Form* held = derived_->Find(type, key)) return held->value;
  std::shared_ptr<const void> value = make();
  derived_->forms.push_back(DerivedForms::Form{type, key, value});
  return value;
}

size_t Storage::num_derived_forms() const {
  if (!derived_) return 0;
  const std::lock_guard<std::mutex> lock(derived_->mutex);
  return derived_->forms.size();
}

std::vector<Storage::HeldForm> Storage::DerivedFormsHeld() const {
  if (!derived_) return {};
  const std::lock_guard<std::mutex> lock(derived_->mutex);
  return derived_->forms;
}

void Storage::AddDerivedForm(std::type_index type, std::vector<int64_t> key, std::shared_ptr<const void> value) {
  if (!derived_) return;
  const std::lock_guard<std::mutex> lock(derived_->mutex);
  if (derived_->Find(type, key)) return;
  derived_->forms.push_back(DerivedForms::Form{type, std::move(key), std::move(value)});
}

void Storage::CheckWritable(const char* operation) const {
  if (read_only_)
    throw Error(StrCat(operation, ": the array is read-only (", what_,
                       "); write into a Copy() of it instead"));
}

Storage::~Storage() {
  if (!owner_) std::free(data_);
}

NDArray NDArray::View(std::shared_ptr<Storage> storage, size_t offset, const TShape& shape,
                      DType dtype, Context ctx) {
  if (!storage) throw Error("NDArray::View of no storage");
  if (!shape.is_known())
    throw Error(StrCat("NDArray::View of incomplete shape ", shape));
  size_t bytes = CheckedBytes(shape.Size(), DTypeSize(dtype), "NDArray::View of shape ", shape);
  if (offset > storage->bytes() || bytes > storage->bytes() - offset)
    throw Error(StrCat("NDArray::View of shape ", shape, " at offset ", offset, " needs ", bytes,
                       " bytes but the storage holds ", storage->bytes()));
  return NDArray(std::move(storage), offset, shape, dtype, ctx);
}

NDArray::NDArray(const TShape& shape, DType dtype, Context ctx)
    : shape_(shape), dtype_(dtype), ctx_(ctx) {
  if (!shape.is_known())
    throw Error(StrCat("cannot allocate an NDArray of shape ", shape, ": ",
                       shape.ndim_known() ? "every dim must be known and non-negative"
                                          : "the rank is unknown"));
  int64_t n = shape.Size();
  size_t elem = DTypeSize(dtype);
  if (static_cast<uint64_t>(n) > (uint64_t{1} << 46) / elem)
    throw OutOfMemoryError(StrCat("cannot allocate an NDArray of shape ", shape, " (", n,
                                  " elements of ", DTypeName(dtype), ")"));
  storage_ = std::make_shared<Storage>(static_cast<size_t>(n) * elem,
                                       StrCat("NDArray of shape ", shape));
  // Every array lives in CPU memory; the CPU kinds (pinned, shared) are kept as asked.
  if (ctx.dev_type == Context::kGPU) ctx_ = Context::CPU(ctx.dev_id);
}

NDArray::NDArray(const TShape& shape, const std::vector<float>& values) : NDArray(shape) {
  SyncCopyFromCPU(values.data(), values.size());
}

void* NDArray::raw_data() const {
  if (!storage_) throw Error("NDArray is none (no storage)");
  return static_cast<char*>(storage_->data()) + offset_;
}

const void* NDArray::address() const {
  if (!storage_) throw Error("NDArray is none (no storage)");
  return static_cast<const char*>(storage_->address()) + offset_;
}

NDArray NDArray::Reshape(const TShape& shape) const {
  if (is_none()) throw Error("cannot Reshape a none NDArray");
  if (!shape.is_known() || shape.Size() != shape_.Size())
    throw Error(StrCat("cannot Reshape NDArray of shape ", shape_, " (", shape_.Size(),
                       " elements) to ", shape));
  return NDArray(storage_, offset_, shape, dtype_, ctx_);
}

NDArray NDArray::Slice(int64_t begin, int64_t end) const {
  if (is_none() || shape_.ndim() < 1) throw Error("Slice needs an array of rank >= 1");
  if (begin < 0 || end > shape_[0] || begin > end)
    throw Error(StrCat("Slice [", begin, ",", end, ") out of range for shape ", shape_));
  TShape s = shape_;
  s[0] = end - begin;
  size_t row = CheckedBytes(shape_.ProdDims(1, shape_.ndim()), DTypeSize(dtype_), "Slice of ", shape_);
  return NDArray(storage_, offset_ + static_cast<size_t>(begin) * row, s, dtype_, ctx_);
}

NDArray NDArray::At(int64_t i) const {
  NDArray row = Slice(i, i + 1);
  std::vector<int64_t> dims(shape_.dims().begin() + 1, shape_.dims().end());
  return row.Reshape(TShape(dims));
}

NDArray NDArray::Copy() const {
  if (is_none()) return NDArray();
  NDArray out(shape_, dtype_, ctx_);
  std::memcpy(out.raw_data(), raw_data(), bytes());
  return out;
}

void NDArray::CopyTo(NDArray* dst) const {
  if (dst->is_none()) {
    *dst = Copy();
    return;
  }
  dst->storage_->CheckWritable("CopyTo");
  if (dst->shape_.Size() != shape_.Size())
    throw Error(StrCat("CopyTo: source shape ", shape_, " and destination shape ", dst->shape_,
                       " differ in size"));
  ConvertElements(raw_data(), dtype_, dst->raw_data(), dst->dtype_,
                  static_cast<size_t>(shape_.Size()));
  dst->MarkWritten();
}

NDArray NDArray::AsType(DType dtype) const {
  NDArray out(shape_, dtype, ctx_);
  CopyTo(&out);
  return out;
}

void NDArray::SyncCopyFromCPU(const void* src, size_t num_elements) {
  if (static_cast<int64_t>(num_elements) != Size())
    throw Error(StrCat("SyncCopyFromCPU: got ", num_elements, " elements for an array of shape ",
                       shape_, " (", Size(), " elements)"));
  if (storage_) storage_->CheckWritable("SyncCopyFromCPU");
  if (num_elements == 0) return;  // an empty source may be a null pointer, which memcpy must not get
  std::memcpy(raw_data(), src, bytes());
  MarkWritten();
}

void NDArray::SyncCopyToCPU(void* dst, size_t num_elements) const {
  if (static_cast<int64_t>(num_elements) > Size())
    throw Error(StrCat("SyncCopyToCPU: asked for ", num_elements,
                       " elements from an array of shape ", shape_));
  std::memcpy(dst, raw_data(), num_elements * DTypeSize(dtype_));
}

std::vector<float> NDArray::ToVector() const {
  std::vector<float> v(static_cast<size_t>(Size()));
  if (!v.empty()) ConvertElements(raw_data(), dtype_, v.data(), DType::kFloat32, v.size());
  return v;
}

void NDArray::Fill(float value) const {
  if (storage_) storage_->CheckWritable("Fill");
  MarkWritten();
  size_t n = static_cast<size_t>(Size());
  if (dtype_ == DType::kFloat32) {
    float* p = fdata();
    for (size_t i = 0; i < n; ++i) p[i] = value;
    return;
  }
  for (size_t i = 0; i < n; ++i) SetFlat(static_cast<int64_t>(i), value);
}

float NDArray::GetFlat(int64_t i) const {
  if (i < 0 || i >= Size()) throw Error(StrCat("index ", i, " out of range for shape ", shape_));
  float v;
  ConvertElements(static_cast<const char*>(raw_data()) + i * DTypeSize(dtype_), dtype_, &v,
                  DType::kFloat32, 1);
  return v;
}

void NDArray::SetFlat(int64_t i, float v) const {
  if (i < 0 || i >= Size()) throw Error(StrCat("index ", i, " out of range for shape ", shape_));
  storage_->CheckWritable("SetFlat");
  storage_->MarkWritten();
  ConvertElements(&v, DType::kFloat32, static_cast<char*>(raw_data()) + i * DTypeSize(dtype_),
                  dtype_, 1);
}

float NDArray::At(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != shape_.ndim())
    throw Error(StrCat("At: ", index.size(), " indices for an array of rank ", shape_.ndim()));
  int64_t flat = 0, axis = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= shape_[static_cast<int>(axis)])
      throw Error(StrCat("At: index ", i, " out of range on axis ", axis, " of shape ", shape_));
    flat = flat * shape_[static_cast<int>(axis)] + i;
    ++axis;
  }
  return GetFlat(flat);
}

std::ostream& operator<<(std::ostream& os, const NDArray& a) {
  if (a.is_none()) return os << "NDArray(none)";
  os << "NDArray" << a.shape() << " " << DTypeName(a.dtype()) << " @" << a.ctx() << "\n[";
  const int64_t limit = 64;
  int64_t n = a.Size();
  int64_t row = a.shape().ndim() > 0 ? a.shape()[a.shape().ndim() - 1] : 1;
  for (int64_t i = 0; i < std::min(n, limit); ++i) {
    if (i && row > 0 && i % row == 0) os << "\n ";
    else if (i) os << " ";
    os << a.GetFlat(i);
  }
  if (n > limit) os << " ... (" << n - limit << " more)";
  return os << "]";
}

NDArray ReadOnlyView(const NDArray& a, const std::string& what) {
  if (a.is_none() || a.read_only() || a.bytes() == 0 ||
      reinterpret_cast<uintptr_t>(a.raw_data()) % Storage::kAlignment != 0)
    return a;
  return NDArray::View(Storage::External(a.raw_data(), a.bytes(), a.storage(), what), 0, a.shape(), a.dtype(),
                       a.ctx());
}

}  // namespace symbind
