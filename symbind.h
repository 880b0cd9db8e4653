// Umbrella header: everything a user of symbind needs.
#pragma once
#include <symbind/core/graph.h>
#include <symbind/core/ndarray.h>
#include <symbind/core/op.h>
#include <symbind/core/param.h>
#include <symbind/core/symbol.h>
#include <symbind/executor/executor.h>
#include <symbind/executor/threading.h>
#include <symbind/io/mnist.h>
#include <symbind/train/kvstore.h>
