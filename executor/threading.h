// Thread count for symbind's TBB work. The environment variable SYMBIND_NUM_THREADS, read at
// library load, sets the initial value; SetNumThreads changes it for the whole process.
#pragma once

namespace symbind {

void SetNumThreads(int n);  // n <= 0 restores TBB's default (all cores)
int GetNumThreads();

}  // namespace symbind
