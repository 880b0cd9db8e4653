#include "mxnet-cpp/io.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <symbind/io/mnist.h>

namespace mxnet {
namespace cpp {
namespace {

using Params = std::map<std::string, std::string>;

std::string Get(const Params& p, const std::string& k, const std::string& fallback) {
  auto it = p.find(k);
  return it == p.end() ? fallback : it->second;
}
bool GetBool(const Params& p, const std::string& k, bool fallback) {
  std::string v = Get(p, k, fallback ? "1" : "0");
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  return v == "1" || v == "true";
}
int GetInt(const Params& p, const std::string& k, int fallback) {
  return std::stoi(Get(p, k, std::to_string(fallback)));
}
std::vector<int64_t> GetShape(const Params& p, const std::string& k) {
  auto it = p.find(k);
  if (it == p.end()) return {};
  return symbind::TShape::Parse(it->second).dims();
}
NDArray ReshapeBatch(const symbind::NDArray& a, const std::vector<int64_t>& per_sample) {
  if (per_sample.empty()) return NDArray(a);
  std::vector<int64_t> dims{a.shape()[0]};
  dims.insert(dims.end(), per_sample.begin(), per_sample.end());
  return NDArray(a.Reshape(symbind::TShape(dims)));
}

class MNISTImpl : public DataIter {
 public:
  explicit MNISTImpl(const Params& p) {
    // Parameters not used here (num_parts, ctx, ...) are ignored, as MXNet's iterators do.
    std::string image = Get(p, "image", "./train-images-idx3-ubyte");
    std::string label = Get(p, "label", "./train-labels-idx1-ubyte");
    data_ = symbind::LoadMNIST(image, label);
    if (p.count("num_parts") || p.count("part_index"))
      data_ = symbind::MNISTPart(data_, GetInt(p, "part_index", 0), GetInt(p, "num_parts", 1));
    iter_ = std::make_unique<symbind::MNISTIter>(data_, GetInt(p, "batch_size", 128), GetBool(p, "shuffle", true),
                                                 static_cast<uint64_t>(GetInt(p, "seed", 0)), GetBool(p, "flat", false));
    data_shape_ = GetShape(p, p.count("data_shape") ? "data_shape" : "input_shape");
    label_shape_ = GetShape(p, "label_shape");
    if (!GetBool(p, "silent", true))
      LG << "MNISTIter: load " << iter_->num_samples() << " images, shuffle=" << GetBool(p, "shuffle", true);
  }
  void BeforeFirst() override { iter_->Reset(); }
  bool Next() override { return iter_->Next(); }
  NDArray GetData() override { return ReshapeBatch(iter_->data(), data_shape_); }
  NDArray GetLabel() override { return ReshapeBatch(iter_->label(), label_shape_); }
  int GetPadNum() override { return iter_->pad(); }
  std::vector<int> GetIndex() override {
    return std::vector<int>(iter_->index().begin(), iter_->index().end());
  }

