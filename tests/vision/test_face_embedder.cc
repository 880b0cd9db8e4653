// Face embeddings and attributes (vision/face_embedder.h, vision/face_attributes.h) on small
// synthetic MXNet graphs shaped as InsightFace's exports (112x112 input, `fc1`), against naive
// arithmetic in the test.
#include <symbind/vision/face_attributes.h>
#include <symbind/vision/face_embedder.h>

#include <cmath>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::vision;

namespace {
constexpr int kSize = 112;
constexpr int64_t kPixels = 3 * kSize * kSize;

// data -> fc1 (FullyConnected, `hidden` outputs, weights from `weight`) -> `post` (x 2), the
// model's only head, so that fc1 is an internal output.
Model LinearFaceModel(int hidden, const std::function<float(int64_t, int64_t)>& weight, const std::vector<float>& bias) {
  Symbol data = Symbol::Variable("data");
  Symbol fc1 = OpBuilder("FullyConnected").SetParam("num_hidden", hidden).SetInput("data", data).CreateSymbol("fc1");
  Symbol post = OpBuilder("_mul_scalar").SetParam("scalar", 2).SetInput("data", fc1).CreateSymbol("post");
  Model m;
  m.symbol = post;
  NDArray w(TShape({hidden, kPixels}));
  for (int64_t o = 0; o < hidden; ++o)
    for (int64_t i = 0; i < kPixels; ++i) w.fdata()[o * kPixels + i] = weight(o, i);
  m.args["fc1_weight"] = w;
  m.args["fc1_bias"] = NDArray(TShape({hidden}), bias);
  return m;
}

Image Crop(int seed, int size = kSize) {
  Image im(size, size, 3);
  for (size_t i = 0; i < im.pixels.size(); ++i) im.pixels[i] = static_cast<uint8_t>((i * 31 + seed * 97) % 251);
  return im;
}

// fc1 of `im` as the model computes it: CHW, RGB, no normalisation, flipped when asked.
std::vector<double> NaiveFc1(const Image& im, int hidden, const std::function<float(int64_t, int64_t)>& weight,
                             const std::vector<float>& bias, bool flip) {
  std::vector<double> out(hidden);
  for (int o = 0; o < hidden; ++o) {
    double acc = bias[o];
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < kSize; ++y)
        for (int x = 0; x < kSize; ++x)
          acc += double(weight(o, (int64_t(c) * kSize + y) * kSize + x)) * im.at(flip ? kSize - 1 - x : x, y)[c];
    out[o] = acc;
  }
  return out;
}

std::vector<double> Normalised(std::vector<double> v) {
  double n = 0;
  for (double x : v) n += x * x;
  for (double& x : v) x /= std::sqrt(n);
  return v;
}

float Weight(int64_t o, int64_t i) { return static_cast<float>(std::sin(0.37 * i + 1.3 * o) * 1e-3); }
}  // namespace

TEST_CASE("FaceEmbedder reads fc1, normalises, batches and averages flips", "[vision][embed]") {
  const int hidden = 6;
  const std::vector<float> bias = {0.1f, -0.2f, 0.3f, 0.0f, 0.05f, -0.1f};
  FaceEmbedderOptions options;
  options.input.max_batch = 4;
  FaceEmbedder embedder(LinearFaceModel(hidden, Weight, bias), options);
  CHECK(embedder.output_name() == "fc1_output");  // not the head `post`
  std::vector<Image> crops;
  for (int i = 0; i < 6; ++i) crops.push_back(Crop(i));
  const std::vector<std::vector<float>> e = embedder.Embed(crops);
  REQUIRE(e.size() == 6);
  for (int i = 0; i < 6; ++i) {
    const std::vector<double> want = Normalised(NaiveFc1(crops[i], hidden, Weight, bias, false));
    REQUIRE(e[i].size() == size_t(hidden));
    for (int k = 0; k < hidden; ++k) CHECK(e[i][k] == Approx(want[k]).margin(1e-4));  // float sums of 37632 terms
  }
  CHECK(embedder.num_predictors() == 2);  // batches of 4 and of 2
  CHECK(embedder.Embed(crops).size() == 6);
  CHECK(embedder.num_predictors() == 2);  // reused
  CHECK(CosineSimilarity(e[0], e[0]) == Approx(1));

  options.flip = true;
  FaceEmbedder flipping(LinearFaceModel(hidden, Weight, bias), options);
  const std::vector<float> f = flipping.Embed(crops[1]);
  std::vector<double> sum = NaiveFc1(crops[1], hidden, Weight, bias, false);
  const std::vector<double> mirrored = NaiveFc1(crops[1], hidden, Weight, bias, true);
  for (int k = 0; k < hidden; ++k) sum[k] += mirrored[k];
  sum = Normalised(sum);
  for (int k = 0; k < hidden; ++k) CHECK(f[k] == Approx(sum[k]).margin(1e-4));

  // Crops of another size are resized; bad crops are refused.
  CHECK(embedder.Embed(Crop(3, 50)).size() == size_t(hidden));
  CHECK(embedder.Embed(Image(1, 1, 1)).size() == size_t(hidden));
  CHECK_THROWS_AS(embedder.Embed(Image()), Error);
  CHECK(embedder.Embed(std::vector<Image>{}).empty());
}

