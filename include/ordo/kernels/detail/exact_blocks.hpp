#ifndef ORDO_KERNELS_DETAIL_EXACT_BLOCKS_HPP
#define ORDO_KERNELS_DETAIL_EXACT_BLOCKS_HPP

// exact_add_block: adds a block of floats or doubles to an exact_accumulator through its lane
// sums when the block's range allows (exact_block_sums.hpp), else element by element. On x86-64
// hosts the SSE2 kernels run, or their AVX2 or AVX-512 twins when the CPU has those; device code
// and other hosts run the portable loops. All of them give the same accumulator.

#include <ordo/core/config.hpp>
#include <ordo/kernels/detail/exact_block_sums.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#if ORDO_X86_HOST_SIMD
#define ORDO_IMPL_EXACT_SSE2 1
#include <ordo/kernels/detail/x86/exact_blocks_sse2.hpp>
#if defined(ORDO_IMPL_AVX2_FUNCTION)
#define ORDO_IMPL_EXACT_AVX2 1
#include <ordo/kernels/detail/x86/exact_blocks_avx2.hpp>
#if defined(ORDO_IMPL_AVX512_FUNCTION)
#define ORDO_IMPL_EXACT_AVX512 1
#include <ordo/kernels/detail/x86/exact_blocks_avx512.hpp>
#endif
#endif
#endif

