#include <symbind/vision/retinaface.h>

#include <symbind/vision/nms.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <regex>

namespace symbind {
namespace vision {
namespace {

double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Checks that `head` is (N, channels_per_anchor * A, height, width) for batch item `item`.
void CheckHead(const NDArray& head, const char* what, int stride, int64_t channels, int64_t height,
               int64_t width, int64_t item) {
  const TShape& s = head.shape();
  SYMBIND_CHECK(s.ndim() == 4 && s[1] == channels && s[2] == height && s[3] == width && item < s[0],
                "RetinaFace: head face_rpn_", what, "_stride", stride, " has shape ", s,
                ", expected (>", item, ", ", channels, ", ", height, ", ", width, ")");
}

bool PositiveFinite(double v) { return std::isfinite(v) && v > 0; }

// The settings decoding reads: anchors, deltas' multipliers, threshold and NMS IoU.
void CheckDecodeOptions(const RetinaFaceOptions& o) {
  for (const auto& kv : o.anchor_scales) {
    SYMBIND_CHECK(kv.first > 0, "RetinaFace: anchor stride ", kv.first, " is not positive");
    SYMBIND_CHECK(!kv.second.empty(), "RetinaFace: stride ", kv.first, " has no anchor scales");
    for (double scale : kv.second)
      SYMBIND_CHECK(PositiveFinite(scale), "RetinaFace: anchor scale ", scale, " of stride ", kv.first,
                    " is not a positive number");
  }
  SYMBIND_CHECK(!o.anchor_ratios.empty(), "RetinaFace: need at least one anchor ratio");
  for (double ratio : o.anchor_ratios)
    SYMBIND_CHECK(PositiveFinite(ratio), "RetinaFace: anchor ratio ", ratio, " is not a positive number");
  SYMBIND_CHECK(PositiveFinite(o.anchor_base_size), "RetinaFace: anchor base size ", o.anchor_base_size,
                " is not a positive number");
  SYMBIND_CHECK(std::isfinite(o.bbox_std) && std::isfinite(o.landmark_std), "RetinaFace: bbox_std ", o.bbox_std,
                " and landmark_std ", o.landmark_std, " must be finite");
  SYMBIND_CHECK(o.threshold >= 0 && o.threshold <= 1, "RetinaFace: threshold ", o.threshold, " is not in 0..1");
  SYMBIND_CHECK(o.nms_iou >= 0 && o.nms_iou <= 1, "RetinaFace: nms_iou ", o.nms_iou, " is not in 0..1");
}

// Values per anchor a head has: one of `allowed` (InsightFace's decoder takes boxes of 4 or 5
// values, the fifth unused here, and landmarks of 10 or 15: x, y and a third value per point).
int64_t PerAnchor(const NDArray& head, const char* what, int stride, int64_t anchors, int64_t height, int64_t width,
                  int64_t item, std::initializer_list<int64_t> allowed) {
  const TShape& s = head.shape();
  for (int64_t k : allowed)
    if (s.ndim() == 4 && s[1] == k * anchors) {
      CheckHead(head, what, stride, k * anchors, height, width, item);
      return k;
    }
  throw Error(StrCat("RetinaFace: head face_rpn_", what, "_stride", stride, " has shape ", s, ", expected (>", item,
                     ", ", *allowed.begin(), " x ", anchors, " anchors, ", height, ", ", width, ")"));
}

// RetinaFaceAnchors for options CheckDecodeOptions has passed.
std::vector<std::array<double, 4>> BaseAnchors(int stride, const RetinaFaceOptions& options) {
  auto it = options.anchor_scales.find(stride);
  SYMBIND_CHECK(it != options.anchor_scales.end(), "RetinaFace: no anchor scales for stride ", stride,
                " (RetinaFaceOptions::anchor_scales[", stride, "]; symbind-faces --anchors ", stride, "=S1,S2,...)");
  const double base = options.anchor_base_size;
  const double centre = (base - 1) * 0.5;  // of the window (0, 0, base-1, base-1)
  std::vector<std::array<double, 4>> anchors;
  for (double ratio : options.anchor_ratios) {
    const double w = std::nearbyint(std::sqrt(base * base / ratio));  // NumPy's round: half to even
    const double h = std::nearbyint(w * ratio);
    for (double scale : it->second) {
      const double ws = w * scale, hs = h * scale;
      anchors.push_back({centre - 0.5 * (ws - 1), centre - 0.5 * (hs - 1), centre + 0.5 * (ws - 1),
                         centre + 0.5 * (hs - 1)});
    }
  }
  return anchors;
}
}  // namespace

std::vector<std::array<double, 4>> RetinaFaceAnchors(int stride, const RetinaFaceOptions& options) {
  CheckDecodeOptions(options);
  return BaseAnchors(stride, options);
}

std::vector<Face> DecodeRetinaFace(const std::vector<RetinaFaceHeads>& heads, const RetinaFaceOptions& options,
                                   int input_width, int input_height, double image_scale, int64_t item) {
  SYMBIND_CHECK(image_scale > 0, "RetinaFace: image scale must be positive, got ", image_scale);
  CheckDecodeOptions(options);
  std::vector<Face> candidates;
  for (const RetinaFaceHeads& head : heads) {
    const std::vector<std::array<double, 4>> anchors = BaseAnchors(head.stride, options);
    const int64_t a_count = static_cast<int64_t>(anchors.size());
    const TShape& s = head.scores.shape();
    SYMBIND_CHECK(s.ndim() == 4, "RetinaFace: head face_rpn_cls_prob_reshape_stride", head.stride, " has shape ", s,
                  ", expected (N, 2A, H, W)");
    const int64_t height = s[2], width = s[3], plane = height * width;
    SYMBIND_CHECK(s[1] == 2 * a_count, "RetinaFace: head face_rpn_cls_prob_reshape_stride", head.stride, " has ",
                  s[1], " channels, but stride ", head.stride, " has ", a_count,
                  " anchors (scales x ratios): expected ", 2 * a_count);
    CheckHead(head.scores, "cls_prob_reshape", head.stride, 2 * a_count, height, width, item);
    const int64_t box_len = PerAnchor(head.boxes, "bbox_pred", head.stride, a_count, height, width, item, {4, 5});
    const bool marks = !head.landmarks.is_none();
    const int64_t mark_len =
        marks ? PerAnchor(head.landmarks, "landmark_pred", head.stride, a_count, height, width, item, {10, 15}) : 0;
    const int64_t point_len = mark_len / 5;  // x, y (, a third value) per point
    const float* score = head.scores.fdata() + (item * 2 * a_count + a_count) * plane;  // the face channels
    const float* delta = head.boxes.fdata() + item * box_len * a_count * plane;
    const float* mark = marks ? head.landmarks.fdata() + item * mark_len * a_count * plane : nullptr;
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x)
        for (int64_t a = 0; a < a_count; ++a) {
          const int64_t at = y * width + x;
          const double p = score[a * plane + at];
          if (!(p >= options.threshold)) continue;
          const auto& base = anchors[a];
          const double x1 = base[0] + x * head.stride, y1 = base[1] + y * head.stride;
          const double w = base[2] - base[0] + 1, h = base[3] - base[1] + 1;
          const double cx = x1 + 0.5 * (w - 1), cy = y1 + 0.5 * (h - 1);
          const float* d = delta + a * box_len * plane + at;
          const double dx = d[0] * options.bbox_std, dy = d[plane] * options.bbox_std;
          const double dw = d[2 * plane] * options.bbox_std, dh = d[3 * plane] * options.bbox_std;
          const double pcx = dx * w + cx, pcy = dy * h + cy;
          const double pw = std::exp(dw) * w, ph = std::exp(dh) * h;
          auto clip = [](double v, int size) { return std::max(0.0, std::min(v, size - 1.0)); };
          Face f;
          f.x1 = clip(pcx - 0.5 * (pw - 1), input_width) / image_scale;
          f.y1 = clip(pcy - 0.5 * (ph - 1), input_height) / image_scale;
          f.x2 = clip(pcx + 0.5 * (pw - 1), input_width) / image_scale;
          f.y2 = clip(pcy + 0.5 * (ph - 1), input_height) / image_scale;
          f.score = p;
          if (marks) {
            f.has_landmarks = true;
            const float* m = mark + a * mark_len * plane + at;
            for (int k = 0; k < 5; ++k) {
              f.px[k] = (cx + m[(point_len * k) * plane] * options.landmark_std * w) / image_scale;
              f.py[k] = (cy + m[(point_len * k + 1) * plane] * options.landmark_std * h) / image_scale;
            }
          }
          candidates.push_back(f);
        }
  }
  std::vector<Face> faces;
  for (size_t i : Nms(candidates, options.nms_iou)) faces.push_back(candidates[i]);
  return faces;
}

RetinaFaceDetector::RetinaFaceDetector(Model model, const RetinaFaceOptions& options) : options_(options) {
  const std::vector<std::string> outputs = model.symbol.ListOutputs();
  const std::regex head_name(R"(face_rpn_(cls_prob_reshape|bbox_pred|landmark_pred)_stride(\d+)(_output)?)");
  std::map<int, HeadIndex> found;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(outputs[i], m, head_name)) continue;
    const int stride = std::stoi(m[2].str());
    HeadIndex& h = found.emplace(stride, HeadIndex{stride, -1, -1, -1}).first->second;
    (m[1] == "cls_prob_reshape" ? h.scores : m[1] == "bbox_pred" ? h.boxes : h.landmarks) = static_cast<int>(i);
  }
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    const HeadIndex& h = it->second;
    SYMBIND_CHECK(h.scores >= 0 && h.boxes >= 0, "RetinaFace: stride ", h.stride,
                  " needs both face_rpn_cls_prob_reshape_stride", h.stride, " and face_rpn_bbox_pred_stride", h.stride,
                  " outputs; the model's outputs are: ", JoinNames(outputs));
    SYMBIND_CHECK(options_.anchor_scales.count(h.stride), "RetinaFace: the model has heads at stride ", h.stride,
                  " but no anchor scales are set for it (RetinaFaceOptions::anchor_scales; symbind-faces --anchors ",
                  h.stride, "=S1,S2,...)");
    index_.push_back(h);
  }
  SYMBIND_CHECK(!index_.empty(), "RetinaFace: the model has no face_rpn_cls_prob_reshape_stride* / "
                "face_rpn_bbox_pred_stride* outputs; its outputs are: ", JoinNames(outputs));
  has_landmarks_ = std::all_of(index_.begin(), index_.end(), [](const HeadIndex& h) { return h.landmarks >= 0; });
  net_ = Network(std::move(model), "RetinaFace");
}

