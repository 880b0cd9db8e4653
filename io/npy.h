// NumPy ".npy" files: one array each.
//
// Layout: "\x93NUMPY", uint8 major, uint8 minor, a little-endian header length (uint16 in
// version 1.0, uint32 in 2.0 and 3.0), an ASCII header holding a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a final '\n', then the raw data.
//
// Read: versions 1.0, 2.0 and 3.0; C order (Fortran order only where it is the same thing,
// rank <= 1); little-endian dtypes '<f4' '<f8' '<f2' '<i4' '<i8' and the one-byte '|u1' '|i1'
// '|b1' (bools are stored as 0/1). Anything else, and every malformed or truncated file (a bad
// magic or header, a data size that differs from what the shape needs), throws IOError naming
// the file and the fault.
// Write: exactly the bytes numpy.save writes for the same array (version 1.0 header, padded so
// that the data starts at a multiple of 64).
#pragma once
#include <cstddef>
#include <string>

#include <symbind/core/ndarray.h>

namespace symbind {

NDArray LoadNpy(const std::string& path);
// `what` names the source in error messages.
NDArray LoadNpyBuffer(const void* data, size_t size, const std::string& what = "npy buffer");

// Throws symbind::Error for a none array or a dtype NumPy has no .npy name for (bfloat16).
std::string SaveNpyToString(const NDArray& array);
void SaveNpy(const std::string& path, const NDArray& array);

// The .npy dtype string of `dtype` ("<f4", "|u1", ...); throws symbind::Error for bfloat16.
std::string NpyDescr(DType dtype);

}  // namespace symbind
