// all_finite and multi_all_finite: 1 in a float32 array of shape (1,) when every element of the
// input(s) is finite, 0 otherwise (AMP's loss-scale overflow check). With init_output false
// the output is not set to 1 first, only cleared on a non-finite element, so several checks can
// share one flag. No gradient, as in MXNet.
#include <cmath>
#include <vector>

#include <symbind/core/graph.h>
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

const char* const kInitDoc = "Initialize output to 1.";

struct AllFiniteParam : Parameter<AllFiniteParam> {
  bool init_output;
  static void Declare(ParamDeclarer<AllFiniteParam>& d) {
    d.field("init_output", &AllFiniteParam::init_output).set_default(true).describe(kInitDoc);
  }
};

struct MultiAllFiniteParam : Parameter<MultiAllFiniteParam> {
  int num_arrays;
  bool init_output;
  static void Declare(ParamDeclarer<MultiAllFiniteParam>& d) {
    d.field("num_arrays", &MultiAllFiniteParam::num_arrays).set_default(1).set_range(1, Graph::kMaxNodeOutputs)
        .describe("Number of arrays.");
    d.field("init_output", &MultiAllFiniteParam::init_output).set_default(true).describe(kInitDoc);
  }
};

bool AllElementsFinite(const NDArray& a) {
  for (double v : ValuesAsDouble(a))
    if (!std::isfinite(v)) return false;
  return true;
}

void WriteFlag(const std::vector<NDArray>& in, const NDArray& out, OpReq req, bool init_output) {
  if (req == OpReq::kNull) return;
  float* flag = out.fdata();
  if (init_output) *flag = 1.0f;
  for (const NDArray& a : in)
    if (!AllElementsFinite(a)) *flag = 0.0f;
}

void InferFlagShape(const NodeAttrs&, std::vector<TShape>*, std::vector<TShape>* out) {
  ShapeAssignCheck(out, 0, TShape({1}));
}
void InferFlagType(const NodeAttrs&, std::vector<int>*, std::vector<int>* out) {
  TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
}

SYMBIND_REGISTER_OP(all_finite)
    .describe("Check if all the float numbers in the array are finite (used for AMP)")
    .set_params<AllFiniteParam>()
    .add_argument_doc("data", "Array")
    .set_infer_shape(InferFlagShape)
    .set_infer_type(InferFlagType)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      WriteFlag(in, out[0], req[0], attrs.param<AllFiniteParam>().init_output);
    });

SYMBIND_REGISTER_OP(multi_all_finite)
    .describe("Check if all the float numbers in all the arrays are finite (used for AMP)")
    .set_params<MultiAllFiniteParam>()
    .set_key_var_num_args("num_arrays")
    .set_arguments([](const NodeAttrs& a) { return NumberedNames("array_", a.param<MultiAllFiniteParam>().num_arrays); })
    .set_infer_shape(InferFlagShape)
    .set_infer_type(InferFlagType)
    .set_dtype_generic()
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      WriteFlag(in, out[0], req[0], attrs.param<MultiAllFiniteParam>().init_output);
    });

}  // namespace

}  // namespace symbind
