// Umbrella header: everything a user of symbind needs.
#pragma once
#include <symbind/core/graph.h>
#include <symbind/core/input_roles.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/core/param.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/checkpoint.h>
#include <symbind/io/mnist.h>
#include <symbind/io/model_file.h>
#include <symbind/io/ndarray_file.h>
#include <symbind/io/symbol_json.h>
#include <symbind/predict/predictor.h>
#include <symbind/train/kvstore.h>
