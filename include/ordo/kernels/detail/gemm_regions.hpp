#ifndef ORDO_KERNELS_DETAIL_GEMM_REGIONS_HPP
#define ORDO_KERNELS_DETAIL_GEMM_REGIONS_HPP

// Kokkos Tools regions that announce each product ordo::gemm issues, "ordo::gemm MxKxN backend",
// so that profilers (and ordo's tests) see the sequence of products an evaluation runs. A product
// that runs as a matrix-vector product, a dot product or BLAS's outer product opens a nested
// region "ordo::gemv", "ordo::dot" or "ordo::ger".

#include <ordo/kernels/gemm_backend.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace ordo::detail {

// backend: a gemm_backend's name, or "inline" for a small static product run on the calling
// thread (detail/small_product.hpp), which is no backend of ordo::gemm.
inline std::string gemm_region_name(std::size_t m, std::size_t k, std::size_t n, std::string_view backend) {
  std::string name = "ordo::gemm ";
  name += std::to_string(m);
  name += 'x';
  name += std::to_string(k);
  name += 'x';
  name += std::to_string(n);
  name += ' ';
  name += backend;
  return name;
}

// A Kokkos Tools region for as long as it lives, when a tool is loaded.
struct profiling_region {
  bool active;
  explicit profiling_region(const std::string& name) : active(Kokkos::Profiling::profileLibraryLoaded()) {
    if (active) Kokkos::Profiling::pushRegion(name);
  }
  ~profiling_region() {
    if (active) Kokkos::Profiling::popRegion();
  }
  profiling_region(const profiling_region&) = delete;
  profiling_region& operator=(const profiling_region&) = delete;
};

struct gemm_region : profiling_region {
  gemm_region(std::size_t m, std::size_t k, std::size_t n, std::string_view backend)
      : profiling_region(Kokkos::Profiling::profileLibraryLoaded() ? gemm_region_name(m, k, n, backend)
                                                                   : std::string()) {}
  gemm_region(std::size_t m, std::size_t k, std::size_t n, gemm_backend backend)
      : gemm_region(m, k, n, to_string(backend)) {}
};

}  // namespace ordo::detail

#endif
