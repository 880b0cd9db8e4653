// MTCNN face detection (Zhang et al. 2016) on the MXNet release of its three networks: the
// classic cascade as in the public MXNet port (pangyupo/mxnet_mtcnn_face_detection), written
// anew on symbind.
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
#include <symbind/core/ndarray.h>
#include <symbind/core/symbol.h>
#include <symbind/predict/predictor.h>
#include <symbind/io/image.h>

#include <array>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace symbind {
namespace mtcnn {

struct Options {
  double min_size = 20;
  std::array<double, 3> thresholds{{0.6, 0.7, 0.8}};
  double factor = 0.709;
  bool refine_landmarks = true;  // use det4 when the model directory holds it
};

struct Face {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0, score = 0;
  std::array<double, 5> px{}, py{};  // landmarks: left eye, right eye, nose, mouth left, right
};

// A candidate box with its score and the regression predicted for it.
struct Box {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0, score = 0;
  std::array<double, 4> reg{};
};

// Non-maximum suppression as in the MTCNN code: repeatedly keeps the highest-scoring box
// (among equal scores, the later one) and drops every other whose overlap with it exceeds
// `threshold`; overlap is intersection over union, or over the smaller area when `min_mode`.
// Areas use inclusive coordinates ((x2 - x1 + 1) * (y2 - y1 + 1)). Returns the kept indices,
// best first.
std::vector<size_t> Nms(const std::vector<Box>& boxes, double threshold, bool min_mode);

// Pyramid scales for an image whose shorter side is `min_side`.
std::vector<double> PyramidScales(int min_side, double min_size, double factor);

// One network with its parameters loaded once, and executors bound per input shape that all
// share the parameter arrays.
class Net {
 public:
  Net() = default;
  // Loads "<prefix>-symbol.json" and "<prefix>-0001.params". Executors place intermediate
  // buffers in `workspace` (shared by the detector's nets, which run one at a time).
  Net(const std::string& prefix, std::shared_ptr<Workspace> workspace);
  bool loaded() const { return loaded_; }
  // Runs the net on `data` (any batch / spatial size); returns the outputs by name
  // ("prob1_output", ...) and in order. Binds a new executor only for a new input shape.
  const std::vector<NDArray>& Forward(const NDArray& data);
  NDArray Output(const std::string& name) const;
  // Output names of the last forward (empty before the first).
  const std::vector<std::string>& output_names() const;
  size_t num_executors() const { return cache_.size(); }

 private:
  bool loaded_ = false;
  Symbol symbol_;
  std::map<std::string, NDArray> args_, aux_;
  std::shared_ptr<Workspace> workspace_;
  std::map<std::vector<int64_t>, Predictor> cache_;
  Predictor* last_ = nullptr;
};

class Detector {
 public:
  // Loads det1..det3 (and det4 when present) from `model_dir`. Throws symbind::Error
  // (IOError for missing or malformed files).
  explicit Detector(const std::string& model_dir);
  // Detects faces in an RGB(A) image (channels >= 3). Faces in the order of the last NMS.
  std::vector<Face> Detect(const Image& image, const Options& options = {});
  bool has_landmark_net() const { return lnet_.loaded(); }
  // Executors bound so far, per net (P, R, O, L).
  std::array<size_t, 4> num_executors() const {
    return {pnet_.num_executors(), rnet_.num_executors(), onet_.num_executors(),
            lnet_.num_executors()};
  }

 private:
  // One set of intermediate buffers for all four nets: they run one after another.
  std::shared_ptr<Workspace> workspace_ = std::make_shared<Workspace>();
  Net pnet_, rnet_, onet_, lnet_;
};

// Draws the faces (boxes, landmarks, scores) onto `image`.
void DrawFaces(Image* image, const std::vector<Face>& faces);

}  // namespace mtcnn
}  // namespace symbind
