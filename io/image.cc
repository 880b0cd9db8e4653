#include <symbind/io/image.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>

// Debian's libstb.so holds the stb_image and stb_image_write implementations; stb_easy_font
// is header-only (all static functions), so it needs no implementation macro either.
#include <symbind/io/ndarray_file.h>
#include <symbind/io/regular_file.h>

#include <stb_image.h>
#include <stb_image_write.h>
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

namespace symbind {
namespace {

std::string FailureReason() {
  const char* r = stbi_failure_reason();
  return r ? r : "unknown error";
}

// True unless `p` is a JPEG whose marker structure ends before an end-of-image marker. The
// walk follows marker segments (length-prefixed), and inside entropy-coded scans skips
// stuffed bytes (FF 00), restart markers (FF D0..D7) and fill bytes (FF FF).
bool JpegComplete(const uint8_t* p, size_t n) {
  if (n < 4 || p[0] != 0xFF || p[1] != 0xD8) return true;  // not a JPEG: stb_image decides
  size_t i = 2;
  for (;;) {
    if (i >= n || p[i] != 0xFF) return false;
    while (i < n && p[i] == 0xFF) ++i;
    if (i >= n) return false;
    uint8_t m = p[i++];
    if (m == 0xD9) return true;
    if (m == 0x01 || (m >= 0xD0 && m <= 0xD7)) continue;  // markers without a length
    if (i + 2 > n) return false;
    size_t len = (static_cast<size_t>(p[i]) << 8) | p[i + 1];
    if (len < 2) return false;
    i += len;
    if (m != 0xDA) continue;
    // Entropy-coded data up to the next real marker.
    for (;;) {
      if (i + 1 >= n) return false;
      if (p[i] != 0xFF) {
        ++i;
        continue;
      }
      uint8_t q = p[i + 1];
      if (q == 0x00 || (q >= 0xD0 && q <= 0xD7)) {
        i += 2;
      } else if (q == 0xFF) {
        ++i;
      } else {
        break;  // a marker starts at i
      }
    }
  }
}

// Positive and at most kMaxImagePixels: checked before any buffer of that size exists.
void CheckSize(int width, int height, const char* what) {
  SYMBIND_CHECK(width > 0 && height > 0, what, ": image size must be positive, got ", width, "x",
                height);
  SYMBIND_CHECK(static_cast<int64_t>(width) * height <= kMaxImagePixels, what, ": image size ",
                width, "x", height, " exceeds ", kMaxImagePixels, " pixels");
}

// True unless `p` is a PNG whose chunk list ends before its IEND chunk (stb_image decodes some
// truncated PNGs without complaint). Chunks: uint32 big-endian length, type, data, CRC.
bool PngComplete(const uint8_t* p, size_t n) {
  size_t i = 8;  // after the signature
  while (i + 8 <= n) {
    const uint64_t len = (uint64_t{p[i]} << 24) | (uint64_t{p[i + 1]} << 16) | (uint64_t{p[i + 2]} << 8) | p[i + 3];
    if (std::memcmp(p + i + 4, "IEND", 4) == 0) return true;
    if (len > n) return false;
    i += 12 + static_cast<size_t>(len);
  }
  return false;
}

bool IsJpeg(const uint8_t* p, size_t n) { return n >= 3 && p[0] == 0xFF && p[1] == 0xD8 && p[2] == 0xFF; }
bool IsPng(const uint8_t* p, size_t n) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  return n >= 8 && std::memcmp(p, kSignature, 8) == 0;
}

uint32_t BigEndian(const uint8_t* p, int bytes) {
  uint32_t v = 0;
  for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
  return v;
}

// The width and height a PNG's IHDR or a JPEG's frame header (SOFn) states, read by hand for
// the error message when stb_image refuses the file (it reports "unknown image type" for an
// image it deems too large). False when the header is not there.
bool HeaderSize(const uint8_t* p, size_t n, int64_t* width, int64_t* height) {
  if (IsPng(p, n)) {
    if (n < 24 || std::memcmp(p + 12, "IHDR", 4) != 0) return false;
    *width = BigEndian(p + 16, 4);
    *height = BigEndian(p + 20, 4);
    return true;
  }
  if (!IsJpeg(p, n)) return false;
  size_t i = 2;
  while (i + 4 <= n && p[i] == 0xFF) {
    const uint8_t m = p[i + 1];
    const size_t len = BigEndian(p + i + 2, 2);
    const bool frame = m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
    if (frame) {
      if (i + 9 > n) return false;
      *height = BigEndian(p + i + 5, 2);
      *width = BigEndian(p + i + 7, 2);
      return true;
    }
    if (m == 0xDA || len < 2) return false;  // a scan before any frame header
    i += 2 + len;
  }
  return false;
}

// Colour as stored in an image with `channels` channels.
void PixelValue(int channels, uint8_t r, uint8_t g, uint8_t b, uint8_t out[4]) {
  if (channels <= 2) {
    out[0] = static_cast<uint8_t>(std::lround(0.299 * r + 0.587 * g + 0.114 * b));
    out[1] = 255;
  } else {
    out[0] = r;
    out[1] = g;
    out[2] = b;
    out[3] = 255;
  }
}

// Fills the pixels [x0, x1) x [y0, y1), clipped.
void FillRect(Image* im, int x0, int y0, int x1, int y1, const uint8_t value[4]) {
  x0 = std::max(x0, 0);
  y0 = std::max(y0, 0);
  x1 = std::min(x1, im->width);
  y1 = std::min(y1, im->height);
  for (int y = y0; y < y1; ++y)
    for (int x = x0; x < x1; ++x) std::memcpy(im->at(x, y), value, im->channels);
}

void CheckDrawable(const Image* image, const char* what) {
  SYMBIND_CHECK(image != nullptr, what, ": null image");
  SYMBIND_CHECK(image->channels >= 1 && image->channels <= 4 &&
                    image->pixels.size() ==
                        static_cast<size_t>(image->width) * image->height * image->channels,
                what, ": inconsistent image (", image->width, "x", image->height, "x",
                image->channels, ", ", image->pixels.size(), " bytes)");
}

}  // namespace

