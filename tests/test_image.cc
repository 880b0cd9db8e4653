// io/image: decoding the shared JPEGs, bilinear resize, PNG round trips, drawing, tensors, and
// hostile files.
#include <symbind/io/image.h>

#include <cmath>
#include <fstream>
#include <random>

#include "test_io_util.h"
#include "shared_dir.h"

using namespace symbind;
using symbind_test::TempPath;

namespace {
const std::string kMtcnn = symbind_test::SharedDir() + "/models/mtcnn/";
// A JPEG every clone has (tests/goldens/images/README.md).
const std::string kGradientJpeg = std::string(SYMBIND_SOURCE_DIR) + "/tests/goldens/images/gradient-96x64.jpg";

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void WriteAll(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The spec written out per pixel, independently of the implementation's tap tables.
std::vector<float> NaiveResize(const std::vector<float>& src, int sw, int sh, int c, int dw,
                               int dh) {
  auto coord = [](int d, int src_size, int dst_size, int* i0, int* i1, float* f) {
    double scale = 1.0 / (static_cast<double>(dst_size) / src_size);
    float s = static_cast<float>((d + 0.5) * scale - 0.5);
    int fl = static_cast<int>(std::floor(s));
    *f = s - fl;
    if (fl < 0) *f = 0, fl = 0;
    if (fl >= src_size - 1) *f = 0, fl = src_size - 1;
    *i0 = fl;
    *i1 = std::min(fl + 1, src_size - 1);
  };
  std::vector<float> out(static_cast<size_t>(dw) * dh * c);
  for (int y = 0; y < dh; ++y)
    for (int x = 0; x < dw; ++x) {
      int x0, x1, y0, y1;
      float fx, fy;
      coord(x, sw, dw, &x0, &x1, &fx);
      coord(y, sh, dh, &y0, &y1, &fy);
      for (int k = 0; k < c; ++k) {
        auto at = [&](int yy, int xx) { return src[(static_cast<size_t>(yy) * sw + xx) * c + k]; };
        float top = (1 - fx) * at(y0, x0) + fx * at(y0, x1);
        float bot = (1 - fx) * at(y1, x0) + fx * at(y1, x1);
        out[(static_cast<size_t>(y) * dw + x) * c + k] = (1 - fy) * top + fy * bot;
      }
    }
  return out;
}

int CountColour(const Image& im, uint8_t r, uint8_t g, uint8_t b) {
  int n = 0;
  for (int y = 0; y < im.height; ++y)
    for (int x = 0; x < im.width; ++x) {
      const uint8_t* p = im.at(x, y);
      if (p[0] == r && p[1] == g && p[2] == b) ++n;
    }
  return n;
}
}  // namespace

TEST_CASE("LoadImage decodes the shared test photographs", "[io][image][shared]") {
  Image a = LoadImage(kMtcnn + "test.jpg");
  CHECK(a.width == 1000);
  CHECK(a.height == 750);
  CHECK(a.channels == 3);
  CHECK(a.pixels.size() == 1000u * 750u * 3u);
  Image b = LoadImage(kMtcnn + "test2.jpg");
  CHECK(b.width == 612);
  CHECK(b.height == 345);
  CHECK(b.channels == 3);

  // Channel conversion: native (0), grey, RGBA with an opaque alpha.
  CHECK(LoadImage(kMtcnn + "test2.jpg", 0).channels == 3);
  Image g = LoadImage(kMtcnn + "test2.jpg", 1);
  CHECK(g.channels == 1);
  CHECK(g.pixels.size() == 612u * 345u);
  Image rgba = LoadImage(kMtcnn + "test2.jpg", 4);
  REQUIRE(rgba.channels == 4);
  for (int i = 0; i < 612 * 345; i += 997) {
    CHECK(rgba.pixels[i * 4 + 3] == 255);
    CHECK(rgba.pixels[i * 4] == b.pixels[i * 3]);
  }
  // The photo is not blank.
  int lo = 255, hi = 0;
  for (uint8_t v : a.pixels) lo = std::min<int>(lo, v), hi = std::max<int>(hi, v);
  CHECK(hi - lo > 200);
  CHECK_THROWS_AS(LoadImage(kMtcnn + "test.jpg", 5), Error);
}

TEST_CASE("ResizeBilinear follows OpenCV INTER_LINEAR geometry", "[io][image]") {
  SECTION("values cv2.resize gives for a float32 4x3 image") {
    std::vector<float> src = {0, 13, 21, 37, 40, 53, 61, 77, 80, 93, 101, 117};
    struct Case {
      int w, h;
      std::vector<float> want;
    };
    std::vector<Case> cases = {
        {7, 5, {0,  4.64286f, 12.0714f, 17, 22.1429f, 31.2857f, 37,
                16, 20.6429f, 28.0714f, 33, 38.1429f, 47.2857f, 53,
                40, 44.6429f, 52.0714f, 57, 62.1429f, 71.2857f, 77,
                64, 68.6429f, 76.0714f, 81, 86.1429f, 95.2857f, 101,
                80, 84.6429f, 92.0714f, 97, 102.143f, 111.286f, 117}},
        {3, 2, {12.1667f, 27, 44.3333f, 72.1667f, 87, 104.333f}},
        {2,
         7,
         {6.5f, 29, 12.2143f, 34.7143f, 29.3571f, 51.8571f, 46.5f, 69, 63.6429f, 86.1429f, 80.7857f,
          103.286f, 86.5f, 109}},
    };
    for (const auto& c : cases) {
      INFO(c.w << "x" << c.h);
      std::vector<float> got = ResizeBilinear(src, 4, 3, 1, c.w, c.h);
      REQUIRE(got.size() == c.want.size());
      for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(c.want[i]).margin(1e-3));
    }
  }
  SECTION("matches a naive per-pixel implementation exactly") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0, 255);
    const int sizes[][2] = {{1, 1}, {5, 3}, {17, 9}, {64, 48}, {13, 31}};
    for (auto& s : sizes)
      for (int c : {1, 3}) {
        std::vector<float> src(static_cast<size_t>(s[0]) * s[1] * c);
        for (float& v : src) v = u(rng);
        for (auto& d : {std::pair<int, int>{1, 1},
                        {2, 3},
                        {7, 5},
                        {s[0] * 3, s[1] * 2},
                        {(s[0] + 1) / 2, (s[1] + 2) / 3},
                        {s[0], s[1]}}) {
          INFO(s[0] << "x" << s[1] << "x" << c << " -> " << d.first << "x" << d.second);
          std::vector<float> got = ResizeBilinear(src, s[0], s[1], c, d.first, d.second);
          std::vector<float> want = NaiveResize(src, s[0], s[1], c, d.first, d.second);
          REQUIRE(got.size() == want.size());
          size_t bad = 0;
          for (size_t i = 0; i < got.size(); ++i) bad += got[i] != want[i];
          CHECK(bad == 0);
        }
      }
  }
  SECTION("same size is the identity; 8-bit rounds and keeps constants") {
    Image im = LoadImage(kGradientJpeg);
    Image same = ResizeBilinear(im, im.width, im.height);
    CHECK(same.pixels == im.pixels);
    Image flat(9, 7, 3);
    std::fill(flat.pixels.begin(), flat.pixels.end(), 200);
    Image small = ResizeBilinear(flat, 4, 3), big = ResizeBilinear(flat, 31, 23);
    for (uint8_t v : small.pixels) CHECK(v == 200);
    for (uint8_t v : big.pixels) CHECK(v == 200);
    Image half = ResizeBilinear(im, 306, 173);
    CHECK(half.width == 306);
    CHECK(half.height == 173);
    CHECK(half.channels == 3);
  }
  SECTION("bad sizes throw") {
    std::vector<float> src(12);
    CHECK_THROWS_AS(ResizeBilinear(src, 4, 3, 1, 0, 3), Error);
    CHECK_THROWS_AS(ResizeBilinear(src, 4, 3, 1, 3, -1), Error);
    CHECK_THROWS_AS(ResizeBilinear(src, 5, 3, 1, 3, 3), Error);  // wrong source size
  }
}

