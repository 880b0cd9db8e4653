// symbind-faces: face detection (RetinaFace or MTCNN), alignment, embeddings and attributes
// with MXNet models, printing JSON lines (docs/faces.md).
//   symbind-faces detect IMAGE... --detector PREFIX,EPOCH [--draw out.png]
//   symbind-faces embed IMAGE... --detector ... --embedder PREFIX,EPOCH
//   symbind-faces compare A B --detector ... --embedder ...
//   symbind-faces search GALLERY_DIR IMAGE --detector ... --embedder ...   (an unreadable
//     gallery image gets an "error" field in its line and exit status 1; the others are ranked)
//   symbind-faces attributes IMAGE --detector ... --genderage PREFIX,EPOCH
// Models are named as LoadModelSpec reads them (vision/network.h). --bench prints the time of
// each stage (fastest of 10 runs after a warm-up) to stderr.
#include <CLI/CLI.hpp>
#include <symbind/executor/executor.h>
#include <symbind/vision/face_aligner.h>
#include <symbind/vision/face_attributes.h>
#include <symbind/vision/face_embedder.h>
#include <symbind/vision/mtcnn.h>
#include <symbind/vision/retinaface.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace symbind;
using namespace symbind::vision;
using nlohmann::json;

namespace {

struct Settings {
  std::string detector, mtcnn_dir, embedder, genderage;
  std::vector<std::string> anchors;  // STRIDE=S1,S2,...
  std::string ratios = "1";
  double base_size = 16, bbox_std = 1, landmark_std = 1;
  bool bgr = false, flip = false, bench = false;
  std::string mean = "0,0,0";
  float scale = 1.0f;
  double threshold = 0.5, nms = 0.4, same_threshold = kSameFaceThreshold;
  int max_side = 640;
  std::string draw;
};

std::vector<double> ParseNumbers(const std::string& text, const std::string& what) {
  std::vector<double> out;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      out.push_back(std::stod(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw CLI::ValidationError(what, "not a number: '" + item + "'");
    }
  }
  if (out.empty()) throw CLI::ValidationError(what, "needs at least one number");
  return out;
}

double Ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Fastest time per stage over the --bench runs.
struct StageTimes {
  std::vector<std::pair<std::string, double>> stages;
  void Add(const std::string& stage, double ms) {
    for (auto& s : stages)
      if (s.first == stage) {
        s.second = std::min(s.second, ms);
        return;
      }
    stages.emplace_back(stage, ms);
  }
  void Print() const {
    for (const auto& s : stages) std::fprintf(stderr, "bench %-22s %8.2f ms\n", s.first.c_str(), s.second);
  }
};

class Pipeline {
 public:
  explicit Pipeline(const Settings& s) : s_(s) {}

  std::vector<Face> Detect(const Image& image) {
    if (!s_.mtcnn_dir.empty()) {
      if (!mtcnn_) mtcnn_ = std::make_unique<MtcnnDetector>(s_.mtcnn_dir);
      const auto start = std::chrono::steady_clock::now();
      std::vector<Face> faces = mtcnn_->Detect(image);
      times.Add("detect (mtcnn)", Ms(start));
      return faces;
    }
    if (s_.detector.empty())
      throw Error("give a detector: --detector PREFIX,EPOCH (RetinaFace) or --mtcnn MODEL_DIR");
    if (!retina_) retina_ = std::make_unique<RetinaFaceDetector>(LoadModelSpec(s_.detector), RetinaOptions());
    std::vector<Face> faces = retina_->Detect(image);
    const RetinaFaceTimes& t = retina_->last_times();
    times.Add("detect: preprocess", t.preprocess);
    times.Add("detect: forward", t.forward);
    times.Add("detect: decode + nms", t.decode);
    return faces;
  }

  // The aligned crop of the best face, or false when the image has none.
  bool BestFaceCrop(const Image& image, Face* face, Image* crop) {
    std::vector<Face> faces = Detect(image);
    if (faces.empty()) return false;
    *face = *std::max_element(faces.begin(), faces.end(),
                              [](const Face& a, const Face& b) { return a.score < b.score; });
    *crop = Align(image, *face);
    return true;
  }

