#ifndef ORDO_KERNELS_REDUCE_HPP
#define ORDO_KERNELS_REDUCE_HPP

// Sums and means of rank-1 Views under a choice of summation policy:
//   float s = ordo::sum(x);                                   // exact, correctly rounded
//   double m = ordo::mean(x, ordo::summation::kahan);
//   float p = ordo::sum(Kokkos::OpenMP{}, x, ordo::summation::pairwise);
//   double d = ordo::sum<double>(x);                           // float input, double result
// Each policy is also a Kokkos reducer (ordo::reducers::...) for users' own parallel_reduce.
// Error bounds and measurements: docs/reductions.md.

#include <ordo/core/config.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/kernels/detail/exact_blocks.hpp>
#include <ordo/kernels/detail/exact_rounding.hpp>
#include <ordo/platform/launch_shape.hpp>
#if ORDO_X86_HOST_SIMD
#include <ordo/platform/x86/half_conversion.hpp>
#endif

#include <Kokkos_Core.hpp>
#include <boost/mp11/algorithm.hpp>
#include <boost/mp11/list.hpp>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <type_traits>

// GCC/clang vector types for the host's Kahan and Neumaier lanes; not under nvcc, whose front end
// need not accept them.
#if defined(__GNUC__) && !ORDO_GPU_COMPILER
#define ORDO_IMPL_REDUCE_VECTOR_EXTENSIONS 1
#endif