 private:
  symbind::MNISTData data_;
  std::unique_ptr<symbind::MNISTIter> iter_;
  std::vector<int64_t> data_shape_, label_shape_;
};

std::vector<float> ReadCSV(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw symbind::Error("CSVIter: cannot open " + path);
  std::vector<float> out;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) {
      size_t b = cell.find_first_not_of(" \t\r");
      if (b == std::string::npos) continue;
      try {
        out.push_back(std::stof(cell.substr(b)));
      } catch (const std::exception&) {
        throw symbind::Error("CSVIter: " + path + " line " + std::to_string(line_no) + ": bad value '" + cell + "'");
      }
    }
  }
  return out;
}

class CSVImpl : public DataIter {
 public:
  explicit CSVImpl(const Params& p) {
    // Parameters not used here are ignored, as MXNet's iterators do.
    if (!p.count("data_csv") || !p.count("data_shape"))
      throw symbind::Error("CSVIter: data_csv and data_shape are required");
    data_shape_ = GetShape(p, "data_shape");
    label_shape_ = p.count("label_shape") ? GetShape(p, "label_shape") : std::vector<int64_t>{1};
    batch_ = GetInt(p, "batch_size", 1);
    round_ = GetBool(p, "round_batch", true);
    data_ = ReadCSV(Get(p, "data_csv", ""));
    size_t per = 1;
    for (auto d : data_shape_) per *= static_cast<size_t>(d);
    if (per == 0 || data_.size() % per != 0)
      throw symbind::Error("CSVIter: " + std::to_string(data_.size()) + " values do not fill rows of data_shape");
    n_ = data_.size() / per;
    std::string label_csv = Get(p, "label_csv", "NULL");
    size_t lper = 1;
    for (auto d : label_shape_) lper *= static_cast<size_t>(d);
    if (label_csv != "NULL") {
      label_ = ReadCSV(label_csv);
      if (label_.size() != n_ * lper)
        throw symbind::Error("CSVIter: label_csv has " + std::to_string(label_.size()) + " values for " +
                                 std::to_string(n_) + " rows");
    } else {
      label_.assign(n_ * lper, 0.0f);
    }
    if (p.count("num_parts") || p.count("part_index")) {  // keep this worker's rows
      auto [begin, end] = symbind::PartBounds(static_cast<int64_t>(n_), GetInt(p, "part_index", 0),
                                              GetInt(p, "num_parts", 1));
      data_ = std::vector<float>(data_.begin() + begin * static_cast<int64_t>(per),
                                 data_.begin() + end * static_cast<int64_t>(per));
      label_ = std::vector<float>(label_.begin() + begin * static_cast<int64_t>(lper),
                                  label_.begin() + end * static_cast<int64_t>(lper));
      n_ = static_cast<size_t>(end - begin);
    }
  }
  void BeforeFirst() override { cursor_ = 0; }
  bool Next() override {
    if (cursor_ >= n_) return false;
    if (!round_ && cursor_ + batch_ > n_) return false;
    size_t per = data_.size() / n_, lper = label_.size() / n_;
    std::vector<int64_t> ddims{static_cast<int64_t>(batch_)}, ldims{static_cast<int64_t>(batch_)};
    ddims.insert(ddims.end(), data_shape_.begin(), data_shape_.end());
    ldims.insert(ldims.end(), label_shape_.begin(), label_shape_.end());
    if (label_shape_.size() == 1 && label_shape_[0] == 1) ldims = {static_cast<int64_t>(batch_)};
    symbind::NDArray d{symbind::TShape(ddims)}, l{symbind::TShape(ldims)};
    index_.clear();
    pad_ = 0;
    for (size_t r = 0; r < batch_; ++r) {
      size_t row = cursor_ + r;
      if (row >= n_) {
        row -= n_;
        ++pad_;
      }
      index_.push_back(static_cast<int>(row));
      std::copy(data_.begin() + row * per, data_.begin() + (row + 1) * per, d.fdata() + r * per);
      std::copy(label_.begin() + row * lper, label_.begin() + (row + 1) * lper, l.fdata() + r * lper);
    }
    cursor_ += batch_;
    data_batch_ = NDArray(d);
    label_batch_ = NDArray(l);
    return true;
  }
  NDArray GetData() override { return data_batch_; }
  NDArray GetLabel() override { return label_batch_; }
  int GetPadNum() override { return pad_; }
  std::vector<int> GetIndex() override { return index_; }

 private:
  std::vector<int64_t> data_shape_, label_shape_;
  size_t batch_ = 1, n_ = 0, cursor_ = 0;
  bool round_ = true;
  std::vector<float> data_, label_;
  int pad_ = 0;
  std::vector<int> index_;
  NDArray data_batch_, label_batch_;
};

}  // namespace

MXDataIter::MXDataIter(const std::string& mxdataiter_type) : type_(mxdataiter_type) {
  if (type_ != "MNISTIter" && type_ != "CSVIter")
    throw symbind::Error("MXDataIter: symbind supports MNISTIter and CSVIter, not " + type_);
}
MXDataIter::~MXDataIter() = default;

MXDataIter MXDataIter::CreateDataIter() {
  if (type_ == "MNISTIter") impl_ = std::make_shared<MNISTImpl>(params_);
  else impl_ = std::make_shared<CSVImpl>(params_);
  return *this;
}

DataIter& MXDataIter::Impl() {
  if (!impl_) CreateDataIter();
  return *impl_;
}

void MXDataIter::BeforeFirst() { Impl().BeforeFirst(); }
bool MXDataIter::Next() { return Impl().Next(); }
NDArray MXDataIter::GetData() { return Impl().GetData(); }
NDArray MXDataIter::GetLabel() { return Impl().GetLabel(); }
int MXDataIter::GetPadNum() { return Impl().GetPadNum(); }
std::vector<int> MXDataIter::GetIndex() { return Impl().GetIndex(); }

}  // namespace cpp
}  // namespace mxnet
