// RetinaFace face detection (Deng et al. 2019) on any RetinaFace MXNet export: InsightFace's
// releases (MobileNet-0.25, ResNet-50) and the reimplementations that keep their head names.
//
//   RetinaFaceOptions options;            // InsightFace's anchors: strides 32, 16, 8
//   options.bgr = true;                    // this export reads BGR (InsightFace's read RGB)
//   RetinaFaceDetector detector(LoadModelSpec("../shared/models/retinaface/retina16,0"), options);
//   std::vector<Face> faces = detector.Detect(LoadImage("photo.jpg"));
//
// The network's heads are found by name, for each stride s the export has:
//   face_rpn_cls_prob_reshape_stride<s>  (N, 2A, H/s, W/s): the last A channels are the face
//                                        probabilities of the A anchors at each position;
//   face_rpn_bbox_pred_stride<s>         (N, 4A, H/s, W/s): dx, dy, dw, dh per anchor (or 5A:
//                                        a fifth value per anchor, unused);
//   face_rpn_landmark_pred_stride<s>     (N, 10A, H/s, W/s), optional: x, y of 5 points per anchor
//                                        (or 15A: x, y and a third value, unused, per point).
// Anchors are py-faster-rcnn's: the base window (0, 0, B-1, B-1) (B = anchor_base_size)
// reshaped per ratio (w = round(sqrt(B*B / ratio)), h = round(w * ratio)), then scaled by
// each of the stride's anchor scales around its centre, ratio-major; anchor k at grid
// position (x, y) is that window shifted by (x * s, y * s). Scores, boxes and landmarks are
// read position-major, anchor-minor, as InsightFace's decoding transposes them.
// With an anchor of width w, height h and centre (cx, cy) (w = x2 - x1 + 1, cx = x1 + (w-1)/2):
//   box centre = (cx + dx * w, cy + dy * h), size = (w * exp(dw), h * exp(dh)) (py-faster-rcnn's
//   bbox_transform_inv), corners centre -+ (size - 1) / 2, clipped to the image;
//   landmark i = (cx + lx_i * w, cy + ly_i * h).
// (Deltas are multiplied by bbox_std / landmark_std first, 1 for InsightFace's exports.)
// Candidates with score >= threshold from every stride are scaled back to the image and
// reduced by NMS (IoU > nms_iou suppresses).
//
// Input: the image is scaled down (aspect kept) to fit max_side, its pixels written as
// (value - mean[c]) * scale in RGB or BGR order, and the tensor padded with zeros on the right
// and bottom to multiples of size_multiple. One predictor per input size, reused.
#pragma once
#include <symbind/vision/face.h>
#include <symbind/vision/network.h>

#include <array>
#include <map>
#include <string>
#include <vector>

namespace symbind {
namespace vision {

struct RetinaFaceOptions {
  // Anchor scales per stride (InsightFace's defaults; retina16 uses {16: {8, 4}}). The number
  // of scales times ratios must be the heads' anchor count A.
  std::map<int, std::vector<double>> anchor_scales{{32, {32, 16}}, {16, {8, 4}}, {8, {2, 1}}};
  std::vector<double> anchor_ratios{1.0};
  double anchor_base_size = 16;
  double threshold = 0.5;  // a candidate needs score >= threshold
  double nms_iou = 0.4;
  double bbox_std = 1.0, landmark_std = 1.0;
  // Longer side of the network input; larger images are scaled down to it (0: never).
  int max_side = 640;
  int size_multiple = 32;  // the input's height and width are padded to multiples of it
  bool bgr = false;        // channel order of the input tensor
  std::array<float, 3> mean{{0, 0, 0}};  // in the tensor's channel order
  float scale = 1.0f;
};

// One stride's heads, as the network outputs them (batch item `item` is decoded).
struct RetinaFaceHeads {
  int stride = 0;
  NDArray scores, boxes, landmarks;  // landmarks may be empty
};

// The A base anchors of `stride` (x1, y1, x2, y2), ratio-major, as described above.
std::vector<std::array<double, 4>> RetinaFaceAnchors(int stride, const RetinaFaceOptions& options);

// Decodes the heads of one image: candidates of every stride, boxes clipped to
// input_width x input_height (the image's part of the input), scaled by 1 / image_scale to
// image pixels, then NMS. Faces best first. Throws symbind::Error naming the head whose
// shape does not fit.
std::vector<Face> DecodeRetinaFace(const std::vector<RetinaFaceHeads>& heads, const RetinaFaceOptions& options,
                                   int input_width, int input_height, double image_scale, int64_t item = 0);

// Times of the last Detect, in milliseconds.
struct RetinaFaceTimes {
  double preprocess = 0, forward = 0, decode = 0;
};

class RetinaFaceDetector {
 public:
  // Throws symbind::Error when the model has no RetinaFace heads, naming its outputs.
  explicit RetinaFaceDetector(Model model, const RetinaFaceOptions& options = {});
  // Faces in an image of 1..4 channels (grey is replicated, alpha ignored), best first.
  std::vector<Face> Detect(const Image& image);
  // The strides found in the model, largest first.
  std::vector<int> strides() const;
  bool has_landmarks() const { return has_landmarks_; }
  const RetinaFaceOptions& options() const { return options_; }
  RetinaFaceOptions& options() { return options_; }
  const RetinaFaceTimes& last_times() const { return times_; }
  // The heads of the last Detect (views of the network's outputs) and its input geometry.
  const std::vector<RetinaFaceHeads>& last_heads() const { return heads_; }
  size_t num_predictors() const { return net_.num_predictors(); }

 private:
  struct HeadIndex {
    int stride;
    int scores, boxes, landmarks;  // output indices; landmarks -1 when absent
  };
  RetinaFaceOptions options_;
  Network net_;
  std::vector<HeadIndex> index_;
  bool has_landmarks_ = false;
  std::vector<RetinaFaceHeads> heads_;
  std::vector<float> resized_;  // reused between calls
  RetinaFaceTimes times_;
};

}  // namespace vision
}  // namespace symbind
