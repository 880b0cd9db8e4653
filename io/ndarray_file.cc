#include "ndarray_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <fstream>
#include <limits>

#include "file_kind.h"
#include "mapped_file.h"

namespace symbind {

namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;
constexpr int kMaxNDim = 32;
constexpr int32_t kDenseStorage = 0, kRowSparseStorage = 1, kCSRStorage = 2;

std::string Hex(uint32_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << std::uppercase << v;
  return os.str();
}

// A bounds-checked little-endian cursor over the file bytes. Every error names the array
// being read and the byte offset of the field that failed.
class Reader {
 public:
  Reader(const void* data, size_t size) : p_(static_cast<const char*>(data)), size_(size) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  void set_array(int64_t i) { array_ = i; }
  // Called with an offset once every byte before it has been copied out (may be empty).
  void set_on_consumed(std::function<void(size_t)> f) { on_consumed_ = std::move(f); }
  void Consumed(size_t offset) const {
    if (on_consumed_) on_consumed_(offset);
  }
  // The file mapped read-only, whose dense arrays become views of it (NDArrayLoadOptions::map_read_only).
  void set_mapping(std::shared_ptr<const void> owner) { mapping_ = std::move(owner); }
  const std::shared_ptr<const void>& mapping() const { return mapping_; }

  [[noreturn]] void Fail(size_t at, const std::string& what) const {
    std::string where = array_ < 0 ? std::string("file header")
                        : array_ >= kNamesSection ? std::string("names section")
                                                  : StrCat("array ", array_);
    throw IOError(StrCat("NDArray file: ", where, " at byte offset ", at, ": ", what));
  }

