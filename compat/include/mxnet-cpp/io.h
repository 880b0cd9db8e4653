// MXNet cpp-package compatibility: data iterators. MXDataIter("MNISTIter") reads (Fashion-)MNIST
// idx files (gzip or plain); MXDataIter("CSVIter") reads comma-separated values. Both are
// io/data_iter.h's iterators, the same the C API's MXDataIterCreateIter makes.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/operator.h"

namespace mxnet {
namespace cpp {

// The open data behind an MXDataIter: defined inside libmxnet.so (compat/compat_internal.h).
struct DataIterImpl;

struct DataBatch {
  NDArray data;
  NDArray label;
  int pad_num;
  std::vector<int> index;
};

class DataIter {
 public:
  virtual ~DataIter() = default;
  virtual void BeforeFirst() = 0;
  virtual bool Next() = 0;
  virtual NDArray GetData() = 0;
  virtual NDArray GetLabel() = 0;
  virtual int GetPadNum() = 0;
  virtual std::vector<int> GetIndex() = 0;
  DataBatch GetDataBatch() { return DataBatch{GetData(), GetLabel(), GetPadNum(), GetIndex()}; }
  void Reset() { BeforeFirst(); }
};

// MNISTIter parameters: image, label (paths), batch_size (default 128), shuffle (default
// true), flat (default false), seed (default 0), silent, num_parts, part_index, data_shape /
// input_shape, label_shape. CSVIter parameters: data_csv, data_shape, label_csv, label_shape
// (default (1,)), batch_size, round_batch (default true), num_parts, part_index, dtype (float32).
// Other parameters are ignored, as MXNet's iterators ignore them (io/data_iter.h).
// MNISTIter returns full batches only, as MXNet's; CSVIter completes its last batch by wrapping
// around (round_batch) or returns it padded; GetPadNum says how many rows are padding
// (io/data_iter.cc, io/csv_iter.h).
class MXDataIter : public DataIter {
 public:
  explicit MXDataIter(const std::string& mxdataiter_type);
  MXDataIter(const MXDataIter& other) = default;
  MXDataIter& operator=(const MXDataIter& other) = default;
  ~MXDataIter() override;

  template <typename T>
  MXDataIter& SetParam(const std::string& name, const T& value) {
    params_[name] = detail::ParamString(value);
    return *this;
  }
  // Opens the data (copies of the returned iterator share it).
  MXDataIter CreateDataIter();

  void BeforeFirst() override;
  bool Next() override;
  NDArray GetData() override;
  NDArray GetLabel() override;
  int GetPadNum() override;
  std::vector<int> GetIndex() override;

 private:
  DataIterImpl& Impl();
  std::string type_;
  std::map<std::string, std::string> params_;
  std::shared_ptr<DataIterImpl> impl_;  // shared by copies
};

}  // namespace cpp
}  // namespace mxnet
