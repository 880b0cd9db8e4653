// cast_storage: converts between storage types. Every array here is dense (a sparse array is a
// dense one tagged with its storage type at the C API), so the result is a copy (gradient: a
// copy back).
#include <symbind/ops/op_util.h>

namespace symbind {

namespace {
constexpr int kDefaultStorage = 0;

struct CastStorageParam : Parameter<CastStorageParam> {
  int stype;
  static void Declare(ParamDeclarer<CastStorageParam>& d) {
    d.field("stype", &CastStorageParam::stype)
        .add_enum("default", kDefaultStorage)
        .add_enum("row_sparse", 1)
        .add_enum("csr", 2)
        .describe("Output storage type.");
  }
};
}  // namespace

SYMBIND_REGISTER_OP(cast_storage)
    .set_monitor_numbered_inputs()
    .describe("Casts tensor storage type to the new type. Arrays are computed dense whatever their "
              "storage type, so the result is a copy of the input; MXNet's C API reports the new type.")
    .set_params<CastStorageParam>()
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

}  // namespace symbind
