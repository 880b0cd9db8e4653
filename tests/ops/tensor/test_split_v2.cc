// _split_v2: parts at start indices or in sections (the first size % sections one longer), with
// squeeze_axis; against naive slicing; gradients; shape errors.
#include <symbind/executor/invoke.h>

#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Elements [begin, end) along axis 1 of a (2, n) array.
std::vector<float> Columns(const NDArray& x, int64_t begin, int64_t end) {
  std::vector<float> v;
  for (int64_t r = 0; r < x.shape()[0]; ++r)
    for (int64_t c = begin; c < end; ++c) v.push_back(x.At({r, c}));
  return v;
}
}  // namespace

TEST_CASE("_split_v2 cuts at indices or into sections", "[ops][split_v2]") {
  NDArray x = RandomArray(TShape({2, 6}), 21);
  std::vector<NDArray> parts = Invoke("_split_v2", {{"indices", "(0, 1, 4)"}, {"axis", "1"}}, {x});
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].shape() == TShape({2, 1}));
  CHECK(parts[1].shape() == TShape({2, 3}));
  CHECK(parts[2].shape() == TShape({2, 2}));
  CHECK(parts[0].ToVector() == Columns(x, 0, 1));
  CHECK(parts[1].ToVector() == Columns(x, 1, 4));
  CHECK(parts[2].ToVector() == Columns(x, 4, 6));
  // sections: 6 into 4 gives lengths 2, 2, 1, 1.
  std::vector<NDArray> sec = Invoke("_split_v2", {{"indices", "()"}, {"sections", "4"}, {"axis", "-1"}}, {x});
  REQUIRE(sec.size() == 4);
  CHECK(sec[1].ToVector() == Columns(x, 2, 4));
  CHECK(sec[3].ToVector() == Columns(x, 5, 6));
  // squeeze_axis drops the axis of length-1 parts.
  std::vector<NDArray> rows = Invoke("_split_v2", {{"indices", "(0, 1)"}, {"axis", "0"}, {"squeeze_axis", "True"}}, {x});
  CHECK(rows[1].shape() == TShape({6}));
  for (int64_t c = 0; c < 6; ++c) CHECK(rows[1].GetFlat(c) == x.At({1, c}));
  CheckGradients("_split_v2", {{"indices", "(0, 2, 3)"}, {"axis", "1"}}, {{"data", x}});

  CHECK_THROWS_WITH(Invoke("_split_v2", {{"indices", "(0, 4, 2)"}, {"axis", "1"}}, {x}),
                    Catch::Contains("_split_v2: part 1 would cover [4, 2) of an axis of size 6"));
  CHECK_THROWS_WITH(Invoke("_split_v2", {{"indices", "(0, 3)"}, {"axis", "1"}, {"squeeze_axis", "True"}}, {x}),
                    Catch::Contains("squeeze_axis needs parts of length 1"));
  CHECK_THROWS_WITH(Symbol::Create("_split_v2", "s", {{"indices", "()"}}, {}),
                    Catch::Contains("give sections > 0, or at least one split index"));
}
