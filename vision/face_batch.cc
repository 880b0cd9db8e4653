#include <symbind/vision/face_batch.h>

#include <algorithm>

namespace symbind {
namespace vision {
namespace {

// The output FaceInputOptions::output names, or the model's last output.
std::string ChooseOutput(const Symbol& symbol, const std::string& wanted) {
  const std::vector<std::string> heads = symbol.ListOutputs();
  SYMBIND_CHECK(!heads.empty(), "face model: the model has no outputs");
  if (wanted.empty()) return heads.back();
  const std::string with_suffix = wanted + "_output";
  for (const std::string& h : heads)
    if (h == wanted || h == with_suffix) return h;
  for (const std::string& name : symbol.GetInternals().ListOutputs())
    if (name == wanted || name == with_suffix) return name;
  return heads.back();
}

}  // namespace

FaceBatchNetwork::FaceBatchNetwork(Model model, const std::string& what, const FaceInputOptions& options)
    : options_(options) {
  SYMBIND_CHECK(options.width > 0 && options.height > 0 && options.width <= 4096 && options.height <= 4096,
                what, ": input size ", options.width, "x", options.height, " is not in 1..4096");
  SYMBIND_CHECK(options.max_batch >= 1 && options.max_batch <= 1024, what, ": max_batch ", options.max_batch,
                " is not in 1..1024");
  output_ = ChooseOutput(model.symbol, options.output);
  NetworkOptions net_options;
  net_options.outputs = {output_};
  net_ = Network(std::move(model), what, net_options);
}

void FaceBatchNetwork::Write(const Image& crop, bool flip, float* dst) {
  const FaceInputOptions& o = options_;
  SYMBIND_CHECK(crop.width > 0 && crop.height > 0 && crop.channels >= 1 && crop.channels <= 4,
                net_.what(), ": need a non-empty face crop of 1..4 channels, got ", crop.width, "x", crop.height, "x",
                crop.channels);
  const int w = o.width, h = o.height, c = crop.channels;
  const bool resize = crop.width != w || crop.height != h;
  if (resize) {
    resized_.resize(static_cast<size_t>(w) * h * c);
    ResizeBilinear(crop.pixels.data(), crop.width, crop.height, c, resized_.data(), w, h);
  }
  for (int t = 0; t < 3; ++t) {
    const int from = c >= 3 ? (o.bgr ? 2 - t : t) : 0;
    for (int y = 0; y < h; ++y) {
      float* row = dst + (static_cast<size_t>(t) * h + y) * w;
      for (int x = 0; x < w; ++x) {
        const size_t at = (static_cast<size_t>(y) * w + (flip ? w - 1 - x : x)) * c + from;
        const float v = resize ? resized_[at] : crop.pixels[at];
        row[x] = (v - o.mean[t]) * o.scale;
      }
    }
  }
}

void FaceBatchNetwork::Run(const std::vector<const Image*>& crops, bool flip, const RowFn& row) {
  const size_t per_crop = flip ? 2 : 1;
  const size_t total = crops.size() * per_crop;
  const size_t max_batch = std::max<size_t>(per_crop, options_.max_batch / per_crop * per_crop);
  const size_t item = static_cast<size_t>(3) * options_.width * options_.height;
  for (size_t begin = 0; begin < total; begin += max_batch) {
    const size_t n = std::min(max_batch, total - begin);
    size_t batch = 1;
    while (batch < n) batch <<= 1;
    batch = std::min(batch, max_batch);
    NDArray input;
    try {
      input = net_.Input(TShape({static_cast<int64_t>(batch), 3, options_.height, options_.width}));
    } catch (const ShapeError& e) {
      throw ShapeError(StrCat(net_.what(), ": the model does not take ", options_.width, "x", options_.height,
                              " crops (FaceInputOptions::width, height): ", e.what()));
    }
    float* data = input.fdata();
    for (size_t i = 0; i < n; ++i) {
      const size_t k = begin + i;
      Write(*crops[k / per_crop], k % per_crop == 1, data + i * item);
    }
    std::fill(data + n * item, data + batch * item, 0.0f);
    const NDArray& out = net_.Forward()[0];
    const TShape& shape = out.shape();
    bool one_vector = shape.ndim() >= 2 && shape[0] == static_cast<int64_t>(batch);
    for (int d = 2; d < shape.ndim(); ++d) one_vector = one_vector && shape[d] == 1;
    SYMBIND_CHECK(one_vector, net_.what(), ": output ", output_, " has shape ", shape, ", expected one vector per face (",
                  batch, ", D): is this a recognition-style model (FaceInputOptions::output names the output)?");
    const size_t size = static_cast<size_t>(out.Size() / batch);
    for (size_t i = 0; i < n; ++i) {
      const size_t k = begin + i;
      row(k / per_crop, k % per_crop == 1, out.fdata() + i * size, size);
    }
  }
}

}  // namespace vision
}  // namespace symbind
