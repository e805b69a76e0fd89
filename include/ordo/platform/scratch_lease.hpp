#ifndef ORDO_PLATFORM_SCRATCH_LEASE_HPP
#define ORDO_PLATFORM_SCRATCH_LEASE_HPP

// Scratch buffers that kernels lease for one call and keep from call to call.

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace ordo::detail {

template <class T, class Memory>
Kokkos::View<T*, Memory> uninitialized_view(const char* label, std::int64_t n) {
  return Kokkos::View<T*, Memory>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)),
                                  static_cast<std::size_t>(n));
}

// Scratch memory kept from call to call, one buffer per value type and memory space. Allocating
// the partial results afresh cost more than the kernels on small batches: glibc serves blocks of
// 128 KiB and more with mmap, so every call paid for mapping, page faults and unmapping (a
// (256, 1024) forward pass took 250 us instead of 140 us). A call leases the buffer for its
// duration; a concurrent call from another host thread gets a buffer of its own. The buffer is
// released by a Kokkos finalize hook, before Kokkos shuts down. Slot tells apart the buffers one
// call leases at once (a thread must not try to lock a mutex it holds).
enum class scratch_slot { partials, coefficients };

template <class Value, class Memory, scratch_slot Slot>
class scratch_lease {
 public:
  using view_type = Kokkos::View<Value*, Memory, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  scratch_lease(const char* label, std::int64_t size) : lock_(pool().mutex, std::try_to_lock) {
    if (lock_.owns_lock()) {
      shared& p = pool();
      if (!p.release_registered) {
        Kokkos::push_finalize_hook([] {
          shared& q = pool();
          const std::lock_guard<std::mutex> guard(q.mutex);
          q.buffer = Kokkos::View<Value*, Memory>();
          q.release_registered = false;
        });
        p.release_registered = true;
      }
      if (static_cast<std::int64_t>(p.buffer.extent(0)) < size) {
        p.buffer = Kokkos::View<Value*, Memory>();  // free before allocating the larger one
        p.buffer = uninitialized_view<Value, Memory>("ordo::scratch", size);
      }
      view_ = view_type(p.buffer.data(), static_cast<std::size_t>(size));
    } else {
      own_ = uninitialized_view<Value, Memory>(label, size);
      view_ = view_type(own_.data(), static_cast<std::size_t>(size));
    }
  }
  scratch_lease(const scratch_lease&) = delete;
  scratch_lease& operator=(const scratch_lease&) = delete;

  // count values starting at offset.
  view_type part(std::int64_t offset, std::int64_t count) const {
    return view_type(view_.data() + offset, static_cast<std::size_t>(count));
  }

 private:
  struct shared {
    std::mutex mutex;
    Kokkos::View<Value*, Memory> buffer;
    bool release_registered = false;
  };
  // Never destroyed: the finalize hook empties it, and a View must not outlive Kokkos.
  static shared& pool() {
    static shared* const instance = new shared;
    return *instance;
  }

  std::unique_lock<std::mutex> lock_;
  Kokkos::View<Value*, Memory> own_;
  view_type view_;
};

}  // namespace ordo::detail

#endif
