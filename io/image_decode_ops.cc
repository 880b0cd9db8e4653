// _cvimdecode and _cvimread (mx.image.imdecode, imread, ImageIter): decode a JPEG or PNG, from
// a uint8 buffer or from a file, into a (height, width, channels) uint8 image, RGB by default
// (to_rgb=False: BGR, OpenCV's order) or grey (flag=0). MXNet decodes with OpenCV; symbind with
// stb_image (io/image.h), whose JPEG decoder rounds a little differently from libjpeg: pixels
// may differ from OpenCV's by a few units. The image's size comes from its header
// (Op::value_dependent_shape), so both run in imperative calls only. They live in io/, beside the
// decoder they call, since ops/ sits below io/ (docs/architecture.md).
#include <string>
#include <vector>

#include <symbind/io/image.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

template <typename P>
void DeclareDecodeFields(ParamDeclarer<P>& d) {
  d.field("flag", &P::flag).set_default(1).lower_bound(0).describe("Convert decoded image to grayscale (0) or color (1).");
  d.field("to_rgb", &P::to_rgb).set_default(true)
      .describe("Whether to convert decoded image to mxnet's default RGB format (instead of opencv's default BGR).");
}

struct CvImdecodeParam : Parameter<CvImdecodeParam> {
  int flag = 1;
  bool to_rgb = true;
  static void Declare(ParamDeclarer<CvImdecodeParam>& d) { DeclareDecodeFields(d); }
};

struct CvImreadParam : Parameter<CvImreadParam> {
  std::string filename;
  int flag = 1;
  bool to_rgb = true;
  static void Declare(ParamDeclarer<CvImreadParam>& d) {
    d.field("filename", &CvImreadParam::filename).describe("Name of the image file to be loaded.");
    DeclareDecodeFields(d);
  }
};

int DecodedChannels(int flag) { return flag == 0 ? 1 : 3; }

// Every dim but the image's size, which only its header holds.
template <typename P>
void InferDecodedShape(const NodeAttrs& attrs, std::vector<TShape>*, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, TShape({-1, -1, DecodedChannels(attrs.param<P>().flag)}));
}

template <typename P>
void InferDecodedType(const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
  TypeAssignCheck(out, 0, static_cast<int>(DType::kUint8));
}

std::vector<TShape> DecodedShape(const void* bytes, size_t size, int flag, const std::string& what) {
  const ImageSize is = ReadImageSize(bytes, size, what);
  return {TShape({is.height, is.width, DecodedChannels(flag)})};
}

// Decodes into `out` (of the header's size), its RGB turned to BGR unless `to_rgb`.
void DecodeInto(const void* bytes, size_t size, int flag, bool to_rgb, const std::string& what, const NDArray& out) {
  Image img = LoadImageFromMemory(bytes, size, DecodedChannels(flag), what);
  if (out.shape() != TShape({img.height, img.width, img.channels}))
    throw IOError(StrCat(what, ": decoded ", img.height, "x", img.width, "x", img.channels, ", the header stated ",
                         out.shape().ToString()));
  if (img.channels == 3 && !to_rgb)
    for (size_t i = 0; i + 2 < img.pixels.size(); i += 3) std::swap(img.pixels[i], img.pixels[i + 2]);
  std::copy(img.pixels.begin(), img.pixels.end(), out.data<uint8_t>());
}

void CheckBuffer(const NDArray& buf) {
  if (buf.dtype() != DType::kUint8)
    throw TypeError(StrCat("_cvimdecode: the buffer must be uint8, got ", DTypeName(buf.dtype())));
}

SYMBIND_REGISTER_OP(_cvimdecode)
    .describe("Decode image with OpenCV. \\nNote: return image in RGB by default, instead of OpenCV's default BGR. "
              "Decodes a JPEG or PNG held in a uint8 buffer into a (height, width, channels) uint8 image.")
    .set_params<CvImdecodeParam>()
    .set_arguments({"buf"})
    .add_argument_doc("buf", "Buffer containing binary encoded image")
    .set_dtype_generic()
    .set_infer_shape(InferDecodedShape<CvImdecodeParam>)
    .set_infer_type(InferDecodedType<CvImdecodeParam>)
    .set_value_dependent_shape([](const NodeAttrs& attrs, const std::vector<NDArray>& in) {
      CheckBuffer(in[0]);
      return DecodedShape(in[0].raw_data(), in[0].bytes(), attrs.param<CvImdecodeParam>().flag, "_cvimdecode buffer");
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      CheckBuffer(in[0]);
      const auto& p = attrs.param<CvImdecodeParam>();
      DecodeInto(in[0].raw_data(), in[0].bytes(), p.flag, p.to_rgb, "_cvimdecode buffer", out[0]);
    });

SYMBIND_REGISTER_OP(_cvimread)
    .describe("Read and decode image with OpenCV. \\nNote: return image in RGB by default, instead of OpenCV's "
              "default BGR. Reads a JPEG or PNG file into a (height, width, channels) uint8 image.")
    .set_params<CvImreadParam>()
    .set_arguments(std::vector<std::string>{})
    .set_dtype_generic()
    .set_infer_shape(InferDecodedShape<CvImreadParam>)
    .set_infer_type(InferDecodedType<CvImreadParam>)
    .set_value_dependent_shape([](const NodeAttrs& attrs, const std::vector<NDArray>&) {
      const auto& p = attrs.param<CvImreadParam>();
      const std::string bytes = ReadFileToString(p.filename);
      return DecodedShape(bytes.data(), bytes.size(), p.flag, p.filename);
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      if (req[0] == OpReq::kNull) return;
      const auto& p = attrs.param<CvImreadParam>();
      const std::string bytes = ReadFileToString(p.filename);
      DecodeInto(bytes.data(), bytes.size(), p.flag, p.to_rgb, p.filename, out[0]);
    });

}  // namespace

}  // namespace symbind