  Image Align(const Image& image, const Face& face) {
    if (!face.has_landmarks)
      throw Error("the detector gives no landmarks, which alignment needs: use a RetinaFace export with "
                  "face_rpn_landmark_pred_stride* heads, or --mtcnn MODEL_DIR");
    const auto start = std::chrono::steady_clock::now();
    Image crop = aligner_.Align(image, face);
    times.Add("align", Ms(start));
    return crop;
  }

  std::vector<float> Embed(const Image& crop) {
    if (s_.embedder.empty()) throw Error("give a recognition model: --embedder PREFIX,EPOCH");
    if (!embedder_) {
      FaceEmbedderOptions o;
      o.flip = s_.flip;
      embedder_ = std::make_unique<FaceEmbedder>(LoadModelSpec(s_.embedder), o);
    }
    const auto start = std::chrono::steady_clock::now();
    std::vector<float> e = embedder_->Embed(crop);
    times.Add("embed", Ms(start));
    return e;
  }

  FaceAttributeValues Attributes(const Image& crop) {
    if (s_.genderage.empty()) throw Error("give a gender-age model: --genderage PREFIX,EPOCH");
    if (!attributes_) attributes_ = std::make_unique<FaceAttributes>(LoadModelSpec(s_.genderage));
    const auto start = std::chrono::steady_clock::now();
    FaceAttributeValues v = attributes_->Predict(crop);
    times.Add("attributes", Ms(start));
    return v;
  }

  StageTimes times;

 private:
  RetinaFaceOptions RetinaOptions() const {
    RetinaFaceOptions o;
    if (!s_.anchors.empty()) {
      o.anchor_scales.clear();
      for (const std::string& spec : s_.anchors) {
        const size_t eq = spec.find('=');
        if (eq == std::string::npos) throw CLI::ValidationError("--anchors", "expected STRIDE=S1,S2,...: '" + spec + "'");
        const std::string stride = spec.substr(0, eq);
        const bool digits = !stride.empty() && stride.size() <= 4 &&
                            std::all_of(stride.begin(), stride.end(), [](unsigned char c) { return std::isdigit(c); });
        const int stride_value = digits ? std::stoi(stride) : 0;
        if (stride_value == 0)
          throw CLI::ValidationError("--anchors", "the stride must be a positive whole number: '" + spec + "'");
        if (!o.anchor_scales.emplace(stride_value, ParseNumbers(spec.substr(eq + 1), "--anchors")).second)
          throw CLI::ValidationError("--anchors", "stride " + stride + " is given twice");
      }
    }
    o.anchor_ratios = ParseNumbers(s_.ratios, "--ratios");
    o.anchor_base_size = s_.base_size;
    o.bbox_std = s_.bbox_std;
    o.landmark_std = s_.landmark_std;
    o.bgr = s_.bgr;
    const std::vector<double> mean = ParseNumbers(s_.mean, "--mean");
    if (mean.size() != 1 && mean.size() != 3)
      throw CLI::ValidationError("--mean", "give one value or three (one per channel), got " +
                                 std::to_string(mean.size()));
    for (int c = 0; c < 3; ++c) o.mean[c] = static_cast<float>(mean.size() == 3 ? mean[c] : mean[0]);
    o.scale = s_.scale;
    o.threshold = s_.threshold;
    o.nms_iou = s_.nms;
    o.max_side = s_.max_side;
    return o;
  }

