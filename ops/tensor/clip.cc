// clip: limits values to [a_min, a_max]; the gradient passes inside the range.
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {

struct ClipParam : Parameter<ClipParam> {
  float a_min, a_max;
  static void Declare(ParamDeclarer<ClipParam>& d) {
    d.field("a_min", &ClipParam::a_min).allow_non_finite().describe("Minimum value");
    d.field("a_max", &ClipParam::a_max).allow_non_finite().describe("Maximum value");
    d.check([](const ClipParam& p) { return p.a_min <= p.a_max; },
            "clip: a_min must not exceed a_max", {"a_min", "a_max"});
  }
};

}  // namespace

SYMBIND_REGISTER_OP(clip)
    .set_monitor_numbered_inputs()
    .describe("Clips (limits) the values in an array to [a_min, a_max]; the gradient passes where "
              "a_min <= x <= a_max.")
    .set_params<ClipParam>()
    .set_infer_shape(SameShape)
    .set_forward([](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<OpReq>& req, const std::vector<NDArray>& out) {
      const auto& p = attrs.param<ClipParam>();
      const float* x = in[0].fdata();
      MapWithReq(out[0].fdata(), out[0].Size(), req[0], [&](int64_t i) {
        return x[i] > p.a_max ? p.a_max : (x[i] < p.a_min ? p.a_min : x[i]);
      });
    })
    .set_backward([](const OpContext&, const NodeAttrs& attrs, const BackwardArgs& a) {
      const auto& p = attrs.param<ClipParam>();
      const float* x = a.inputs[0].fdata();
      const float* g = a.out_grads[0].fdata();
      MapWithReq(InGradOrNull(a, 0), a.in_grads[0].Size(), a.req[0], [&](int64_t i) {
        return x[i] > p.a_max || x[i] < p.a_min ? 0.0f : g[i];
      });
    });

}  // namespace symbind