Image::Image(int w, int h, int c) : width(w), height(h), channels(c) {
  CheckSize(w, h, "Image");
  SYMBIND_CHECK(c >= 1 && c <= 4, "Image: channels must be 1..4, got ", c);
  pixels.assign(static_cast<size_t>(w) * h * c, 0);
}

ImageSize ReadImageSize(const void* data, size_t size, const std::string& what) {
  if (size == 0) throw IOError(StrCat("LoadImage ", what, ": empty file"));
  if (size > static_cast<size_t>(INT_MAX))
    throw IOError(StrCat("LoadImage ", what, ": file of ", size, " bytes is too large"));
  const auto* bytes = static_cast<const stbi_uc*>(data);
  const int len = static_cast<int>(size);
  // Only the documented formats: stb_image also takes TGA, PSD, PNM... whose few-byte headers
  // decode as large blank images.
  if (!IsJpeg(bytes, size) && !IsPng(bytes, size))
    throw IOError(StrCat("LoadImage ", what, ": not a JPEG or PNG file (the only image formats "
                         "supported)"));
  const auto size_error = [&](int64_t w, int64_t h) {
    return IOError(StrCat("LoadImage ", what, ": image size ", w, "x", h, " outside 1..", kMaxImagePixels, " pixels"));
  };
  const IOError truncated_jpeg(StrCat("LoadImage ", what, ": truncated JPEG (no end-of-image marker)"));
  ImageSize is;
  if (!stbi_info_from_memory(bytes, len, &is.width, &is.height, &is.channels)) {
    int64_t header_w = 0, header_h = 0;
    if (HeaderSize(bytes, size, &header_w, &header_h) &&
        (header_w <= 0 || header_h <= 0 || header_w > kMaxImagePixels || header_h > kMaxImagePixels ||
         header_w * header_h > kMaxImagePixels))
      throw size_error(header_w, header_h);
    if (!JpegComplete(bytes, size)) throw truncated_jpeg;
    throw IOError(StrCat("LoadImage ", what, ": ", FailureReason()));
  }
  if (is.width <= 0 || is.height <= 0 || static_cast<int64_t>(is.width) * is.height > kMaxImagePixels)
    throw size_error(is.width, is.height);
  if (!JpegComplete(bytes, size)) throw truncated_jpeg;
  if (IsPng(bytes, size) && !PngComplete(bytes, size))
    throw IOError(StrCat("LoadImage ", what, ": truncated PNG (no IEND chunk)"));
  return is;
}

