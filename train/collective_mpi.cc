// The MPI backend of the distributed KVStore, built as a plugin (libsymbind_mpi.so) that
// Collective::World() loads with dlopen when a dist_* store is created: libsymbind and
// libmxnet do not link MPI, so programs that never go distributed do not need it installed.
#include <symbind/train/collective.h>

#include <symbind/core/error.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <sstream>
#include <thread>

namespace symbind {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kNoticeTag = 7;
constexpr int kNoticeBytes = 1024;
constexpr int64_t kChunkFloats = int64_t{1} << 20;      // 4 MiB per allreduce call
constexpr int64_t kFuseBelowFloats = int64_t{1} << 16;  // arrays under 256 KiB share one buffer
constexpr int64_t kChunkBytes = int64_t{1} << 26;       // per broadcast call

double TimeoutSeconds() {
  const char* env = std::getenv("SYMBIND_DIST_TIMEOUT");
  if (!env || !*env) return 60.0;
  char* end = nullptr;
  double v = std::strtod(env, &end);
  if (*end != '\0' || !(v > 0))
    throw Error(StrCat("SYMBIND_DIST_TIMEOUT must be a positive number of seconds, got '", env, "'"));
  return v;
}

std::string MPIErrorText(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, buf, &len);
  return std::string(buf, static_cast<size_t>(len));
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "'a', 'b', 'c' and 4 more": the keys an operation covers, for messages.
std::string KeyList(const std::vector<std::string>& keys, size_t begin, size_t end) {
  std::string s;
  for (size_t i = begin; i < end && i < begin + 3; ++i) s += (s.empty() ? "'" : ", '") + keys[i] + "'";
  if (end - begin > 3) s += StrCat(" and ", end - begin - 3, " more");
  return s;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(s);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// Ends the process when a blocking MPI call outlives its deadline (MPI has no timeouts); mpirun
// then ends the job. Only the data transfers run blocking, right after a deadline-guarded
// rendezvous (CheckSameEverywhere) that every peer passed, so this fires only when a peer
// stalls in the middle of a transfer.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Run(); }) {}
  ~Watchdog() { Stop(); }
  void Arm(double seconds, std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    seconds_ = seconds;
    what_ = std::move(what);
    armed_ = true;
    cv_.notify_one();
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = false;
  }
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      cv_.wait_until(lock, deadline_);
      if (armed_ && !stop_ && Clock::now() >= deadline_) {
        std::fprintf(stderr, "symbind: %s did not complete within %g s: a peer stalled during the transfer "
                     "(SYMBIND_DIST_TIMEOUT sets the limit); ending this process\n", what_.c_str(), seconds_);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, stop_ = false;
  Clock::time_point deadline_;
  double seconds_ = 0;
  std::string what_;
  std::thread thread_;  // last: started once the fields above exist
};

class MPICollective : public Collective {
 public:
  MPICollective() : timeout_(TimeoutSeconds()) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
      if (rc != MPI_SUCCESS) throw Error(StrCat("KVStore dist_sync: MPI_Init failed: ", MPIErrorText(rc)));
      owns_mpi_ = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_dup(MPI_COMM_WORLD, &notice_comm_);
    MPI_Comm_dup(MPI_COMM_WORLD, &exit_comm_);
    for (MPI_Comm c : {comm_, notice_comm_, exit_comm_}) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    peer_exit_seq_.assign(static_cast<size_t>(size_), -1);
    PostNoticeReceive();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void AllreduceSum(const std::string& op, const std::vector<std::string>& keys,
                    const std::vector<NDArray>& arrays) override {
    std::lock_guard<std::mutex> lock(mu_);
    CheckSameEverywhere(op, keys, arrays);
    for (const NDArray& a : arrays) a.MarkWritten();  // summed in place through their pointers
    for (size_t i = 0; i < arrays.size(); ++i)
      if (arrays[i].dtype() != DType::kFloat32)
        throw Error(StrCat("KVStore dist_sync ", op, ": key '", keys[i], "' is ",
                           DTypeName(arrays[i].dtype()), "; the distributed sum supports float32"));
    std::vector<size_t> fused;  // indices of the small arrays waiting in the fusion buffer
    int64_t fill = 0;
    auto flush = [&] {
      if (fused.empty()) return;
      fusion_.resize(static_cast<size_t>(fill));
      int64_t at = 0;
      for (size_t i : fused) {
        std::copy_n(arrays[i].fdata(), arrays[i].Size(), fusion_.data() + at);
        at += arrays[i].Size();
      }
      std::vector<std::string> names;
      for (size_t i : fused) names.push_back(keys[i]);
      SumInPlace(fusion_.data(), fill, StrCat(op, " of keys ", KeyList(names, 0, names.size())));
      at = 0;
      for (size_t i : fused) {
        std::copy_n(fusion_.data() + at, arrays[i].Size(), arrays[i].fdata());
        at += arrays[i].Size();
      }
      fused.clear();
      fill = 0;
    };
    for (size_t i = 0; i < arrays.size(); ++i) {
      const int64_t n = arrays[i].Size();
      if (n >= kFuseBelowFloats) {
        SumInPlace(arrays[i].fdata(), n, StrCat(op, " of key '", keys[i], "'"));
        continue;
      }
      if (fill + n > kChunkFloats) flush();
      fused.push_back(i);
      fill += n;
    }
    flush();
  }

  void Broadcast(const std::string& op, const std::vector<std::string>& keys,
                 const std::vector<NDArray>& arrays) override {
    std::lock_guard<std::mutex> lock(mu_);
    CheckSameEverywhere(op, keys, arrays);
    for (size_t i = 0; i < arrays.size(); ++i) {
      arrays[i].MarkWritten();
      auto* p = static_cast<char*>(arrays[i].raw_data());
      const int64_t bytes = static_cast<int64_t>(arrays[i].bytes());
      for (int64_t at = 0; at < bytes; at += kChunkBytes) {
        const int count = static_cast<int>(std::min(kChunkBytes, bytes - at));
        const std::string what = StrCat(op, " (broadcast from rank 0) of key '", keys[i], "'");
        watchdog_.Arm(timeout_, Prefix() + what);
        const int rc = MPI_Bcast(p + at, count, MPI_BYTE, 0, comm_);
        watchdog_.Disarm();
        Check(rc, what);
      }
    }
  }

  void Barrier() override {
    std::lock_guard<std::mutex> lock(mu_);
    CheckSameEverywhere("Barrier", {}, {});  // an allgather: no rank passes before all arrive
  }

  // Registered with atexit: a barrier with deadline, then MPI_Finalize; MPI_Abort when the group
  // is broken or a peer does not arrive, so that no process is left waiting.
  void AtExit() {
    if (!owns_mpi_ || finalized_) return;
    std::fflush(stdout);
    if (broken_) Abort(nullptr);
    finalizing_ = true;
    try {
      Notify('X', std::to_string(seq_));
      MPI_Request req;
      Check(MPI_Ibarrier(exit_comm_, &req), "exit");
      Wait(&req, "the barrier at program exit");
      // Each peer sent its exit notice before entering the barrier: take them all, so no
      // message is left unmatched at MPI_Finalize.
      const auto start = Clock::now();
      while (exits_seen_ < size_ - 1) {
        PollNotices("the barrier at program exit");
        if (SecondsSince(start) > timeout_) Fail("exit notices from peers did not arrive");
        std::this_thread::yield();
      }
      for (auto& r : sends_) Check(MPI_Wait(&r, MPI_STATUS_IGNORE), "exit");
    } catch (const std::exception& e) {
      Abort(e.what());
    }
    MPI_Cancel(&notice_req_);
    MPI_Wait(&notice_req_, MPI_STATUS_IGNORE);
    for (MPI_Comm* c : {&comm_, &notice_comm_, &exit_comm_}) MPI_Comm_free(c);
    watchdog_.Stop();
    finalized_ = true;
    MPI_Finalize();
  }

 private:
  [[noreturn]] void Abort(const char* why) {
    if (why) std::fprintf(stderr, "symbind: %s\n", why);
    std::fprintf(stderr, "symbind: KVStore dist_sync rank %d ends the job (MPI_Abort) after: %s\n", rank_,
                 broken_reason_.empty() ? (why ? why : "an error") : broken_reason_.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }

  std::string Prefix() const { return StrCat("KVStore dist_sync, rank ", rank_, " of ", size_, ": "); }

  // Marks the group broken, tells the peers (unless the failure came from one) and throws.
  [[noreturn]] void Fail(const std::string& what, bool notify = true) {
    broken_ = true;
    broken_reason_ = Prefix() + what;
    if (notify) Notify('F', what);
    throw Error(broken_reason_);
  }

  void Check(int code, const std::string& what) {
    if (code != MPI_SUCCESS) Fail(StrCat(what, ": MPI error: ", MPIErrorText(code)));
  }

  void PostNoticeReceive() {
    MPI_Irecv(notice_buf_, kNoticeBytes, MPI_CHAR, MPI_ANY_SOURCE, kNoticeTag, notice_comm_, &notice_req_);
  }

  // Sends a notice ('X' exit after that many collectives, 'F' failure) to every peer.
  void Notify(char kind, const std::string& text) {
    for (int p = 0; p < size_; ++p) {
      if (p == rank_) continue;
      send_bufs_.push_back(std::string(1, kind) + text.substr(0, kNoticeBytes - 1));
      const std::string& b = send_bufs_.back();
      MPI_Request r;
      if (MPI_Isend(b.data(), static_cast<int>(b.size()), MPI_CHAR, p, kNoticeTag, notice_comm_, &r) ==
          MPI_SUCCESS)
        sends_.push_back(r);
    }
    if (kind != 'F') return;
    // Give failure notices a moment to leave before the caller's exception ends the process.
    const auto start = Clock::now();
    int done = 0;
    while (!done && SecondsSince(start) < 1.0) {
      if (MPI_Testall(static_cast<int>(sends_.size()), sends_.data(), &done, MPI_STATUSES_IGNORE) !=
          MPI_SUCCESS)
        break;
      std::this_thread::yield();
    }
  }

  void PollNotices(const std::string& what) {
    for (;;) {
      int done = 0;
      MPI_Status st;
      if (MPI_Test(&notice_req_, &done, &st) != MPI_SUCCESS || !done) return;
      int len = 0;
      MPI_Get_count(&st, MPI_CHAR, &len);
      const char kind = len > 0 ? notice_buf_[0] : '?';
      const std::string text(notice_buf_ + std::min(len, 1), notice_buf_ + std::max(len, 1));
      const int from = st.MPI_SOURCE;
      PostNoticeReceive();
      if (kind == 'X') {
        ++exits_seen_;
        peer_exit_seq_[static_cast<size_t>(from)] = std::atoll(text.c_str());
        continue;
      }
      Fail(StrCat("rank ", from, " failed, so ", what, " cannot complete: ", text), false);
    }
  }

  // Polls a nonblocking collective until it completes, a peer reports a failure or has ended
  // before joining it, or the deadline passes.
  void Wait(MPI_Request* req, const std::string& what) {
    const auto start = Clock::now();
    for (int spins = 0;; ++spins) {
      int done = 0;
      Check(MPI_Test(req, &done, MPI_STATUS_IGNORE), what);
      if (done) return;
      PollNotices(what);
      if (!finalizing_) {
        for (int p = 0; p < size_; ++p) {
          const int64_t ended_after = peer_exit_seq_[static_cast<size_t>(p)];
          if (ended_after >= 0 && ended_after < seq_)
            Fail(StrCat("rank ", p, " has ended (its program finished or stopped on an error) after ",
                        ended_after, " KVStore operations, while this rank waits in ", what,
                        " (operation ", seq_, ")"));
        }
      }
      if (SecondsSince(start) > timeout_)
        Fail(StrCat(what, " did not complete within ", timeout_,
                    " s: a peer is stuck, dead or calling something else (SYMBIND_DIST_TIMEOUT sets "
                    "the limit)"));
      // MPI progresses nonblocking collectives only inside MPI calls: poll busily (yielding the
      // core to other processes) for a while, then back off for long waits such as a peer's
      // forward/backward pass.
      if (spins < 20000) std::this_thread::yield();
      else std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

  void CheckUsable(const std::string& op) const {
    if (finalized_) throw Error(StrCat(Prefix(), op, " after MPI was finalized at program exit"));
    if (broken_) throw Error(StrCat(Prefix(), op, " after an earlier failure: ", broken_reason_));
  }

  // One small allgather of a hash of (op, keys, dtypes, shapes); when the hashes differ, the
  // full descriptions are gathered to say which rank and key differ. Runs before every
  // operation, so mismatched calls (Push here, Barrier there) are caught too.
  void CheckSameEverywhere(const std::string& op, const std::vector<std::string>& keys,
                           const std::vector<NDArray>& arrays) {
    CheckUsable(op);
    ++seq_;
    if (keys.size() != arrays.size())
      throw Error(StrCat("KVStore dist_sync ", op, ": ", keys.size(), " keys but ", arrays.size(), " arrays"));
    std::string mine = op;
    for (size_t i = 0; i < keys.size(); ++i)
      mine += StrCat("\n", keys[i], "\t", DTypeName(arrays[i].dtype()), " ", arrays[i].shape().ToString());
    const uint64_t hash = Fnv1a(mine);
    std::vector<uint64_t> hashes(static_cast<size_t>(size_));
    MPI_Request req;
    Check(MPI_Iallgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, comm_, &req), op);
    Wait(&req, StrCat(op, " (checking keys and shapes across workers)"));
    if (std::all_of(hashes.begin(), hashes.end(), [&](uint64_t h) { return h == hashes[0]; })) return;
    // Gather everyone's description.
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    Check(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm_, &req), op);
    Wait(&req, op);
    int total = 0;
    for (int p = 0; p < size_; ++p) {
      offsets[static_cast<size_t>(p)] = total;
      total += lens[static_cast<size_t>(p)];
    }
    std::string all(static_cast<size_t>(total), '\0');
    Check(MPI_Iallgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(), MPI_CHAR,
                          comm_, &req),
          op);
    Wait(&req, op);
    auto entries = [&](int p) {
      return Split(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(p)]),
                              static_cast<size_t>(lens[static_cast<size_t>(p)])),
                   '\n');
    };
    const std::vector<std::string> ref = entries(0);
    std::string details;
    for (int p = 1; p < size_ && details.empty(); ++p) {
      const std::vector<std::string> other = entries(p);
      if (other == ref) continue;
      auto show = [](const std::string& entry) {
        auto tab = entry.find('\t');
        return tab == std::string::npos ? entry
                                        : StrCat("key '", entry.substr(0, tab), "' ", entry.substr(tab + 1));
      };
      if (other[0] != ref[0]) {
        details = StrCat("rank 0 calls ", ref[0], ", rank ", p, " calls ", other[0]);
      } else if (other.size() != ref.size()) {
        details = StrCat("rank 0 passes ", ref.size() - 1, " keys, rank ", p, " passes ", other.size() - 1);
      } else {
        for (size_t i = 1; i < ref.size(); ++i)
          if (ref[i] != other[i]) {
            details = StrCat("at position ", i - 1, " rank 0 has ", show(ref[i]), ", rank ", p, " has ",
                             show(other[i]));
            break;
          }
      }
    }
    // Every rank gathered the same descriptions and fails with the same message.
    Fail(StrCat(op, ": the workers disagree on the keys or shapes: ", details), false);
  }

  // In chunks (MPI counts are int), with MPI's blocking allreduce under the watchdog.
  void SumInPlace(float* data, int64_t count, const std::string& what) {
    for (int64_t at = 0; at < count; at += kChunkFloats) {
      const int n = static_cast<int>(std::min(kChunkFloats, count - at));
      watchdog_.Arm(timeout_, Prefix() + what);
      const int rc = MPI_Allreduce(MPI_IN_PLACE, data + at, n, MPI_FLOAT, MPI_SUM, comm_);
      watchdog_.Disarm();
      Check(rc, what);
    }
  }

  std::mutex mu_;
  Watchdog watchdog_;
  // Operations, notices between peers, and the barrier at exit (which a peer still in an
  // operation must not mistake for its collective): one communicator each.
  MPI_Comm comm_ = MPI_COMM_NULL, notice_comm_ = MPI_COMM_NULL, exit_comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_;
  bool owns_mpi_ = false;
  bool broken_ = false, finalizing_ = false, finalized_ = false;
  std::string broken_reason_;
  // Operations (Init, Push, Barrier) started; every rank runs the same sequence, so a peer's exit
  // notice carrying its count tells whether it took part in the one this rank waits in.
  int64_t seq_ = 0;
  std::vector<int64_t> peer_exit_seq_;  // per peer: operations it had started when it ended, or -1
  int exits_seen_ = 0;
  MPI_Request notice_req_ = MPI_REQUEST_NULL;
  char notice_buf_[kNoticeBytes];
  std::deque<std::string> send_bufs_;  // stable addresses for pending sends
  std::vector<MPI_Request> sends_;
  std::vector<float> fusion_;
};

MPICollective* g_world = nullptr;

}  // namespace

}  // namespace symbind

// The plugin's entry point, found by Collective::World() (collective.cc) with dlsym.
extern "C" __attribute__((visibility("default"))) symbind::Collective* symbind_mpi_world() {
  using symbind::g_world;
  static std::once_flag once;
  std::call_once(once, [] {
    g_world = new symbind::MPICollective();  // lives until exit: MPI cannot be initialised twice
    std::atexit([] { g_world->AtExit(); });
  });
  return g_world;
}

