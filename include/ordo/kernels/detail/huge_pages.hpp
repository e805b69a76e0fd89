#ifndef ORDO_KERNELS_DETAIL_HUGE_PAGES_HPP
#define ORDO_KERNELS_DETAIL_HUGE_PAGES_HPP

// Large host allocations asked to be backed by transparent huge pages before their first touch.
// A fresh 72 MB result of 4 KiB pages takes about 17,600 page faults, 0.3 s on the machines
// measured (bench/expression), more than the GEMV or GER that fills it; with 2 MiB pages, a few
// dozen. Linux's default transparent-huge-page mode is "madvise", which serves only regions that
// ask, as numpy does for arrays of 4 MiB and more. Elsewhere this does nothing.

#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace ordo::detail {

inline void advise_huge_pages(void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t huge_page = std::uintptr_t{1} << 21;
  if (data == nullptr || bytes < (std::size_t{4} << 20)) return;
  // madvise takes page-aligned ranges: the 2 MiB-aligned interior of the allocation.
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge_page - 1) & ~(huge_page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge_page - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data, (void)bytes;
#endif
}

}  // namespace ordo::detail

#endif
