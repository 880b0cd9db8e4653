// MXNet cpp-package compatibility: mxnet-cpp/shape.h. symbind's Shape lives in base.h (one
// definition); this header exists because MXNet programs include it by name.
#pragma once
#include "mxnet-cpp/base.h"
