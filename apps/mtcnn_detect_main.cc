// mtcnn-detect: MTCNN face detection with the MXNet models (det1..det3, optional det4).
//   mtcnn-detect MODEL_DIR IMAGE [--min-size 20] [--thresholds 0.6,0.7,0.8] [--factor 0.709]
//                [--out annotated.png] [--repeat N]
// Prints one line per face
//   face x1 y1 x2 y2 score px1 py1 ... px5 py5
// then "<n> faces in <ms> ms": the detection itself (pyramid, the stages, and binding executors
// for input shapes not seen before), not the model loading or image decoding; with --repeat,
// the fastest of N runs (later runs reuse every executor).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <symbind/vision/mtcnn.h>

using namespace symbind;
using namespace symbind::vision;

namespace {
std::array<double, 3> ParseThresholds(const std::string& text) {
  std::array<double, 3> t{};
  std::istringstream in(text);
  std::string item;
  int n = 0;
  while (std::getline(in, item, ',')) {
    if (n == 3) throw CLI::ValidationError("--thresholds", "needs exactly three values");
    try {
      size_t used = 0;
      t[n] = std::stod(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw CLI::ValidationError("--thresholds", "not a number: '" + item + "'");
    }
    if (!(t[n] >= 0 && t[n] <= 1))
      throw CLI::ValidationError("--thresholds", "values must lie in [0, 1]");
    ++n;
  }
  if (n != 3) throw CLI::ValidationError("--thresholds", "needs exactly three values");
  return t;
}
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"MTCNN face detection with symbind (MXNet det1..det3 models)"};
  std::string model_dir, image_path, out_path, thresholds = "0.6,0.7,0.8";
  MtcnnOptions opt;
  app.add_option("MODEL_DIR", model_dir, "Directory with det1..det3 (-symbol.json, -0001.params)")
      ->required();
  app.add_option("IMAGE", image_path, "Image file: JPEG or PNG (the formats symbind decodes)")->required();
  app.add_option("--min-size", opt.min_size, "Smallest face to find, in pixels")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 1e6));
  app.add_option("--thresholds", thresholds, "Score thresholds of the three stages")
      ->capture_default_str();
  app.add_option("--factor", opt.factor, "Pyramid scale factor")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 0.99));
  app.add_option("--out", out_path, "Write the image with boxes and landmarks to this PNG");
  int repeat = 1;
  app.add_option("--repeat", repeat, "Run the detection this many times and report the fastest")
      ->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  try {
    opt.thresholds = ParseThresholds(thresholds);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }

  try {
    MtcnnDetector detector(model_dir);
    Image image = LoadImage(image_path, 3);
    std::vector<Face> faces;
    double ms = 0;
    for (int run = 0; run < repeat; ++run) {
      auto start = std::chrono::steady_clock::now();
      faces = detector.Detect(image, opt);
      double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count();
      ms = run == 0 ? t : std::min(ms, t);
    }
    for (const auto& f : faces) {
      std::printf("face %.2f %.2f %.2f %.2f %.2f", f.x1, f.y1, f.x2, f.y2, f.score);
      for (int k = 0; k < 5; ++k) std::printf(" %.2f %.2f", f.px[k], f.py[k]);
      std::printf("\n");
    }
    std::printf("%zu faces in %.1f ms\n", faces.size(), ms);
    if (!out_path.empty()) {
      DrawFaces(&image, faces);
      SavePNG(out_path, image);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtcnn-detect: %s\n", e.what());
    return 1;
  }
  return 0;
}
