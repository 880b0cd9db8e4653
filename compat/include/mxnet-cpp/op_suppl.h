// MXNet cpp-package compatibility: the hand-written operator helpers of op_suppl.h
// (_Plus, _MulScalar, ..., and Activation with a string act_type).
#pragma once
#include <string>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/operator.h"
#include "mxnet-cpp/symbol.h"

namespace mxnet {
namespace cpp {

inline Symbol _Plus(Symbol lhs, Symbol rhs) { return Operator("_Plus")(lhs, rhs).CreateSymbol(); }
inline Symbol _Mul(Symbol lhs, Symbol rhs) { return Operator("_Mul")(lhs, rhs).CreateSymbol(); }
inline Symbol _Minus(Symbol lhs, Symbol rhs) { return Operator("_Minus")(lhs, rhs).CreateSymbol(); }
inline Symbol _Div(Symbol lhs, Symbol rhs) { return Operator("_Div")(lhs, rhs).CreateSymbol(); }
inline Symbol _Power(Symbol lhs, Symbol rhs) { return Operator("_Power")(lhs, rhs).CreateSymbol(); }
inline Symbol _Maximum(Symbol lhs, Symbol rhs) { return Operator("_Maximum")(lhs, rhs).CreateSymbol(); }
inline Symbol _Minimum(Symbol lhs, Symbol rhs) { return Operator("_Minimum")(lhs, rhs).CreateSymbol(); }

#define SYMBIND_COMPAT_SCALAR_OP(Name)                                               \
  inline Symbol Name(Symbol lhs, mx_float scalar) {                                  \
    return Operator(#Name).SetParam("scalar", scalar)(lhs).CreateSymbol();           \
  }
SYMBIND_COMPAT_SCALAR_OP(_PlusScalar)
SYMBIND_COMPAT_SCALAR_OP(_MinusScalar)
SYMBIND_COMPAT_SCALAR_OP(_RMinusScalar)
SYMBIND_COMPAT_SCALAR_OP(_MulScalar)
SYMBIND_COMPAT_SCALAR_OP(_DivScalar)
SYMBIND_COMPAT_SCALAR_OP(_RDivScalar)
SYMBIND_COMPAT_SCALAR_OP(_PowerScalar)
SYMBIND_COMPAT_SCALAR_OP(_RPowerScalar)
SYMBIND_COMPAT_SCALAR_OP(_MaximumScalar)
SYMBIND_COMPAT_SCALAR_OP(_MinimumScalar)
#undef SYMBIND_COMPAT_SCALAR_OP

// Activation with act_type as a string ("relu", "sigmoid", "softrelu", "softsign", "tanh").
inline Symbol Activation(const std::string& symbol_name, Symbol data, const std::string& act_type) {
  return Operator("Activation").SetParam("act_type", act_type).SetInput("data", data).CreateSymbol(symbol_name);
}
inline Symbol Activation(const std::string& symbol_name, Symbol data, const char* act_type) {
  return Activation(symbol_name, data, std::string(act_type));
}

}  // namespace cpp
}  // namespace mxnet
