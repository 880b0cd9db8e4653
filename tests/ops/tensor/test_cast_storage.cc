// cast_storage: to the dense storage type a copy (gradient: the head gradient); sparse targets
// are refused with the reason.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("cast_storage to default copies, sparse targets are refused", "[ops][cast_storage]") {
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
    CHECK_THROWS_WITH(Symbol::Create("cast_storage", "c", {{"stype", sparse}}, {}),
                      Catch::Contains("sparse storage (row_sparse, csr) is not supported by symbind"));
  }
  CHECK_THROWS_AS(Symbol::Create("cast_storage", "c", {{"stype", "dense"}}, {}), ParamError);
}
