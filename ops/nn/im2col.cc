// im2col and col2im: the sliding blocks of an (N, C, spatial...) image as columns
// (N, C * prod(kernel), L), L the number of block positions, and the reverse, which sums the
// blocks that overlap. Each is the other's gradient. The column layout is the convolution's
// (ops/kernels/im2col.h): rows ordered (c, kernel offsets), columns by block position.
#include <vector>

#include <symbind/ops/kernels/im2col.h>
#include <symbind/ops/nn/conv_util.h>

namespace symbind {

namespace {

const char* const kKernelDoc = "Sliding kernel size: (w,), (h, w) or (d, h, w).";
const char* const kStrideDoc = "The stride between adjacent sliding blocks in spatial dimension: (w,), (h, w) or "
                               "(d, h, w). Defaults to 1 for each dimension.";
const char* const kDilateDoc = "The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). Defaults to "
                               "1 for each dimension.";
const char* const kPadDoc = "The zero-value padding size on both sides of spatial dimension: (w,), (h, w) or "
                            "(d, h, w). Defaults to no padding.";

struct Im2ColParam : Parameter<Im2ColParam> {
  TShape kernel, stride, dilate, pad;
  static void Declare(ParamDeclarer<Im2ColParam>& d) {
    const TShape empty(std::vector<int64_t>{});
    d.field("kernel", &Im2ColParam::kernel).describe(kKernelDoc);
    d.field("stride", &Im2ColParam::stride).set_default(empty).describe(kStrideDoc);
    d.field("dilate", &Im2ColParam::dilate).set_default(empty).describe(kDilateDoc);
    d.field("pad", &Im2ColParam::pad).set_default(empty).describe(kPadDoc);
  }
};

struct Col2ImParam : Parameter<Col2ImParam> {
  TShape output_size, kernel, stride, dilate, pad;
  static void Declare(ParamDeclarer<Col2ImParam>& d) {
    const TShape empty(std::vector<int64_t>{});
    d.field("output_size", &Col2ImParam::output_size)
        .describe("The spatial dimension of image array: (w,), (h, w) or (d, h, w).");
    d.field("kernel", &Col2ImParam::kernel).describe(kKernelDoc);
    d.field("stride", &Col2ImParam::stride).set_default(empty).describe(kStrideDoc);
    d.field("dilate", &Col2ImParam::dilate).set_default(empty).describe(kDilateDoc);
    d.field("pad", &Col2ImParam::pad).set_default(empty).describe(kPadDoc);
  }
};

// The window of either op with its defaults filled in, and the geometry for an image whose
// spatial dims are `spatial`.
struct Window {
  TShape kernel, stride, dilate, pad;
  template <typename P>
  static Window Of(const P& p, const char* op) {
    Window w{p.kernel, p.stride, p.dilate, p.pad};
    conv::NormalizeSpatialParams(op, &w.kernel, &w.stride, &w.dilate, &w.pad);
    return w;
  }
  // (N, C, spatial...) image shape -> the block positions per spatial dim.
  std::vector<int64_t> Positions(const std::vector<int64_t>& spatial, const char* op) const {
    std::vector<int64_t> pos;
    for (int i = 0; i < kernel.ndim(); ++i) {
      const int64_t ext = conv::DilatedKernel(op, kernel[i], dilate[i], i);
      const int64_t padded = conv::PaddedSize(op, spatial[i], pad[i], i);
      if (ext > padded)
        throw ShapeError(StrCat(op, ": the dilated kernel (", ext, ") exceeds the padded image (", padded,
                                ") in spatial dim ", i));
      pos.push_back((padded - ext) / stride[i] + 1);
    }
    return pos;
  }
  conv::ConvGeom Geom(const TShape& image, const char* op) const {
    std::vector<int64_t> spatial(image.dims().begin() + 2, image.dims().end());
    std::vector<int64_t> nc_out = {image[0], image[1]};
    for (int64_t v : Positions(spatial, op)) nc_out.push_back(v);
    return conv::MakeGeom(image, TShape(nc_out), kernel, stride, dilate, pad);
  }
};

// col (per req) = the columns of `img`, image by image.
void ImageToColumns(const NDArray& img, const NDArray& col, OpReq req, const Window& w, const char* op) {
  if (req == OpReq::kNull) return;
  const conv::ConvGeom g = w.Geom(img.shape(), op);
  const int64_t n = img.shape()[0], c = img.shape()[1];
  const int64_t img_size = c * g.in_size(), col_size = c * g.k_size() * g.out_size();
  ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    std::vector<float> local(req == OpReq::kAdd ? static_cast<size_t>(col_size) : 0);
    for (int64_t i = b; i < e; ++i) {
      float* dst = col.fdata() + i * col_size;
      if (req != OpReq::kAdd) {
        conv::Im2Col(img.fdata() + i * img_size, g, 0, c, dst);
      } else {
        conv::Im2Col(img.fdata() + i * img_size, g, 0, c, local.data());
        for (int64_t j = 0; j < col_size; ++j) dst[j] += local[j];
      }
    }
  });
}

