// libFuzzer target: the .params (NDArray list) loader, and a save/load round trip of
// whatever it accepts.
#include <cstring>

#include <symbind/io/ndarray_file.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  symbind::NDArrayLoadOptions options;
  options.max_dense_bytes_from_sparse = uint64_t{64} << 20;  // under libFuzzer's malloc limit
  symbind::NDArrayFile f;
  try {
    f = symbind::LoadNDArrayBuffer(data, size, options);
  } catch (const symbind::IOError&) {
    return 0;
  }
  // Anything loaded must save and load back to the same bytes.
  const std::string saved = symbind::SaveNDArraysToString(f.arrays, f.names);
  symbind::NDArrayFile back = symbind::LoadNDArrayBuffer(saved.data(), saved.size());
  if (back.arrays.size() != f.arrays.size()) __builtin_trap();
  for (size_t i = 0; i < f.arrays.size(); ++i) {
    const symbind::NDArray &a = f.arrays[i], &b = back.arrays[i];
    if (a.is_none() != b.is_none()) __builtin_trap();
    if (a.is_none()) continue;
    if (a.shape() != b.shape() || a.dtype() != b.dtype() ||
        std::memcmp(a.raw_data(), b.raw_data(), a.bytes()) != 0)
      __builtin_trap();
  }
  return 0;
}
