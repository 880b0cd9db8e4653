// The process-level part of MXNet's C API that its Python package calls at import and in
// ordinary scripts: operator and function lists, library features, environment, profiler,
// engine settings. Features symbind does not have answer with a clear error naming them.
#include <mxnet/c_api.h>
#include <nnvm/c_api.h>

#include <cpuid.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "c_api_common.h"

namespace symbind {
namespace capi {
namespace {

// CPUID leaf 1, ECX bit 29: clang's __builtin_cpu_supports does not know "f16c".
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
}

// MXNet's feature table (libinfo.h order). CPU instruction sets are read from this CPU.
std::vector<LibFeature> BuildFeatures() {
  __builtin_cpu_init();
#define SYMBIND_CPU(name) (__builtin_cpu_supports(name) != 0)
  struct Named {
    const char* name;
    bool enabled;
  };
  const Named table[] = {
      {"CUDA", false}, {"CUDNN", false}, {"NCCL", false}, {"CUDA_RTC", false}, {"TENSORRT", false},
      {"CPU_SSE", SYMBIND_CPU("sse")}, {"CPU_SSE2", SYMBIND_CPU("sse2")}, {"CPU_SSE3", SYMBIND_CPU("sse3")},
      {"CPU_SSE4_1", SYMBIND_CPU("sse4.1")}, {"CPU_SSE4_2", SYMBIND_CPU("sse4.2")}, {"CPU_SSE4A", SYMBIND_CPU("sse4a")},
      {"CPU_AVX", SYMBIND_CPU("avx")}, {"CPU_AVX2", SYMBIND_CPU("avx2")},
      {"OPENMP", false},  // threads come from oneTBB
      {"SSE", SYMBIND_CPU("sse")}, {"F16C", CpuHasF16c()}, {"JEMALLOC", false}, {"BLAS_OPEN", false},
      {"BLAS_ATLAS", false}, {"BLAS_MKL", false}, {"BLAS_APPLE", false}, {"LAPACK", false},
      {"MKLDNN", false}, {"OPENCV", false}, {"CAFFE", false}, {"PROFILER", false},
      {"DIST_KVSTORE", false},  // MXNet's ps-lite servers; symbind's dist_sync runs over MPI
      {"CXX14", true},
      {"INT64_TENSOR_SIZE", true},  // shapes and sizes are int64 throughout
      {"SIGNAL_HANDLER", false}, {"DEBUG", false}, {"TVM_OP", false},
  };
#undef SYMBIND_CPU
  std::vector<LibFeature> out;
  for (const Named& n : table) out.push_back(LibFeature{n.name, n.enabled});
  return out;
}

struct CustomOps {
  std::mutex mu;
  std::set<std::string> names;
};
CustomOps& RegisteredCustomOps() {
  static CustomOps ops;
  return ops;
}

// MXNet's modes: 0 off, 1 on for this thread, 2 on globally (core's per-thread setting is made
// on the calling thread either way; the global bit only relaxes loading older files).
std::atomic<bool> numpy_shape_global{false};

}  // namespace

bool NumpyShapeSemanticsGlobal() { return numpy_shape_global; }

}  // namespace capi
}  // namespace symbind

using namespace symbind;
using namespace symbind::capi;

int MXListAllOpNames(uint32_t* out_size, const char*** out_array) {
  return NNListAllOpNames(out_size, out_array);
}

// symbind registers no packed functions (MXNet's FFI behind mx.np and mx.npx) and no legacy
// NDArray functions: both lists are empty, so the modules built from them are empty too.
int MXNetFuncListGlobalNames(int* out_size, const char*** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_array, "out_array");
    *NotNull(out_size, "out_size") = 0;
    *out_array = nullptr;
  });
}
int MXNetFuncGetGlobal(const char* name, void** out) {
  return Guarded(__func__, [&] {
    NotNull(out, "out");
    Unsupported(StrCat("the packed function '", CString(name, "name"), "' (MXNet's FFI)"));
  });
}
int MXNetFuncFree(void*) { return 0; }
int MXNetObjectFree(void*) { return 0; }
int MXListFunctions(uint32_t* out_size, FunctionHandle** out_array) {
  return Guarded(__func__, [&] {
    NotNull(out_array, "out_array");
    *NotNull(out_size, "out_size") = 0;
    *out_array = nullptr;
  });
}

int MXLibInfoFeatures(const struct LibFeature** lib_features, size_t* size) {
  return Guarded(__func__, [&] {
    static const std::vector<LibFeature> features = BuildFeatures();
    *NotNull(lib_features, "libFeature") = features.data();
    *NotNull(size, "size") = features.size();
  });
}

