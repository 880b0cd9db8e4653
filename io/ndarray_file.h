// MXNet NDArray list files (".params", mx.nd.save / mx.nd.load).
//
// File layout (little-endian):
//   uint64 0x112, uint64 reserved, uint64 count, <count arrays>,
//   uint64 name_count, name_count x (uint64 length, bytes)
// name_count is 0 (a positional list) or equals count.
//
// Every per-array layout MXNet ever wrote is read:
//   legacy (format 0): uint32 ndim, ndim x uint32 dims, then the body below.
//   V1 0xF993FAC8 (format 1): int32 ndim, ndim x int64 dims, body.
//   V2 0xF993FAC9 (format 2): int32 storage type (0 dense, 1 row_sparse, 2 csr);
//       sparse only: storage shape; then shape, body; sparse only: per aux array
//       int32 type flag + shape (after the type flag), data of the storage shape, aux data.
//   V3 0xF993FACA (format 3): as V2 with NumPy shapes: ndim -1 is "none", 0 a scalar.
//   body: int32 dev_type, int32 dev_id, int32 type flag, raw data.
// A shape of ndim 0 (legacy, V1, V2) or -1 (V3) is a "none" array: nothing follows it.
//
// Conversions on load: arrays saved from a GPU are placed on the CPU; sparse arrays
// (row_sparse, csr) are converted to dense arrays of their logical shape. The stored dtype
// is kept. Every malformed input throws IOError naming the array index and byte offset;
// nothing is allocated before the remaining bytes are known to hold it.
//
// Save writes V2 dense arrays (MXNet 1.x's layout), none arrays as a V2 shape of ndim 0; with
// `numpy_shapes` (MXNet's NumPy shape semantics) every array as V3, none arrays as ndim -1.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>

namespace symbind {

struct NDArrayFile {
  std::vector<NDArray> arrays;
  std::vector<std::string> names;  // empty, or one per array
  std::vector<int> formats;        // per array: 0 legacy, 1 V1, 2 V2, 3 V3
  // Storage type each array had in the file: 0 dense, 1 row_sparse, 2 csr.
  std::vector<int> storage_types;
  // Logical shape and dtype of each array as the file states them (unknown rank for a none
  // array), also for sparse arrays left unexpanded.
  std::vector<TShape> shapes;
  std::vector<DType> dtypes;
};

struct NDArrayLoadOptions {
  // A sparse array's dense size is not bounded by the file size: all sparse arrays of one file
  // together may expand to at most this many bytes, checked over the whole file before any
  // array is allocated (more throws IOError). 0: SparseExpansionBudget(file size).
  uint64_t max_dense_bytes_from_sparse = 0;
  // False: sparse arrays are checked (indices in range) but not expanded; their entries in
  // `arrays` are none and `shapes`/`dtypes` describe them (for listings).
  bool densify_sparse = true;
  // LoadNDArrayFile only: dense arrays become read-only views of the file mapped into memory (no
  // copy; their pages come from the page cache, shared with other processes, and leave this
  // process's memory once kernels have packed them). Arrays whose bytes are not aligned for
  // their type are copied. For inference; writing into a view throws.
  bool map_read_only = false;
};

// The default budget for densifying a file's sparse arrays: kSparseExpansionFactor bytes per
// byte of the file (a row_sparse or csr array at 1% density expands about 100x), and never
// less than kMinSparseExpansionBytes, so that small files of real sparse weights still load
// while a file of a few hundred bytes cannot claim gigabytes.
constexpr uint64_t kSparseExpansionFactor = 256;
constexpr uint64_t kMinSparseExpansionBytes = uint64_t{64} << 20;
uint64_t SparseExpansionBudget(uint64_t file_bytes);

NDArrayFile LoadNDArrayBuffer(const void* data, size_t size,
                              const NDArrayLoadOptions& options = {});
NDArrayFile LoadNDArrayFile(const std::string& path, const NDArrayLoadOptions& options = {});
// Names to arrays; throws IOError when the file has no names or a name twice.
std::map<std::string, NDArray> LoadNDArrayMap(const std::string& path, const NDArrayLoadOptions& options = {});

// `names` is empty (a positional list) or has one entry per array.
std::string SaveNDArraysToString(const std::vector<NDArray>& arrays,
                                 const std::vector<std::string>& names, bool numpy_shapes = false);
std::string SaveNDArraysToString(const std::map<std::string, NDArray>& arrays);
void SaveNDArrays(const std::string& path, const std::vector<NDArray>& arrays,
                  const std::vector<std::string>& names, bool numpy_shapes = false);
void SaveNDArrays(const std::string& path, const std::map<std::string, NDArray>& arrays);

// One array alone, without the list header (MXNet's NDArray::Save / Load to a stream: what
// MXNDArraySaveRawBytes writes and pickled NDArrays hold). Loading reads any per-array layout
// above and throws IOError on trailing bytes.
std::string SaveNDArrayToString(const NDArray& array, bool numpy_shapes = false);
NDArray LoadNDArrayFromBuffer(const void* data, size_t size);

// A named file's arrays by name (`source` names the file in errors): a positional list or a name
// given twice is an IOError. With SplitArgAux, the one rule by which every door (LoadCheckpoint,
// Predictor files, the C predict API's buffers) reads a .params file's parameters.
std::map<std::string, NDArray> NamedArrays(const NDArrayFile& file, const std::string& source);
// Splits "arg:name" / "aux:name" keys into two maps without the prefix. Other keys throw
// IOError. Either output may be null to drop that kind.
void SplitArgAux(const std::map<std::string, NDArray>& params,
                 std::map<std::string, NDArray>* args, std::map<std::string, NDArray>* aux);
// The inverse: "arg:" + name and "aux:" + name.
std::map<std::string, NDArray> MergeArgAux(const std::map<std::string, NDArray>& args,
                                           const std::map<std::string, NDArray>& aux);

// Whole-file helpers shared by the loaders (IOError naming the path on failure). Every loader
// reads regular files only, opened through RegularFile (io/regular_file.h).
std::string ReadFileToString(const std::string& path);
void WriteStringToFile(const std::string& path, const std::string& data);

}  // namespace symbind