  template <typename T>
  T Read(const char* what) {
    if (remaining() < sizeof(T))
      Fail(pos_, StrCat("truncated reading ", what, " (expected ", sizeof(T), " bytes, got ",
                        remaining(), ")"));
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // Returns a pointer to `n` bytes and advances past them.
  const char* Take(uint64_t n, const char* what) {
    if (n > remaining())
      Fail(pos_, StrCat("truncated ", what, " (expected ", n, " bytes, got ", remaining(), ")"));
    const char* q = p_ + pos_;
    pos_ += static_cast<size_t>(n);
    return q;
  }

  static constexpr int64_t kNamesSection = std::numeric_limits<int64_t>::max();

 private:
  std::function<void(size_t)> on_consumed_;
  std::shared_ptr<const void> mapping_;
  const char* p_;
  size_t size_;
  size_t pos_ = 0;
  int64_t array_ = -1;
};

// Reads an int32 ndim followed by int64 dims (V1, V2, V3 and sparse shapes). `numpy` allows
// ndim -1 (returned as an unknown-rank TShape).
TShape ReadShape64(Reader& r, bool numpy, const char* what) {
  size_t at = r.pos();
  int32_t ndim = r.Read<int32_t>(what);
  if (numpy && ndim == -1) return TShape::UnknownRank();
  if (ndim < 0 || ndim > kMaxNDim)
    r.Fail(at, StrCat("bad ndim in ", what, " (expected 0..", kMaxNDim,
                      numpy ? " or -1" : "", ", got ", ndim, ")"));
  std::vector<int64_t> dims(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) {
    size_t dat = r.pos();
    dims[static_cast<size_t>(i)] = r.Read<int64_t>(what);
    if (dims[static_cast<size_t>(i)] < 0)
      r.Fail(dat, StrCat("negative dim ", i, " in ", what, " (got ",
                         dims[static_cast<size_t>(i)], ")"));
  }
  return TShape(std::move(dims));
}

// Element count of a fully known shape, failing (not throwing Error) on overflow.
uint64_t CheckedSize(Reader& r, size_t at, const TShape& s, const char* what) {
  uint64_t n = 1;
  for (int64_t d : s.dims()) {
    uint64_t ud = static_cast<uint64_t>(d);
    if (ud != 0 && n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / ud)
      r.Fail(at, StrCat(what, " ", s, ": the product of the dims overflows"));
    n *= ud;
  }
  return n;
}

// Bytes for `count` elements of `type`, checked against what the file still holds.
uint64_t CheckedBytes(Reader& r, size_t at, uint64_t count, DType type, const TShape& s,
                      const char* what) {
  uint64_t elem = DTypeSize(type);
  if (count > r.remaining() / elem)
    r.Fail(at, StrCat(what, " of shape ", s, " needs ", count, " x ", elem,
                      " bytes but only ", r.remaining(), " bytes are left"));
  return count * elem;
}

DType ReadTypeFlag(Reader& r, const char* what) {
  size_t at = r.pos();
  int32_t flag = r.Read<int32_t>(what);
  if (!IsValidDTypeFlag(flag))
    r.Fail(at, StrCat("unknown ", what, " ", flag,
                      " (expected 0..7 or 12: float32, float64, float16, uint8, int32, int8, "
                      "int64, bool, bfloat16)"));
  return static_cast<DType>(flag);
}

Context ReadContext(Reader& r) {
  size_t at = r.pos();
  int32_t dev_type = r.Read<int32_t>("context dev_type");
  int32_t dev_id = r.Read<int32_t>("context dev_id");
  if (dev_type != Context::kCPU && dev_type != Context::kGPU &&
      dev_type != Context::kCPUPinned && dev_type != Context::kCPUShared)
    r.Fail(at, StrCat("unknown context dev_type ", dev_type, " (expected 1 cpu, 2 gpu, ",
                      "3 cpu_pinned or 5 cpu_shared)"));
  if (dev_id < 0) r.Fail(at + 4, StrCat("negative context dev_id ", dev_id));
  // Everything is placed on the CPU.
  return Context::CPU(0);
}

// Integer index values of an aux array as int64.
std::vector<int64_t> ReadIndices(Reader& r, size_t at, const char* bytes, DType type,
                                 uint64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) {
    const char* q = bytes + i * DTypeSize(type);
    switch (type) {
      case DType::kInt64: { int64_t v; std::memcpy(&v, q, 8); out[i] = v; break; }
      case DType::kInt32: { int32_t v; std::memcpy(&v, q, 4); out[i] = v; break; }
      case DType::kUint8: out[i] = static_cast<uint8_t>(*q); break;
      case DType::kInt8: out[i] = static_cast<int8_t>(*q); break;
      default:
        r.Fail(at, StrCat("sparse index array has non-integer type ", DTypeName(type)));
    }
  }
  return out;
}

struct SparseAux {
  DType type;
  TShape shape;
  uint64_t count;
};

// Reads the rest of a sparse (row_sparse or csr) V2/V3 array after its type flag and
// returns it as a dense array.
// `dense_budget` is what the file's sparse arrays may still expand to; without `densify` the
// array is checked but not expanded (a none array is returned).
NDArray ReadSparse(Reader& r, int32_t stype, const TShape& sshape, const TShape& shape,
                   DType dtype, size_t header_at, uint64_t* dense_budget, bool densify) {
  const int naux = stype == kRowSparseStorage ? 1 : 2;
  std::vector<SparseAux> aux;
  for (int k = 0; k < naux; ++k) {
    DType t = ReadTypeFlag(r, "aux type flag");
    size_t at = r.pos();
    TShape s = ReadShape64(r, false, "aux shape");
    aux.push_back(SparseAux{t, s, CheckedSize(r, at, s, "aux shape")});
  }
  uint64_t dense_count = CheckedSize(r, header_at, shape, "shape");
  uint64_t nnz_count = CheckedSize(r, header_at, sshape, "storage shape");
  if (densify && dense_count > *dense_budget / DTypeSize(dtype))
    r.Fail(header_at, StrCat("sparse array of shape ", shape, " is too large to convert to a "
                             "dense array: the file's sparse arrays may expand to ", *dense_budget,
                             " more bytes (NDArrayLoadOptions::max_dense_bytes_from_sparse)"));
  if (densify) *dense_budget -= dense_count * DTypeSize(dtype);
  const int nd = shape.ndim();
  // Layout consistency, checked before any data is read.
  if (stype == kRowSparseStorage) {
    bool ok = nd >= 1 && sshape.ndim() == nd && aux[0].shape.ndim() == 1 &&
              aux[0].shape[0] == sshape[0];
    for (int i = 1; ok && i < nd; ++i) ok = sshape[i] == shape[i];
    if (!ok)
      r.Fail(header_at, StrCat("inconsistent row_sparse array: shape ", shape,
                               ", storage shape ", sshape, ", index shape ", aux[0].shape,
                               " (expected storage shape (nnz_rows, ", "trailing dims of shape) "
                               "and index shape (nnz_rows,))"));
  } else {
    bool ok = nd == 2 && sshape.ndim() == 1 && aux[0].shape.ndim() == 1 &&
              aux[0].shape[0] == shape[0] + 1 && aux[1].shape.ndim() == 1 &&
              aux[1].shape[0] == sshape[0];
    if (!ok)
      r.Fail(header_at, StrCat("inconsistent csr array: shape ", shape, ", storage shape ",
                               sshape, ", indptr shape ", aux[0].shape, ", indices shape ",
                               aux[1].shape, " (expected 2-d shape (rows, cols), storage "
                               "shape (nnz,), indptr (rows+1,), indices (nnz,))"));
  }

  size_t data_at = r.pos();
  uint64_t data_bytes = CheckedBytes(r, data_at, nnz_count, dtype, sshape, "sparse data");
  const char* values = r.Take(data_bytes, "sparse data");
  std::vector<std::vector<int64_t>> idx;
  std::vector<size_t> idx_at;
  for (auto& a : aux) {
    idx_at.push_back(r.pos());
    uint64_t b = CheckedBytes(r, r.pos(), a.count, a.type, a.shape, "sparse aux data");
    const char* q = r.Take(b, "sparse aux data");
    idx.push_back(ReadIndices(r, idx_at.back(), q, a.type, a.count));
  }

  NDArray out = densify ? NDArray(shape, dtype) : NDArray();
  char* dst = densify ? static_cast<char*>(out.raw_data()) : nullptr;  // null: indices checked only
  const size_t elem = DTypeSize(dtype);
  if (stype == kRowSparseStorage) {
    const uint64_t row_elems = nd > 1 ? static_cast<uint64_t>(shape.ProdDims(1, nd)) : 1;
    for (size_t k = 0; k < idx[0].size(); ++k) {
      int64_t row = idx[0][k];
      if (row < 0 || row >= shape[0])
        r.Fail(idx_at[0] + k * DTypeSize(aux[0].type),
               StrCat("row_sparse index ", k, " is ", row, ", outside [0, ", shape[0], ")"));
      if (dst)
        std::memcpy(dst + static_cast<uint64_t>(row) * row_elems * elem,
                    values + k * row_elems * elem, row_elems * elem);
    }
  } else {
    const std::vector<int64_t>& indptr = idx[0];
    const std::vector<int64_t>& cols = idx[1];
    const int64_t rows = shape[0], ncols = shape[1], nnz = sshape[0];
    if (indptr[0] != 0 || indptr[static_cast<size_t>(rows)] != nnz)
      r.Fail(idx_at[0], StrCat("csr indptr must start at 0 and end at nnz ", nnz, " (got ",
                               indptr[0], " and ", indptr[static_cast<size_t>(rows)], ")"));
    for (int64_t i = 0; i < rows; ++i) {
      int64_t b = indptr[static_cast<size_t>(i)], e = indptr[static_cast<size_t>(i) + 1];
      if (b > e || e > nnz)
        r.Fail(idx_at[0] + static_cast<size_t>(i) * DTypeSize(aux[0].type),
               StrCat("csr indptr is not non-decreasing within [0, ", nnz, "] at row ", i,
                      " (", b, " then ", e, ")"));
      for (int64_t k = b; k < e; ++k) {
        int64_t c = cols[static_cast<size_t>(k)];
        if (c < 0 || c >= ncols)
          r.Fail(idx_at[1] + static_cast<size_t>(k) * DTypeSize(aux[1].type),
                 StrCat("csr column index ", k, " is ", c, ", outside [0, ", ncols, ")"));
        if (dst)
          std::memcpy(dst + static_cast<size_t>(i * ncols + c) * elem,
                      values + static_cast<size_t>(k) * elem, elem);
      }
    }
  }
  return out;
}

// Reads one array in any layout; sets *format to 0..3 and *stype to the storage type.
// With `scan`, headers are read and checked but no array is allocated (dense data is skipped,
// sparse arrays are checked without expanding): the pass that sizes a whole file first.
NDArray ReadArray(Reader& r, const NDArrayLoadOptions& options, uint64_t* dense_budget,
                  int* format, int* stype_out, TShape* shape_out, DType* dtype_out, bool scan = false) {
  const size_t start = r.pos();
  const uint32_t magic = r.Read<uint32_t>("array magic or ndim");
  TShape shape, sshape;
  int32_t stype = kDenseStorage;
  bool none = false;
  if (magic == kV2Magic || magic == kV3Magic) {
    *format = magic == kV2Magic ? 2 : 3;
    const bool numpy = magic == kV3Magic;
    size_t at = r.pos();
    stype = r.Read<int32_t>("storage type");
    if (stype != kDenseStorage && stype != kRowSparseStorage && stype != kCSRStorage)
      r.Fail(at, StrCat("unknown storage type ", stype,
                        " (expected 0 dense, 1 row_sparse or 2 csr)"));
    if (stype != kDenseStorage) sshape = ReadShape64(r, false, "storage shape");
    shape = ReadShape64(r, numpy, "shape");
    none = numpy ? !shape.ndim_known() : shape.ndim() == 0;
  } else if (magic == kV1Magic) {
    *format = 1;
    shape = ReadShape64(r, false, "shape");
    none = shape.ndim() == 0;
  } else {
    *format = 0;
    if (magic > static_cast<uint32_t>(kMaxNDim))
      r.Fail(start, StrCat("bad array header (expected a legacy ndim 0..", kMaxNDim,
                           " or magic 0xF993FAC8, 0xF993FAC9, 0xF993FACA; got ", magic, " = ",
                           Hex(magic), ")"));
    std::vector<int64_t> dims(magic);
    for (uint32_t i = 0; i < magic; ++i) dims[i] = r.Read<uint32_t>("legacy dim");
    shape = TShape(std::move(dims));
    none = magic == 0;
  }
  *stype_out = stype;
  if (none) return NDArray();

  ReadContext(r);
  const DType dtype = ReadTypeFlag(r, "type flag");
  *shape_out = shape;
  *dtype_out = dtype;
  if (stype != kDenseStorage)
    return ReadSparse(r, stype, sshape, shape, dtype, start, dense_budget, options.densify_sparse && !scan);

  const size_t data_at = r.pos();
  const uint64_t count = CheckedSize(r, start, shape, "shape");
  const uint64_t bytes = CheckedBytes(r, data_at, count, dtype, shape, "array data");
  const char* src = r.Take(bytes, "array data");
  if (scan) return NDArray();
  // A view of the mapped file where its bytes are aligned for their type (a .params file aligns
  // them to 4 bytes, so float64 and int64 arrays may need a copy).
  if (r.mapping() && bytes > 0 && reinterpret_cast<uintptr_t>(src) % DTypeSize(dtype) == 0)
    return NDArray::View(Storage::MappedFile(src, bytes, r.mapping(), StrCat("array at byte offset ", data_at)), 0,
                         shape, dtype);
  NDArray out(shape, dtype);
  // In chunks, so a mapped file can drop what is copied while a large array is still loading.
  constexpr uint64_t kChunk = uint64_t{4} << 20;
  char* dst = static_cast<char*>(out.raw_data());
  for (uint64_t done = 0; done < bytes; done += kChunk) {
    const uint64_t n = std::min(kChunk, bytes - done);
    std::memcpy(dst + done, src + done, static_cast<size_t>(n));
    r.Consumed(data_at + static_cast<size_t>(done + n));
  }
  return out;
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

void WriteArray(std::string* out, const NDArray& a, bool numpy_shapes) {
  // V2 cannot express a scalar (its ndim 0 means none), so scalars use V3.
  const bool v3 = numpy_shapes || (!a.is_none() && a.shape().ndim() == 0);
  Put<uint32_t>(out, v3 ? kV3Magic : kV2Magic);
  Put<int32_t>(out, kDenseStorage);
  if (a.is_none()) {
    Put<int32_t>(out, v3 ? -1 : 0);
    return;
  }
  Put<int32_t>(out, a.shape().ndim());
  for (int64_t d : a.shape().dims()) Put<int64_t>(out, d);
  Put<int32_t>(out, Context::kCPU);
  Put<int32_t>(out, 0);
  Put<int32_t>(out, static_cast<int32_t>(a.dtype()));
  if (a.bytes()) out->append(static_cast<const char*>(a.raw_data()), a.bytes());
}


}  // namespace

namespace {
// Parses a whole file image; after each array, `consumed(offset)` says the bytes before
// `offset` will not be read again.
NDArrayFile ParseNDArrayFile(const void* data, size_t size, const NDArrayLoadOptions& options,
                             const std::function<void(size_t)>& consumed, bool scan = false,
                             std::shared_ptr<const void> mapping = nullptr);

// What densifying the file's sparse arrays will allocate, from a scan of the whole file (every
// header and index checked, nothing allocated), against the budget: before the first array is
// allocated, not array by array as each header is reached.
void CheckSparseExpansion(const void* data, size_t size, const NDArrayLoadOptions& options) {
  NDArrayFile headers;
  try {
    headers = ParseNDArrayFile(data, size, options, nullptr, true);
  } catch (const IOError&) {
    // A malformed file is reported by the loading pass, array by array (its budget still
    // bounds what is allocated before the error).
    return;
  }
  uint64_t total = 0;
  for (size_t i = 0; i < headers.storage_types.size(); ++i) {
    if (headers.storage_types[i] == kDenseStorage || !headers.shapes[i].is_known()) continue;
    const uint64_t bytes = static_cast<uint64_t>(headers.shapes[i].Size()) * DTypeSize(headers.dtypes[i]);
    total = total > std::numeric_limits<uint64_t>::max() - bytes ? std::numeric_limits<uint64_t>::max() : total + bytes;
  }
  if (total > options.max_dense_bytes_from_sparse)
    throw IOError(StrCat("the file's sparse arrays expand to ", total, " bytes as dense arrays, more than the ",
                         options.max_dense_bytes_from_sparse, " bytes allowed for a file of ", size,
                         " bytes (NDArrayLoadOptions::max_dense_bytes_from_sparse; default ",
                         kSparseExpansionFactor, " bytes per file byte, at least ", kMinSparseExpansionBytes, ")"));
}

NDArrayFile ParseNDArrayFile(const void* data, size_t size, const NDArrayLoadOptions& given,
                             const std::function<void(size_t)>& consumed, bool scan,
                             std::shared_ptr<const void> mapping) {
  NDArrayLoadOptions options = given;
  if (options.max_dense_bytes_from_sparse == 0) options.max_dense_bytes_from_sparse = SparseExpansionBudget(size);
  if (!scan && options.densify_sparse) CheckSparseExpansion(data, size, options);
  Reader r(data, size);
  r.set_on_consumed(consumed);
  r.set_mapping(std::move(mapping));
  NDArrayFile f;
  const uint64_t magic = r.Read<uint64_t>("list magic");
  if (magic != kListMagic)
    r.Fail(0, StrCat("not an NDArray file: bad magic ", magic, " (expected ", kListMagic, ")"));
  r.Read<uint64_t>("reserved field");
  const size_t count_at = r.pos();
  const uint64_t count = r.Read<uint64_t>("array count");
  // Each array takes at least 4 bytes.
  if (count > r.remaining() / 4)
    r.Fail(count_at, StrCat("array count ", count, " exceeds what the ", r.remaining(),
                            " remaining bytes can hold"));
  // An NDArray handle is larger than the 4 bytes a (none) array may take, so reserve only
  // a modest amount up front.
  const size_t reserve = static_cast<size_t>(std::min<uint64_t>(count, 4096));
  f.arrays.reserve(reserve);
  f.formats.reserve(reserve);
  f.storage_types.reserve(reserve);
  uint64_t dense_budget = options.max_dense_bytes_from_sparse;
  for (uint64_t i = 0; i < count; ++i) {
    r.set_array(static_cast<int64_t>(i));
    int format = 0, stype = 0;
    TShape shape;
    DType dtype = DType::kFloat32;
    f.arrays.push_back(ReadArray(r, options, &dense_budget, &format, &stype, &shape, &dtype, scan));
    f.formats.push_back(format);
    f.storage_types.push_back(stype);
    f.shapes.push_back(shape);
    f.dtypes.push_back(dtype);
    r.Consumed(r.pos());
  }
  r.set_array(Reader::kNamesSection);
  const size_t names_at = r.pos();
  const uint64_t nnames = r.Read<uint64_t>("name count");
  if (nnames != 0 && nnames != count)
    r.Fail(names_at, StrCat("name count ", nnames, " does not match the array count (expected 0 or ",
                            count, ")"));
  f.names.reserve(static_cast<size_t>(std::min<uint64_t>(nnames, 4096)));
  for (uint64_t i = 0; i < nnames; ++i) {
    const size_t at = r.pos();
    const uint64_t len = r.Read<uint64_t>("name length");
    if (len > r.remaining())
      r.Fail(at, StrCat("name ", i, " has length ", len, " but only ", r.remaining(),
                        " bytes are left"));
    const char* s = r.Take(len, "name");
    f.names.emplace_back(s, static_cast<size_t>(len));
  }
  // Bytes after the names are no part of the format: a concatenated or corrupted file.
  if (r.remaining() != 0)
    r.Fail(r.pos(), StrCat(r.remaining(), " trailing bytes after the names section (the file "
                           "should end at byte offset ", r.pos(), ")"));
  // Views of the mapped file, named in errors now that the names are known.
  if (r.mapping())
    for (size_t i = 0; i < f.names.size(); ++i) {
      NDArray& a = f.arrays[i];
      if (a.is_none() || !a.storage() || !a.read_only()) continue;
      a = NDArray::View(Storage::MappedFile(a.address(), a.bytes(), r.mapping(), "parameter '" + f.names[i] + "', mapped from its file"),
                        0, a.shape(), a.dtype());
    }
  return f;
}
}  // namespace

uint64_t SparseExpansionBudget(uint64_t file_bytes) {
  const uint64_t scaled = file_bytes > std::numeric_limits<uint64_t>::max() / kSparseExpansionFactor
                              ? std::numeric_limits<uint64_t>::max()
                              : file_bytes * kSparseExpansionFactor;
  return std::max(scaled, kMinSparseExpansionBytes);
}

NDArrayFile LoadNDArrayBuffer(const void* data, size_t size, const NDArrayLoadOptions& options) {
  return ParseNDArrayFile(data, size, options, nullptr);
}

NDArrayFile LoadNDArrayFile(const std::string& path, const NDArrayLoadOptions& options) {
  auto mapped = std::make_shared<MappedFile>(path);
  MappedFile& m = *mapped;
  const std::string wrong_kind = WrongFileKindMessage(path, DetectFileKind(m.data(), m.size()), FileKind::kParams);
  if (!wrong_kind.empty()) throw IOError(wrong_kind);
  try {
    if (options.map_read_only) return ParseNDArrayFile(m.data(), m.size(), options, nullptr, false, mapped);
    // Mapped pages already copied are dropped as loading proceeds, so peak memory is about
    // one copy of the weights, not two.
    return ParseNDArrayFile(m.data(), m.size(), options, [&m](size_t offset) { m.DropBefore(offset); });
  } catch (const IOError& e) {
    throw IOError(path + ": " + e.what());
  }
}

std::map<std::string, NDArray> NamedArrays(const NDArrayFile& file, const std::string& source) {
  if (file.names.empty() && !file.arrays.empty())
    throw IOError(source + ": the NDArray file has no names (a positional list)");
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < file.arrays.size(); ++i)
    if (!out.emplace(file.names[i], file.arrays[i]).second)
      throw IOError(StrCat(source, ": name '", file.names[i], "' appears twice (array ", i, ")"));
  return out;
}

