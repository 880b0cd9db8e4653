// SequenceMask, SequenceLast, SequenceReverse: against naive loops over (time, batch, feature)
// written here, on axis 0 and 1, with and without sequence_length (float and int32), gradients
// against finite differences, and the length and axis errors.
#include "op_test_util.h"

using namespace symbind;
using namespace symbind::test;

namespace {
// Element (t, n, k) of a 3-D array with time on `axis`.
float At(const NDArray& a, int axis, int64_t t, int64_t n, int64_t k) {
  return axis == 0 ? a.At({t, n, k}) : a.At({n, t, k});
}

KwArgs SeqParams(bool use_length, int axis) {
  return {{"use_sequence_length", use_length ? "True" : "False"}, {"axis", std::to_string(axis)}};
}

GradCheckOptions NoLengthGrad() {
  GradCheckOptions opt;
  opt.no_grad = {"sequence_length"};
  return opt;
}
}  // namespace

TEST_CASE("SequenceMask masks steps past each length on axis 0 and 1", "[ops][sequence]") {
  const int64_t T = 4, N = 3, K = 2;
  const NDArray lengths({N}, {2, 4, 0});
  // As MXNet, a length past the time axis masks nothing and a negative one masks everything.
  const NDArray beyond({N}, {9, -3, 1});
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    const NDArray x = RandomArray(axis == 0 ? TShape({T, N, K}) : TShape({N, T, K}), 4 + axis);
    KwArgs params = SeqParams(true, axis);
    params["value"] = "-7.5";
    const NDArray y = RunForward("SequenceMask", params, {{"data", x}, {"sequence_length", lengths}});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
          CHECK(At(y, axis, t, n, k) == (t < lengths.GetFlat(n) ? At(x, axis, t, n, k) : -7.5f));
    CheckGradients("SequenceMask", params, {{"data", x}, {"sequence_length", lengths}}, NoLengthGrad());
    const NDArray z = RunForward("SequenceMask", params, {{"data", x}, {"sequence_length", beyond}});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k)
          CHECK(At(z, axis, t, n, k) == (t < beyond.GetFlat(n) ? At(x, axis, t, n, k) : -7.5f));
    // Without use_sequence_length: the identity.
    RequireClose(RunForward("SequenceMask", SeqParams(false, axis), {{"data", x}}), x, 0, 0);
  }
}

TEST_CASE("SequenceLast takes each sequence's last valid step", "[ops][sequence]") {
  const int64_t T = 5, N = 3, K = 2;
  for (int axis : {0, 1}) {
    INFO("axis " << axis);
    const NDArray x = RandomArray(axis == 0 ? TShape({T, N, K}) : TShape({N, T, K}), 9 + axis);
    NDArray lengths({N}, DType::kInt32);
    const std::vector<int32_t> len{3, 5, 1};
    lengths.SyncCopyFromCPU(len.data(), len.size());
    const NDArray y = RunForward("SequenceLast", SeqParams(true, axis), {{"data", x}, {"sequence_length", lengths}});
    REQUIRE(y.shape() == TShape({N, K}));
    const NDArray last = RunForward("SequenceLast", SeqParams(false, axis), {{"data", x}});
    for (int64_t n = 0; n < N; ++n)
      for (int64_t k = 0; k < K; ++k) {
        CHECK(y.At({n, k}) == At(x, axis, len[n] - 1, n, k));
        CHECK(last.At({n, k}) == At(x, axis, T - 1, n, k));
      }
    CheckGradients("SequenceLast", SeqParams(true, axis),
                   {{"data", x}, {"sequence_length", NDArray({N}, {3, 5, 1})}}, NoLengthGrad());
  }
  // Rank 4: the trailing axes are features.
  const NDArray x4 = RandomArray({3, 2, 2, 2}, 12);
  const NDArray y4 = RunForward("SequenceLast", SeqParams(true, 0), {{"data", x4}, {"sequence_length", NDArray({2}, {2, 3})}});
  CHECK(y4.At({1, 1, 0}) == x4.At({2, 1, 1, 0}));
  CHECK(y4.At({0, 0, 1}) == x4.At({1, 0, 0, 1}));
  CHECK_THROWS_WITH(RunForward("SequenceLast", SeqParams(true, 0), {{"data", x4}, {"sequence_length", NDArray({2}, {0, 3})}}),
                    Catch::Contains("sequence_length[0] = 0 is out of range"));
}

TEST_CASE("SequenceReverse reverses each valid prefix and keeps the padding", "[ops][sequence]") {
  const int64_t T = 4, N = 3, K = 2;
  const NDArray x = RandomArray({T, N, K}, 13);
  const NDArray lengths({N}, {2, 4, 0});
  const NDArray y = RunForward("SequenceReverse", SeqParams(true, 0), {{"data", x}, {"sequence_length", lengths}});
  const NDArray full = RunForward("SequenceReverse", SeqParams(false, 0), {{"data", x}});
  for (int64_t n = 0; n < N; ++n) {
    const int64_t len = static_cast<int64_t>(lengths.GetFlat(n));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t k = 0; k < K; ++k) {
        CHECK(y.At({t, n, k}) == x.At({t < len ? len - 1 - t : t, n, k}));
        CHECK(full.At({t, n, k}) == x.At({T - 1 - t, n, k}));
      }
  }
  CheckGradients("SequenceReverse", SeqParams(true, 0), {{"data", x}, {"sequence_length", lengths}}, NoLengthGrad());
  CHECK_THROWS_AS(InferShape(SingleOpSymbol("SequenceReverse", SeqParams(false, 1)), {{"op_data", TShape({2, 3, 4})}}),
                  ShapeError);
  CHECK_THROWS_WITH(RunForward("SequenceReverse", SeqParams(true, 0), {{"data", x}, {"sequence_length", NDArray({N}, {2, 5, 0})}}),
                    Catch::Contains("sequence_length[1] = 5"));
  Symbol s = SingleOpSymbol("SequenceReverse", SeqParams(true, 0));
  CHECK(s.ListArguments() == std::vector<std::string>{"op_data", "op_sequence_length"});
  CHECK(InferShape(s, {{"op_data", TShape({5, 3, 2})}}).arg_shapes[1] == TShape({3}));
}
