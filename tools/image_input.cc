#include "image_input.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include <symbind/core/error.h>
#include <symbind/core/graph.h>
#include <symbind/core/param.h>
#include <symbind/io/image.h>
#include <symbind/ops/op_util.h>

namespace symbind_tool {

using namespace symbind;

void AddImageOptions(CLI::App* sub, ImageOptions* o) {
  sub->add_option("--mean", o->mean, "image mean R,G,B (or one value) subtracted before scaling");
  sub->add_option("--scale", o->scale, "image scale applied after the mean");
  sub->add_option("--size", o->size, "image size H,W after resizing");
  sub->add_flag("--bgr", o->bgr, "feed image channels in BGR order");
}

TShape ImageSize(const ImageOptions& o, const std::string& what) {
  if (o.size.empty()) throw ParamError(what + " needs --size H,W");
  const TShape hw = TShape::Parse(o.size);
  // Checked before any image is read: the target is allocated at this size.
  if (hw.ndim() != 2 || hw[0] < 1 || hw[1] < 1 || hw[0] > kMaxImagePixels || hw[1] > kMaxImagePixels ||
      hw[0] * hw[1] > kMaxImagePixels)
    throw ParamError(StrCat("--size expects H,W with 1 <= H*W <= ", kMaxImagePixels, ", got '", o.size, "'"));
  return hw;
}

int64_t ImageChannels(const Model& model, const std::string& name, int64_t batch, const TShape& hw) {
  std::map<std::string, TShape> known;
  for (const auto& kv : model.args) known[kv.first] = kv.second.shape();
  for (const auto& kv : model.aux) known[kv.first] = kv.second.shape();
  known[name] = TShape({batch, -1, hw[0], hw[1]});
  const ShapeInferResult r = InferShapePartial(model.symbol, known);
  const std::vector<std::string> args = model.symbol.ListArguments();
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i] == name && r.arg_shapes[i].ndim_known() && r.arg_shapes[i].ndim() == 4 && r.arg_shapes[i][1] == 1)
      return 1;
  return 3;
}

NDArray LoadImageBatch(const ImageOptions& o, const std::vector<std::string>& files, int64_t channels,
                       const std::string& what) {
  const TShape hw = ImageSize(o, what);
  // Given as R,G,B, or one value for every channel (grey models).
  std::vector<float> mean;
  if (!ParamValue<std::vector<float>>::Parse(o.mean, &mean) || (mean.size() != 1 && mean.size() != 3))
    throw ParamError(StrCat("--mean expects 1 or 3 comma-separated numbers, got '", o.mean, "'"));
  // NaN or infinity would make every input value NaN.
  if (!std::all_of(mean.begin(), mean.end(), [](float m) { return std::isfinite(m); }))
    throw ParamError(StrCat("--mean expects finite numbers, got '", o.mean, "'"));
  if (!std::isfinite(o.scale)) throw ParamError(StrCat("--scale expects a finite number, got ", o.scale));
  if (mean.size() == 1) mean.assign(3, mean[0]);
  if (o.bgr) std::swap(mean[0], mean[2]);
  if (static_cast<int64_t>(files.size()) * hw[0] * hw[1] > kMaxImagePixels)
    throw ParamError(StrCat(what, ": ", files.size(), " images of ", o.size, " exceed the ", kMaxImagePixels,
                            " pixels supported in one batch"));
  const int64_t per_image = channels * hw[0] * hw[1];
  NDArray batch(TShape({static_cast<int64_t>(files.size()), channels, hw[0], hw[1]}));
  for (size_t i = 0; i < files.size(); ++i) {
    Image resized = ResizeBilinear(LoadImage(files[i], static_cast<int>(channels)), static_cast<int>(hw[1]),
                                   static_cast<int>(hw[0]));
    const NDArray one = ImageToTensor(resized, mean.data(), o.scale, o.bgr, static_cast<int>(channels));
    std::copy(one.fdata(), one.fdata() + per_image, batch.fdata() + static_cast<int64_t>(i) * per_image);
  }
  return batch;
}

std::vector<std::string> ImageFilesIn(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string ext = it->path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    static const std::set<std::string> kImage = {".jpg", ".jpeg", ".png", ".bmp", ".pgm", ".ppm", ".tga", ".gif"};
    if (kImage.count(ext) && it->is_regular_file(ec)) files.push_back(it->path().string());
  }
  if (ec) throw Error(StrCat("cannot list ", dir, ": ", ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace symbind_tool
