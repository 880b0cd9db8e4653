// MXNet cpp-package compatibility: the one header MXNet C++ programs include.
//   #include "mxnet-cpp/MxNetCpp.h"
//   using namespace mxnet::cpp;
// See docs/coming-from-mxnet.md for the supported subset.
#pragma once
// What MXNet's MxNetCpp.h brought in, which programs rely on.
#include <cassert>
#include <cstring>
#include <random>

#include <dmlc/logging.h>
#include <mxnet/c_api.h>

#include "mxnet-cpp/base.h"
#include "mxnet-cpp/contrib.h"
#include "mxnet-cpp/executor.h"
#include "mxnet-cpp/initializer.h"
#include "mxnet-cpp/io.h"
#include "mxnet-cpp/kvstore.h"
#include "mxnet-cpp/lr_scheduler.h"
#include "mxnet-cpp/metric.h"
#include "mxnet-cpp/monitor.h"
#include "mxnet-cpp/ndarray.h"
#include "mxnet-cpp/op.h"
#include "mxnet-cpp/op_map.h"
#include "mxnet-cpp/op_suppl.h"
#include "mxnet-cpp/op_util.h"
#include "mxnet-cpp/operator.h"
#include "mxnet-cpp/optimizer.h"
#include "mxnet-cpp/shape.h"
#include "mxnet-cpp/symbol.h"
