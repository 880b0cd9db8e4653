// Forms derived from a weight array (Winograd-transformed filters, GEMM-packed weights) kept
// across calls while the array holds the values they were made from.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <symbind/core/ndarray.h>

namespace symbind {

// The form of `weights` that `kind` names (including every size it depends on, e.g.
// "winograd 64x32"): the cached one when it is still valid, else make(weights.fdata()), cached.
// Entries are per array while its storage lives (a freed storage's address may be reused,
// hence the storage's identity rather than the pointer). Read-only storage (memory-mapped)
// cannot change, so its entry is used as is; writable weights may be overwritten between
// calls (SyncCopyFromCPU, an optimizer step), so their entry is used only while
// matches(entry, weights.fdata()) says it was made from the same values.
using DerivedWeights = std::shared_ptr<const void>;
DerivedWeights CachedDerivedWeights(const NDArray& weights, const std::string& kind,
                                    const std::function<DerivedWeights(const float*)>& make,
                                    const std::function<bool(const void*, const float*)>& matches);

// Whether a[0:n] and b[0:n] hold the same bits: the check of a writable array's cached form
// against the copy it was made from, which reads every weight on every call (ResNet-18: 45 MB
// per forward). Compared in parallel chunks, so that it does not leave the other threads idle.
bool SameFloats(const float* a, const float* b, int64_t n);

template <typename T, typename Make, typename Matches>
std::shared_ptr<const T> CachedDerived(const NDArray& weights, const std::string& kind, const Make& make,
                                       const Matches& matches) {
  return std::static_pointer_cast<const T>(CachedDerivedWeights(
      weights, kind, [&](const float* w) -> DerivedWeights { return std::make_shared<const T>(make(w)); },
      [&](const void* derived, const float* w) { return matches(*static_cast<const T*>(derived), w); }));
}

}  // namespace symbind
