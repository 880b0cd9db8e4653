// The only file compiled with the shared directory's path, so that pointing SYMBIND_SHARED_DIR
// elsewhere rebuilds one file.
#include "shared_dir.h"

namespace symbind_test {

std::string SharedDir() { return SYMBIND_SHARED_DIR; }

}  // namespace symbind_test
