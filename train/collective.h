// The MPI side of the distributed KVStore: one process group (MPI_COMM_WORLD) and the few
// collectives data-parallel training needs, each with a deadline and a check that every worker
// passes the same keys and shapes.
//
// MPI is optional at build time (CMake option SYMBIND_MPI, on when MPI is found). Without it
// Collective::World() throws an Error saying how to enable it.
//
// Faults. MPI's collectives wait forever for a peer that is gone, and offer no timeout. So each
// operation starts with a rendezvous: a nonblocking allgather of a hash of (operation, keys,
// dtypes, shapes), polled with a deadline (SYMBIND_DIST_TIMEOUT seconds, default 60), which also
// detects mismatched keys or shapes. Besides, each rank listens for notices from its peers on a
// side channel: a rank whose operation fails tells the others ("rank 1 failed: ..."), and a rank
// whose program ends says so at exit, so peers waiting at a rendezvous that rank will never
// reach stop at once with an error naming it instead of waiting for the deadline. Once every
// peer has arrived, the data moves with MPI's blocking collectives (much faster than the
// nonblocking ones here), under a watchdog thread that ends the process if one outlives the
// deadline. A killed process is noticed by mpirun, which ends the job.
// After a failure the group is broken: later calls throw, and at exit the process calls
// MPI_Abort so that no peer is left waiting; otherwise exit runs MPI_Finalize after a barrier.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <symbind/core/ndarray.h>

namespace symbind {

class Collective {
 public:
  // The process group of this job, initialising MPI on first use (MPI_THREAD_SERIALIZED).
  // Throws Error when this build has no MPI.
  static Collective& World();
  // Whether this library was built with MPI.
  static bool Available();

  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every worker passes arrays for the same keys with the same dtypes and shapes, in the same
  // order; otherwise all of them throw an Error naming the rank, key and shapes that differ.
  // `op` names the caller in messages ("Push", "Init").

  // Sums float32 arrays over all workers, in place: small arrays are fused into one buffer, large
  // ones reduced in chunks.
  virtual void AllreduceSum(const std::string& op, const std::vector<std::string>& keys,
                            const std::vector<NDArray>& arrays) = 0;
  // Overwrites each array with rank 0's.
  virtual void Broadcast(const std::string& op, const std::vector<std::string>& keys,
                         const std::vector<NDArray>& arrays) = 0;
  virtual void Barrier() = 0;
};

}  // namespace symbind
