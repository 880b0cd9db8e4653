// libFuzzer entry point; the target itself is in fuzz_targets.h (shared with the regression test).
#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  symbind::fuzz::ModelFileTarget(data, size);
  return 0;
}