Image LoadImageFromMemory(const void* data, size_t size, int channels, const std::string& what) {
  if (channels < 0 || channels > 4)
    throw Error(StrCat("LoadImage ", what, ": channels must be 0..4, got ", channels));
  const ImageSize is = ReadImageSize(data, size, what);
  const auto* bytes = static_cast<const stbi_uc*>(data);
  const int len = static_cast<int>(size);
  int w = is.width, h = is.height, n = is.channels;
  std::unique_ptr<stbi_uc, void (*)(void*)> pix(
      stbi_load_from_memory(bytes, len, &w, &h, &n, channels), stbi_image_free);
  if (!pix) throw IOError(StrCat("LoadImage ", what, ": ", FailureReason()));
  Image im;
  im.width = w;
  im.height = h;
  im.channels = channels ? channels : n;
  im.pixels.assign(pix.get(), pix.get() + static_cast<size_t>(w) * h * im.channels);
  return im;
}

Image LoadImage(const std::string& path, int channels) {
  // A regular file, size known before reading: never a FIFO, a device or a directory.
  if (RegularFile(path).size() > static_cast<uint64_t>(INT_MAX))
    throw IOError(StrCat("LoadImage ", path, ": file too large"));
  const std::string bytes = ReadFileToString(path);
  return LoadImageFromMemory(bytes.data(), bytes.size(), channels, path);
}

void SavePNG(const std::string& path, const Image& image) {
  CheckDrawable(&image, "SavePNG");
  CheckSize(image.width, image.height, "SavePNG");
  if (!stbi_write_png(path.c_str(), image.width, image.height, image.channels, image.pixels.data(),
                      image.width * image.channels))
    throw IOError(StrCat("SavePNG ", path, ": cannot write file"));
}

namespace {
// The bilinear resize on any source and destination element type (float, or 8-bit pixels
// read and written directly so no float copy of a whole image is ever made).
template <typename Src, typename Dst>
void ResizeBilinearImpl(const Src* src, int src_width, int src_height, int channels, Dst* dst,
                        int dst_width, int dst_height, int row_begin, int row_end) {
  CheckSize(src_width, src_height, "ResizeBilinear source");
  CheckSize(dst_width, dst_height, "ResizeBilinear destination");
  SYMBIND_CHECK(channels > 0, "ResizeBilinear: channels must be positive, got ", channels);
  SYMBIND_CHECK(0 <= row_begin && row_begin < row_end && row_end <= dst_height, "ResizeBilinear: rows [", row_begin,
                ", ", row_end, ") are not within the ", dst_height, " rows of the result");
  // Per destination column / row: the two source indices and the weight of the second.
  auto taps = [](int src_size, int dst_size, std::vector<int>* i0, std::vector<int>* i1,
                 std::vector<float>* frac) {
    // OpenCV's scale: the reciprocal of dst/src (not src/dst, which can differ in the last bit).
    double scale = 1.0 / (static_cast<double>(dst_size) / src_size);
    i0->resize(dst_size);
    i1->resize(dst_size);
    frac->resize(dst_size);
    for (int d = 0; d < dst_size; ++d) {
      float s = static_cast<float>((d + 0.5) * scale - 0.5);
      int s0 = static_cast<int>(std::floor(s));
      float f = s - static_cast<float>(s0);
      if (s0 < 0) {
        s0 = 0;
        f = 0.0f;
      }
      if (s0 >= src_size - 1) {
        s0 = src_size - 1;
        f = 0.0f;
      }
      (*i0)[d] = s0;
      (*i1)[d] = std::min(s0 + 1, src_size - 1);
      (*frac)[d] = f;
    }
  };
  std::vector<int> x0, x1, y0, y1;
  std::vector<float> fx, fy;
  taps(src_width, dst_width, &x0, &x1, &fx);
  taps(src_height, dst_height, &y0, &y1, &fy);
  const size_t row = static_cast<size_t>(src_width) * channels;
  for (int dy = row_begin; dy < row_end; ++dy) {
    const Src* r0 = src + y0[dy] * row;
    const Src* r1 = src + y1[dy] * row;
    const float wy = fy[dy];
    Dst* out = dst + static_cast<size_t>(dy - row_begin) * dst_width * channels;
    for (int dx = 0; dx < dst_width; ++dx) {
      const float wx = fx[dx];
      const Src* a = r0 + static_cast<size_t>(x0[dx]) * channels;
      const Src* b = r0 + static_cast<size_t>(x1[dx]) * channels;
      const Src* c = r1 + static_cast<size_t>(x0[dx]) * channels;
      const Src* d = r1 + static_cast<size_t>(x1[dx]) * channels;
      for (int k = 0; k < channels; ++k) {
        float top = (1.0f - wx) * static_cast<float>(a[k]) + wx * static_cast<float>(b[k]);
        float bottom = (1.0f - wx) * static_cast<float>(c[k]) + wx * static_cast<float>(d[k]);
        const float v = (1.0f - wy) * top + wy * bottom;
        if constexpr (std::is_same_v<Dst, uint8_t>)
          *out++ = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, std::nearbyint(v))));
        else
          *out++ = v;
      }
    }
  }
}

}  // namespace