// img (per req) = the columns folded back, overlapping blocks summed.
void ColumnsToImage(const NDArray& col, const NDArray& img, OpReq req, const Window& w, const char* op) {
  if (req == OpReq::kNull) return;
  const conv::ConvGeom g = w.Geom(img.shape(), op);
  const int64_t n = img.shape()[0], c = img.shape()[1];
  const int64_t img_size = c * g.in_size(), col_size = c * g.k_size() * g.out_size();
  ZeroWithReq(img, req);
  ParallelFor(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) conv::Col2ImAdd(col.fdata() + i * col_size, g, 0, c, img.fdata() + i * img_size);
  });
}

void CheckSpatialRank(const TShape& s, const Window& w, const char* op, const char* what) {
  if (s.ndim() != w.kernel.ndim() + 2)
    throw ShapeError(StrCat(op, ": ", what, " ", s, " must have ", w.kernel.ndim() + 2, " dims for a ",
                            w.kernel.ndim(), "-D kernel"));
}

SYMBIND_REGISTER_OP(im2col)
    .describe("Extract sliding blocks from input array: (N, C, *) becomes (N, C * prod(kernel), L), L the "
              "number of block positions; each column holds one block.")
    .set_params<Im2ColParam>()
    .add_argument_doc("data", "Input array to extract sliding blocks.")
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const TShape& d = (*in)[0];
      if (!d.is_known()) return;
      const Window w = Window::Of(attrs.param<Im2ColParam>(), "im2col");
      CheckSpatialRank(d, w, "im2col", "the input");
      const std::vector<int64_t> pos = w.Positions({d.dims().begin() + 2, d.dims().end()}, "im2col");
      int64_t l = 1;
      for (int64_t v : pos) l *= v;
      ShapeAssignCheck(out, 0, TShape({d[0], d[1] * w.kernel.Size(), l}));
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      ImageToColumns(in[0], out[0], req[0], Window::Of(attrs.param<Im2ColParam>(), "im2col"), "im2col");
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      ColumnsToImage(a.out_grads[0], a.in_grads[0], a.req[0], Window::Of(attrs.param<Im2ColParam>(), "im2col"),
                     "im2col");
    });

SYMBIND_REGISTER_OP(col2im)
    .describe("Combining the output column matrix of im2col back to image array: (N, C * prod(kernel), L) "
              "becomes (N, C, output_size...), overlapping values summed.")
    .set_params<Col2ImParam>()
    .add_argument_doc("data", "Input array to combine sliding blocks.")
    .set_infer_shape([](const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
      const auto& p = attrs.param<Col2ImParam>();
      const Window w = Window::Of(p, "col2im");
      if (p.output_size.ndim() != w.kernel.ndim())
        throw ShapeError(StrCat("col2im: output_size ", p.output_size.ToStringAsWritten(),
                                " must have the kernel's number of dims (", w.kernel.ndim(), ")"));
      const TShape& d = (*in)[0];
      if (!d.is_known()) return;
      if (d.ndim() != 3) throw ShapeError(StrCat("col2im: the input must be (N, C * prod(kernel), L), got ", d));
      const std::vector<int64_t> pos = w.Positions(p.output_size.dims(), "col2im");
      int64_t l = 1;
      for (int64_t v : pos) l *= v;
      if (d[2] != l || d[1] % w.kernel.Size() != 0)
        throw ShapeError(StrCat("col2im: the input ", d, " must be (N, C * ", w.kernel.Size(), ", ", l,
                                ") for output_size ", p.output_size.ToStringAsWritten(), " and these window parameters"));
      std::vector<int64_t> o = {d[0], d[1] / w.kernel.Size()};
      for (int64_t v : p.output_size.dims()) o.push_back(v);
      ShapeAssignCheck(out, 0, TShape(o));
    })
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      ColumnsToImage(in[0], out[0], req[0], Window::Of(attrs.param<Col2ImParam>(), "col2im"), "col2im");
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      ImageToColumns(a.out_grads[0], a.in_grads[0], a.req[0], Window::Of(attrs.param<Col2ImParam>(), "col2im"),
                     "col2im");
    });

}  // namespace

}  // namespace symbind