std::vector<int> RetinaFaceDetector::strides() const {
  std::vector<int> s;
  for (const HeadIndex& h : index_) s.push_back(h.stride);
  return s;
}

std::vector<Face> RetinaFaceDetector::Detect(const Image& image) {
  const auto start = std::chrono::steady_clock::now();
  SYMBIND_CHECK(image.width > 0 && image.height > 0 && image.channels >= 1 && image.channels <= 4 &&
                    image.pixels.size() == static_cast<size_t>(image.width) * image.height * image.channels,
                "RetinaFace: need a non-empty image of 1..4 channels, got ", image.width, "x", image.height, "x",
                image.channels);
  const RetinaFaceOptions& o = options_;
  CheckDecodeOptions(o);  // before the forward, not after it
  SYMBIND_CHECK(o.size_multiple > 0 && o.size_multiple <= 1024 && o.max_side >= 0,
                "RetinaFace: need size_multiple in 1..1024 and max_side >= 0");
  SYMBIND_CHECK(std::isfinite(o.mean[0]) && std::isfinite(o.mean[1]) && std::isfinite(o.mean[2]) &&
                    std::isfinite(o.scale) && o.scale != 0,
                "RetinaFace: the input mean must be finite and the scale finite and not zero, got mean ", o.mean[0], ",",
                o.mean[1], ",", o.mean[2], " scale ", o.scale);
  const int longer = std::max(image.width, image.height);
  const double scale = o.max_side > 0 && longer > o.max_side ? static_cast<double>(o.max_side) / longer : 1.0;
  const int w = std::max(1, static_cast<int>(std::lround(image.width * scale)));
  const int h = std::max(1, static_cast<int>(std::lround(image.height * scale)));
  const int m = o.size_multiple;
  const int64_t tw = (w + m - 1) / m * m, th = (h + m - 1) / m * m;
  const int c = image.channels;
  const float* pixels = nullptr;
  if (w != image.width || h != image.height) {
    resized_.resize(static_cast<size_t>(w) * h * c);
    ResizeBilinear(image.pixels.data(), image.width, image.height, c, resized_.data(), w, h);
    pixels = resized_.data();
  }
  NDArray input = net_.Input(TShape({1, 3, th, tw}));
  float* dst = input.fdata();
  std::fill(dst, dst + 3 * th * tw, 0.0f);
  for (int t = 0; t < 3; ++t) {  // tensor channel t reads image channel `from`
    const int rgb = o.bgr ? 2 - t : t;
    const int from = c >= 3 ? rgb : 0;
    const float mean = o.mean[t], mul = o.scale;
    for (int y = 0; y < h; ++y) {
      float* row = dst + (t * th + y) * tw;
      if (pixels) {
        const float* src = pixels + static_cast<size_t>(y) * w * c + from;
        for (int x = 0; x < w; ++x) row[x] = (src[x * c] - mean) * mul;
      } else {
        const uint8_t* src = image.pixels.data() + static_cast<size_t>(y) * w * c + from;
        for (int x = 0; x < w; ++x) row[x] = (src[x * c] - mean) * mul;
      }
    }
  }
  times_.preprocess = MsSince(start);

  const auto forward = std::chrono::steady_clock::now();
  const std::vector<NDArray>& outputs = net_.Forward();
  times_.forward = MsSince(forward);

  const auto decode = std::chrono::steady_clock::now();
  heads_.clear();
  for (const HeadIndex& i : index_)
    heads_.push_back({i.stride, outputs[i.scores], outputs[i.boxes], i.landmarks >= 0 ? outputs[i.landmarks] : NDArray()});
  std::vector<Face> faces = DecodeRetinaFace(heads_, o, w, h, scale);
  times_.decode = MsSince(decode);
  return faces;
}

}  // namespace vision
}  // namespace symbind