void ResizeBilinear(const float* src, int src_width, int src_height, int channels, float* dst,
                    int dst_width, int dst_height) {
  ResizeBilinearImpl(src, src_width, src_height, channels, dst, dst_width, dst_height, 0, dst_height);
}

void ResizeBilinear(const uint8_t* src, int src_width, int src_height, int channels, float* dst,
                    int dst_width, int dst_height) {
  ResizeBilinearImpl(src, src_width, src_height, channels, dst, dst_width, dst_height, 0, dst_height);
}

void ResizeBilinearRows(const uint8_t* src, int src_width, int src_height, int channels, float* dst,
                        int dst_width, int dst_height, int row_begin, int row_end) {
  ResizeBilinearImpl(src, src_width, src_height, channels, dst, dst_width, dst_height, row_begin, row_end);
}

std::vector<float> ResizeBilinear(const std::vector<float>& src, int src_width, int src_height,
                                  int channels, int dst_width, int dst_height) {
  CheckSize(src_width, src_height, "ResizeBilinear source");
  CheckSize(dst_width, dst_height, "ResizeBilinear destination");
  SYMBIND_CHECK(channels > 0, "ResizeBilinear: channels must be positive, got ", channels);
  SYMBIND_CHECK(src.size() == static_cast<size_t>(src_width) * src_height * channels,
                "ResizeBilinear: source holds ", src.size(), " values, expected ", src_width, "x",
                src_height, "x", channels);
  std::vector<float> dst(static_cast<size_t>(dst_width) * dst_height * channels);
  ResizeBilinear(src.data(), src_width, src_height, channels, dst.data(), dst_width, dst_height);
  return dst;
}

Image ResizeBilinear(const Image& src, int width, int height) {
  CheckDrawable(&src, "ResizeBilinear");
  CheckSize(width, height, "ResizeBilinear destination");
  Image dst(width, height, src.channels);
  ResizeBilinearImpl(src.pixels.data(), src.width, src.height, src.channels, dst.pixels.data(),
                     width, height, 0, height);
  return dst;
}

void DrawRect(Image* image, int x1, int y1, int x2, int y2, uint8_t r, uint8_t g, uint8_t b,
              int thickness) {
  CheckDrawable(image, "DrawRect");
  if (thickness < 1) return;
  if (x1 > x2) std::swap(x1, x2);
  if (y1 > y2) std::swap(y1, y2);
  uint8_t v[4];
  PixelValue(image->channels, r, g, b, v);
  // Work in 64-bit so that extreme coordinates cannot overflow; everything is clipped after.
  auto clip = [](int64_t a) {
    return static_cast<int>(std::max<int64_t>(INT_MIN / 2, std::min<int64_t>(INT_MAX / 2, a)));
  };
  int64_t t = thickness;
  int left = clip(x1), right = clip(int64_t{x2} + 1), top = clip(y1),
      bottom = clip(int64_t{y2} + 1);
  FillRect(image, left, top, right, clip(top + t), v);        // top edge
  FillRect(image, left, clip(bottom - t), right, bottom, v);  // bottom edge
  FillRect(image, left, top, clip(left + t), bottom, v);      // left edge
  FillRect(image, clip(right - t), top, right, bottom, v);    // right edge
}