namespace ordo {

namespace summation {

// Left to right in the accumulation type; per thread, then joined.
struct naive_t {
  static constexpr std::string_view name = "summation::naive";
};
// numpy's scheme: 128-element blocks summed with 8 partial sums, blocks combined pairwise.
struct pairwise_t {
  static constexpr std::string_view name = "summation::pairwise";
};
// Kahan's compensated sum.
struct kahan_t {
  static constexpr std::string_view name = "summation::kahan";
};
// Neumaier's compensated sum, robust when an addend exceeds the running sum.
struct neumaier_t {
  static constexpr std::string_view name = "summation::neumaier";
};
// The exact sum rounded once to nearest-even: bitwise identical for any thread count, execution
// space, chunking or order of the input.
struct exact_t {
  static constexpr std::string_view name = "summation::exact";
};

inline constexpr naive_t naive{};
inline constexpr pairwise_t pairwise{};
inline constexpr kahan_t kahan{};
inline constexpr neumaier_t neumaier{};
inline constexpr exact_t exact{};

// Every policy, once. Code that must treat each policy (ordo::mpi numbers them by their position
// here) derives what it needs from this list instead of listing them again.
using policies = boost::mp11::mp_list<naive_t, pairwise_t, kahan_t, neumaier_t, exact_t>;

}  // namespace summation

template <class P>
inline constexpr bool is_summation_policy_v = boost::mp11::mp_contains<summation::policies, P>::value;

template <class P>
concept summation_policy = is_summation_policy_v<std::remove_cvref_t<P>>;

namespace detail {

// A running sum and its compensation.
template <class T>
struct compensated {
  T sum;
  T compensation;
};

// Values for the pairwise reducer: partial[l] holds the sum of 2^l blocks when bit l of
// occupied is set, like the digits of a binary counter; merging two counters adds them digit by
// digit, so every addition combines sums of equal size.
template <class T>
struct pairwise_counter {
  static constexpr int levels = 64;
  T partial[levels];
  std::uint64_t occupied;
};

template <class T>
KOKKOS_INLINE_FUNCTION void pairwise_insert(pairwise_counter<T>& c, T value, int level) {
  while (level < pairwise_counter<T>::levels && ((c.occupied >> level) & 1u) != 0) {
    value = c.partial[level] + value;
    c.occupied &= ~(std::uint64_t{1} << level);
    ++level;
  }
  if (level < pairwise_counter<T>::levels) {
    c.partial[level] = value;
    c.occupied |= std::uint64_t{1} << level;
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION T pairwise_total(const pairwise_counter<T>& c) {
  T total = T(0);
  for (int l = 0; l < pairwise_counter<T>::levels; ++l) {
    if (((c.occupied >> l) & 1u) != 0) total += c.partial[l];
  }
  return total;
}

// One step of Kahan's or Neumaier's sum on a value or, lane-wise, on a vector of them.
template <class Policy, class V>
KOKKOS_INLINE_FUNCTION void compensated_step(V& sum, V& compensation, V x) {
  if constexpr (std::is_same_v<Policy, summation::neumaier_t>) {
    // Neumaier (1974) adds the rounding error of each addition to the compensation. He recovers
    // it by comparing magnitudes; Knuth's TwoSum (TAOCP vol. 2, 4.2.2) gives the same exact error
    // without the comparison, in six additions that vectorize.
    const V t = sum + x;
    const V z = t - sum;
    compensation += (sum - (t - z)) + (x - z);
    sum = t;
  } else {
    const V y = x - compensation;
    const V t = sum + y;
    compensation = (t - sum) - y;
    sum = t;
  }
}

template <class T>
KOKKOS_INLINE_FUNCTION void neumaier_add(compensated<T>& c, T x) {
  compensated_step<summation::neumaier_t>(c.sum, c.compensation, x);
}

template <class T>
KOKKOS_INLINE_FUNCTION void kahan_add(compensated<T>& c, T x) {
  compensated_step<summation::kahan_t>(c.sum, c.compensation, x);
}

// The common shape of ordo's reducers (the Kokkos reducer concept, 3.4 and 4.x). Space is where
// the result lives, as in Kokkos::Sum<T, Space>: the host by default, so that a reduction on a
// GPU writes its result to the host variable it was given.
template <class Derived, class Value, class Space>
class reducer_base {
 public:
  using value_type = Value;
  using result_view_type = Kokkos::View<value_type, Space, Kokkos::MemoryUnmanaged>;

  KOKKOS_INLINE_FUNCTION explicit reducer_base(value_type& value) : value_(&value) {}
  KOKKOS_INLINE_FUNCTION value_type& reference() const { return *value_; }
  result_view_type view() const { return result_view_type(value_); }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }

 private:
  value_type* value_;
};

// What a reducer of Input values accumulates in: float and double themselves, a storage type's
// compute type.
template <class Input>
using reduced_t = compute_type_or_t<Input>;

}  // namespace detail

namespace reducers {

// Each reducer sums values of Input in T = reduced_t<Input>: Input itself for float and double, the
// compute type (float) for a 16-bit storage type, whose own precision would swamp a running sum
// after a few hundred values. add() takes T, into which Input converts exactly.

// Plain sum in T.
template <class Input, class Space = Kokkos::HostSpace>
struct naive : detail::reducer_base<naive<Input, Space>, detail::reduced_t<Input>, Space> {
  using T = detail::reduced_t<Input>;
  using reducer = naive;
  using detail::reducer_base<naive<Input, Space>, T, Space>::reducer_base;
  KOKKOS_INLINE_FUNCTION void join(T& dest, const T& src) const { dest += src; }
#if KOKKOS_VERSION < 30700
  // C++20 deprecates compound assignment to volatile, hence the spelled-out form.
  KOKKOS_INLINE_FUNCTION void join(volatile T& dest, const volatile T& src) const { dest = dest + src; }
#endif
  KOKKOS_INLINE_FUNCTION void init(T& v) const { v = T(0); }
  KOKKOS_INLINE_FUNCTION static void add(T& v, T x) { v += x; }
  static T result(const T& v) { return v; }
};

// Kahan summation per thread; partial results joined with a compensated addition.
template <class Input, class Space = Kokkos::HostSpace>
struct kahan : detail::reducer_base<kahan<Input, Space>, detail::compensated<detail::reduced_t<Input>>, Space> {
  using T = detail::reduced_t<Input>;
  using reducer = kahan;
  using value_type = detail::compensated<T>;
  using detail::reducer_base<kahan<Input, Space>, value_type, Space>::reducer_base;
  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const {
    detail::kahan_add(dest, src.sum);
    detail::kahan_add(dest, -src.compensation);
  }
#if KOKKOS_VERSION < 30700
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest, const volatile value_type& src) const {
    value_type d{dest.sum, dest.compensation};
    detail::kahan_add(d, src.sum);
    detail::kahan_add(d, -src.compensation);
    dest.sum = d.sum;
    dest.compensation = d.compensation;
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = {T(0), T(0)}; }
  KOKKOS_INLINE_FUNCTION static void add(value_type& v, T x) { detail::kahan_add(v, x); }
  static T result(const value_type& v) { return v.sum; }
};

// Neumaier summation per thread; partial results joined with a compensated addition.
template <class Input, class Space = Kokkos::HostSpace>
struct neumaier : detail::reducer_base<neumaier<Input, Space>, detail::compensated<detail::reduced_t<Input>>, Space> {
  using T = detail::reduced_t<Input>;
  using reducer = neumaier;
  using value_type = detail::compensated<T>;
  using detail::reducer_base<neumaier<Input, Space>, value_type, Space>::reducer_base;
  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const {
    detail::neumaier_add(dest, src.sum);
    dest.compensation += src.compensation;
  }
#if KOKKOS_VERSION < 30700
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest, const volatile value_type& src) const {
    value_type d{dest.sum, dest.compensation};
    detail::neumaier_add(d, src.sum);
    d.compensation = d.compensation + src.compensation;
    dest.sum = d.sum;
    dest.compensation = d.compensation;
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = {T(0), T(0)}; }
  KOKKOS_INLINE_FUNCTION static void add(value_type& v, T x) { detail::neumaier_add(v, x); }
  static T result(const value_type& v) { return v.sum + v.compensation; }
};

// Pairwise: each added value is one leaf; counters merge digit by digit.
template <class Input, class Space = Kokkos::HostSpace>
struct pairwise
    : detail::reducer_base<pairwise<Input, Space>, detail::pairwise_counter<detail::reduced_t<Input>>, Space> {
  using T = detail::reduced_t<Input>;
  using reducer = pairwise;
  using value_type = detail::pairwise_counter<T>;
  using detail::reducer_base<pairwise<Input, Space>, value_type, Space>::reducer_base;
  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const {
    for (int l = 0; l < value_type::levels; ++l) {
      if (((src.occupied >> l) & 1u) != 0) detail::pairwise_insert(dest, src.partial[l], l);
    }
  }
#if KOKKOS_VERSION < 30700
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest, const volatile value_type& src) const {
    value_type d;
    for (int l = 0; l < value_type::levels; ++l) d.partial[l] = dest.partial[l];
    d.occupied = dest.occupied;
    for (int l = 0; l < value_type::levels; ++l) {
      if (((src.occupied >> l) & 1u) != 0) detail::pairwise_insert(d, T(src.partial[l]), l);
    }
    for (int l = 0; l < value_type::levels; ++l) dest.partial[l] = d.partial[l];
    dest.occupied = d.occupied;
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const {
    for (int l = 0; l < value_type::levels; ++l) v.partial[l] = T(0);
    v.occupied = 0;
  }
  KOKKOS_INLINE_FUNCTION static void add(value_type& v, T x) { detail::pairwise_insert(v, x, 0); }
  static T result(const value_type& v) { return detail::pairwise_total(v); }
};

// Exact: a superaccumulator per thread, merged exactly. T is the input's compute type (float or
// double; float for 16-bit input, whose values it holds exactly); round with result<Out>() on the
// host.
template <class Input, class Space = Kokkos::HostSpace>
struct exact : detail::reducer_base<exact<Input, Space>, detail::exact_accumulator<detail::reduced_t<Input>>, Space> {
  using T = detail::reduced_t<Input>;
  using reducer = exact;
  using value_type = detail::exact_accumulator<T>;
  using detail::reducer_base<exact<Input, Space>, value_type, Space>::reducer_base;
  KOKKOS_INLINE_FUNCTION void join(value_type& dest, const value_type& src) const { dest.merge(src); }
#if KOKKOS_VERSION < 30700
  KOKKOS_INLINE_FUNCTION void join(volatile value_type& dest, const volatile value_type& src) const {
    value_type d, e;
    for (int i = 0; i < value_type::chunk_count; ++i) {
      d.chunk[i] = dest.chunk[i];
      e.chunk[i] = src.chunk[i];
    }
    d.flags = dest.flags;
    e.flags = src.flags;
    d.merge(e);
    for (int i = 0; i < value_type::chunk_count; ++i) dest.chunk[i] = d.chunk[i];
    dest.flags = d.flags;
  }
#endif
  KOKKOS_INLINE_FUNCTION void init(value_type& v) const { v = value_type(); }
  // Callers add at most value_type::adds_between_normalizations values, then normalize.
  KOKKOS_INLINE_FUNCTION static void add(value_type& v, T x) { v.add(x); }
  template <class Out = T>
  static Out result(const value_type& v) {
    return detail::round_exact_sum<Out>(v);
  }
};

}  // namespace reducers

