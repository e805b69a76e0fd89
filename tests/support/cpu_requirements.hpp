#ifndef ORDO_TESTS_SUPPORT_CPU_REQUIREMENTS_HPP
#define ORDO_TESTS_SUPPORT_CPU_REQUIREMENTS_HPP

// Test variants compiled for FMA or AVX2 (mask_test_fma, reduce_test_fma, batch_norm_test_fma)
// include this: on a CPU without what the build targets they exit with 77, which ctest reports as
// skipped (SKIP_RETURN_CODE), instead of dying on an illegal instruction.

#if defined(__FMA__) || defined(__AVX2__)
#include <cstdio>
#include <cstdlib>

namespace ordo_test {
inline const bool cpu_checked = [] {
  __builtin_cpu_init();
#if defined(__FMA__)
  const bool fma = __builtin_cpu_supports("fma");
#else
  const bool fma = true;
#endif
#if defined(__AVX2__)
  const bool avx2 = __builtin_cpu_supports("avx2");
#else
  const bool avx2 = true;
#endif
  if (!fma || !avx2) {
    std::puts("skipped: this CPU lacks the FMA or AVX2 this build targets");
    std::exit(77);
  }
  return true;
}();
}  // namespace ordo_test
#endif

#endif