std::map<std::string, NDArray> LoadNDArrayMap(const std::string& path, const NDArrayLoadOptions& options) {
  return NamedArrays(LoadNDArrayFile(path, options), path);
}

std::string SaveNDArraysToString(const std::vector<NDArray>& arrays,
                                 const std::vector<std::string>& names, bool numpy_shapes) {
  if (!names.empty() && names.size() != arrays.size())
    throw Error(StrCat("SaveNDArrays: ", names.size(), " names for ", arrays.size(),
                       " arrays (expected none or one per array)"));
  size_t total = 32;
  for (auto& a : arrays) total += 40 + 8 * static_cast<size_t>(std::max(0, a.shape().ndim())) + a.bytes();
  for (auto& n : names) total += 8 + n.size();
  std::string out;
  out.reserve(total);
  Put<uint64_t>(&out, kListMagic);
  Put<uint64_t>(&out, 0);
  Put<uint64_t>(&out, arrays.size());
  for (auto& a : arrays) WriteArray(&out, a, numpy_shapes);
  Put<uint64_t>(&out, names.size());
  for (auto& n : names) {
    Put<uint64_t>(&out, n.size());
    out += n;
  }
  return out;
}

std::string SaveNDArrayToString(const NDArray& array, bool numpy_shapes) {
  std::string out;
  WriteArray(&out, array, numpy_shapes);
  return out;
}