namespace detail {

// Elements each parallel iteration handles: long enough to amortize the per-iteration work,
// short enough to balance threads and, for exact, to stay far below the normalization limit.
inline constexpr std::int64_t reduction_block = 2048;
// numpy's leaf size for pairwise summation.
inline constexpr std::int64_t pairwise_leaf = 128;

template <class Policy, class T, class Acc, class Space>
struct reducer_for;
template <class T, class Acc, class Space>
struct reducer_for<summation::naive_t, T, Acc, Space> {
  using type = reducers::naive<Acc, Space>;
};
template <class T, class Acc, class Space>
struct reducer_for<summation::kahan_t, T, Acc, Space> {
  using type = reducers::kahan<Acc, Space>;
};
template <class T, class Acc, class Space>
struct reducer_for<summation::neumaier_t, T, Acc, Space> {
  using type = reducers::neumaier<Acc, Space>;
};
template <class T, class Acc, class Space>
struct reducer_for<summation::pairwise_t, T, Acc, Space> {
  using type = reducers::pairwise<Acc, Space>;
};
template <class T, class Acc, class Space>
struct reducer_for<summation::exact_t, T, Acc, Space> {
  // A storage type's values are exact in its compute type, so their exact sum is that type's.
  using type = reducers::exact<compute_type_t<T>, Space>;
};

// A storage type's values read in its compute type, for the exact sum's portable steps.
template <class Data>
struct widening_reader {
  Data data;
  KOKKOS_FORCEINLINE_FUNCTION auto operator[](std::int64_t i) const { return widen(data[i]); }
};

// Adds x[begin, end) of a 16-bit storage type (at most reduction_block elements) exactly. On x86
// hosts the block is widened into a buffer first (a loop that vectorizes, reading 2 bytes per
// element) and summed by the float kernels, whose fast paths nearly every 16-bit block takes:
// a 16-bit value has at most 11 significant bits, so a block's lane sums stay exact in double
// unless its magnitudes span more than about 2^34. Elsewhere (device code) the portable steps
// read through widen(), without a buffer in a thread's local memory.
template <class S>
KOKKOS_INLINE_FUNCTION void exact_add_widened_block(exact_accumulator<compute_type_t<S>>& acc, const S* x,
                                                    std::int64_t begin, std::int64_t end) {
#if defined(ORDO_IMPL_EXACT_SSE2)
  compute_type_t<S> widened[reduction_block];
  const std::int64_t n = end - begin;
  if constexpr (std::is_same_v<std::remove_cv_t<S>, half>) {
    widen_half_run(x + begin, widened, n);  // F16C where the AVX2 kernels run (platform/x86/half_conversion.hpp)
  } else {
    for (std::int64_t i = 0; i < n; ++i) widened[i] = widen(x[begin + i]);
  }
  exact_add_block(acc, static_cast<const compute_type_t<S>*>(widened), 0, n);
#else
  exact_add_block(acc, widening_reader<const S*>{x}, begin, end);
#endif
}

template <class Policy, class Acc, class View>
struct block_sum_functor {
  // Not named value_type: Kokkos would take that for the reduction's value type.
  using element_type = typename View::non_const_value_type;
  using reducer_type = typename reducer_for<Policy, element_type, Acc, Kokkos::HostSpace>::type;
  using accumulator = typename reducer_type::value_type;
  View x;
  std::int64_t n;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t block, accumulator& acc) const {
    const std::int64_t begin = block * reduction_block;
    const std::int64_t end = begin + reduction_block < n ? begin + reduction_block : n;
    if constexpr (std::is_same_v<Policy, summation::pairwise_t>) {
      // 128-element leaves, each summed with 8 partial sums (numpy's pairwise_sum kernel).
      for (std::int64_t leaf = begin; leaf < end; leaf += pairwise_leaf) {
        const std::int64_t leaf_end = leaf + pairwise_leaf < end ? leaf + pairwise_leaf : end;
        Acc r[8] = {};
        std::int64_t i = leaf;
        for (; i + 8 <= leaf_end; i += 8) {
          for (int j = 0; j < 8; ++j) r[j] += static_cast<Acc>(widen(x(i + j)));
        }
        Acc s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < leaf_end; ++i) s += static_cast<Acc>(widen(x(i)));
        reducer_type::add(acc, s);
      }
    } else if constexpr (std::is_same_v<Policy, summation::exact_t>) {
      // The pointer kernels read the compute type directly, and contiguous 16-bit storage once
      // widened to it; other Views go through the portable steps, widened element by element.
      constexpr bool contiguous = std::is_same_v<typename View::array_layout, Kokkos::LayoutRight> ||
                                  std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>;
      if constexpr (contiguous && std::is_same_v<element_type, compute_type_t<element_type>>) {
        exact_add_block(acc, x.data(), begin, end);
      } else if constexpr (contiguous) {
        exact_add_widened_block(acc, x.data(), begin, end);
      } else if constexpr (std::is_same_v<element_type, compute_type_t<element_type>>) {
        exact_add_block(acc, x, begin, end);
      } else {
        exact_add_block(acc, widening_reader<View>{x}, begin, end);
      }
      acc.normalize();
    } else if constexpr (std::is_same_v<Policy, summation::naive_t>) {
      for (std::int64_t i = begin; i < end; ++i) acc += static_cast<Acc>(widen(x(i)));
    } else {
      // Kahan and Neumaier in independent lanes, so that the dependent chains overlap and the
      // lane updates vectorize; lanes then join the thread's sum with the same compensated
      // addition.
      Acc sum[lanes] = {}, compensation[lanes] = {};
      std::int64_t i = begin;
#if defined(ORDO_IMPL_REDUCE_VECTOR_EXTENSIONS)
      if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutRight> ||
                    std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
        i = compensated_lanes_vectorized(x.data(), begin, end, sum, compensation);
      }
#endif
      for (; i + lanes <= end; i += lanes) {
        for (int j = 0; j < lanes; ++j) {
          compensated_step<Policy>(sum[j], compensation[j], static_cast<Acc>(widen(x(i + j))));
        }
      }
      compensated<Acc> lane[lanes];
      for (int j = 0; j < lanes; ++j) lane[j] = {sum[j], compensation[j]};
      for (; i < end; ++i) reducer_type::add(lane[0], static_cast<Acc>(widen(x(i))));
      const reducer_type join_with(acc);
      for (int j = 0; j < lanes; ++j) join_with.join(acc, lane[j]);
    }
  }

  // Four 16-byte vectors of partial sums (and four of compensations).
  static constexpr int lanes = 64 / static_cast<int>(sizeof(Acc));