  Settings s_;
  std::unique_ptr<RetinaFaceDetector> retina_;
  std::unique_ptr<MtcnnDetector> mtcnn_;
  FaceAligner aligner_;
  std::unique_ptr<FaceEmbedder> embedder_;
  std::unique_ptr<FaceAttributes> attributes_;
};

json FaceJson(const Face& f) {
  json j = {{"box", {f.x1, f.y1, f.x2, f.y2}}, {"score", f.score}};
  if (f.has_landmarks) {
    json marks = json::array();
    for (int k = 0; k < 5; ++k) marks.push_back({f.px[k], f.py[k]});
    j["landmarks"] = marks;
  }
  return j;
}

void PrintLine(const json& j) { std::cout << j.dump() << "\n" << std::flush; }

// Runs `body` once, then 10 more times with --bench, printing the fastest time of each stage.
void Repeat(Pipeline& p, const Settings& s, const std::function<void()>& body) {
  body();
  if (!s.bench) return;
  p.times = StageTimes();
  for (int i = 0; i < 10; ++i) body();
  p.times.Print();
}

void AddModelOptions(CLI::App* sub, Settings& s) {
  sub->add_option("--detector", s.detector, "RetinaFace model: PREFIX,EPOCH, SYMBOL.json,PARAMS or MODEL.symbind");
  sub->add_option("--mtcnn", s.mtcnn_dir, "use MTCNN instead: directory with det1..det3");
  sub->add_option("--anchors", s.anchors,
                  "RetinaFace anchor scales of one stride, STRIDE=S1,S2,... (repeatable; default InsightFace's "
                  "32=32,16 16=8,4 8=2,1)");
  sub->add_option("--ratios", s.ratios, "RetinaFace anchor ratios (height / width), R1,R2,...")->capture_default_str();
  sub->add_option("--base-size", s.base_size, "RetinaFace anchor base window side before scaling")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub->add_option("--bbox-std", s.bbox_std, "RetinaFace box deltas are multiplied by this")->capture_default_str();
  sub->add_option("--landmark-std", s.landmark_std, "RetinaFace landmark deltas are multiplied by this")
      ->capture_default_str();
  sub->add_flag("--bgr", s.bgr, "feed the detector BGR (InsightFace's exports read RGB)");
  sub->add_option("--mean", s.mean, "detector input mean, per channel of the input or one value")->capture_default_str();
  sub->add_option("--scale", s.scale, "detector input scale, applied after the mean")->capture_default_str();
  sub->add_option("--threshold", s.threshold, "detection score threshold")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--nms", s.nms, "NMS IoU threshold")->capture_default_str()->check(CLI::Range(0.0, 1.0));
  sub->add_option("--max-side", s.max_side, "scale images down to this longer side (0: never)")
      ->capture_default_str()
      ->check(CLI::Range(0, 16384));
  sub->add_flag("--bench", s.bench, "print the time of each stage (fastest of 10 runs) to stderr");
}

// `verdict`: the subcommand compares embeddings and says whether they are the same person.
void AddRecognitionOptions(CLI::App* sub, Settings& s, bool verdict = false) {
  sub->add_option("--embedder", s.embedder, "recognition model (InsightFace-style: 112x112 in, fc1 out)");
  sub->add_flag("--flip", s.flip, "average each embedding with its mirror image's");
  if (verdict)
    sub->add_option("--same-threshold", s.same_threshold, "cosine at or above which the faces are the same person")
        ->capture_default_str();
}

std::vector<std::string> GalleryImages(const std::string& dir) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) throw IOError("gallery '" + dir + "' is not a directory");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string ext = e.path().extension().string();
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (e.is_regular_file() && (ext == ".jpg" || ext == ".jpeg" || ext == ".png")) files.push_back(e.path().string());
  }
  if (files.empty()) throw IOError("gallery '" + dir + "' holds no .jpg, .jpeg or .png file");
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Face detection, alignment, embeddings and attributes with MXNet models (symbind)"};
  app.require_subcommand(1);
  Settings s;
  std::vector<std::string> images;
  std::string gallery;

  CLI::App* detect = app.add_subcommand("detect", "print the faces of each image as a JSON line");
  detect->add_option("IMAGE", images, "JPEG or PNG files")->required();
  detect->add_option("--draw", s.draw, "write the (one) image with its faces drawn to this PNG");
  AddModelOptions(detect, s);

  CLI::App* embed = app.add_subcommand("embed", "print the embedding of the best face of each image");
  embed->add_option("IMAGE", images, "JPEG or PNG files")->required();
  AddModelOptions(embed, s);
  AddRecognitionOptions(embed, s);

  CLI::App* compare = app.add_subcommand("compare", "cosine similarity of the best faces of two images");
  compare->add_option("IMAGES", images, "two JPEG or PNG files")->required()->expected(2);
  AddModelOptions(compare, s);
  AddRecognitionOptions(compare, s, true);

  CLI::App* search = app.add_subcommand("search", "rank a directory of images by similarity to IMAGE's face");
  search->add_option("GALLERY_DIR", gallery, "directory of JPEG / PNG images, one person each")->required();
  search->add_option("IMAGE", images, "the query image")->required()->expected(1);
  AddModelOptions(search, s);
  AddRecognitionOptions(search, s, true);

  CLI::App* attributes = app.add_subcommand("attributes", "gender and age of each face of IMAGE");
  attributes->add_option("IMAGE", images, "a JPEG or PNG file")->required()->expected(1);
  attributes->add_option("--genderage", s.genderage, "InsightFace gender-age model (202 outputs)");
  AddModelOptions(attributes, s);

  CLI11_PARSE(app, argc, argv);

  try {
    if (!s.detector.empty() && !s.mtcnn_dir.empty())
      throw CLI::ValidationError("--mtcnn", "give one detector: --detector or --mtcnn, not both");
    Pipeline p(s);
    int status = 0;
    if (detect->parsed()) {
      if (!s.draw.empty() && images.size() != 1) throw CLI::ValidationError("--draw", "takes exactly one IMAGE");
      if (!s.draw.empty() && !EndsWith(s.draw, ".png"))
        throw CLI::ValidationError("--draw", "writes a PNG file: give a name ending in .png, not '" + s.draw + "'");
      for (const std::string& path : images) {
        Image image = LoadImage(path, 3);
        std::vector<Face> faces;
        Repeat(p, s, [&] { faces = p.Detect(image); });
        json line = {{"image", path}, {"width", image.width}, {"height", image.height}, {"faces", json::array()}};
        for (const Face& f : faces) line["faces"].push_back(FaceJson(f));
        PrintLine(line);
        if (!s.draw.empty()) {
          DrawFaces(&image, faces);
          SavePNG(s.draw, image);
        }
      }
    } else if (embed->parsed()) {
      for (const std::string& path : images) {
        const Image image = LoadImage(path, 3);
        json line = {{"image", path}};
        Repeat(p, s, [&] {
          Face face;
          Image crop;
          if (!p.BestFaceCrop(image, &face, &crop)) {
            line["face"] = nullptr;
            return;
          }
          line["face"] = FaceJson(face);
          line["embedding"] = p.Embed(crop);
        });
        if (line["face"].is_null()) status = 1;
        PrintLine(line);
      }
    } else if (compare->parsed() || search->parsed()) {
      auto embedding = [&](const std::string& path, std::vector<float>* e) {
        const Image image = LoadImage(path, 3);
        Face face;
        Image crop;
        if (!p.BestFaceCrop(image, &face, &crop)) return false;
        *e = p.Embed(crop);
        return true;
      };
      const std::vector<std::string> others =
          compare->parsed() ? std::vector<std::string>{images[1]} : GalleryImages(gallery);
      std::vector<json> lines;
      Repeat(p, s, [&] {
        lines.clear();
        std::vector<float> query;
        if (!embedding(images[0], &query)) throw Error("no face found in " + images[0]);
        for (const std::string& other : others) {
          std::vector<float> e;
          json line = {{"image", images[0]}, {"other", other}};
          bool found = false;
          if (compare->parsed()) {
            found = embedding(other, &e);
            if (!found) throw Error("no face found in " + other);
          } else {
            // One unreadable gallery file does not stop the search: its line says why.
            try {
              found = embedding(other, &e);
            } catch (const IOError& error) {
              line["error"] = error.what();
              status = 1;
            }
          }
          if (!found) {
            line["cosine"] = nullptr;
          } else {
            const double c = CosineSimilarity(query, e);
            line["cosine"] = c;
            line["same"] = c >= s.same_threshold;
            line["threshold"] = s.same_threshold;
          }
          lines.push_back(line);
        }
      });
      std::stable_sort(lines.begin(), lines.end(), [](const json& a, const json& b) {
        const double ca = a["cosine"].is_null() ? -2.0 : a["cosine"].get<double>();
        const double cb = b["cosine"].is_null() ? -2.0 : b["cosine"].get<double>();
        return ca > cb;
      });
      for (const json& line : lines) PrintLine(line);
    } else if (attributes->parsed()) {
      const Image image = LoadImage(images[0], 3);
      json line = {{"image", images[0]}, {"faces", json::array()}};
      Repeat(p, s, [&] {
        line["faces"] = json::array();
        for (const Face& f : p.Detect(image)) {
          const FaceAttributeValues v = p.Attributes(p.Align(image, f));
          json j = FaceJson(f);
          j["male"] = v.male;
          j["age"] = v.age;
          j["gender_scores"] = {v.gender_scores[0], v.gender_scores[1]};
          line["faces"].push_back(j);
        }
      });
      PrintLine(line);
    }
    return status;
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "symbind-faces: %s\n", symbind::OutOfMemoryMessage("symbind-faces").c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "symbind-faces: %s\n", e.what());
    return 1;
  }
}
