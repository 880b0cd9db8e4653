// cast_storage: a copy to any storage type (arrays compute dense; the C API tags the result's
// storage type, tests/capi/test_capi_sparse.cc); gradient: the head gradient.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("cast_storage copies, whatever the target storage type", "[ops][cast_storage]") {
  NDArray x = RandomArray(TShape({2, 3}), 7);
  NDArray y = RunForward("cast_storage", {{"stype", "default"}}, {{"data", x}});
  CHECK(y.shape() == x.shape());
  CHECK(y.ToVector() == x.ToVector());
  CHECK_FALSE(y.SharesStorageWith(x));
  // Any dtype: a byte copy.
  NDArray ints(TShape({3}), DType::kInt64);
  for (int64_t i = 0; i < 3; ++i) ints.data<int64_t>()[i] = (int64_t{1} << 40) + i;
  NDArray yi = RunForward("cast_storage", {{"stype", "default"}}, {{"data", ints}});
  CHECK(yi.data<int64_t>()[2] == (int64_t{1} << 40) + 2);
  CheckGradients("cast_storage", {{"stype", "default"}}, {{"data", x}});
  for (const char* sparse : {"row_sparse", "csr"}) {
    INFO(sparse);
    CHECK(RunForward("cast_storage", {{"stype", sparse}}, {{"data", x}}).ToVector() == x.ToVector());
  }
  CHECK_THROWS_AS(Symbol::Create("cast_storage", "c", {{"stype", "dense"}}, {}), ParamError);
}
