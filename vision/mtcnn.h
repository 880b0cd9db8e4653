// MTCNN face detection (Zhang et al. 2016) on the MXNet release of its three networks: the
// classic cascade as in the public MXNet port (pangyupo/mxnet_mtcnn_face_detection), written
// anew on symbind.
//
//   MtcnnDetector detector("../shared/models/mtcnn");   // det1..det3 (-symbol.json, -0001.params)
//   std::vector<Face> faces = detector.Detect(LoadImage("test.jpg"));
//
//   1. P-Net (det1) over an image pyramid: scales 12/min_size * factor^k while
//      min(h, w) * scale >= 12; the image is resized to (ceil(w*s), ceil(h*s)); every cell of
//      the face-probability map above thresholds[0] gives a box (stride 2, cell 12:
//      x1 = round((2x+1)/s), x2 = round((2x+1+12)/s), rounding half to even) with its
//      regression; NMS 0.5 (IoU, "Union") within a scale, 0.7 across scales; boxes are then
//      regressed, made square and rounded.
//   2. R-Net (det2) on 24x24 crops (zero outside the image), batched: score > thresholds[1],
//      NMS 0.7 Union, regression, square, round.
//   3. O-Net (det3) on 48x48 crops, batched: score > thresholds[2], five landmarks relative to
//      the (unregressed) box, regression, NMS 0.7 by "Min" overlap (intersection over the
//      smaller area).
//   4. If MODEL_DIR holds det4 (the landmark refinement net, input (N,15,24,24)), it refines
//      the landmarks as the port does (patches of a quarter of the box side around each point,
//      moves of more than 0.35 of the patch are ignored, results truncated to integers).
//      Untested: det4 is not among the shared models.
//
// Preprocessing: BGR, CHW, (x - 127.5) * 0.0078125, the float bilinear resize of io/image.h
// (OpenCV INTER_LINEAR geometry), the image untransposed (the MXNet weights are arranged for
// that). Box maths in double, as NumPy's float64 in the port. Boxes are inclusive pixel
// coordinates (width = x2 - x1 + 1).
//
// Differences from the port: crops at every stage are float (the port resizes R-Net crops as
// uint8 through OpenCV's fixed-point path); its pad() clips the candidate boxes to the image in
// place as a side effect (NumPy views) before they are regressed, which is not reproduced here
// (the original MATLAB code does not do it either); boxes lying entirely outside the image get
// an all-zero crop instead of a NumPy error; NMS sorts scores stably.
#pragma once
#include <symbind/vision/face.h>
#include <symbind/vision/network.h>
#include <symbind/io/image.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace symbind {
namespace vision {

struct MtcnnOptions {
  double min_size = 20;
  std::array<double, 3> thresholds{{0.6, 0.7, 0.8}};
  double factor = 0.709;
  bool refine_landmarks = true;  // use det4 when the model directory holds it
  // P-Net runs on bands of about this many input pixels (rows overlapping by 10), so that its
  // activations for a large scale need not all exist at once; the faces are the same as from
  // the whole image (0: whole images).
  int64_t pnet_band_pixels = 128 * 640;
};

// A candidate box with its score and the regression predicted for it.
struct MtcnnBox {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0, score = 0;
  std::array<double, 4> reg{};
};

// Pyramid scales for an image whose shorter side is `min_side`.
std::vector<double> MtcnnPyramidScales(int min_side, double min_size, double factor);

class MtcnnDetector {
 public:
  // Loads det1..det3 (and det4 when present) from `model_dir`. Throws symbind::Error
  // (IOError for missing or malformed files).
  explicit MtcnnDetector(const std::string& model_dir);
  // Detects faces in an RGB(A) image (channels >= 3). Faces in the order of the last NMS, all
  // with landmarks.
  std::vector<Face> Detect(const Image& image, const MtcnnOptions& options = {});
  bool has_landmark_net() const { return lnet_.loaded(); }
  // Predictors bound so far, per net (P, R, O, L).
  std::array<size_t, 4> num_executors() const {
    return {pnet_.num_predictors(), rnet_.num_predictors(), onet_.num_predictors(),
            lnet_.num_predictors()};
  }

 private:
  // One set of intermediate buffers and one of inputs for all four nets at every pyramid
  // scale: they run one after another.
  std::shared_ptr<Workspace> workspace_ = std::make_shared<Workspace>();
  std::shared_ptr<Workspace> inputs_ = std::make_shared<Workspace>();
  Network pnet_, rnet_, onet_, lnet_;
};

}  // namespace vision
}  // namespace symbind
