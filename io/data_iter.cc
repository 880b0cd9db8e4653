#include <symbind/io/data_iter.h>

#include <cmath>
#include <optional>

#include <symbind/io/csv_iter.h>
#include <symbind/io/mnist.h>

namespace symbind {
namespace {

// MXNet 1.9.1's MNISTIter parameters, plus data_shape (alias input_shape) and label_shape,
// which reshape each sample.
struct MNISTIterParam : Parameter<MNISTIterParam> {
  std::string image, label;
  int batch_size = 128;
  bool shuffle = true, flat = false, silent = false;
  int seed = 0, num_parts = 1, part_index = 0;
  std::optional<TShape> data_shape, input_shape, label_shape;
  static void Declare(ParamDeclarer<MNISTIterParam>& d) {
    d.field("image", &MNISTIterParam::image)
        .set_default("./train-images-idx3-ubyte")
        .describe("Dataset Param: Mnist image path (plain or gzip idx file).");
    d.field("label", &MNISTIterParam::label)
        .set_default("./train-labels-idx1-ubyte")
        .describe("Dataset Param: Mnist label path (plain or gzip idx file).");
    d.field("batch_size", &MNISTIterParam::batch_size).set_default(128).lower_bound(1).describe("Batch Param: Batch Size.");
    d.field("shuffle", &MNISTIterParam::shuffle).set_default(true).describe("Augmentation Param: Whether to shuffle data.");
    d.field("flat", &MNISTIterParam::flat).set_default(false).describe("Augmentation Param: Whether to flat the data into 1D.");
    d.field("seed", &MNISTIterParam::seed).set_default(0).describe("Augmentation Param: Random Seed.");
    d.field("silent", &MNISTIterParam::silent)
        .set_default(false)
        .describe("Auxiliary Param: accepted for MXNet programs; symbind prints nothing either way.");
    d.field("num_parts", &MNISTIterParam::num_parts).set_default(1).lower_bound(1).describe("partition the data into multiple parts");
    d.field("part_index", &MNISTIterParam::part_index).set_default(0).lower_bound(0).describe("the index of the part will read");
    d.field("data_shape", &MNISTIterParam::data_shape).set_default(std::nullopt).describe("Reshape each image to this shape.");
    d.field("input_shape", &MNISTIterParam::input_shape).set_default(std::nullopt).describe("Alias of data_shape.");
    d.field("label_shape", &MNISTIterParam::label_shape).set_default(std::nullopt).describe("Reshape each label to this shape.");
  }
};

// (B, ...) reshaped to (B, per_sample...); unchanged without a per-sample shape.
NDArray ReshapeBatch(const NDArray& batch, const std::optional<TShape>& per_sample) {
  if (!per_sample) return batch;
  std::vector<int64_t> dims{batch.shape()[0]};
  dims.insert(dims.end(), per_sample->dims().begin(), per_sample->dims().end());
  return batch.Reshape(TShape(dims));
}

// MXNet 1.9.1's MNISTIter batching: pixels scaled by 1/256 (symbind's loader scales by 1/255) and
// only full batches: a last partial batch is dropped, so pad() is always 0. Unlike MXNet's, which
// shuffles once when made, a shuffling iterator draws a new order every epoch (io/mnist.h).
class MNISTDataIter : public DataIter {
 public:
  explicit MNISTDataIter(const MNISTIterParam& p) : param_(p) {
    MNISTData data = LoadMNIST(p.image, p.label);
    if (p.num_parts != 1 || p.part_index != 0) data = MNISTPart(data, p.part_index, p.num_parts);
    MNISTData rescaled{NDArray(data.images.shape()), data.labels};
    const float* src = data.images.fdata();
    float* dst = rescaled.images.fdata();
    for (int64_t i = 0, n = data.images.Size(); i < n; ++i)  // back to the byte, then MXNet's scale
      dst[i] = std::nearbyint(src[i] * 255.0f) * (1.0f / 256.0f);
    iter_ = std::make_unique<MNISTIter>(rescaled, p.batch_size, p.shuffle, static_cast<uint64_t>(p.seed), p.flat);
  }
  void Reset() override {
    iter_->Reset();
    have_batch_ = false;
  }
  bool Next() override {
    have_batch_ = iter_->Next() && iter_->pad() == 0;
    return have_batch_;
  }
  NDArray data() const override {
    CheckHaveBatch("data");
    return ReshapeBatch(iter_->data(), param_.data_shape ? param_.data_shape : param_.input_shape);
  }
  NDArray label() const override {
    CheckHaveBatch("label");
    return ReshapeBatch(iter_->label(), param_.label_shape);
  }
  int pad() const override { return 0; }
  std::vector<int64_t> index() const override { return iter_->index(); }

 private:
  void CheckHaveBatch(const char* what) const {
    if (!have_batch_) throw Error(StrCat("MNISTIter::", what, ": no current batch (call Next first)"));
  }
  MNISTIterParam param_;
  std::unique_ptr<MNISTIter> iter_;
  bool have_batch_ = false;
};

// The declared parameters among `params`: the others are ignored, as MXNet's iterators do.
template <typename P>
P ParseKnown(const std::string& iter_name, const KwArgs& params) {
  KwArgs known;
  for (auto& kv : params)
    if (P::Schema().Find(kv.first)) known.insert(kv);
  try {
    return P::Parse(known);
  } catch (const ParamError& e) {
    throw ParamError(StrCat(iter_name, ": ", e.what()));
  }
}

}  // namespace

const std::vector<DataIterInfo>& ListDataIters() {
  static const std::vector<DataIterInfo> iters = {
      {"MNISTIter", "Iterates over MNIST-format idx files (plain or gzip) in batches.",
       &MNISTIterParam::Schema(),
       [](const KwArgs& p) -> std::unique_ptr<DataIter> {
         return std::make_unique<MNISTDataIter>(ParseKnown<MNISTIterParam>("MNISTIter", p));
       }},
      {"CSVIter", "Iterates over CSV files of numbers in batches: one example per line.",
       &CSVIterParam::Schema(),
       [](const KwArgs& p) -> std::unique_ptr<DataIter> {
         return std::make_unique<CSVIter>(ParseKnown<CSVIterParam>("CSVIter", p));
       }},
  };
  return iters;
}

const DataIterInfo& FindDataIter(const std::string& name) {
  std::vector<std::string> names;
  for (auto& info : ListDataIters()) {
    if (info.name == name) return info;
    names.push_back(info.name);
  }
  throw Error(StrCat("unknown data iterator '", name, "'; symbind has ", JoinNames(names)));
}

std::unique_ptr<DataIter> CreateDataIter(const std::string& name, const KwArgs& params) {
  return FindDataIter(name).create(params);
}

}  // namespace symbind
