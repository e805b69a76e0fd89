// A softmax case for bench_paired: (rows, cols) logits x = uniform[-4, 4) (splitmix64, seed 1301), float or bfloat16,
// LayoutRight on Kokkos::OpenMP. softmax: ordo::nn::softmax(space, x, y) (three passes per row: max; exp stored and
// summed; scaled); online (float only): online softmax (Milakov & Gimelshein 2018), a pass for max and sum, one for
// exp(x - max) / sum, two exps per element, not one: kept here, not in ordo, to measure the choice; copy: y = x.
#ifndef ORDO_BENCH_PRECISION_CASES_HPP
#define ORDO_BENCH_PRECISION_CASES_HPP

#include "bench_support.hpp"

#include <ordo/core/float16.hpp>
#include <ordo/platform/fast_exp.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/x86/cpu_dispatch.hpp>
#include <ordo/nn/softmax.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <limits>

namespace bench_sm {

using space = Kokkos::OpenMP;
using memory = space::memory_space;
using policy = Kokkos::RangePolicy<space, Kokkos::IndexType<std::int64_t>>;

// Online softmax of contiguous float rows: per lane (16 lanes) a running max m and a sum s of exp(x - m), rescaled
// when m grows, as one vector select: e = exp(-|x - m|), s = x > m ? s e + 1 : s + e. Lanes merged in double, then a
// second pass writes exp(x - M) / S. Finite inputs only (a benchmark variant, not a library kernel).
struct online_softmax_kernel {
  const float* x;
  float* y;
  std::int64_t cols;
  // As the library's host kernels: through the instruction set chosen at run time.
  void operator()(std::int64_t r) const { ordo::detail::run_for_host_isa(*this, r); }

  template <class Isa>
  KOKKOS_FORCEINLINE_FUNCTION void run(std::int64_t r) const {
    [[maybe_unused]] constexpr bool Split = ordo::nn::detail::split_compares_for_v<Isa>;
#if ORDO_IMPL_VECTOR_EXTENSIONS
    using ordo::detail::float8;
    const float* row = x + r * cols;
    float* out = y + r * cols;
    const float lowest = -std::numeric_limits<float>::infinity();
    float8 m[2] = {lowest + float8{}, lowest + float8{}}, s[2] = {float8{}, float8{}};
    std::int64_t i = 0;
    for (; i + 16 <= cols; i += 16) {
      for (int h = 0; h < 2; ++h) {
        float8 v;
        std::memcpy(&v, row + i + 8 * h, sizeof v);
        const float8 d = v - m[h];
        ordo::detail::int8x32 grows;
        ordo::detail::less<Split>(float8{}, d, grows);
        float8 e;
        ordo::detail::select(grows, -d, d, e);
        ordo::detail::fast_exp<true, Split>(e, e);
        ordo::detail::select(grows, s[h] * e + 1.0f, s[h] + e, s[h]);
        ordo::detail::select(grows, v, m[h], m[h]);
      }
    }
    float lm[16], ls[16];
    std::memcpy(lm, m, sizeof lm);
    std::memcpy(ls, s, sizeof ls);
    for (; i < cols; ++i) {
      const auto l = static_cast<std::size_t>(i % 16);
      const float v = row[i];
      if (v > lm[l]) {
        ls[l] = ls[l] * ordo::detail::fast_exp(lm[l] - v) + 1.0f;
        lm[l] = v;
      } else {
        ls[l] += ordo::detail::fast_exp(v - lm[l]);
      }
    }
    float mx = lowest;
    for (const float v : lm) mx = v > mx ? v : mx;
    double sum = 0;
    for (std::size_t l = 0; l < 16; ++l)
      if (lm[l] > lowest) sum += static_cast<double>(ls[l]) * static_cast<double>(ordo::detail::fast_exp(lm[l] - mx));
    const float inverse = static_cast<float>(1.0 / sum);
    for (i = 0; i + 8 <= cols; i += 8) {
      float8 v;
      std::memcpy(&v, row + i, sizeof v);
      v -= mx;
      ordo::detail::fast_exp(v, v);
      v *= inverse;
      std::memcpy(out + i, &v, sizeof v);
    }
    for (; i < cols; ++i) out[i] = ordo::detail::fast_exp(row[i] - mx) * inverse;
#else
    (void)r;
#endif
  }
};

template <class T>
struct softmax_case {
  std::int64_t rows, cols;
  Kokkos::View<T**, Kokkos::LayoutRight, memory> x, y;

  softmax_case(std::int64_t r, std::int64_t c)
      : rows(r), cols(c), x("x", static_cast<std::size_t>(r), static_cast<std::size_t>(c)), y("y", x.layout()) {
    fill();
  }
  // Not in the constructor: nvcc's extended lambdas need an enclosing function with an address.
  void fill() {
    T* const px = x.data();
    Kokkos::parallel_for("bench fill", policy(0, rows * cols), KOKKOS_LAMBDA(std::int64_t i) {
      const double u = ordo_bench::unit_double(ordo_bench::splitmix64::at(1301, static_cast<std::uint64_t>(i)));
      px[i] = static_cast<T>(static_cast<float>(8 * u - 4));
    });
    space().fence();
  }
  void softmax() const { ordo::nn::softmax(space(), x, y); }
  void online() const {  // float only
    Kokkos::parallel_for("bench online softmax", policy(0, rows), online_softmax_kernel{x.data(), y.data(), cols});
    space().fence();
  }
  void copy() const {
    T *const dst = y.data(), *const src = x.data();
    Kokkos::parallel_for("bench copy", policy(0, rows * cols), KOKKOS_LAMBDA(std::int64_t i) { dst[i] = src[i]; });
    space().fence();
  }
};

}  // namespace bench_sm

#endif
