#include <symbind/io/csv_iter.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <symbind/io/mnist.h>  // PartBounds
#include <symbind/io/ndarray_file.h>  // RegularFileSize

namespace symbind {
namespace {

// One CSV cell as float32, as strtof reads it (blanks around the number allowed).
bool ParseCell(const std::string& line, size_t begin, size_t end, float* out) {
  while (begin < end && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
  while (end > begin && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) --end;
  if (begin == end) return false;
  const std::string cell = line.substr(begin, end - begin);
  char* stop = nullptr;
  errno = 0;
  *out = std::strtof(cell.c_str(), &stop);
  return stop == cell.c_str() + cell.size() && errno != ERANGE;
}

bool BlankLine(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

NDArray LoadCSV(const std::string& path, int64_t row_size) {
  if (row_size < 1) throw Error(StrCat("LoadCSV: ", path, ": row size must be positive, got ", row_size));
  RegularFileSize(path);  // a FIFO or directory would block or mislead
  std::ifstream in(path);
  if (!in) throw IOError(StrCat(path, ": cannot open (", std::strerror(errno), ")"));
  std::vector<float> values;
  std::string line;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (BlankLine(line)) continue;
    int64_t count = 0;
    size_t begin = 0;
    while (true) {
      size_t comma = line.find(',', begin);
      size_t end = comma == std::string::npos ? line.size() : comma;
      float v = 0;
      if (!ParseCell(line, begin, end, &v))
        throw IOError(StrCat(path, " line ", line_no, ": value ", count + 1, " '",
                             line.substr(begin, end - begin), "' is not a number"));
      values.push_back(v);
      ++count;
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (count != row_size)
      throw IOError(StrCat(path, " line ", line_no, ": ", count, " values, expected ", row_size,
                           " (the size of the sample shape)"));
  }
  if (in.bad()) throw IOError(StrCat(path, ": read error"));
  const int64_t rows = static_cast<int64_t>(values.size()) / row_size;
  return NDArray(TShape{rows, row_size}, values);
}

void CSVIterParam::Declare(ParamDeclarer<CSVIterParam>& d) {
  d.field("data_csv", &CSVIterParam::data_csv).describe("The input CSV file: one sample per line.");
  d.field("data_shape", &CSVIterParam::data_shape).describe("The shape of one example.");
  d.field("label_csv", &CSVIterParam::label_csv)
      .set_default("NULL")
      .describe("The label CSV file, one label row per data row. If NULL, all labels are 0.");
  d.field("label_shape", &CSVIterParam::label_shape)
      .set_default(TShape{1})
      .describe("The shape of one label.");
  d.field("batch_size", &CSVIterParam::batch_size).lower_bound(1).describe("Batch size.");
  d.field("round_batch", &CSVIterParam::round_batch)
      .set_default(true)
      .describe("Complete the last batch with rows from the start (else return it padded).");
  d.field("num_parts", &CSVIterParam::num_parts)
      .set_default(1)
      .lower_bound(1)
      .describe("Split the rows into this many contiguous parts (data-parallel training).");
  d.field("part_index", &CSVIterParam::part_index)
      .set_default(0)
      .lower_bound(0)
      .describe("The part to read, in [0, num_parts).");
  d.field("dtype", &CSVIterParam::dtype)
      .set_default("float32")
      .require([](const std::string& v) { return v == "float32"; },
               "float32 (symbind's CSVIter reads float32 only)")
      .describe("The data type of the values.");
  d.check([](const CSVIterParam& p) { return p.data_shape.is_known() && p.data_shape.Size() > 0; },
          "data_shape must have known, positive dims", {"data_shape"});
  d.check([](const CSVIterParam& p) { return p.label_shape.is_known() && p.label_shape.Size() > 0; },
          "label_shape must have known, positive dims", {"label_shape"});
}

CSVIter::CSVIter(const CSVIterParam& param) : param_(param) {
  data_ = LoadCSV(param.data_csv, param.data_shape.Size());
  num_rows_ = data_.shape()[0];
  const int64_t label_size = param.label_shape.Size();
  if (param.label_csv != "NULL") {
    label_ = LoadCSV(param.label_csv, label_size);
    if (label_.shape()[0] != num_rows_)
      throw IOError(StrCat("CSVIter: label_csv ", param.label_csv, " has ", label_.shape()[0],
                           " rows, data_csv ", param.data_csv, " has ", num_rows_));
  } else {
    label_ = NDArray(TShape{num_rows_, label_size});
    label_.Fill(0);
  }
  if (param.num_parts != 1 || param.part_index != 0) {
    auto [begin, end] = PartBounds(num_rows_, param.part_index, param.num_parts);
    data_ = data_.Slice(begin, end);
    label_ = label_.Slice(begin, end);
    num_rows_ = end - begin;
  }
  if (num_rows_ == 0) throw IOError(StrCat("CSVIter: ", param.data_csv, " holds no rows"));
  std::vector<int64_t> dims{param.batch_size};
  dims.insert(dims.end(), param.data_shape.dims().begin(), param.data_shape.dims().end());
  batch_data_shape_ = TShape(dims);
  dims = {param.batch_size};
  if (param.label_shape != TShape{1})
    dims.insert(dims.end(), param.label_shape.dims().begin(), param.label_shape.dims().end());
  batch_label_shape_ = TShape(dims);
}

void CSVIter::Reset() {
  // After a round_batch wrap the rows it took from the start already count for the next epoch.
  if (!param_.round_batch || overflow_ == 0) cursor_ = 0;
  overflow_ = 0;
  have_batch_ = false;
}

bool CSVIter::Next() {
  // The batch that wrapped around ended the epoch.
  if (overflow_ != 0 || cursor_ >= num_rows_) {
    have_batch_ = false;
    return false;
  }
  const int64_t batch = param_.batch_size;
  const int64_t row = data_.shape()[1], label_row = label_.shape()[1];
  NDArray d(batch_data_shape_), l(batch_label_shape_);
  std::vector<int64_t> index(static_cast<size_t>(batch), 0);
  const float* src_d = data_.fdata();
  const float* src_l = label_.fdata();
  float* dst_d = d.fdata();
  float* dst_l = l.fdata();
  int64_t top = 0;
  auto take = [&](int64_t r) {
    std::memcpy(dst_d + top * row, src_d + r * row, static_cast<size_t>(row) * sizeof(float));
    std::memcpy(dst_l + top * label_row, src_l + r * label_row, static_cast<size_t>(label_row) * sizeof(float));
    index[static_cast<size_t>(top++)] = r;
  };
  while (top < batch && cursor_ < num_rows_) take(cursor_++);
  pad_ = 0;
  if (top < batch) {
    const int64_t missing = batch - top;
    if (param_.round_batch) {
      if (missing > num_rows_)
        throw Error(StrCat("CSVIter: round_batch cannot complete the last batch: batch_size ", batch,
                           " needs ", missing, " more rows, the data has ", num_rows_,
                           " (use a smaller batch_size or round_batch=0)"));
      cursor_ = 0;
      while (top < batch) take(cursor_++);
      overflow_ = missing;
    } else if (!batch_data_.is_none()) {
      // As MXNet's batch loader, whose buffer still holds the previous batch there.
      const float* prev_d = batch_data_.fdata();
      const float* prev_l = batch_label_.fdata();
      std::memcpy(dst_d + top * row, prev_d + top * row, static_cast<size_t>(missing * row) * sizeof(float));
      std::memcpy(dst_l + top * label_row, prev_l + top * label_row,
                  static_cast<size_t>(missing * label_row) * sizeof(float));
      std::copy(batch_index_.begin() + top, batch_index_.end(), index.begin() + top);
    } else {
      std::memset(dst_d + top * row, 0, static_cast<size_t>(missing * row) * sizeof(float));
      std::memset(dst_l + top * label_row, 0, static_cast<size_t>(missing * label_row) * sizeof(float));
    }
    pad_ = static_cast<int>(missing);
  }
  batch_data_ = d;
  batch_label_ = l;
  batch_index_ = std::move(index);
  have_batch_ = true;
  return true;
}

void CSVIter::CheckHaveBatch(const char* what) const {
  if (!have_batch_) throw Error(StrCat("CSVIter::", what, ": no current batch (call Next first)"));
}

NDArray CSVIter::data() const {
  CheckHaveBatch("data");
  return batch_data_;
}

NDArray CSVIter::label() const {
  CheckHaveBatch("label");
  return batch_label_;
}

}  // namespace symbind
