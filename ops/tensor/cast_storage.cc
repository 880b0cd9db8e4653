// cast_storage: converts between storage types. Every array here is dense, so the dense target
// is a copy (gradient: a copy back); a sparse target is refused by name when parsed.
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
    d.check([](const CastStorageParam& p) { return p.stype == kDefaultStorage; },
            "cast_storage: sparse storage (row_sparse, csr) is not supported by symbind; every array is "
            "dense (stype='default')",
            {"stype"});
  }
};
}  // namespace

SYMBIND_REGISTER_OP(cast_storage)
    .describe("Casts tensor storage type to the new type. Only the dense (default) storage type exists "
              "here, so the result is a copy of the input.")
    .set_params<CastStorageParam>()
    .set_infer_shape(SameShape)
    .set_dtype_generic()  // byte copies
    .set_forward(ForwardCopy)
    .set_backward(BackwardCopy);

}  // namespace symbind
