// The C functions MXNet's Python package drives beyond the cpp-package's set: raw NDArray
// bytes (pickling), reshape (a 0-dimensional target, ValueError for another size), imperative calls in any dtype, and
// autograd across backward passes. Bad input gives -1 and a message naming the cause.
#include <catch2/catch.hpp>

#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

AtomicSymbolCreator Op(const char* name) {
  OpHandle h = nullptr;
  REQUIRE(NNGetOpHandle(name, &h) == 0);
  return h;
}

NDArrayHandle Floats(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  NDArrayHandle h = nullptr;
  REQUIRE(MXNDArrayCreateEx64(shape.data(), static_cast<int>(shape.size()), 1, 0, 0, 0, &h) == 0);
  REQUIRE(MXNDArraySyncCopyFromCPU(h, values.data(), values.size()) == 0);
  return h;
}

std::vector<float> Values(NDArrayHandle h, size_t n) {
  std::vector<float> v(n);
  REQUIRE(MXNDArraySyncCopyToCPU(h, v.data(), n) == 0);
  return v;
}

std::vector<int64_t> Shape64(NDArrayHandle h) {
  int ndim = 0;
  const int64_t* dims = nullptr;
  REQUIRE(MXNDArrayGetShapeEx64(h, &ndim, &dims) == 0);
  return std::vector<int64_t>(dims, dims + ndim);
}

// One output of `op` on `inputs` (MXImperativeInvokeEx allocating it).
NDArrayHandle Call(const char* op, std::vector<NDArrayHandle> inputs, std::vector<const char*> keys = {},
                   std::vector<const char*> vals = {}) {
  int n_out = 0;
  NDArrayHandle* outs = nullptr;
  const int* stypes = nullptr;
  REQUIRE(MXImperativeInvokeEx(Op(op), static_cast<int>(inputs.size()), inputs.data(), &n_out, &outs,
                               static_cast<int>(keys.size()), keys.data(), vals.data(), &stypes) == 0);
  REQUIRE(n_out == 1);
  return outs[0];
}

std::string LastError() { return MXGetLastError(); }

}  // namespace

TEST_CASE("C API: raw NDArray bytes hold one array without the list header", "[capi][python]") {
  NDArrayHandle a = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  size_t size = 0;
  const char* buf = nullptr;
  REQUIRE(MXNDArraySaveRawBytes(a, &size, &buf) == 0);
  // MXNet's NDArray::Save: the V2 array magic first, then storage type, shape, context, dtype, data.
  uint32_t magic = 0;
  std::memcpy(&magic, buf, 4);
  CHECK(magic == 0xF993FAC9u);
  CHECK(size == 4 + 4 + 4 + 2 * 8 + 4 + 4 + 4 + 6 * 4);
  std::string bytes(buf, size);
  NDArrayHandle b = nullptr;
  REQUIRE(MXNDArrayLoadFromRawBytes(bytes.data(), bytes.size(), &b) == 0);
  CHECK(Shape64(b) == std::vector<int64_t>{2, 3});
  CHECK(Values(b, 6) == std::vector<float>{1, 2, 3, 4, 5, 6});

  // Truncated, with trailing bytes, or a whole .params list: -1 and the cause.
  CHECK(MXNDArrayLoadFromRawBytes(bytes.data(), bytes.size() - 1, &b) == -1);
  CHECK_THAT(LastError(), Catch::Contains("MXNDArrayLoadFromRawBytes") &&
                              Catch::Contains("needs 6 x 4 bytes but only 23 bytes are left"));
  std::string longer = bytes + "x";
  CHECK(MXNDArrayLoadFromRawBytes(longer.data(), longer.size(), &b) == -1);
  CHECK_THAT(LastError(), Catch::Contains("1 trailing bytes after the array"));
  CHECK(MXNDArrayLoadFromRawBytes(nullptr, 4, &b) == -1);
  CHECK_THAT(LastError(), Catch::Contains("argument 'buf' is null"));
  CHECK(MXNDArraySaveRawBytes(a, nullptr, &buf) == -1);
  CHECK_THAT(LastError(), Catch::Contains("argument 'out_size' is null"));
  REQUIRE(MXNDArrayFree(b) == 0);
  REQUIRE(MXNDArrayFree(a) == 0);
  CHECK(MXNDArraySaveRawBytes(a, &size, &buf) == -1);
  CHECK_THAT(LastError(), Catch::Contains("not a live NDArrayHandle"));
}