namespace ordo::detail {

#if defined(ORDO_IMPL_EXACT_SSE2)
// One instruction set's block kernels (x86/exact_blocks_sse2.hpp, exact_blocks_avx2.hpp) under
// one interface, so that the steps below are written once: an AVX-512 set is one more of these.
struct exact_kernels_sse2 {
  template <bool zeros_as_infinity, class T>
  static void range(const T* x, std::int64_t begin, std::int64_t end, T& largest, T& smallest) {
    magnitude_range_sse2<zeros_as_infinity>(x, begin, end, largest, smallest);
  }
  static std::int64_t range_and_sums(const float* x, std::int64_t begin, std::int64_t end, float& largest,
                                     float& smallest, double (&s)[1][exact_block_lanes]) {
    return magnitude_range_and_sums_sse2(x, begin, end, largest, smallest, s);
  }
  template <int levels, class T>
  static void lane_sums(const T* x, std::int64_t begin, std::int64_t end, const double* sigma,
                        double (&s)[levels + 1][exact_block_lanes]) {
    exact_lane_sums_sse2<levels, T>(x, begin, end, sigma, s);
  }
};
#if defined(ORDO_IMPL_EXACT_AVX2)
struct exact_kernels_avx2 {
  template <bool zeros_as_infinity, class T>
  static void range(const T* x, std::int64_t begin, std::int64_t end, T& largest, T& smallest) {
    magnitude_range_avx2<zeros_as_infinity>(x, begin, end, largest, smallest);
  }
  static std::int64_t range_and_sums(const float* x, std::int64_t begin, std::int64_t end, float& largest,
                                     float& smallest, double (&s)[1][exact_block_lanes]) {
    return magnitude_range_and_sums_avx2(x, begin, end, largest, smallest, s);
  }
  template <int levels, class T>
  static void lane_sums(const T* x, std::int64_t begin, std::int64_t end, const double* sigma,
                        double (&s)[levels + 1][exact_block_lanes]) {
    exact_lane_sums_avx2<levels, T>(x, begin, end, sigma, s);
  }
};
#endif

#if defined(ORDO_IMPL_EXACT_AVX512)
struct exact_kernels_avx512 {
  template <bool zeros_as_infinity, class T>
  static void range(const T* x, std::int64_t begin, std::int64_t end, T& largest, T& smallest) {
    magnitude_range_avx512<zeros_as_infinity>(x, begin, end, largest, smallest);
  }
  static std::int64_t range_and_sums(const float* x, std::int64_t begin, std::int64_t end, float& largest,
                                     float& smallest, double (&s)[1][exact_block_lanes]) {
    return magnitude_range_and_sums_avx512(x, begin, end, largest, smallest, s);
  }
  template <int levels, class T>
  static void lane_sums(const T* x, std::int64_t begin, std::int64_t end, const double* sigma,
                        double (&s)[levels + 1][exact_block_lanes]) {
    exact_lane_sums_avx512<levels, T>(x, begin, end, sigma, s);
  }
};
#endif

// Calls f(kernels) with the kernels of the instruction set chosen at run time.
template <class F>
inline decltype(auto) with_exact_kernels(F&& f) {
#if defined(ORDO_IMPL_EXACT_AVX512)
  if (exact_blocks_use_avx512()) return f(exact_kernels_avx512{});
#endif
#if defined(ORDO_IMPL_EXACT_AVX2)
  if (exact_blocks_use_avx2()) return f(exact_kernels_avx2{});
#endif
  return f(exact_kernels_sse2{});
}

// A block's range through Kernels (for float, with the level-0 lane sums in the same pass, which
// nearly every float block needs), then its levels. Returns true when the block is already added.
template <class Kernels, class T>
inline bool exact_block_range_simd(exact_accumulator<T>& acc, const T* x, std::int64_t begin, std::int64_t end,
                                   T& largest, T& smallest, bool& fast, int& levels, double* sigma) {
  if constexpr (std::is_same_v<T, float>) {
    double s[1][exact_block_lanes] = {};
    const std::int64_t i = Kernels::range_and_sums(x, begin, end, largest, smallest, s);
    for (std::int64_t k = i; k < end; ++k) magnitude_range_step(x[k], largest, smallest);
    if (smallest == 0.0f) {
      largest = 0.0f;
      smallest = infinity_of<T>();
      Kernels::template range<true>(x, begin, end, largest, smallest);
    }
    fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
    if (fast && levels == 0) {
      exact_lane_sums<0, T>(x, begin, i, end, sigma, s);
      if (exact_add_lane_sums<0>(acc, s)) return true;
      fast = false;
    }
  } else {
    Kernels::template range<false>(x, begin, end, largest, smallest);
    if (smallest == 0.0) {
      largest = 0.0;
      smallest = infinity_of<T>();
      Kernels::template range<true>(x, begin, end, largest, smallest);
    }
    fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
  }
  return false;
}
#endif

template <int levels, class T, class Data>
KOKKOS_INLINE_FUNCTION bool exact_add_block_levels(exact_accumulator<T>& acc, const Data& x, std::int64_t begin,
                                                   std::int64_t end, const double* sigma) {
  double s[levels + 1][exact_block_lanes] = {};
#if defined(ORDO_IMPL_EXACT_SSE2)
  if constexpr (std::is_pointer_v<Data>) {
    with_exact_kernels([&](auto kernels) { decltype(kernels)::template lane_sums<levels, T>(x, begin, end, sigma, s); });
  } else {
    exact_lane_sums<levels, T>(x, begin, begin, end, sigma, s);
  }
#else
  exact_lane_sums<levels, T>(x, begin, begin, end, sigma, s);
#endif
  return exact_add_lane_sums<levels>(acc, s);
}

// Adds x[begin, end) (at most 2^20 elements; x a pointer or a rank-1 View) to acc, exactly:
// the lane sums of a block's levels when possible, else element by element.
template <class T, class Data>
KOKKOS_INLINE_FUNCTION void exact_add_block(exact_accumulator<T>& acc, const Data& x, std::int64_t begin,
                                            std::int64_t end) {
  if (!exact_blocks_keep_subnormals()) {
    for (std::int64_t i = begin; i < end; ++i) acc.add(x[i]);
    return;
  }
  T largest = T(0), smallest = infinity_of<T>();
  bool fast = false;
  int levels = 0;
  double sigma[exact_block_max_levels > 0 ? exact_block_max_levels : 1] = {};
#if defined(ORDO_IMPL_EXACT_SSE2)
  if constexpr (std::is_pointer_v<Data>) {
    const bool added = with_exact_kernels([&](auto kernels) {
      return exact_block_range_simd<decltype(kernels)>(acc, x, begin, end, largest, smallest, fast, levels, sigma);
    });
    if (added) return;
  } else
#endif
  {
    constexpr int lanes = exact_block_lanes;
    T high[lanes], low[lanes];
    for (int l = 0; l < lanes; ++l) {
      high[l] = largest;
      low[l] = smallest;
    }
    std::int64_t i = begin;
    for (; i + lanes <= end; i += lanes) {
      ORDO_IMPL_UNROLL
      for (int l = 0; l < lanes; ++l) magnitude_range_step(x[i + l], high[l], low[l]);
    }
    ORDO_IMPL_UNROLL
    for (int l = 0; l < lanes; ++l) {  // constant lane indices: see exact_lane_sums
      if (i + l < end) magnitude_range_step(x[i + l], high[l], low[l]);
    }
    ORDO_IMPL_UNROLL
    for (int l = 0; l < lanes; ++l) {
      largest = high[l] > largest ? high[l] : largest;
      smallest = low[l] < smallest ? low[l] : smallest;
    }
    fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
  }
  if (fast) {
    switch (levels) {
      case 0: fast = exact_add_block_levels<0>(acc, x, begin, end, sigma); break;
      case 1: fast = exact_add_block_levels<1>(acc, x, begin, end, sigma); break;
      case 2: fast = exact_add_block_levels<2>(acc, x, begin, end, sigma); break;
      default: fast = exact_add_block_levels<3>(acc, x, begin, end, sigma); break;
    }
  }
  if (!fast) {
    for (std::int64_t i = begin; i < end; ++i) acc.add(x[i]);
  }
}


}  // namespace ordo::detail

#endif