void DrawDot(Image* image, float x, float y, float radius, uint8_t r, uint8_t g, uint8_t b) {
  CheckDrawable(image, "DrawDot");
  if (!(radius >= 0.0f) || !std::isfinite(x) || !std::isfinite(y)) return;
  uint8_t v[4];
  PixelValue(image->channels, r, g, b, v);
  // The bounding square, clamped (in float, before any conversion) to the image.
  auto range = [](float lo, float hi, int size, int* first, int* last) {
    *first = static_cast<int>(std::min<float>(size, std::max(0.0f, std::floor(lo))));
    *last = static_cast<int>(std::max(-1.0f, std::min<float>(size - 1, std::ceil(hi))));
  };
  int x0, x1, y0, y1;
  range(x - radius, x + radius, image->width, &x0, &x1);
  range(y - radius, y + radius, image->height, &y0, &y1);
  for (int py = y0; py <= y1; ++py)
    for (int px = x0; px <= x1; ++px) {
      float dx = static_cast<float>(px) - x, dy = static_cast<float>(py) - y;
      if (dx * dx + dy * dy <= radius * radius) std::memcpy(image->at(px, py), v, image->channels);
    }
}

void DrawText(Image* image, int x, int y, const std::string& text, uint8_t r, uint8_t g, uint8_t b,
              float scale) {
  CheckDrawable(image, "DrawText");
  if (text.empty() || !(scale > 0.0f) || !std::isfinite(scale)) return;
  uint8_t v[4];
  PixelValue(image->channels, r, g, b, v);
  // stb_easy_font emits axis-aligned quads: 4 vertices of {float x, y, z; uint8 rgba[4]}.
  struct Vertex {
    float x, y, z;
    unsigned char color[4];
  };
  // stb_easy_font indexes its glyph table by (c - 32) unchecked: keep to ASCII 32..126.
  std::vector<char> str;
  str.reserve(text.size() + 1);
  for (char ch : text) str.push_back(ch == '\n' || (ch >= 32 && ch <= 126) ? ch : '?');
  str.push_back('\0');
  std::vector<Vertex> buf(text.size() * 64 + 64);  // a glyph has well under 16 quads
  int quads = stb_easy_font_print(0.0f, 0.0f, str.data(), nullptr, buf.data(),
                                  static_cast<int>(buf.size() * sizeof(Vertex)));
  for (int q = 0; q < quads; ++q) {
    const Vertex* c = &buf[static_cast<size_t>(q) * 4];
    float qx0 = std::min({c[0].x, c[1].x, c[2].x, c[3].x}),
          qx1 = std::max({c[0].x, c[1].x, c[2].x, c[3].x});
    float qy0 = std::min({c[0].y, c[1].y, c[2].y, c[3].y}),
          qy1 = std::max({c[0].y, c[1].y, c[2].y, c[3].y});
    // Pixels whose centre lies inside the scaled quad.
    auto first = [](double edge) {
      return static_cast<int64_t>(std::max(-1e9, std::min(1e9, std::ceil(edge - 0.5))));
    };
    int64_t px0 = first(x + qx0 * static_cast<double>(scale)),
            px1 = first(x + qx1 * static_cast<double>(scale));
    int64_t py0 = first(y + qy0 * static_cast<double>(scale)),
            py1 = first(y + qy1 * static_cast<double>(scale));
    auto clip = [](int64_t a, int hi) {
      return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(hi, a)));
    };
    FillRect(image, clip(px0, image->width), clip(py0, image->height), clip(px1, image->width),
             clip(py1, image->height), v);
  }
}

NDArray ImageToTensor(const Image& image, const float mean[3], float scale, bool bgr, int channels) {
  CheckDrawable(&image, "ImageToTensor");
  CheckSize(image.width, image.height, "ImageToTensor");
  if (channels != 1 && channels != 3)
    throw Error(StrCat("ImageToTensor: channels must be 1 or 3, got ", channels));
  if (channels == 1 && image.channels != 1)
    throw Error(StrCat("ImageToTensor: a 1-channel tensor needs a grey image (LoadImage(path, 1)), got ",
                       image.channels, " channels"));
  const int64_t h = image.height, w = image.width, plane = h * w;
  NDArray out(TShape({1, channels, h, w}));
  float* o = out.fdata();
  const int c = image.channels;
  for (int k = 0; k < channels; ++k) {
    // Source channel feeding tensor channel k.
    int src = c < 3 ? 0 : (bgr ? 2 - k : k);
    const uint8_t* p = image.pixels.data() + src;
    float* dst = o + k * plane;
    for (int64_t i = 0; i < plane; ++i) dst[i] = (static_cast<float>(p[i * c]) - mean[k]) * scale;
  }
  return out;
}

}  // namespace symbind
