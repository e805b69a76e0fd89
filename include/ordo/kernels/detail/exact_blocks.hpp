#ifndef ORDO_KERNELS_DETAIL_EXACT_BLOCKS_HPP
#define ORDO_KERNELS_DETAIL_EXACT_BLOCKS_HPP

// exact_add_block: adds a block of floats or doubles to an exact_accumulator through its lane
// sums when the block's range allows (exact_block_sums.hpp), else element by element. On x86-64
// hosts the SSE2 kernels run, or their AVX2 twins when the CPU has AVX2; device code and other
// hosts run the portable loops. All of them give the same accumulator.

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
#endif
#endif

namespace ordo::detail {

template <int levels, class T, class Data>
KOKKOS_INLINE_FUNCTION bool exact_add_block_levels(exact_accumulator<T>& acc, const Data& x, std::int64_t begin,
                                                   std::int64_t end, const double* sigma) {
  double s[levels + 1][exact_block_lanes] = {};
#if defined(ORDO_IMPL_EXACT_SSE2)
  if constexpr (std::is_pointer_v<Data>) {
#if defined(ORDO_IMPL_EXACT_AVX2)
    if (exact_blocks_use_avx2()) {
      exact_lane_sums_avx2<levels, T>(x, begin, end, sigma, s);
      return exact_add_lane_sums<levels>(acc, s);
    }
#endif
    exact_lane_sums_sse2<levels, T>(x, begin, end, sigma, s);
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
    constexpr int lanes = exact_block_lanes;
    std::int64_t i = begin;
#if defined(ORDO_IMPL_EXACT_AVX2)
    if (exact_blocks_use_avx2()) {
      if constexpr (std::is_same_v<T, float>) {
        double s[1][lanes] = {};
        i = magnitude_range_and_sums_avx2(x, begin, end, largest, smallest, s);
        for (std::int64_t k = i; k < end; ++k) magnitude_range_step(x[k], largest, smallest);
        if (smallest == 0.0f) {
          largest = 0.0f;
          smallest = infinity_of<T>();
          magnitude_range_avx2<true>(x, begin, end, largest, smallest);
        }
        fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
        if (fast && levels == 0) {
          exact_lane_sums<0, T>(x, begin, i, end, sigma, s);
          if (exact_add_lane_sums<0>(acc, s)) return;
          fast = false;
        }
      } else {
        magnitude_range_avx2<false>(x, begin, end, largest, smallest);
        if (smallest == 0.0) {
          largest = 0.0;
          smallest = infinity_of<T>();
          magnitude_range_avx2<true>(x, begin, end, largest, smallest);
        }
        fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
      }
    } else
#endif
    if constexpr (std::is_same_v<T, float>) {
      // One pass for the range and the level-0 sums, which nearly every float block needs.
      double s[1][lanes] = {};
      i = magnitude_range_and_sums_sse2(x, begin, end, largest, smallest, s);
      for (std::int64_t k = i; k < end; ++k) magnitude_range_step(x[k], largest, smallest);
      if (smallest == 0.0f) {
        largest = 0.0f;
        smallest = infinity_of<T>();
        magnitude_range_sse2<true>(x, begin, end, largest, smallest);
      }
      fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
      if (fast && levels == 0) {
        exact_lane_sums<0, T>(x, begin, i, end, sigma, s);
        if (exact_add_lane_sums<0>(acc, s)) return;
        fast = false;
      }
    } else {
      magnitude_range_sse2<false>(x, begin, end, largest, smallest);
      if (smallest == 0.0) {
        largest = 0.0;
        smallest = infinity_of<T>();
        magnitude_range_sse2<true>(x, begin, end, largest, smallest);
      }
      fast = exact_block_levels(largest, smallest, end - begin, levels, sigma);
    }
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
      for (int l = 0; l < lanes; ++l) magnitude_range_step(x[i + l], high[l], low[l]);
    }
    for (int l = 0; i < end; ++i, ++l) magnitude_range_step(x[i], high[l], low[l]);
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
