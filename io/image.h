// Images: decode (JPEG and PNG only, via stb_image), PNG encode,
// bilinear resize, simple drawing, and conversion to a network input tensor.
//
// Pixels are 8-bit, interleaved HWC, in the channel order the file decodes to (RGB or RGBA;
// grey for 1 channel, grey+alpha for 2). Every malformed, truncated or absurdly large file
// throws symbind::IOError naming the file and stb_image's reason; none crashes.
#pragma once
#include <symbind/core/ndarray.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace symbind {

struct Image {
  int width = 0, height = 0, channels = 0;
  std::vector<uint8_t> pixels;  // HWC, RGB(A) order as decoded; size width*height*channels

  Image() = default;
  // Zero-filled (black) image. Throws symbind::Error for non-positive sizes or channels
  // outside 1..4.
  Image(int width, int height, int channels);
  bool empty() const { return pixels.empty(); }
  uint8_t* at(int x, int y) { return &pixels[(static_cast<size_t>(y) * width + x) * channels]; }
  const uint8_t* at(int x, int y) const {
    return &pixels[(static_cast<size_t>(y) * width + x) * channels];
  }
};

// Decodes a file; `channels` 1..4 converts to that many channels (stb_image's rules: grey,
// grey+alpha, RGB, RGBA), 0 keeps the file's own. Images over kMaxImagePixels pixels are
// refused before decoding (from the header), and so are resize targets and new images.
// Other formats stb_image knows (TGA, PSD, PNM, ...) are refused: their few-byte headers can
// claim huge blank images. JPEGs must end with an end-of-image marker and PNGs with an IEND
// chunk (stb_image would decode truncated files silently). Only regular files are read.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;
Image LoadImage(const std::string& path, int channels = 3);
// An image's size and its file's own channel count, read from its header and checked as
// LoadImageFromMemory checks the file (JPEG or PNG, complete, at most kMaxImagePixels), without
// decoding the pixels.
struct ImageSize {
  int width = 0, height = 0, channels = 0;
};
ImageSize ReadImageSize(const void* data, size_t size, const std::string& what = "image buffer");
// The same from bytes in memory; `what` names the source in error messages.
Image LoadImageFromMemory(const void* data, size_t size, int channels = 3,
                          const std::string& what = "image buffer");

// Writes an 8-bit PNG (any of 1..4 channels). Throws IOError when the file cannot be written.
void SavePNG(const std::string& path, const Image& image);

// Bilinear resize with OpenCV's INTER_LINEAR geometry: destination pixel d samples source
// coordinate s = (d + 0.5) * (src_size / dst_size) - 0.5 (pixel centres aligned), clamped to
// [0, src_size - 1] at the borders (so border pixels replicate). The coordinate is computed in
// double, the fraction and the interpolation in float:
//   v = (1 - fy) * ((1 - fx) * p00 + fx * p01) + fy * ((1 - fx) * p10 + fx * p11).
// This does NOT reproduce OpenCV's 8-bit path, which rounds weights to 11-bit fixed point and
// can differ from it by 1 level; it matches OpenCV's float path to float rounding.
// The 8-bit version rounds the float result to nearest and saturates to [0, 255].
Image ResizeBilinear(const Image& src, int width, int height);
// Float HWC buffers: `src` holds src_height*src_width*channels values; `dst` receives
// dst_height*dst_width*channels values. Throws symbind::Error for non-positive sizes.
void ResizeBilinear(const float* src, int src_width, int src_height, int channels, float* dst,
                    int dst_width, int dst_height);
// The same from 8-bit pixels (exactly as from their float values), without a float copy of
// the source.
void ResizeBilinear(const uint8_t* src, int src_width, int src_height, int channels, float* dst,
                    int dst_width, int dst_height);
// Rows [row_begin, row_end) of that dst_width x dst_height result, the same values, into `dst`
// ((row_end - row_begin) * dst_width * channels values): a large resize made a band at a time.
void ResizeBilinearRows(const uint8_t* src, int src_width, int src_height, int channels, float* dst,
                        int dst_width, int dst_height, int row_begin, int row_end);
std::vector<float> ResizeBilinear(const std::vector<float>& src, int src_width, int src_height,
                                  int channels, int dst_width, int dst_height);

// Drawing. Colours are given as RGB; a 1-channel image gets the luma (0.299 r + 0.587 g +
// 0.114 b), a 2- or 4-channel image gets an opaque alpha. Everything is clipped to the image.
// Rectangle outline with corners (x1, y1) and (x2, y2) (inclusive, any order), drawn inwards
// with `thickness` pixels.
void DrawRect(Image* image, int x1, int y1, int x2, int y2, uint8_t r, uint8_t g, uint8_t b,
              int thickness = 1);
// Filled disc centred on (x, y): pixels whose centre lies within `radius`.
void DrawDot(Image* image, float x, float y, float radius, uint8_t r, uint8_t g, uint8_t b);
// Text in stb_easy_font's bitmap font (ASCII 32..126, others drawn as '?'; '\n' starts a new
// line), top-left corner at (x, y), glyph pixels scaled by `scale` (1 = about 7 px tall
// capitals).
void DrawText(Image* image, int x, int y, const std::string& text, uint8_t r, uint8_t g, uint8_t b,
              float scale = 1.0f);

// A (1, 3, H, W) float32 tensor: value = (pixel - mean[c]) * scale, channel c in RGB order, or
// BGR when `bgr` (mean is then given in the tensor's order: mean[0] goes with B). 1-channel
// images are replicated; the alpha of 2/4-channel images is dropped. With `channels` 1: a
// (1, 1, H, W) tensor of the grey values (a 1-channel image: LoadImage(path, 1)), mean[0].
NDArray ImageToTensor(const Image& image, const float mean[3], float scale, bool bgr, int channels = 3);

}  // namespace symbind