// MXNet's Python registers its custom-op classes here. The registration is kept so that the
// error on use names the op; symbind does not run Python custom operators.
int MXCustomOpRegister(const char* op_type, CustomOpPropCreator creator) {
  return Guarded(__func__, [&] {
    NotNull(reinterpret_cast<void*>(creator), "creator");
    std::lock_guard<std::mutex> lock(RegisteredCustomOps().mu);
    RegisteredCustomOps().names.insert(CString(op_type, "op_type"));
  });
}
int MXRandomSeedContext(int seed, int dev_type, int dev_id) {
  return Guarded(__func__, [&] {
    DeviceContext(dev_type, dev_id);
    if (MXRandomSeed(seed) != 0) throw Error(LastError());
  });
}

int MXIsNumpyShape(int* curr) {
  return Guarded(__func__, [&] { *NotNull(curr, "curr") = NumpyShapeSemantics(); });
}
// MXNet's numpy shape semantics (zero-size dims, scalars) are accepted as a flag and reported
// back; symbind's shapes already treat -1 as unknown and 0 as a real size.
int MXSetIsNumpyShape(int is_np_shape, int* prev) {
  return Guarded(__func__, [&] {
    const bool was = SetNumpyShapeSemantics(is_np_shape != 0);
    numpy_shape_global = is_np_shape == 2;
    if (prev) *prev = was;
  });
}

// symbind computes each call synchronously, so there is no engine bulking to size.
int MXEngineSetBulkSize(int bulk_size, int* prev_bulk_size) {
  return Guarded(__func__, [&] {
    if (bulk_size < 0) throw Error(StrCat("bulk_size must not be negative, got ", bulk_size));
    if (prev_bulk_size) *prev_bulk_size = 0;
  });
}

int MXStorageEmptyCache(int dev_type, int dev_id) {
  return Guarded(__func__, [&] { DeviceContext(dev_type, dev_id); });
}

int MXGetGPUMemoryInformation64(int dev, uint64_t*, uint64_t*) {
  return Guarded(__func__, [&] { throw Error(StrCat("no GPU ", dev, ": symbind computes on the CPU")); });
}

int MXGetEnv(const char* name, const char** value) {
  return Guarded(__func__, [&] {
    *NotNull(value, "value") = std::getenv(CString(name, "name").c_str());
  });
}
int MXSetEnv(const char* name, const char* value) {
  return Guarded(__func__, [&] {
    if (setenv(CString(name, "name").c_str(), CString(value, "value").c_str(), 1) != 0)
      throw Error(StrCat("setenv failed for '", name, "'"));
  });
}

int MXLoadLib(const char* path, unsigned) {
  return Guarded(__func__, [&] {
    Unsupported(StrCat("loading an MXNet extension library ('", CString(path, "path"), "')"));
  });
}

// ---- profiler: symbind's own profile is `symbind run --profile`; MXNet's profiler calls are
// accepted and record nothing, so scripts that switch it on still run.
int MXSetProcessProfilerConfig(int num_params, const char* const* keys, const char* const* vals, KVStoreHandle) {
  return Guarded(__func__, [&] {
    CStrings(static_cast<uint32_t>(num_params < 0 ? 0 : num_params), keys, "keys");
    CStrings(static_cast<uint32_t>(num_params < 0 ? 0 : num_params), vals, "vals");
  });
}
int MXSetProfilerConfig(int num_params, const char* const* keys, const char* const* vals) {
  return MXSetProcessProfilerConfig(num_params, keys, vals, nullptr);
}
int MXSetProcessProfilerState(int, int, KVStoreHandle) { return Guarded(__func__, [] {}); }
int MXSetProfilerState(int) { return Guarded(__func__, [] {}); }
int MXDumpProcessProfile(int, int, KVStoreHandle) { return Guarded(__func__, [] {}); }
int MXDumpProfile(int) { return Guarded(__func__, [] {}); }
int MXProcessProfilePause(int, int, KVStoreHandle) { return Guarded(__func__, [] {}); }
int MXProfilePause(int) { return Guarded(__func__, [] {}); }
int MXAggregateProfileStatsPrintEx(const char** out_str, int, int, int, int) {
  return Guarded(__func__, [&] {
    Ret().text = "symbind records no MXNet profiler statistics (use symbind run --profile)\n";
    *NotNull(out_str, "out_str") = Ret().text.c_str();
  });
}
int MXAggregateProfileStatsPrint(const char** out_str, int reset) {
  return MXAggregateProfileStatsPrintEx(out_str, reset, 0, 0, 0);
}