#if defined(ORDO_IMPL_REDUCE_VECTOR_EXTENSIONS)
  // The lanes' loop on 16-byte vectors, which compilers otherwise split unevenly (gcc 12 did 3
  // vectors and 2 scalars). Lane j is element j of vector j / width, as in the scalar loop, so
  // both give the same bits. Returns where it stopped.
  static std::int64_t compensated_lanes_vectorized(const element_type* x, std::int64_t begin, std::int64_t end,
                                                   Acc (&sum)[lanes], Acc (&compensation)[lanes]) {
    typedef Acc vector __attribute__((vector_size(16)));
    constexpr int width = 16 / static_cast<int>(sizeof(Acc));
    constexpr int vectors = lanes / width;
    vector s[vectors], c[vectors];
    memcpy(s, sum, sizeof s);
    memcpy(c, compensation, sizeof c);
    std::int64_t i = begin;
    for (; i + lanes <= end; i += lanes) {
      for (int k = 0; k < vectors; ++k) {
        vector v;
        if constexpr (std::is_same_v<element_type, Acc>) {
          memcpy(&v, x + i + k * width, sizeof v);
        } else {
          Acc converted[width];
          for (int w = 0; w < width; ++w) converted[w] = static_cast<Acc>(widen(x[i + k * width + w]));
          memcpy(&v, converted, sizeof v);
        }
        compensated_step<Policy>(s[k], c[k], v);
      }
    }
    memcpy(sum, s, sizeof s);
    memcpy(compensation, c, sizeof c);
    return i;
  }