TEST_CASE("FaceEmbedder uses the last output when the model has no fc1", "[vision][embed]") {
  Symbol data = Symbol::Variable("data");
  Symbol pre = OpBuilder("FullyConnected").SetParam("num_hidden", 3).SetInput("data", data).CreateSymbol("pre_fc");
  Symbol emb = OpBuilder("_mul_scalar").SetParam("scalar", 2).SetInput("data", pre).CreateSymbol("embedding");
  Model m;
  m.symbol = emb;
  m.args["pre_fc_weight"] = NDArray(TShape({3, kPixels}));
  m.args["pre_fc_bias"] = NDArray(TShape({3}), {3.0f, 0.0f, 4.0f});
  FaceEmbedder embedder(m);
  CHECK(embedder.output_name() == "embedding_output");
  const std::vector<float> e = embedder.Embed(Crop(0));
  CHECK(e == std::vector<float>{0.6f, 0.0f, 0.8f});
  CHECK(CosineSimilarity(e, {0.0f, 1.0f, 0.0f}) == Approx(0).margin(1e-7));
  CHECK_THROWS_AS(CosineSimilarity(e, {1.0f}), Error);
}

TEST_CASE("FaceAttributes reads InsightFace's 202 gender-age values", "[vision][attributes]") {
  // Zero weights: the biases are the outputs. Male (0.2 < 0.8), 37 pairs "older".
  std::vector<float> bias = {0.2f, 0.8f};
  for (int i = 0; i < 100; ++i) {
    bias.push_back(i < 37 ? 0.1f : 0.9f);
    bias.push_back(i < 37 ? 0.9f : 0.1f);
  }
  FaceAttributes attributes(LinearFaceModel(202, [](int64_t, int64_t) { return 0.0f; }, bias));
  std::vector<Image> crops = {Crop(0), Crop(1), Crop(2)};
  const std::vector<FaceAttributeValues> v = attributes.Predict(crops);
  REQUIRE(v.size() == 3);
  for (const FaceAttributeValues& a : v) {
    CHECK(a.male);
    CHECK(a.age == 37);
    CHECK(a.gender_scores[1] == Approx(0.8));  // fc1 is read, not the head (which doubles it)
  }
  CHECK(v[0].gender_scores[0] == Approx(0.2));

  float values[202] = {0.9f, 0.1f};  // female, all pairs equal: age 0
  const FaceAttributeValues female = DecodeGenderAge(values, 202);
  CHECK_FALSE(female.male);
  CHECK(female.age == 0);
  CHECK_THROWS_WITH(DecodeGenderAge(values, 10), Catch::Contains("202"));
  FaceAttributes wrong(LinearFaceModel(10, [](int64_t, int64_t) { return 0.0f; }, std::vector<float>(10, 0.0f)));
  CHECK_THROWS_WITH(wrong.Predict(Crop(0)), Catch::Contains("202"));
}