namespace {
// Profiler objects are named tokens: created, used and destroyed, recording nothing.
struct ProfileObject {
  std::string name;
};
std::mutex profile_mu;
std::set<ProfileObject*> profile_objects;
ProfileHandle NewProfileObject(const char* name) {
  auto* p = new ProfileObject{CString(name, "name")};
  std::lock_guard<std::mutex> lock(profile_mu);
  profile_objects.insert(p);
  return p;
}
ProfileObject* ProfileObjectOf(ProfileHandle h) {
  std::lock_guard<std::mutex> lock(profile_mu);
  auto* p = static_cast<ProfileObject*>(h);
  if (!profile_objects.count(p)) throw Error("argument is not a live ProfileHandle");
  return p;
}
}  // namespace

int MXProfileCreateDomain(const char* domain, ProfileHandle* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = NewProfileObject(domain); });
}
int MXProfileCreateTask(ProfileHandle domain, const char* name, ProfileHandle* out) {
  return Guarded(__func__, [&] {
    ProfileObjectOf(domain);
    *NotNull(out, "out") = NewProfileObject(name);
  });
}
int MXProfileCreateFrame(ProfileHandle domain, const char* name, ProfileHandle* out) {
  return MXProfileCreateTask(domain, name, out);
}
int MXProfileCreateEvent(const char* name, ProfileHandle* out) {
  return Guarded(__func__, [&] { *NotNull(out, "out") = NewProfileObject(name); });
}
int MXProfileCreateCounter(ProfileHandle domain, const char* name, ProfileHandle* out) {
  return MXProfileCreateTask(domain, name, out);
}
int MXProfileDestroyHandle(ProfileHandle handle) {
  return Guarded(__func__, [&] {
    ProfileObject* p = ProfileObjectOf(handle);
    std::lock_guard<std::mutex> lock(profile_mu);
    profile_objects.erase(p);
    delete p;
  });
}
int MXProfileDurationStart(ProfileHandle h) { return Guarded(__func__, [&] { ProfileObjectOf(h); }); }
int MXProfileDurationStop(ProfileHandle h) { return Guarded(__func__, [&] { ProfileObjectOf(h); }); }
int MXProfileSetCounter(ProfileHandle h, uint64_t) { return Guarded(__func__, [&] { ProfileObjectOf(h); }); }
int MXProfileAdjustCounter(ProfileHandle h, int64_t) { return Guarded(__func__, [&] { ProfileObjectOf(h); }); }
int MXProfileSetMarker(ProfileHandle domain, const char* name, const char* scope) {
  return Guarded(__func__, [&] {
    ProfileObjectOf(domain);
    CString(name, "instant_marker_name");
    CString(scope, "scope");
  });
}

// ---- features symbind does not have ----------------------------------------------------------

int MXRtcCudaModuleCreate(const char*, int, const char**, int, const char**, CudaModuleHandle*) {
  return Guarded(__func__, [] { Unsupported("CUDA runtime compilation (mx.rtc)"); });
}
int MXRtcCudaModuleFree(CudaModuleHandle) {
  return Guarded(__func__, [] { Unsupported("CUDA runtime compilation (mx.rtc)"); });
}
int MXRtcCudaKernelCreate(CudaModuleHandle, const char*, int, int*, int*, int*, CudaKernelHandle*) {
  return Guarded(__func__, [] { Unsupported("CUDA runtime compilation (mx.rtc)"); });
}
int MXRtcCudaKernelFree(CudaKernelHandle) {
  return Guarded(__func__, [] { Unsupported("CUDA runtime compilation (mx.rtc)"); });
}
int MXRtcCudaKernelCall(CudaKernelHandle, int, void**, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t,
                        uint32_t, uint32_t) {
  return Guarded(__func__, [] { Unsupported("CUDA runtime compilation (mx.rtc)"); });
}
int MXLoadTVMOp(const char*) {
  return Guarded(__func__, [] { Unsupported("TVM operators"); });
}
int MXNDArrayGetSharedMemHandle(NDArrayHandle, int*, int*) {
  return Guarded(__func__, [] { Unsupported("shared-memory NDArrays (multiprocess DataLoader workers)"); });
}
int MXNDArrayCreateFromSharedMemEx(int, int, const int*, int, int, NDArrayHandle*) {
  return Guarded(__func__, [] { Unsupported("shared-memory NDArrays (multiprocess DataLoader workers)"); });
}