#endif
};

// Element k of thread t's share of x in the exact sum's device shape: x(t + k * stride), widened.
template <class View>
struct strided_share {
  View x;
  std::int64_t first, stride;
  KOKKOS_FORCEINLINE_FUNCTION auto operator[](std::int64_t k) const { return widen(x(first + k * stride)); }
};

// Elements per block of a thread's share in the exact sum's device shape: the block's lane sums
// (exact_add_block) add 8 values per level to the superaccumulator instead of 64 elements.
inline constexpr std::int64_t device_exact_block = 64;

// The exact sum's device shape: thread t of T adds elements t, t + T, t + 2T, ... so that
// neighbouring threads read neighbouring elements (coalesced) and a million floats keep thousands
// of threads busy; it adds them in blocks of device_exact_block through their lane sums, as the
// host shape's blocks are added. The third GPU run measured the element-by-element form, three
// indexed updates of a superaccumulator in a thread's local memory per element, at 13 % of the
// H200's read bandwidth (docs/gpu.md). Each thread's superaccumulator is normalized before the
// reduction merges it, and adding and merging are exact, so the result has the host shape's bits.
template <class View>
struct strided_exact_functor {
  using element_type = typename View::non_const_value_type;
  using accumulator = exact_accumulator<compute_type_t<element_type>>;
  View x;
  std::int64_t n;
  std::int64_t stride;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t, accumulator& acc) const {
    const std::int64_t count = t < n ? (n - 1 - t) / stride + 1 : 0;
    const strided_share<View> share{x, t, stride};
    std::int64_t adds = 0;  // a block adds at most device_exact_block values
    for (std::int64_t k = 0; k < count; k += device_exact_block) {
      exact_add_block(acc, share, k, k + device_exact_block < count ? k + device_exact_block : count);
      adds += device_exact_block;
      if (adds >= accumulator::adds_between_normalizations - device_exact_block) {
        acc.normalize();
        adds = 0;
      }
    }
    acc.normalize();
  }
};

