// _cvimdecode and _cvimread (mx.image.imdecode, imread, ImageIter): decode a JPEG or PNG, from
// a uint8 buffer or from a file, into a (height, width, channels) uint8 image, RGB by default
// (to_rgb=False: BGR, OpenCV's order) or grey (flag=0). MXNet decodes with OpenCV; symbind with
// stb_image (io/image.h), whose JPEG decoder rounds a little differently from libjpeg: pixels
// may differ from OpenCV's by a few units. The image's size is known only once decoded, so
// both make their outputs themselves (imperative calls only). They live in io/, beside the
// decoder they call, since ops/ sits below io/ (docs/architecture.md).
#include <string>
#include <vector>

#include <symbind/io/image.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct CvImdecodeParam : Parameter<CvImdecodeParam> {
  int flag = 1;
  bool to_rgb = true;
  static void Declare(ParamDeclarer<CvImdecodeParam>& d) {
    d.field("flag", &CvImdecodeParam::flag).set_default(1).lower_bound(0)
        .describe("Convert decoded image to grayscale (0) or color (1).");
    d.field("to_rgb", &CvImdecodeParam::to_rgb).set_default(true)
        .describe("Whether to convert decoded image to mxnet's default RGB format (instead of opencv's default "
                  "BGR).");
  }
};

struct CvImreadParam : Parameter<CvImreadParam> {
  std::string filename;
  int flag = 1;
  bool to_rgb = true;
  static void Declare(ParamDeclarer<CvImreadParam>& d) {
    d.field("filename", &CvImreadParam::filename).describe("Name of the image file to be loaded.");
    d.field("flag", &CvImreadParam::flag).set_default(1).lower_bound(0)
        .describe("Convert decoded image to grayscale (0) or color (1).");
    d.field("to_rgb", &CvImreadParam::to_rgb).set_default(true)
        .describe("Whether to convert decoded image to mxnet's default RGB format (instead of opencv's default "
                  "BGR).");
  }
};

int DecodedChannels(int flag) { return flag == 0 ? 1 : 3; }

// `img` as a (height, width, channels) uint8 array, its RGB turned to BGR unless `to_rgb`.
NDArray ImageArray(Image img, bool to_rgb) {
  if (img.channels == 3 && !to_rgb)
    for (size_t i = 0; i + 2 < img.pixels.size(); i += 3) std::swap(img.pixels[i], img.pixels[i + 2]);
  NDArray out(TShape({img.height, img.width, img.channels}), DType::kUint8);
  std::copy(img.pixels.begin(), img.pixels.end(), out.data<uint8_t>());
  return out;
}

SYMBIND_REGISTER_OP(_cvimdecode)
    .describe("Decode image with OpenCV. \\nNote: return image in RGB by default, instead of OpenCV's default BGR. "
              "Decodes a JPEG or PNG held in a uint8 buffer into a (height, width, channels) uint8 image.")
    .set_params<CvImdecodeParam>()
    .set_arguments({"buf"})
    .add_argument_doc("buf", "Buffer containing binary encoded image")
    .set_dtype_generic()
    .set_imperative([](const NodeAttrs& attrs, const std::vector<NDArray>& in) {
      if (in[0].dtype() != DType::kUint8)
        throw TypeError(StrCat("_cvimdecode: the buffer must be uint8, got ", DTypeName(in[0].dtype())));
      const auto& p = attrs.param<CvImdecodeParam>();
      return std::vector<NDArray>{ImageArray(
          LoadImageFromMemory(in[0].raw_data(), in[0].bytes(), DecodedChannels(p.flag), "_cvimdecode buffer"),
          p.to_rgb)};
    });

SYMBIND_REGISTER_OP(_cvimread)
    .describe("Read and decode image with OpenCV. \\nNote: return image in RGB by default, instead of OpenCV's "
              "default BGR. Reads a JPEG or PNG file into a (height, width, channels) uint8 image.")
    .set_params<CvImreadParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_imperative([](const NodeAttrs& attrs, const std::vector<NDArray>&) {
      const auto& p = attrs.param<CvImreadParam>();
      return std::vector<NDArray>{ImageArray(LoadImage(p.filename, DecodedChannels(p.flag)), p.to_rgb)};
    });

}  // namespace

}  // namespace symbind