TEST_CASE("ResizeBilinear from 8-bit pixels equals resizing their float values", "[io][image]") {
  std::mt19937 rng(7);
  const int w = 37, h = 23, channels = 4;
  std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * channels);
  for (auto& p : pixels) p = static_cast<uint8_t>(rng() % 256);
  const std::vector<float> as_float(pixels.begin(), pixels.end());
  for (auto [dw, dh] : {std::pair{15, 9}, std::pair{80, 51}}) {
    std::vector<float> from_bytes(static_cast<size_t>(dw) * dh * channels);
    ResizeBilinear(pixels.data(), w, h, channels, from_bytes.data(), dw, dh);
    CHECK(from_bytes == ResizeBilinear(as_float, w, h, channels, dw, dh));
  }
}

TEST_CASE("SavePNG round-trips through LoadImage", "[io][image]") {
  std::mt19937 rng(3);
  for (int c = 1; c <= 4; ++c) {
    INFO("channels " << c);
    Image im(37, 21, c);
    for (uint8_t& v : im.pixels) v = static_cast<uint8_t>(rng());
    std::string path = TempPath("roundtrip" + std::to_string(c) + ".png");
    SavePNG(path, im);
    Image back = LoadImage(path, 0);
    CHECK(back.width == 37);
    CHECK(back.height == 21);
    CHECK(back.channels == c);
    CHECK(back.pixels == im.pixels);
    std::remove(path.c_str());
  }
  Image photo = LoadImage(kGradientJpeg);
  std::string path = TempPath("photo.png");
  SavePNG(path, photo);
  CHECK(LoadImage(path).pixels == photo.pixels);
  std::remove(path.c_str());
  CHECK_THROWS_AS(SavePNG("/nonexistent-dir/x.png", photo), IOError);
}