// Elements per thread in the exact sum's device shape, and its cap on threads: 132 SMs of an
// H100 hold 2048 threads each, but a superaccumulator is 10 (float) or 67 (double) 64-bit chunks, so
// fewer, longer-lived threads keep it in cache.
inline constexpr std::int64_t device_exact_elements_per_thread = 32;
inline constexpr std::int64_t device_exact_max_threads = std::int64_t{1} << 16;

template <class Out, class Space, class View, class Policy>
auto reduce_view(const Space& space, const View& x, Policy, launch_shape shape = default_launch_shape_v<Space>) {
  using value_type = typename View::non_const_value_type;
  static_assert(View::rank == 1, "ordo::sum/mean(x) requires a rank-1 View");
  static_assert(floating_storage<value_type>,
                "ordo::sum/mean(x) requires a View of a floating-point storage type (float, double, or a type "
                "ordo::scalar_traits describes)");
  static_assert(Kokkos::SpaceAccessibility<Space, typename View::memory_space>::accessible,
                "ordo::sum/mean(space, x): the execution space must be able to access x's memory");
  using functor = block_sum_functor<Policy, Out, View>;
  using reducer_type = typename functor::reducer_type;
  typename reducer_type::value_type value;
  const std::int64_t n = static_cast<std::int64_t>(x.extent(0));
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    if (shape == launch_shape::device) {
      std::int64_t threads = (n + device_exact_elements_per_thread - 1) / device_exact_elements_per_thread;
      if (threads > device_exact_max_threads) threads = device_exact_max_threads;
      Kokkos::parallel_reduce("ordo::sum",
                              Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, threads),
                              strided_exact_functor<View>{x, n, threads > 0 ? threads : 1}, reducer_type(value));
      space.fence();
      return value;
    }
  }
  // The other policies' results depend on how the input is cut; both shapes use the same blocks,
  // so that they agree everywhere.
  const std::int64_t blocks = (n + reduction_block - 1) / reduction_block;
  Kokkos::parallel_reduce("ordo::sum", Kokkos::RangePolicy<Space, Kokkos::IndexType<std::int64_t>>(space, 0, blocks),
                          functor{x, n}, reducer_type(value));
  space.fence();
  return value;
}

