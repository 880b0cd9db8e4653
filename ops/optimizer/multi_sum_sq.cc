// multi_sum_sq: the sum of squares of each of num_arrays arrays, as one float32 array of
// num_arrays values (MXNet's LARS optimizer takes the weight and gradient norms from it).
#include <symbind/ops/optimizer/optimizer_util.h>

namespace symbind {

namespace {

struct MultiSumSqParam : Parameter<MultiSumSqParam> {
  int num_arrays;
  static void Declare(ParamDeclarer<MultiSumSqParam>& d) {
    d.field("num_arrays", &MultiSumSqParam::num_arrays).lower_bound(1)
        .describe("number of input arrays.");
  }
};

void MultiSumSqForward(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                       const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
  float* y = out[0].fdata();
  ParallelFor(static_cast<int64_t>(in.size()), 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const NDArray values = AsFloat32(in[static_cast<size_t>(k)]);
      const float* x = values.fdata();
      double sum = 0;  // in double: one array may hold millions of values
      for (int64_t i = 0; i < values.Size(); ++i) sum += static_cast<double>(x[i]) * x[i];
      Put(y + k, static_cast<float>(sum), req[0]);
    }
  });
}

}  // namespace

SYMBIND_REGISTER_OP(multi_sum_sq)
    .describe("Compute the sums of squares of multiple arrays: output i is sum(array_i^2), float32.")
    .set_params<MultiSumSqParam>()
    .set_key_var_num_args("num_arrays")
    .set_arguments([](const NodeAttrs& a) {
      std::vector<std::string> names;
      for (int i = 0; i < a.param<MultiSumSqParam>().num_arrays; ++i)
        names.push_back("array_" + std::to_string(i));
      return names;
    })
    .set_infer_shape([](const NodeAttrs& a, std::vector<TShape>*, std::vector<TShape>* out) {
      ShapeAssignCheck(out, 0, TShape({a.param<MultiSumSqParam>().num_arrays}));
    })
    .set_dtype_generic()
    .set_infer_type([](const NodeAttrs&, std::vector<int>* in, std::vector<int>* out) {
      for (size_t i = 0; i < in->size(); ++i)
        if ((*in)[i] >= 0 && !IsFloatType((*in)[i]))
          throw TypeError(StrCat("multi_sum_sq: array_", i, " must be a floating type, got ",
                                 DTypeName(static_cast<DType>((*in)[i]))));
      TypeAssignCheck(out, 0, static_cast<int>(DType::kFloat32));
    })
    .set_forward(MultiSumSqForward);

}  // namespace symbind
