#ifndef ORDO_KERNELS_EXACT_SUM_HPP
#define ORDO_KERNELS_EXACT_SUM_HPP

// The exact sum taken in parts and rounded once: what ordo::mpi::sum does with its ranks' parts,
// and what a caller does with a batch it holds on several devices.
//
//   auto total = ordo::exact_sum_of(space, x_part_a);    // unrounded
//   total += ordo::exact_sum_of(space, x_part_b);        // exact: any order, any grouping
//   float s = total.sum<float>();                        // ordo::sum's bits for a ++ b
//   double m = total.mean<double>();
//
// A part's words() are 64-bit integers that add like the parts themselves, so a sum of the words
// (MPI_Allreduce with MPI_SUM, ordo::mpi's wire format) is the words of the sum of the parts.

#include <ordo/kernels/detail/exact_accumulator.hpp>
#include <ordo/kernels/detail/exact_rounding.hpp>
#include <ordo/kernels/reduce.hpp>

#include <Kokkos_Core.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace ordo {

// The exact sum of some values and their count, in T's accumulator (float or double: a 16-bit
// storage type's values are summed in its compute type).
template <class T>
class exact_sum_part {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ordo::exact_sum_part<T> requires T to be float or double");
  using accumulator = detail::exact_accumulator<T>;

 public:
  // The words: the normalized chunks, how many parts saw a NaN, +infinity and -infinity (counts,
  // so that adding words also merges the flags), then the number of values. Chunks of normalized
  // accumulators lie in [0, 2^32) but the last, so p parts add to less than p * 2^32: no 64-bit
  // overflow below 2^31 parts.
  static constexpr std::size_t word_count = static_cast<std::size_t>(accumulator::chunk_count) + 4;
  using words_type = std::array<std::int64_t, word_count>;

  exact_sum_part() = default;
  exact_sum_part(const accumulator& acc, std::int64_t count) : accumulator_(acc), count_(count) {
    accumulator_.normalize();
  }

  // This part and other: exact.
  exact_sum_part& operator+=(const exact_sum_part& other) {
    accumulator_.merge(other.accumulator_);
    accumulator_.normalize();
    count_ += other.count_;
    return *this;
  }

  std::int64_t count() const noexcept { return count_; }

  // The sum of the values, rounded once to Out (float or double); +0 for none.
  template <class Out>
  Out sum() const {
    static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double>,
                  "ordo::exact_sum_part::sum<Out>: Out must be float or double");
    return detail::round_exact_sum<Out>(accumulator_);
  }

  // The sum divided by the count, rounded once to Out. Throws std::domain_error for no values.
  template <class Out>
  Out mean() const {
    static_assert(std::is_same_v<Out, float> || std::is_same_v<Out, double>,
                  "ordo::exact_sum_part::mean<Out>: Out must be float or double");
    if (count_ == 0) throw std::domain_error("ordo::exact_sum_part::mean: no values");
    return detail::round_exact_mean<Out>(accumulator_, static_cast<std::uint64_t>(count_));
  }

  words_type words() const {
    constexpr std::size_t chunks = word_count - 4;
    words_type w{};
    for (std::size_t i = 0; i < chunks; ++i) w[i] = accumulator_.chunk[i];
    w[chunks] = (accumulator_.flags & detail::has_nan) != 0;
    w[chunks + 1] = (accumulator_.flags & detail::has_positive_infinity) != 0;
    w[chunks + 2] = (accumulator_.flags & detail::has_negative_infinity) != 0;
    w[chunks + 3] = count_;
    return w;
  }

  // The part whose words() are w, or the sum of the parts whose words were added into w.
  static exact_sum_part from_words(const words_type& w) {
    constexpr std::size_t chunks = word_count - 4;
    accumulator acc;
    for (std::size_t i = 0; i < chunks; ++i) acc.chunk[i] = w[i];
    acc.flags = (w[chunks] != 0 ? detail::has_nan : 0u) | (w[chunks + 1] != 0 ? detail::has_positive_infinity : 0u) |
                (w[chunks + 2] != 0 ? detail::has_negative_infinity : 0u);
    return exact_sum_part(acc, w[chunks + 3]);
  }

 private:
  accumulator accumulator_{};
  std::int64_t count_ = 0;
};

// The exact sum of x (a rank-1 View of float, double, ordo::half or ordo::bfloat16) on space, as
// a part: ordo::sum(space, x) is exact_sum_of(space, x).sum<...>().
template <class ExecutionSpace, class View>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
auto exact_sum_of(const ExecutionSpace& space, const View& x) {
  using value_type = typename View::non_const_value_type;
  using part = exact_sum_part<detail::reduced_t<value_type>>;
  return part(detail::reduce_view<detail::sum_result_t<void, View>>(space, x, summation::exact),
              static_cast<std::int64_t>(x.extent(0)));
}

}  // namespace ordo

#endif