TEST_CASE("Drawing rectangles, dots and text", "[io][image]") {
  SECTION("rectangle outline with thickness, clipped") {
    Image im(20, 20, 3);
    DrawRect(&im, 2, 3, 11, 14, 0, 255, 0, 2);
    // Outer ring 10x12 minus inner 6x8.
    CHECK(CountColour(im, 0, 255, 0) == 10 * 12 - 6 * 8);
    CHECK(im.at(2, 3)[1] == 255);
    CHECK(im.at(11, 14)[1] == 255);
    CHECK(im.at(3, 4)[1] == 255);
    CHECK(im.at(4, 5)[1] == 0);  // inside
    CHECK(im.at(12, 14)[1] == 0);
    Image clip(10, 10, 3);
    DrawRect(&clip, -5, -5, 4, 4, 255, 0, 0, 1);  // only the right and bottom edges show
    CHECK(CountColour(clip, 255, 0, 0) == 9);
    DrawRect(&clip, -100000, -100000, 2000000000, 2000000000, 1, 2, 3, 3);  // off-image edges
    DrawRect(&clip, 5, 5, 3, 3, 9, 9, 9, 1);                                // swapped corners
    CHECK(CountColour(clip, 9, 9, 9) == 8);
  }
  SECTION("dots and grey images") {
    Image im(15, 15, 3);
    DrawDot(&im, 7, 7, 2.0f, 255, 0, 0);
    CHECK(CountColour(im, 255, 0, 0) == 13);  // |d|^2 <= 4
    DrawDot(&im, -1, -1, 1.5f, 255, 0, 0);    // partly outside
    CHECK(im.at(0, 0)[0] == 255);
    DrawDot(&im, NAN, 3, 2, 1, 1, 1);  // ignored
    DrawDot(&im, 1e30f, -1e30f, 1e20f, 1, 1, 1);  // far away: nothing, no overflow
    DrawDot(&im, -1e30f, 3, 2, 1, 1, 1);
    CHECK(CountColour(im, 1, 1, 1) == 0);
    Image grey(5, 5, 1);
    DrawDot(&grey, 2, 2, 0.0f, 255, 255, 255);
    CHECK(grey.at(2, 2)[0] == 255);
    CHECK(grey.at(1, 2)[0] == 0);
    Image rgba(5, 5, 4);
    DrawRect(&rgba, 0, 0, 4, 4, 10, 20, 30, 1);
    CHECK(rgba.at(0, 0)[3] == 255);
    CHECK(rgba.at(2, 2)[3] == 0);
  }
  SECTION("text lands where asked and scales") {
    Image im(120, 40, 3);
    DrawText(&im, 10, 5, "Hi 42", 255, 255, 0, 1.0f);
    int n1 = CountColour(im, 255, 255, 0);
    CHECK(n1 > 20);
    int minx = 1000, maxx = -1, miny = 1000, maxy = -1;
    for (int y = 0; y < im.height; ++y)
      for (int x = 0; x < im.width; ++x)
        if (im.at(x, y)[0] == 255) {
          minx = std::min(minx, x), maxx = std::max(maxx, x);
          miny = std::min(miny, y), maxy = std::max(maxy, y);
        }
    CHECK(minx >= 10);
    CHECK(miny >= 5);
    CHECK(maxy < 5 + 12);
    CHECK(maxx < 10 + 5 * 7);
    Image big(120, 40, 3);
    DrawText(&big, 10, 5, "Hi 42", 255, 255, 0, 2.0f);
    CHECK(CountColour(big, 255, 255, 0) == 4 * n1);  // every quad pixel becomes 2x2
    Image edge(8, 8, 3);
    DrawText(&edge, -20, -3, "clipped text", 1, 1, 1, 3.0f);  // must not write outside
    DrawText(&edge, 0, 0, std::string(2000, 'W'), 1, 1, 1, 1.0f);
    DrawText(&edge, 0, 0, "huge", 1, 1, 1, 1e30f);
    DrawText(&edge, 0, 0, std::string("\x01\xff\x80 ~", 5), 1, 1, 1, 1.0f);
  }
}