NDArray LoadNDArrayFromBuffer(const void* data, size_t size) {
  Reader r(data, size);
  r.set_array(0);
  int format = 0, stype = 0;
  TShape shape;
  DType dtype = DType::kFloat32;
  uint64_t dense_budget = SparseExpansionBudget(size);
  NDArray out = ReadArray(r, NDArrayLoadOptions(), &dense_budget, &format, &stype, &shape, &dtype);
  if (r.remaining() != 0)
    r.Fail(r.pos(), StrCat(r.remaining(), " trailing bytes after the array (it ends at byte offset ", r.pos(), ")"));
  return out;
}

std::string SaveNDArraysToString(const std::map<std::string, NDArray>& arrays) {
  std::vector<NDArray> v;
  std::vector<std::string> names;
  for (auto& kv : arrays) {
    names.push_back(kv.first);
    v.push_back(kv.second);
  }
  return SaveNDArraysToString(v, names);
}

void SaveNDArrays(const std::string& path, const std::vector<NDArray>& arrays,
                  const std::vector<std::string>& names, bool numpy_shapes) {
  WriteStringToFile(path, SaveNDArraysToString(arrays, names, numpy_shapes));
}

void SaveNDArrays(const std::string& path, const std::map<std::string, NDArray>& arrays) {
  WriteStringToFile(path, SaveNDArraysToString(arrays));
}

