// C API handles for symbind's native objects (libmxnet.so), for mxnet-cpp's GetHandle(): the
// handle refers to the same array storage / graph and is freed with MXNDArrayFree /
// MXSymbolFree.
#pragma once
#include <mxnet/c_api.h>

namespace symbind {
class NDArray;
class Symbol;
namespace capi {
NDArrayHandle NewNDArrayHandle(const symbind::NDArray& array);
SymbolHandle NewSymbolHandle(const symbind::Symbol& symbol);
}  // namespace capi
}  // namespace symbind
