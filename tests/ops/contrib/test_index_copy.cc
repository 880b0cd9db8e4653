// _contrib_index_copy: rows of new_tensor copied into old_tensor at the indices, against a naive
// copy; gradients by finite differences; indices out of range and bad shapes named.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

TEST_CASE("_contrib_index_copy replaces the indexed rows", "[ops][index_copy][grad]") {
  NDArray old_t = RandomArray(TShape({5, 3}), 1), new_t = RandomArray(TShape({3, 3}), 2);
  NDArray idx(TShape({3}), {0, 4, 2});
  NDArray want = old_t.Copy();
  const int rows[3] = {0, 4, 2};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) want.SetFlat(rows[i] * 3 + j, new_t.GetFlat(i * 3 + j));
  for (DType it : {DType::kFloat32, DType::kInt64}) {
    RequireClose(RunForward("_contrib_index_copy", {},
                            {{"old_tensor", old_t}, {"index_vector", idx.AsType(it)}, {"new_tensor", new_t}}),
                 want);
  }
  GradCheckOptions opt;
  opt.no_grad = {"index_vector"};
  CheckGradients("_contrib_index_copy", {}, {{"old_tensor", old_t}, {"index_vector", idx}, {"new_tensor", new_t}}, opt);
}

TEST_CASE("_contrib_index_copy rejects indices out of range and mismatched shapes", "[ops][index_copy]") {
  NDArray old_t = RandomArray(TShape({4, 2}), 1), new_t = RandomArray(TShape({2, 2}), 2);
  CHECK_THROWS_WITH(Invoke("_contrib_index_copy", {}, {old_t, NDArray(TShape({2}), {1, 4}), new_t}),
                    Catch::Contains("index 4 is out of bounds"));
  CHECK_THROWS_WITH(Invoke("_contrib_index_copy", {}, {old_t, NDArray(TShape({3}), {0, 1, 2}), new_t}),
                    Catch::Contains("one index per row"));
  CHECK_THROWS_WITH(Invoke("_contrib_index_copy", {}, {old_t, NDArray(TShape({2}), {0, 1}), RandomArray(TShape({2, 3}), 3)}),
                    Catch::Contains("no larger"));
}