TEST_CASE("ImageToTensor normalises into (1,3,H,W) in RGB or BGR order", "[io][image]") {
  Image im(3, 2, 3);
  for (int i = 0; i < 6; ++i) {
    im.pixels[i * 3 + 0] = static_cast<uint8_t>(10 * i);       // R
    im.pixels[i * 3 + 1] = static_cast<uint8_t>(100 + i);      // G
    im.pixels[i * 3 + 2] = static_cast<uint8_t>(200 + 5 * i);  // B
  }
  const float mean[3] = {127.5f, 127.5f, 127.5f};
  NDArray rgb = ImageToTensor(im, mean, 0.0078125f, false);
  REQUIRE(rgb.shape() == TShape({1, 3, 2, 3}));
  NDArray bgr = ImageToTensor(im, mean, 0.0078125f, true);
  for (int i = 0; i < 6; ++i) {
    int y = i / 3, x = i % 3;
    CHECK(rgb.At({0, 0, y, x}) == Approx((10 * i - 127.5) * 0.0078125));
    CHECK(rgb.At({0, 2, y, x}) == Approx((200 + 5 * i - 127.5) * 0.0078125));
    CHECK(bgr.At({0, 0, y, x}) == Approx((200 + 5 * i - 127.5) * 0.0078125));
    CHECK(bgr.At({0, 1, y, x}) == Approx((100 + i - 127.5) * 0.0078125));
    CHECK(bgr.At({0, 2, y, x}) == Approx((10 * i - 127.5) * 0.0078125));
  }
  const float means[3] = {1, 2, 3};
  Image grey(2, 2, 1);
  grey.pixels = {5, 6, 7, 8};
  NDArray g = ImageToTensor(grey, means, 1.0f, false);
  CHECK(g.At({0, 0, 1, 1}) == 7);
  CHECK(g.At({0, 2, 1, 1}) == 5);
}

TEST_CASE("LoadImage rejects hostile and truncated files with IOError", "[io][image]") {
  const std::string jpg = ReadAll(kGradientJpeg);
  REQUIRE(jpg.size() > 1000);
  Image ok(16, 16, 3);
  for (size_t i = 0; i < ok.pixels.size(); ++i) ok.pixels[i] = static_cast<uint8_t>(i * 7);
  const std::string png_path = TempPath("ok.png");
  SavePNG(png_path, ok);
  const std::string png = ReadAll(png_path);
  std::remove(png_path.c_str());

  auto expect_io_error = [](const std::string& name, const std::string& bytes) {
    INFO(name);
    std::string path = TempPath("hostile_" + name);
    WriteAll(path, bytes);
    try {
      LoadImage(path);
      FAIL("no exception for " << name);
    } catch (const IOError& e) {
      std::string msg = e.what();
      CHECK(msg.find(path) != std::string::npos);  // names the file
    }
    std::remove(path.c_str());
  };
  CHECK_THROWS_AS(LoadImage(TempPath("does_not_exist.jpg")), IOError);
  expect_io_error("empty", "");
  expect_io_error("text", "this is not an image, just text\n");
  expect_io_error("jpeg_half", jpg.substr(0, jpg.size() / 2));
  expect_io_error("jpeg_no_eoi", jpg.substr(0, jpg.size() - 2));
  expect_io_error("jpeg_header_only", jpg.substr(0, 300));
  expect_io_error("jpeg_soi_only", jpg.substr(0, 2));
  expect_io_error("png_truncated", png.substr(0, png.size() / 2));
  expect_io_error("png_signature_only", png.substr(0, 8));
  {
    // IHDR claiming 100000 x 100000 pixels (refused before any allocation).
    std::string huge = png.substr(0, 16);
    const unsigned char dims[8] = {0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0};
    huge += std::string(reinterpret_cast<const char*>(dims), 8);
    huge += png.substr(24);
    expect_io_error("png_huge", huge);
  }
  {
    // BMP header with absurd dimensions and nothing behind it.
    std::string bmp = "BM";
    bmp += std::string(12, '\0');
    const unsigned char info[] = {40,   0,    0,    0,    0xff, 0xff, 0xff, 0x7f,
                                  0xff, 0xff, 0xff, 0x7f, 1,    0,    24,   0};
    bmp += std::string(reinterpret_cast<const char*>(info), sizeof(info));
    bmp += std::string(24, '\0');
    expect_io_error("bmp_huge", bmp);
  }
  // Corrupted bytes inside a complete file: an error or some image, never a crash.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 40; ++trial) {
    std::string bad = trial % 2 ? jpg : png;
    for (int k = 0; k < 8; ++k) bad[20 + rng() % (bad.size() - 22)] = static_cast<char>(rng());
    try {
      Image im = LoadImageFromMemory(bad.data(), bad.size(), 3, "fuzzed");
      CHECK(im.pixels.size() == static_cast<size_t>(im.width) * im.height * 3);
    } catch (const IOError&) {
    }
  }
}