TEST_CASE("C API: reshape to () makes a 0-dimensional array of one element", "[capi][python]") {
  NDArrayHandle a = Floats({1}, {7});
  NDArrayHandle s = nullptr;
  REQUIRE(MXNDArrayReshape64(a, 0, nullptr, false, &s) == 0);
  CHECK(Shape64(s).empty());
  CHECK(Values(s, 1) == std::vector<float>{7});
  NDArrayHandle six = Floats({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArrayHandle bad = nullptr;
  CHECK(MXNDArrayReshape64(six, 0, nullptr, false, &bad) == -1);
  // Another size is NumPy's ValueError: the message starts with the kind the Python package raises.
  CHECK_THAT(LastError(), Catch::StartsWith("ValueError: MXNDArrayReshape64: ") &&
                              Catch::Contains("cannot reshape an array of shape (2,3) (6 elements) into shape ()"));
  const int64_t four[] = {4};
  CHECK(MXNDArrayReshape64(six, 1, const_cast<int64_t*>(four), false, &bad) == -1);
  CHECK_THAT(LastError(), Catch::StartsWith("ValueError: MXNDArrayReshape64: ") && Catch::Contains("(4,)"));
  // reverse reads both shapes from the right: (2,3,5) with (-1, 0) copies the 5, not the 2.
  NDArrayHandle t = Floats({2, 3, 5}, std::vector<float>(30, 1.0f));
  const int64_t rev[] = {-1, 0};
  NDArrayHandle r = nullptr;
  REQUIRE(MXNDArrayReshape64(t, 2, const_cast<int64_t*>(rev), true, &r) == 0);
  CHECK(Shape64(r) == std::vector<int64_t>{6, 5});
  REQUIRE(MXNDArrayFree(r) == 0);
  REQUIRE(MXNDArrayReshape64(t, 2, const_cast<int64_t*>(rev), false, &r) == 0);
  CHECK(Shape64(r) == std::vector<int64_t>{10, 3});
  for (NDArrayHandle h : {t, r}) REQUIRE(MXNDArrayFree(h) == 0);
  // Errors that are not about the size keep the plain form.
  CHECK(MXNDArrayReshape64(six, -1, nullptr, false, &bad) == -1);
  CHECK_THAT(LastError(), Catch::StartsWith("MXNDArrayReshape64: ndim is negative"));
  for (NDArrayHandle h : {a, s, six}) REQUIRE(MXNDArrayFree(h) == 0);
}

TEST_CASE("C API: imperative calls compute in the arrays' dtype", "[capi][python]") {
  // int32 beyond float32's exact range (MXNet's test_large_int_rounding).
  const int64_t shape[] = {1};
  NDArrayHandle x = nullptr;
  REQUIRE(MXNDArrayCreateEx64(shape, 1, 1, 0, 0, /*int32*/ 4, &x) == 0);
  const int32_t big = 1234567891;
  REQUIRE(MXNDArraySyncCopyFromCPU(x, &big, 1) == 0);
  NDArrayHandle eq = Call("_equal_scalar", {x}, {"scalar"}, {"1234567891"});
  int dtype = -1;
  REQUIRE(MXNDArrayGetDType(eq, &dtype) == 0);
  CHECK(dtype == 4);
  int32_t v = 0;
  REQUIRE(MXNDArraySyncCopyToCPU(eq, &v, 1) == 0);
  CHECK(v == 1);
  NDArrayHandle twice = Call("_mul_scalar", {x}, {"scalar"}, {"1"});
  REQUIRE(MXNDArraySyncCopyToCPU(twice, &v, 1) == 0);
  CHECK(v == big);
  // A bool array has no arithmetic here: -1 naming the op and dtype.
  NDArrayHandle b = nullptr;
  REQUIRE(MXNDArrayCreateEx64(shape, 1, 1, 0, 0, /*bool*/ 7, &b) == 0);
  int n_out = 0;
  NDArrayHandle* outs = nullptr;
  NDArrayHandle in[] = {b, b};
  CHECK(MXImperativeInvokeEx(Op("elemwise_add"), 2, in, &n_out, &outs, 0, nullptr, nullptr, nullptr) == -1);
  CHECK_THAT(LastError(), Catch::Contains("elemwise_add: unsupported dtype bool"));
  for (NDArrayHandle h : {x, eq, twice, b}) REQUIRE(MXNDArrayFree(h) == 0);
}

TEST_CASE("C API: an output of a freed graph is a constant in the next recording", "[capi][python][autograd]") {
  NDArrayHandle w = Floats({2}, {1, 2});
  NDArrayHandle g = Floats({2}, {0, 0});
  uint32_t req = 1;  // write
  REQUIRE(MXAutogradMarkVariables(1, &w, &req, &g) == 0);
  int prev = 0;
  REQUIRE(MXAutogradSetIsRecording(1, &prev) == 0);
  NDArrayHandle y = Call("_mul_scalar", {w}, {"scalar"}, {"3"});
  REQUIRE(MXAutogradBackwardEx(1, &y, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(g, 2) == std::vector<float>{3, 3});
  // The graph is freed: backward through y again fails with the reason ...
  CHECK(MXAutogradBackwardEx(1, &y, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
  CHECK_THAT(LastError(), Catch::Contains("freed by an earlier backward") && Catch::Contains("retain_graph=True"));
  // ... but y read in a new recording is a constant: z = y * w differentiates to y only.
  NDArrayHandle z = Call("elemwise_mul", {y, w});
  REQUIRE(MXAutogradBackwardEx(1, &z, nullptr, 0, nullptr, 1, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(g, 2) == std::vector<float>{3, 6});
  // retain_graph kept it: a second backward gives the same gradient.
  REQUIRE(MXAutogradBackwardEx(1, &z, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == 0);
  CHECK(Values(g, 2) == std::vector<float>{3, 6});
  REQUIRE(MXAutogradSetIsRecording(prev, nullptr) == 0);
  for (NDArrayHandle h : {w, g, y, z}) REQUIRE(MXNDArrayFree(h) == 0);
  CHECK(MXAutogradBackwardEx(1, &z, nullptr, 0, nullptr, 0, 0, 1, nullptr, nullptr) == -1);
  CHECK_THAT(LastError(), Catch::Contains("not a live NDArrayHandle"));
}
