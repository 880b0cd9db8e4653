// CSV data sets: a reader for files of comma-separated numbers and MXNet's CSVIter.
//
// A CSV file holds one sample per line, its values separated by commas (blanks around a value
// are allowed; empty lines are skipped). Every row must hold exactly as many values as the
// sample shape has elements, as MXNet's CSVIter requires.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>
#include <symbind/core/param.h>
#include <symbind/io/data_iter.h>

namespace symbind {

// Reads `path` into a (rows, row_size) array of `dtype` (float32, int32 or int64: integer
// cells must be integers in range). Throws IOError naming the file and line for an unreadable
// file, a value that is not a number (of the type), or a row of another length.
NDArray LoadCSV(const std::string& path, int64_t row_size, DType dtype = DType::kFloat32);

// MXNet 1.9.1's CSVIter parameters (names, defaults and meaning), plus the data sharding of
// MXNet's other iterators (num_parts, part_index; io/mnist.h's PartBounds).
struct CSVIterParam : Parameter<CSVIterParam> {
  std::string data_csv;
  TShape data_shape;
  std::string label_csv;  // "NULL": every label is 0
  TShape label_shape;
  int batch_size = 1;
  bool round_batch = true;
  int num_parts = 1;
  int part_index = 0;
  std::string dtype;
  static void Declare(ParamDeclarer<CSVIterParam>& d);
};

// Batches of a CSV data set with MXNet's CSVIter semantics:
//  - data() is (batch_size, data_shape...), label() (batch_size, label_shape...), except that a
//    label_shape of (1,) gives (batch_size,), as MXNet's MXDataIterGetLabel returns it.
//  - The last, partial batch of an epoch: with round_batch it is completed with the first rows of
//    the data set, pad() of them, and the next epoch (after Reset) starts after those rows, so no
//    row is skipped or repeated across epochs; without it the batch is returned with pad() =
//    the missing rows, which hold what the previous batch had there (zeros when there was none),
//    and the next epoch starts at row 0.
//  - index() is each row's position in the file (in its part, with num_parts).
//  - data and label are of `dtype` (float32, int32 or int64), as MXNet's CSVIter gives them.
class CSVIter : public DataIter {
 public:
  explicit CSVIter(const CSVIterParam& param);

  void Reset() override;
  bool Next() override;
  NDArray data() const override;
  NDArray label() const override;
  int pad() const override { return pad_; }
  std::vector<int64_t> index() const override { return batch_index_; }

  int64_t num_samples() const { return num_rows_; }

 private:
  void CheckHaveBatch(const char* what) const;

  CSVIterParam param_;
  NDArray data_, label_;  // (rows, row size), (rows, label size)
  int64_t num_rows_ = 0;
  TShape batch_data_shape_, batch_label_shape_;
  int64_t cursor_ = 0;    // the next row to read
  int64_t overflow_ = 0;  // rows the last round_batch batch took from the start (0: none)
  int pad_ = 0;
  bool have_batch_ = false;
  NDArray batch_data_, batch_label_;
  std::vector<int64_t> batch_index_;
};

}  // namespace symbind
