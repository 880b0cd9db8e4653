// A loop compiled once per kernel instruction set (KernelIsa) and called through the variant that
// ActiveIsa() names: the one dispatch point, which SYMBIND_GEMM_ISA lowers for tests. (GCC's
// target_clones would choose at load time from CPUID alone, ignoring that override.)
//
//   SYMBIND_ISA_VARIANTS(, void, GatherStride2, (const float* src, int64_t n, float* dst), (src, n, dst),
//                        { for (int64_t i = 0; i < n; ++i) dst[i] = src[2 * i]; })
//   GatherStride2(src, n, dst);  // the variant for this process's instruction set
//
// `attrs`: further function attributes, each followed by a comma (or nothing). The body is the
// last argument, so it may hold commas.
#pragma once
#include <symbind/ops/kernels/gemm_kernels.h>

#define SYMBIND_ISA_VARIANTS(attrs, ret, name, params, args, ...)                   \
  __attribute__((attrs target("avx512f"))) static ret name##OnAvx512 params __VA_ARGS__ \
  __attribute__((attrs target("avx2"))) static ret name##OnAvx2 params __VA_ARGS__      \
  __attribute__((attrs)) static ret name##OnBase params __VA_ARGS__                     \
  ret name params {                                                                     \
    switch (::symbind::ActiveIsa()) {                                                   \
      case ::symbind::KernelIsa::kAvx512: return name##OnAvx512 args;                   \
      case ::symbind::KernelIsa::kAvx2: return name##OnAvx2 args;                       \
      default: return name##OnBase args;                                                \
    }                                                                                   \
  }
