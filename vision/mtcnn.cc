#include <symbind/vision/mtcnn.h>

#include <symbind/io/checkpoint.h>
#include <symbind/io/model_file.h>
#include <symbind/vision/nms.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>

namespace symbind {
namespace vision {
namespace {

constexpr double kMean = 127.5;
constexpr double kScale = 0.0078125;
constexpr int kCell = 12;   // P-Net's receptive field
constexpr int kStride = 2;  // P-Net's output stride

// Rounds half to even, like numpy.round (the default floating-point rounding mode).
double Round(double v) { return std::nearbyint(v); }

// Writes a float BGR HWC patch of `w` x `h`, normalised, as CHW into `dst` (3*h*w floats).
void NormaliseToCHW(const float* hwc, int w, int h, float* dst) {
  const size_t plane = static_cast<size_t>(w) * h;
  for (size_t i = 0; i < plane; ++i)
    for (int c = 0; c < 3; ++c)
      dst[c * plane + i] = static_cast<float>((hwc[i * 3 + c] - kMean) * kScale);
}

// The networks read BGR; images decode as RGB(A). Pixels are converted where they are read,
// so no float copy of the whole image is kept (9 MB for 1000x750).
void CheckRGB(const Image& im) {
  SYMBIND_CHECK(im.channels >= 3 && im.width > 0 && im.height > 0,
                "mtcnn: need an RGB(A) image, got ", im.width, "x", im.height, "x", im.channels);
}

// Rows [row_begin, row_end) of `image` resized to w x h, as float BGR HWC (values 0..255).
std::vector<float> ResizedBGR(const Image& image, int w, int h, int row_begin, int row_end) {
  std::vector<float> resized(static_cast<size_t>(w) * (row_end - row_begin) * image.channels);
  ResizeBilinearRows(image.pixels.data(), image.width, image.height, image.channels, resized.data(), w, h, row_begin,
                     row_end);
  const size_t n = static_cast<size_t>(w) * (row_end - row_begin);
  for (size_t i = 0; i < n; ++i) {  // in place: pixel i moves to i*3 <= i*channels
    const float r = resized[i * image.channels], g = resized[i * image.channels + 1],
                b = resized[i * image.channels + 2];
    resized[i * 3] = b;
    resized[i * 3 + 1] = g;
    resized[i * 3 + 2] = r;
  }
  resized.resize(n * 3);
  return resized;
}

// Crops the inclusive box [x1, x2] x [y1, y2] (integers) of `img`, zero outside the image,
// and resizes it to size x size into `dst` (float BGR HWC).
void CropResize(const Image& img, int x1, int y1, int x2, int y2, int size, float* dst) {
  const int width = img.width, height = img.height;
  const int w = x2 - x1 + 1, h = y2 - y1 + 1;
  if (w <= 0 || h <= 0) {
    std::fill(dst, dst + static_cast<size_t>(size) * size * 3, 0.0f);
    return;
  }
  std::vector<float> crop(static_cast<size_t>(w) * h * 3, 0.0f);
  const int sx0 = std::max(x1, 0), sx1 = std::min(x2, width - 1);
  const int sy0 = std::max(y1, 0), sy1 = std::min(y2, height - 1);
  for (int y = sy0; y <= sy1 && sx0 <= sx1; ++y)
    for (int x = sx0; x <= sx1; ++x) {
      const uint8_t* p = img.at(x, y);
      float* q = &crop[(static_cast<size_t>(y - y1) * w + (x - x1)) * 3];
      for (int c = 0; c < 3; ++c) q[c] = p[2 - c];
    }
  ResizeBilinear(crop.data(), w, h, 3, dst, size, size);
}

// Boxes made square around their centres (the longer side kept), in place.
void Square(std::vector<MtcnnBox>* boxes) {
  for (MtcnnBox& b : *boxes) {
    double w = b.x2 - b.x1 + 1, h = b.y2 - b.y1 + 1, side = std::max(w, h);
    b.x1 = b.x1 + w * 0.5 - side * 0.5;
    b.y1 = b.y1 + h * 0.5 - side * 0.5;
    b.x2 = b.x1 + side - 1;
    b.y2 = b.y1 + side - 1;
  }
}

void RoundBoxes(std::vector<MtcnnBox>* boxes) {
  for (MtcnnBox& b : *boxes) {
    b.x1 = Round(b.x1);
    b.y1 = Round(b.y1);
    b.x2 = Round(b.x2);
    b.y2 = Round(b.y2);
  }
}

// Applies each box's regression (offsets in units of the box's width / height).
void Regress(std::vector<MtcnnBox>* boxes) {
  for (MtcnnBox& b : *boxes) {
    double w = b.x2 - b.x1 + 1, h = b.y2 - b.y1 + 1;
    b.x1 += b.reg[0] * w;
    b.y1 += b.reg[1] * h;
    b.x2 += b.reg[2] * w;
    b.y2 += b.reg[3] * h;
  }
}

template <typename T>
std::vector<T> Pick(const std::vector<T>& v, const std::vector<size_t>& idx) {
  std::vector<T> out;
  out.reserve(idx.size());
  for (size_t i : idx) out.push_back(v[i]);
  return out;
}

size_t NextPow2(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Runs `net` on `n` inputs of shape (channels, size, size) written by `fill(i, dst)`, batched
// and padded to a power of two so that executors are reused across calls.
template <typename Fill>
const std::vector<NDArray>& RunBatched(Network* net, size_t n, int channels, int size, Fill fill) {
  const size_t batch = NextPow2(n);
  // Written straight into the bound input: no second copy of the crops. The padding rows are
  // zeroed (the input array is shared with the other nets); their outputs are not read.
  NDArray data = net->Input(TShape({static_cast<int64_t>(batch), channels, size, size}));
  const size_t item = static_cast<size_t>(channels) * size * size;
  float* p = data.fdata();
  for (size_t i = 0; i < n; ++i) fill(i, p + i * item);
  std::fill(p + n * item, p + batch * item, 0.0f);
  return net->Forward();
}

// Outputs of a net run over many crops, rows concatenated in crop order, by output name.
struct CropOutputs {
  std::map<std::string, std::vector<float>> rows;
  const float* operator[](const std::string& name) const { return rows.at(name).data(); }
};

// Crop pixels per forward: bounds the executors' memory however many boxes a stage has
// (64 R-Net crops of 24x24 or 16 O-Net crops of 48x48: about 4 MB for the first layer).
constexpr size_t kMaxBatchPixels = 64 * 24 * 24;

// Runs `net` on the boxes' crops of `img`, resized to size x size.
CropOutputs RunOnCrops(Network* net, const std::vector<MtcnnBox>& boxes, const Image& img, int size) {
  CropOutputs out;
  std::vector<float> patch(static_cast<size_t>(size) * size * 3);
  const size_t max_batch = std::max<size_t>(1, kMaxBatchPixels / (static_cast<size_t>(size) * size));
  for (size_t begin = 0; begin < boxes.size(); begin += max_batch) {
    const size_t n = std::min(max_batch, boxes.size() - begin);
    RunBatched(net, n, 3, size, [&](size_t i, float* dst) {
      const MtcnnBox& b = boxes[begin + i];
      CropResize(img, static_cast<int>(b.x1), static_cast<int>(b.y1), static_cast<int>(b.x2),
                 static_cast<int>(b.y2), size, patch.data());
      NormaliseToCHW(patch.data(), size, size, dst);
    });
    for (const std::string& name : net->output_names()) {
      const NDArray o = net->Output(name);
      const size_t row = static_cast<size_t>(o.Size() / o.shape()[0]);
      const float* p = o.fdata();
      out.rows[name].insert(out.rows[name].end(), p, p + n * row);
    }
  }
  return out;
}

// The boxes whose face probability (column 1 of `prob`, (N,2)) exceeds `threshold`, with that
// score and their row of `reg` (N,4); `kept` receives their indices.
std::vector<MtcnnBox> Passed(const std::vector<MtcnnBox>& boxes, const float* prob, const float* reg,
                        double threshold, std::vector<size_t>* kept) {
  std::vector<MtcnnBox> out;
  for (size_t i = 0; i < boxes.size(); ++i) {
    if (!(prob[i * 2 + 1] > threshold)) continue;
    MtcnnBox b = boxes[i];
    b.score = prob[i * 2 + 1];
    for (int k = 0; k < 4; ++k) b.reg[k] = reg[i * 4 + k];
    out.push_back(b);
    kept->push_back(i);
  }
  return out;
}

// The boxes kept by NMS (IoU > 0.7), regressed, squared and rounded for the next stage.
std::vector<MtcnnBox> NextStageBoxes(const std::vector<MtcnnBox>& boxes) {
  std::vector<MtcnnBox> out = Pick(boxes, Nms(boxes, 0.7, false));
  Regress(&out);
  Square(&out);
  RoundBoxes(&out);
  return out;
}

// "<model_dir>/det<n>" at epoch 1, its executors' buffers in `workspace` and their inputs in
// `inputs` (the nets run one after another, each input written just before its forward).
Network LoadNet(const std::string& model_dir, int n, std::shared_ptr<Workspace> workspace,
                std::shared_ptr<Workspace> inputs) {
  Model model = LoadCheckpointFiles(model_dir + "/det" + std::to_string(n), 1);
  NetworkOptions options;
  options.workspace = std::move(workspace);
  options.input_workspace = std::move(inputs);
  return Network(std::move(model), "MTCNN det" + std::to_string(n), options);
}

}  // namespace

std::vector<double> MtcnnPyramidScales(int min_side, double min_size, double factor) {
  SYMBIND_CHECK(min_size > 0 && factor > 0 && factor < 1,
                "mtcnn: need min_size > 0 and 0 < factor < 1, got ", min_size, " and ", factor);
  std::vector<double> scales;
  const double m = kCell / min_size;
  double minl = min_side * m;
  for (int k = 0; minl >= kCell; ++k) {
    scales.push_back(m * std::pow(factor, k));
    minl *= factor;
  }
  return scales;
}

MtcnnDetector::MtcnnDetector(const std::string& model_dir)
    : pnet_(LoadNet(model_dir, 1, workspace_, inputs_)), rnet_(LoadNet(model_dir, 2, workspace_, inputs_)),
      onet_(LoadNet(model_dir, 3, workspace_, inputs_)) {
  if (std::ifstream(CheckpointSymbolPath(model_dir + "/det4")).good())
    lnet_ = LoadNet(model_dir, 4, workspace_, inputs_);
}

std::vector<Face> MtcnnDetector::Detect(const Image& image, const MtcnnOptions& opt) {
  const int width = image.width, height = image.height;
  CheckRGB(image);

  // Stage 1: P-Net over the pyramid.
  std::vector<MtcnnBox> boxes;
  for (double scale : MtcnnPyramidScales(std::min(width, height), opt.min_size, opt.factor)) {
    const int ws = static_cast<int>(std::ceil(width * scale));
    const int hs = static_cast<int>(std::ceil(height * scale));
    // P-Net's output rows: conv1 3x3, max pooling 2x2 stride 2 ("full": a last partial window),
    // conv2 and conv3 3x3. Output row y reads input rows 2y .. 2y+11, so a band of output rows
    // [y0, y0 + n) is the network run on input rows [2 y0, 2 y0 + 2n + 10): an even height,
    // so no partial window, and the same values as within the whole image. The last band runs
    // to the image's bottom, as the whole image does.
    const int64_t out_rows = (hs - 4 + 1) / 2 - 3;
    int64_t band = out_rows;
    if (opt.pnet_band_pixels > 0)
      band = std::max<int64_t>(8, opt.pnet_band_pixels / ws / kStride - (kCell - kStride) / kStride);
    std::vector<MtcnnBox> found;
    for (int64_t y0 = 0; y0 < out_rows; y0 += band) {
      const bool last = out_rows - y0 <= band;
      const int row_begin = static_cast<int>(kStride * y0);
      const int row_end = last ? hs : static_cast<int>(kStride * (y0 + band) + kCell - kStride);
      // Normalised into the band's bound input, the resized copy freed before the forward.
      NDArray input = pnet_.Input(TShape({1, 3, row_end - row_begin, ws}));
      NormaliseToCHW(ResizedBGR(image, ws, hs, row_begin, row_end).data(), ws, row_end - row_begin, input.fdata());
      pnet_.Forward();
      NDArray prob = pnet_.Output("prob1_output"), reg = pnet_.Output("conv4_2_output");
      const int64_t mh = prob.shape()[2], mw = prob.shape()[3], plane = mh * mw;
      SYMBIND_CHECK(mh == (last ? out_rows - y0 : band), "mtcnn: P-Net gave ", mh, " output rows for input rows ",
                    row_begin, "..", row_end, " (is det1 MTCNN's P-Net?)");
      const float* face = prob.fdata() + plane;  // channel 1: face probability
      const float* r = reg.fdata();
      for (int64_t y = 0; y < mh; ++y)
        for (int64_t x = 0; x < mw; ++x) {
          const int64_t i = y * mw + x;
          if (!(face[i] > opt.thresholds[0])) continue;
          MtcnnBox b;
          b.x1 = Round((kStride * x + 1) / scale);
          b.y1 = Round((kStride * (y0 + y) + 1) / scale);
          b.x2 = Round((kStride * x + 1 + kCell) / scale);
          b.y2 = Round((kStride * (y0 + y) + 1 + kCell) / scale);
          b.score = face[i];
          for (int k = 0; k < 4; ++k) b.reg[k] = r[k * plane + i];
          found.push_back(b);
        }
    }
    for (const MtcnnBox& b : Pick(found, Nms(found, 0.5, false))) boxes.push_back(b);
  }
  if (boxes.empty()) return {};
  boxes = NextStageBoxes(boxes);

  // Stage 2: R-Net on 24x24 crops.
  const CropOutputs r = RunOnCrops(&rnet_, boxes, image, 24);
  std::vector<size_t> kept;
  boxes = Passed(boxes, r["prob1_output"], r["conv5_2_output"], opt.thresholds[1], &kept);
  if (boxes.empty()) return {};
  boxes = NextStageBoxes(boxes);

  // Stage 3: O-Net on 48x48 crops, with landmarks.
  std::vector<Face> faces;
  {
    const CropOutputs o = RunOnCrops(&onet_, boxes, image, 48);
    const float* pts = o["conv6_3_output"];
    kept.clear();
    std::vector<MtcnnBox> passed = Passed(boxes, o["prob1_output"], o["conv6_2_output"], opt.thresholds[2], &kept);
    // Landmarks relative to the boxes before regression: x in 0..4, y in 5..9.
    std::vector<Face> marks(passed.size());
    for (size_t j = 0; j < passed.size(); ++j) {
      const MtcnnBox& b = passed[j];
      const float* p = pts + kept[j] * 10;
      const double w = b.x2 - b.x1 + 1, h = b.y2 - b.y1 + 1;
      marks[j].has_landmarks = true;
      for (int k = 0; k < 5; ++k) {
        marks[j].px[k] = b.x1 + w * p[k];
        marks[j].py[k] = b.y1 + h * p[5 + k];
      }
    }
    if (passed.empty()) return {};
    Regress(&passed);
    std::vector<size_t> keep = Nms(passed, 0.7, true);
    for (size_t i : keep) {
      Face f = marks[i];
      const MtcnnBox& b = passed[i];
      f.x1 = b.x1;
      f.y1 = b.y1;
      f.x2 = b.x2;
      f.y2 = b.y2;
      f.score = b.score;
      faces.push_back(f);
    }
  }

  // Stage 4 (optional): landmark refinement with det4.
  if (opt.refine_landmarks && lnet_.loaded() && !faces.empty()) {
    constexpr int kSize = 24;
    std::vector<double> patchw(faces.size());
    for (size_t i = 0; i < faces.size(); ++i) {
      const Face& f = faces[i];
      double side = Round(std::max(f.x2 - f.x1 + 1, f.y2 - f.y1 + 1) * 0.25);
      if (std::fmod(side, 2.0) == 1.0) side += 1;  // even
      patchw[i] = side;
    }
    std::vector<float> patch(kSize * kSize * 3);
    const auto& outputs = RunBatched(&lnet_, faces.size(), 15, kSize, [&](size_t i, float* dst) {
      const Face& f = faces[i];
      const int side = static_cast<int>(patchw[i]);
      for (int k = 0; k < 5; ++k) {
        const int x = static_cast<int>(Round(f.px[k] - 0.5 * side));
        const int y = static_cast<int>(Round(f.py[k] - 0.5 * side));
        CropResize(image, x, y, x + side - 1, y + side - 1, kSize, patch.data());
        NormaliseToCHW(patch.data(), kSize, kSize, dst + k * 3 * kSize * kSize);
      }
    });
    SYMBIND_CHECK(outputs.size() >= 5, "mtcnn: det4 has ", outputs.size(), " outputs, expected 5");
    for (size_t i = 0; i < faces.size(); ++i) {
      Face& f = faces[i];
      for (int k = 0; k < 5; ++k) {
        const float* o = outputs[k].fdata() + i * 2;
        double ox = o[0], oy = o[1];
        if (std::fabs(ox - 0.5) > 0.35 || std::fabs(oy - 0.5) > 0.35) ox = oy = 0.5;  // too far
        f.px[k] = std::trunc(Round(f.px[k] - 0.5 * patchw[i]) + ox * patchw[i]);
        f.py[k] = std::trunc(Round(f.py[k] - 0.5 * patchw[i]) + oy * patchw[i]);
      }
    }
  }
  return faces;
}

}  // namespace vision
}  // namespace symbind
