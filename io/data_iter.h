// MXNet's data iterators by name, with MXNet's parameter names: what mxnet-cpp's MXDataIter
// (compat/include/mxnet-cpp/io.h) and the C API's MXDataIterCreateIter (mxnet/c_api.h) both
// create, so the two interfaces share one implementation.
//
//   "MNISTIter": MNIST-format idx files (plain or gzip) through io/mnist.h's MNISTIter, with
//                MXNet's batching: full batches only, pixels scaled by 1/256.
//   "CSVIter":   CSV files of numbers through io/csv_iter.h's CSVIter.
//
// Parameters an iterator does not declare are ignored, as MXNet's iterators ignore them
// (programs pass "flat" or "shuffle" to CSVIter, "ctx" or "prefetch_buffer" to both); a
// declared one with a bad value throws ParamError naming the iterator and the parameter.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/param.h>

namespace symbind {

// A batch iterator. data() and label() are fresh arrays per batch: a batch already handed out
// is never overwritten by the next.
class DataIter {
 public:
  virtual ~DataIter() = default;
  // Starts the next epoch.
  virtual void Reset() = 0;
  // Advances to the next batch; false when the epoch is over.
  virtual bool Next() = 0;
  // The current batch. Throw symbind::Error before the first Next() of an epoch.
  virtual NDArray data() const = 0;
  virtual NDArray label() const = 0;
  // How many rows at the end of the current batch are padding rather than new samples.
  virtual int pad() const = 0;
  // The sample index of each row of the current batch, padding included.
  virtual std::vector<int64_t> index() const = 0;
};

// One iterator type: its name, what it does, its declared parameters (names, MXNet's type
// strings and docs, as MXDataIterGetIterInfo reports them) and its factory (use CreateDataIter).
struct DataIterInfo {
  std::string name;
  std::string description;
  const ParamSchema* params;
  std::unique_ptr<DataIter> (*create)(const KwArgs& params);
};

// Every iterator type, in a fixed order (the C API hands out pointers into this list).
const std::vector<DataIterInfo>& ListDataIters();
// The iterator type named `name`; throws Error for an unknown name, listing the known ones.
const DataIterInfo& FindDataIter(const std::string& name);

// Creates iterator `name` from MXNet-style parameters (values as strings). Throws Error for
// an unknown name (listing the known ones), ParamError for a bad value of a declared
// parameter, and the reader's IOError for a missing or malformed file.
std::unique_ptr<DataIter> CreateDataIter(const std::string& name, const KwArgs& params);

}  // namespace symbind
