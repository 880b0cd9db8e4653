#include <symbind/io/csv_iter.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <symbind/io/mnist.h>  // PartBounds
#include <symbind/io/ndarray_file.h>  // ReadFileToString

namespace symbind {
namespace {

// The text of one CSV cell without the blanks around it; false when empty.
bool CellText(const std::string& line, size_t begin, size_t end, std::string* cell) {
  while (begin < end && (line[begin] == ' ' || line[begin] == '\t')) ++begin;
  while (end > begin && (line[end - 1] == ' ' || line[end - 1] == '\t' || line[end - 1] == '\r')) --end;
  if (begin == end) return false;
  *cell = line.substr(begin, end - begin);
  return true;
}

// One cell as float32 (as strtof reads it) or as an integer of `dtype`, stored at `out`.
bool ParseCell(const std::string& cell, DType dtype, void* out) {
  char* stop = nullptr;
  errno = 0;
  if (dtype == DType::kFloat32) {
    *static_cast<float*>(out) = std::strtof(cell.c_str(), &stop);
  } else {
    const long long v = std::strtoll(cell.c_str(), &stop, 10);
    if (dtype == DType::kInt32 && (v < INT32_MIN || v > INT32_MAX)) return false;
    if (dtype == DType::kInt32) *static_cast<int32_t*>(out) = static_cast<int32_t>(v);
    else *static_cast<int64_t*>(out) = static_cast<int64_t>(v);
  }
  return stop == cell.c_str() + cell.size() && errno != ERANGE;
}

bool BlankLine(const std::string& line) {
  return line.find_first_not_of(" \t\r") == std::string::npos;
}

}  // namespace

NDArray LoadCSV(const std::string& path, int64_t row_size, DType dtype) {
  if (row_size < 1) throw Error(StrCat("LoadCSV: ", path, ": row size must be positive, got ", row_size));
  if (dtype != DType::kFloat32 && dtype != DType::kInt32 && dtype != DType::kInt64)
    throw Error(StrCat("LoadCSV: dtype ", DTypeName(dtype), " is not one of float32, int32, int64"));
  const size_t elem = DTypeSize(dtype);
  std::istringstream in(ReadFileToString(path));
  std::vector<char> values;  // the cells in `dtype`, row after row
  std::string line, cell;
  int64_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (BlankLine(line)) continue;
    int64_t count = 0;
    size_t begin = 0;
    while (true) {
      size_t comma = line.find(',', begin);
      size_t end = comma == std::string::npos ? line.size() : comma;
      values.resize(values.size() + elem);
      if (!CellText(line, begin, end, &cell) || !ParseCell(cell, dtype, values.data() + values.size() - elem))
        throw IOError(StrCat(path, " line ", line_no, ": value ", count + 1, " '",
                             line.substr(begin, end - begin), "' is not ",
                             dtype == DType::kFloat32 ? "a number" : StrCat("an ", DTypeName(dtype), " integer")));
      ++count;
      if (comma == std::string::npos) break;
      begin = comma + 1;
    }
    if (count != row_size)
      throw IOError(StrCat(path, " line ", line_no, ": ", count, " values, expected ", row_size,
                           " (the size of the sample shape)"));
  }
  if (in.bad()) throw IOError(StrCat(path, ": read error"));
  const int64_t rows = static_cast<int64_t>(values.size() / elem) / row_size;
  NDArray out(TShape{rows, row_size}, dtype);
  if (!values.empty()) std::memcpy(out.raw_data(), values.data(), values.size());
  return out;
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
      .require([](const std::string& v) { return v == "float32" || v == "int32" || v == "int64"; },
               "one of float32, int32, int64")
      .describe("The data type of the values (data and label).");
  d.check([](const CSVIterParam& p) { return p.data_shape.is_known() && p.data_shape.Size() > 0; },
          "data_shape must have known, positive dims", {"data_shape"});
  d.check([](const CSVIterParam& p) { return p.label_shape.is_known() && p.label_shape.Size() > 0; },
          "label_shape must have known, positive dims", {"label_shape"});
}

CSVIter::CSVIter(const CSVIterParam& param) : param_(param) {
  const DType dtype = DTypeFromName(param.dtype);
  data_ = LoadCSV(param.data_csv, param.data_shape.Size(), dtype);
  num_rows_ = data_.shape()[0];
  const int64_t label_size = param.label_shape.Size();
  if (param.label_csv != "NULL") {
    label_ = LoadCSV(param.label_csv, label_size, dtype);
    if (label_.shape()[0] != num_rows_)
      throw IOError(StrCat("CSVIter: label_csv ", param.label_csv, " has ", label_.shape()[0],
                           " rows, data_csv ", param.data_csv, " has ", num_rows_));
  } else {
    label_ = NDArray(TShape{num_rows_, label_size}, dtype);  // zeros
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
  // Rows in bytes: data and label share the iterator's dtype.
  const size_t elem = DTypeSize(data_.dtype());
  const size_t row = static_cast<size_t>(data_.shape()[1]) * elem, label_row = static_cast<size_t>(label_.shape()[1]) * elem;
  NDArray d(batch_data_shape_, data_.dtype()), l(batch_label_shape_, label_.dtype());
  std::vector<int64_t> index(static_cast<size_t>(batch), 0);
  const char* src_d = static_cast<const char*>(data_.raw_data());
  const char* src_l = static_cast<const char*>(label_.raw_data());
  char* dst_d = static_cast<char*>(d.raw_data());
  char* dst_l = static_cast<char*>(l.raw_data());
  int64_t top = 0;
  auto take = [&](int64_t r) {
    std::memcpy(dst_d + top * row, src_d + r * row, row);
    std::memcpy(dst_l + top * label_row, src_l + r * label_row, label_row);
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
      const char* prev_d = static_cast<const char*>(batch_data_.raw_data());
      const char* prev_l = static_cast<const char*>(batch_label_.raw_data());
      std::memcpy(dst_d + top * row, prev_d + top * row, static_cast<size_t>(missing) * row);
      std::memcpy(dst_l + top * label_row, prev_l + top * label_row, static_cast<size_t>(missing) * label_row);
      std::copy(batch_index_.begin() + top, batch_index_.end(), index.begin() + top);
    } else {
      std::memset(dst_d + top * row, 0, static_cast<size_t>(missing) * row);
      std::memset(dst_l + top * label_row, 0, static_cast<size_t>(missing) * label_row);
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
