// MXNet cpp-package compatibility: mxnet-cpp/op_util.h. MXNet's version holds only Caffe
// protobuf helpers, compiled when MXNET_USE_CAFFE is set; symbind has no Caffe plugin, so
// the header is empty and a program that sets MXNET_USE_CAFFE stops here.
#pragma once
#if defined(MXNET_USE_CAFFE) && MXNET_USE_CAFFE != 0
#error "mxnet-cpp/op_util.h: MXNET_USE_CAFFE is set, but symbind has no Caffe operator plugin"
#endif
