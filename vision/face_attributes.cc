#include <symbind/vision/face_attributes.h>

namespace symbind {
namespace vision {

constexpr size_t kGenderAgeValues = 2 + 2 * 100;

FaceAttributeValues DecodeGenderAge(const float* values, size_t size) {
  SYMBIND_CHECK(size == kGenderAgeValues, "face attributes: the model gives ", size,
                " values per face; InsightFace's gender-age models give ", kGenderAgeValues,
                " (2 gender scores, 100 age pairs)");
  FaceAttributeValues v;
  v.gender_scores[0] = values[0];
  v.gender_scores[1] = values[1];
  v.male = values[1] > values[0];
  for (size_t i = 0; i < 100; ++i) v.age += values[2 + 2 * i + 1] > values[2 + 2 * i] ? 1 : 0;
  return v;
}

FaceAttributes::FaceAttributes(Model model, const FaceInputOptions& options)
    : net_(std::move(model), "face attributes", options) {}

std::vector<FaceAttributeValues> FaceAttributes::Predict(const std::vector<Image>& crops) {
  std::vector<const Image*> pointers;
  for (const Image& c : crops) pointers.push_back(&c);
  std::vector<FaceAttributeValues> out(crops.size());
  net_.Run(pointers, false, [&](size_t face, bool, const float* row, size_t size) {
    out[face] = DecodeGenderAge(row, size);
  });
  return out;
}

FaceAttributeValues FaceAttributes::Predict(const Image& crop) {
  return Predict(std::vector<Image>{crop}).at(0);
}

}  // namespace vision
}  // namespace symbind
