// depth_to_space and space_to_depth: each moves block_size x block_size blocks between the
// channel axis and the spatial axes of an NCHW array (each the other's inverse): a gather
// through an index map (tensor/index_map.h), forward and backward. Any dtype.
#include <vector>

#include <symbind/ops/tensor/index_map.h>

namespace symbind {

namespace {

struct BlockSizeParam : Parameter<BlockSizeParam> {
  int block_size;
  static void Declare(ParamDeclarer<BlockSizeParam>& d) {
    d.field("block_size", &BlockSizeParam::block_size).lower_bound(1)
        .describe("Blocks of [block_size. block_size] are moved");
  }
};

// The spread-out (space) shape (n, c, h * b, w * b) and the packed (depth) shape
// (n, c * b * b, h, w); depth element (n, (i * b + j) * c + k, y, x) is space element
// (n, k, y * b + i, x * b + j).
void CheckNonzero(const TShape& s, const char* op) {
  for (int i = 0; i < 4; ++i)
    if (s[i] == 0) throw ShapeError(StrCat(op, ": dimension ", i, " of the input ", s, " cannot be 0"));
}

void InferDepthToSpace(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& s = (*in)[0];
  if (!s.ndim_known()) return;
  if (s.ndim() != 4) throw ShapeError(StrCat("depth_to_space: requires a 4-D input, got ", s));
  const int64_t b = attrs.param<BlockSizeParam>().block_size;
  CheckNonzero(s, "depth_to_space");
  if (s[1] % (b * b) != 0)
    throw ShapeError(StrCat("depth_to_space: the depth ", s[1], " of the input ", s,
                            " must be a multiple of block_size * block_size = ", b * b));
  ShapeAssignCheck(out, 0, TShape({s[0], s[1] / (b * b), s[2] * b, s[3] * b}));
}

void InferSpaceToDepth(const NodeAttrs& attrs, std::vector<TShape>* in, std::vector<TShape>* out) {
  const TShape& s = (*in)[0];
  if (!s.ndim_known()) return;
  if (s.ndim() != 4) throw ShapeError(StrCat("space_to_depth: requires a 4-D input, got ", s));
  const int64_t b = attrs.param<BlockSizeParam>().block_size;
  CheckNonzero(s, "space_to_depth");
  if (s[2] % b != 0 || s[3] % b != 0)
    throw ShapeError(StrCat("space_to_depth: the height and width of the input ", s,
                            " must be multiples of block_size ", b));
  ShapeAssignCheck(out, 0, TShape({s[0], s[1] * b * b, s[2] / b, s[3] / b}));
}

// Both ops are transposes of 6-D views: the space array (n, c, h * b, w * b) as
// (n, c, h, b_i, w, b_j) and the depth array (n, c * b * b, h, w) as (n, b_i, b_j, c, h, w).
// The index map reads the input through the output's 6-D view.
IndexMap BlockMap(const TShape& in, const TShape& out, int64_t b, bool to_depth) {
  const TShape& space = to_depth ? in : out;
  const int64_t n = space[0], c = space[1], h = space[2] / b, w = space[3] / b;
  // Input strides of the six view dims in the order (n, c, h, b_i, w, b_j).
  std::vector<int64_t> st;
  if (to_depth) st = {c * h * b * w * b, h * b * w * b, b * w * b, w * b, b, 1};
  else st = {b * b * c * h * w, h * w, w, b * c * h * w, 1, c * h * w};
  // The output's view dims, each naming its slot in st.
  const std::vector<int> order = to_depth ? std::vector<int>{0, 3, 5, 1, 2, 4} : std::vector<int>{0, 1, 2, 3, 4, 5};
  const std::vector<int64_t> extent = {n, c, h, b, w, b};
  std::vector<int64_t> dims;
  for (int d : order) dims.push_back(extent[d]);
  IndexMap m{TShape(dims)};
  for (size_t k = 0; k < order.size(); ++k) m.stride[k] = st[order[k]];
  return m;
}

// Registers one direction; `to_depth` says which array is the space one.
void RegisterBlockMove(const char* name, const char* doc, void (*infer)(const NodeAttrs&, std::vector<TShape>*,
                                                                        std::vector<TShape>*), bool to_depth) {
  auto make_map = [to_depth](const NodeAttrs& attrs, const TShape& in, const TShape& out) {
    return BlockMap(in, out, attrs.param<BlockSizeParam>().block_size, to_depth);
  };
  OpRegistry::Global().Register(name)
      .describe(doc)
      .set_params<BlockSizeParam>()
      .add_argument_doc("data", "Input ndarray")
      .set_infer_shape(infer)
      .set_dtype_generic()
      .set_forward(GatherForward(make_map))
      .set_backward(GatherBackward(make_map, true));
}

SYMBIND_REGISTER_OP_FAMILY(depth_space) {
  RegisterBlockMove("depth_to_space",
                    "Rearranges (permutes) data from depth into blocks of spatial data: (N, C, H, W) becomes "
                    "(N, C / (block_size ^ 2), H * block_size, W * block_size). The inverse of space_to_depth.",
                    InferDepthToSpace, false);
  RegisterBlockMove("space_to_depth",
                    "Rearranges (permutes) blocks of spatial data into depth: (N, C, H, W) becomes "
                    "(N, C * (block_size ^ 2), H / block_size, W / block_size). The inverse of depth_to_space.",
                    InferSpaceToDepth, true);
}

}  // namespace

}  // namespace symbind
