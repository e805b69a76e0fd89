#ifndef ORDO_MPI_DETAIL_STAGING_HPP
#define ORDO_MPI_DETAIL_STAGING_HPP

// Where an MPI payload lives. Host-accessible memory is passed as it is. Device memory is passed
// to MPI directly only when the MPI library says it is CUDA-aware (MPIX_Query_cuda_support, an
// Open MPI extension); otherwise it is staged through a host copy. The payloads are small
// (a few doubles per channel), so staging costs two short copies per step.

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <Kokkos_Core.hpp>

namespace ordo::mpi::detail {

// Whether this MPI library takes device pointers, asked at run time: a CUDA-aware build may run
// against a library without CUDA support.
inline bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

enum class payload_path { in_place, device_direct, host_staged };

template <class MemorySpace>
payload_path payload_path_for() {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, MemorySpace>::accessible) {
    return payload_path::in_place;
  } else {
    return mpi_is_cuda_aware() ? payload_path::device_direct : payload_path::host_staged;
  }
}

// The payload's buffer for MPI: the View itself, or its host copy. Both paths are templates on
// the memory space, so a host build compiles the staged path too (the tests run it by asking for
// it explicitly).
template <class MemorySpace>
class payload_buffer {
 public:
  payload_buffer(const Kokkos::View<double*, MemorySpace>& payload, payload_path path)
      : payload_(payload), staged_(path == payload_path::host_staged) {
    if (staged_) {
      host_ = Kokkos::View<double*, Kokkos::HostSpace>("ordo::mpi staged payload", payload.extent(0));
      Kokkos::deep_copy(host_, payload_);
    }
  }
  double* data() const { return staged_ ? host_.data() : payload_.data(); }
  // Copies MPI's result back into the payload View.
  void finish() const {
    if (staged_) Kokkos::deep_copy(payload_, host_);
  }

 private:
  Kokkos::View<double*, MemorySpace> payload_;
  Kokkos::View<double*, Kokkos::HostSpace> host_;
  bool staged_;
};

}  // namespace ordo::mpi::detail

#endif
