#ifndef ORDO_EXAMPLES_SUPPORT_KOKKOS_SESSION_HPP
#define ORDO_EXAMPLES_SUPPORT_KOKKOS_SESSION_HPP

// Kokkos for an example: a Kokkos::ScopeGuard that first states OMP_PROC_BIND=false when the
// environment says nothing. Kokkos' OpenMP backend prints four lines of advice when OMP_PROC_BIND
// is unset; unset means no thread binding in libgomp and libomp alike (they read the variable
// when they load, before main), so "false" only states what happens anyway. A value the user set
// is kept, and every other Kokkos warning still prints. In your own programs, export
// OMP_PROC_BIND (spread and OMP_PLACES=threads for speed, false to keep threads free) instead.

#include <Kokkos_Core.hpp>

#include <cstdlib>

namespace ordo_examples {

inline int state_unset_thread_binding() {
#if defined(_WIN32)
  if (std::getenv("OMP_PROC_BIND") == nullptr) _putenv_s("OMP_PROC_BIND", "false");
#else
  setenv("OMP_PROC_BIND", "false", 0);  // 0: a value already set stays
#endif
  return 0;
}

class kokkos_session {
 public:
  kokkos_session(int& argc, char* argv[]) : stated_(state_unset_thread_binding()), guard_(argc, argv) {}

 private:
  [[maybe_unused]] int stated_;
  Kokkos::ScopeGuard guard_;
};

}  // namespace ordo_examples

#endif
