// Gender and age from InsightFace's gender-age export: 112x112 aligned crops in, 202 values
// out (`fc1`): two gender scores (female, male), then 100 pairs, one per year of age, whose
// second value exceeds the first when the person is older than that year; the age is the
// number of such pairs.
//
//   FaceAttributes attributes(LoadModelSpec("gamodel-r50/model,0"));
//   FaceAttributeValues v = attributes.Predict(aligner.Align(image, face));
//   printf("%s, %d\n", v.male ? "male" : "female", v.age);
#pragma once
#include <symbind/vision/face_batch.h>

#include <vector>

namespace symbind {
namespace vision {

struct FaceAttributeValues {
  bool male = false;
  double gender_scores[2] = {0, 0};  // the model's (female, male) values
  int age = 0;
};

// Reads one crop's 202 output values. Throws symbind::Error for another size.
FaceAttributeValues DecodeGenderAge(const float* values, size_t size);

class FaceAttributes {
 public:
  explicit FaceAttributes(Model model, const FaceInputOptions& options = {});
  // One result per crop, in order; crops are batched.
  std::vector<FaceAttributeValues> Predict(const std::vector<Image>& crops);
  FaceAttributeValues Predict(const Image& crop);
  size_t num_predictors() const { return net_.num_predictors(); }

 private:
  FaceBatchNetwork net_;
};

}  // namespace vision
}  // namespace symbind