template <class Out, class Policy, class Acc>
Out finish_sum(const Acc& value) {
  using reducer = typename reducer_for<Policy, Out, Out, Kokkos::HostSpace>::type;
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    return detail::round_exact_sum<Out>(value);
  } else {
    return reducer::result(value);
  }
}

// The compute type of a storage type; other types pass through, so that the entry points reach
// their static_assert and say what is wrong instead of dropping out of overload resolution.
template <class Result, class View>
using sum_result_t =
    std::conditional_t<std::is_void_v<Result>, compute_type_or_t<typename View::non_const_value_type>, Result>;

}  // namespace detail

// The type ordo::sum<Result> returns for View: Result, or by default the compute type of x's value
// type (float for float, ordo::half and ordo::bfloat16; double for double).
template <class Result, class View>
using sum_result_t = detail::sum_result_t<Result, View>;

// The sum of x under policy (exact by default) on the given execution space. Empty: +0.
template <class Result = void, class ExecutionSpace, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
detail::sum_result_t<Result, View> sum(const ExecutionSpace& space, const View& x, Policy policy = {}) {
  using out = detail::sum_result_t<Result, View>;
  static_assert(std::is_same_v<out, float> || std::is_same_v<out, double>,
                "ordo::sum<Result>: Result must be float or double");
  const auto value = detail::reduce_view<out>(space, x, policy);
  return detail::finish_sum<out, Policy>(value);
}

// The sum of x on x's execution space.
template <class Result = void, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_view<View>::value)
detail::sum_result_t<Result, View> sum(const View& x, Policy policy = {}) {
  return sum<Result>(typename View::execution_space{}, x, policy);
}

// The mean of x: for exact, the exact sum divided by the count, rounded once; otherwise the
// policy's sum divided by the count. Throws std::domain_error for an empty range.
template <class Result = void, class ExecutionSpace, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_execution_space<ExecutionSpace>::value && Kokkos::is_view<View>::value)
detail::sum_result_t<Result, View> mean(const ExecutionSpace& space, const View& x, Policy policy = {}) {
  using out = detail::sum_result_t<Result, View>;
  if (x.extent(0) == 0) throw std::domain_error("ordo::mean: empty range");
  const auto value = detail::reduce_view<out>(space, x, policy);
  if constexpr (std::is_same_v<Policy, summation::exact_t>) {
    return detail::round_exact_mean<out>(value, static_cast<std::uint64_t>(x.extent(0)));
  } else {
    return detail::finish_sum<out, Policy>(value) / static_cast<out>(x.extent(0));
  }
}

template <class Result = void, class View, summation_policy Policy = summation::exact_t>
  requires(Kokkos::is_view<View>::value)
detail::sum_result_t<Result, View> mean(const View& x, Policy policy = {}) {
  return mean<Result>(typename View::execution_space{}, x, policy);
}

}  // namespace ordo

#endif