void SplitArgAux(const std::map<std::string, NDArray>& params,
                 std::map<std::string, NDArray>* args, std::map<std::string, NDArray>* aux) {
  for (auto& kv : params) {
    const std::string& k = kv.first;
    if (k.compare(0, 4, "arg:") == 0) {
      if (args) (*args)[k.substr(4)] = kv.second;
    } else if (k.compare(0, 4, "aux:") == 0) {
      if (aux) (*aux)[k.substr(4)] = kv.second;
    } else {
      throw IOError("parameter name '" + k + "' has neither an 'arg:' nor an 'aux:' prefix");
    }
  }
}

std::map<std::string, NDArray> MergeArgAux(const std::map<std::string, NDArray>& args,
                                           const std::map<std::string, NDArray>& aux) {
  std::map<std::string, NDArray> out;
  for (auto& kv : args) out["arg:" + kv.first] = kv.second;
  for (auto& kv : aux) out["aux:" + kv.first] = kv.second;
  return out;
}

std::string ReadFileToString(const std::string& path) {
  MappedFile m(path);
  if (m.size() == 0) return std::string();
  return std::string(static_cast<const char*>(m.data()), m.size());
}

void WriteStringToFile(const std::string& path, const std::string& data) {
  std::ofstream os(path, std::ios::binary | std::ios::trunc);
  if (!os) throw IOError(StrCat("cannot open ", path, " for writing: ", std::strerror(errno)));
  os.write(data.data(), static_cast<std::streamsize>(data.size()));
  os.close();
  if (!os) throw IOError(StrCat("error writing ", path));
}

}  // namespace symbind
