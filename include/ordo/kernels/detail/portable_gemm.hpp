#ifndef ORDO_KERNELS_DETAIL_PORTABLE_GEMM_HPP
#define ORDO_KERNELS_DETAIL_PORTABLE_GEMM_HPP

// C = alpha * A * B + beta * C as Kokkos team kernels, in two launch shapes
// (platform/launch_shape.hpp) that give the same bits.
//
// Host shape: Goto's blocking (K. Goto, R. van de Geijn, "Anatomy of high-performance matrix
// multiplication", ACM TOMS 34(3), 2008) in the BLIS formulation (F. Van Zee, R. van de Geijn,
// ACM TOMS 41(3), 2015): each team (one thread) owns an mc x nc block of C; for every kc-deep
// slice of k it packs the mc x kc block of A into mr-row micro-panels and the kc x nc block of B
// into nr-column micro-panels in scratch, then runs an mr x nr register-blocked micro-kernel over
// the micro-tiles.
//
// Device shape: the classic shared-memory tiling of a GPU GEMM (V. Volkov, J. Demmel,
// "Benchmarking GPUs to tune dense linear algebra", SC 2008): one team of 16 x 16 threads per
// 64 x 64 block of C; the team stages 16-deep slices of A and B in scratch, loaded by neighbouring
// threads from neighbouring addresses of each operand's contiguous axis; each thread accumulates
// a 4 x 4 set of C elements 16 apart, so that neighbouring threads store neighbouring elements
// along C's contiguous axis.
//
// Same bits: both shapes compute every C element as the same sequence of roundings. The products
// are added one by one in k order into an accumulator that starts at zero, for each 256-deep
// slice of k (gemm_slice_depth); the first slice gives alpha * acc + beta * C, each later one
// C + alpha * acc. The device shape stages 16 steps at a time but keeps its accumulators across
// the 16 stages of a slice.

#include <ordo/core/config.hpp>
#include <ordo/platform/storage_conversion.hpp>
#include <ordo/core/scalar_traits.hpp>
#include <ordo/platform/execution.hpp>
#include <ordo/platform/host_dispatched.hpp>
#include <ordo/platform/launch_shape.hpp>
#if defined(ORDO_IMPL_AVX2_FUNCTION)
#include <ordo/platform/x86/half_conversion.hpp>
#endif

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

ORDO_IMPL_FP_CONTRACT_OFF_BEGIN  // every instruction set rounds alike (core/config.hpp)

namespace ordo::detail {

// Host micro-kernels are written for the vector unit they are compiled for: the mr x nr
// accumulators should fill most of the vector registers (16 with SSE2/AVX, 32 with AVX-512) and a
// micro-panel row of B should be whole vectors. Isa: the instruction set of the kernel's
// instantiation (platform/host_dispatched.hpp): the build's own (baseline), or an AVX2 or
// AVX-512 twin chosen at run time.
template <class Isa>
struct gemm_host_vectors {
#if defined(__AVX512F__)
  static constexpr int bytes = 64;
  static constexpr int registers = 32;
#elif defined(__AVX__)
  static constexpr int bytes = 32;
  static constexpr int registers = 16;
#else
  static constexpr int bytes = 16;
  static constexpr int registers = 16;
#endif
  // SSE2 (the x86-64 baseline) has no broadcast load (movddup is SSE3, vbroadcast AVX): a
  // broadcast of one element of A costs a shuffle, and shuffles compete with the multiplies and
  // adds. Without AVX the packed A therefore holds each element once per vector lane, so that
  // the micro-kernel reads ready-made broadcasts with plain vector loads.
#if defined(__AVX__)
  static constexpr bool broadcasts = true;
#else
  static constexpr bool broadcasts = false;
#endif
};
template <>
struct gemm_host_vectors<isa::avx2> {
  static constexpr int bytes = 32;
  static constexpr int registers = 16;
  static constexpr bool broadcasts = true;
};
template <>
struct gemm_host_vectors<isa::avx512> {
  static constexpr int bytes = 64;
  static constexpr int registers = 32;
  static constexpr bool broadcasts = true;
};

template <class T, class Isa = isa::baseline>
inline constexpr int gemm_host_a_copies =
    gemm_host_vectors<Isa>::broadcasts || gemm_host_vectors<Isa>::bytes / static_cast<int>(sizeof(T)) <= 1
        ? 1
        : gemm_host_vectors<Isa>::bytes / static_cast<int>(sizeof(T));

// g++ 12's SLP vectorizer builds the accumulator vectors of the micro-kernel in reverse lane
// order when the accumulation runs forward and then shuffles every vector on every step of k
// (15-20% of the micro-kernel's speed with SSE2 and AVX2); written backwards, the vectors come
// out in order. clang wants it forward (backwards, its AVX-512 code runs 5-10x slower).
#if defined(__GNUC__) && !defined(__clang__) && !ORDO_DEVICE_COMPILE
inline constexpr bool gemm_reverse_accumulation = true;
#else
inline constexpr bool gemm_reverse_accumulation = false;
#endif

// The depth of k over which both shapes accumulate a C element before updating C with it (see
// the top of this file).
template <class T>
inline constexpr int gemm_slice_depth = 256;

// Tile sizes of portable_gemm for one execution space, value type and launch shape.
//   mr x nr: the C elements one thread accumulates (its micro-tile),
//   mc x nc: the block of C one team owns, kc: the depth of one packed (staged) slice of A and B,
//   team_size: threads per team, a_copies: how often packed A holds each element.
// Host: one thread per team. The accumulators take half of the vector registers, as two vectors
// per row of the micro-tile (4 x 4 doubles with SSE2, 8 x 16 with AVX-512); a kc x nr micro-panel
// of B stays in L1 while the packed mc x kc block of A (128-512 KiB) streams from L2 and the
// kc x nc block of B (up to 1 MiB) sits in L2/L3.
template <class ExecutionSpace, class T,
          launch_shape Shape = default_launch_shape_v<ExecutionSpace>, class Isa = isa::baseline>
struct gemm_tiling {
  static constexpr int lanes = gemm_host_vectors<Isa>::bytes / static_cast<int>(sizeof(T)) > 0
                                   ? gemm_host_vectors<Isa>::bytes / static_cast<int>(sizeof(T))
                                   : 1;
  static constexpr int mr = gemm_host_vectors<Isa>::registers / 4;
  static constexpr int nr = 2 * lanes;
  static constexpr int kc = gemm_slice_depth<T>;
  static constexpr int mc = 128;
  static constexpr int nc = 512;
  static constexpr int team_size = 1;
  static constexpr int a_copies = gemm_host_a_copies<T, Isa>;
};

// Device: 16 x 16 threads per team, each accumulating 4 x 4 elements of a 64 x 64 block of C;
// the staged 16-deep slices of A and B (a padded row each, against shared-memory bank conflicts)
// take 16.3 KiB of doubles, within the 48 KiB a CUDA block gets by default, and leave room for
// several teams per multiprocessor.
template <class ExecutionSpace, class T, class Isa>
struct gemm_tiling<ExecutionSpace, T, launch_shape::device, Isa> {
  static constexpr int threads_per_side = 16;  // the team is a threads_per_side^2 grid
  static constexpr int mr = 4;
  static constexpr int nr = 4;
  static constexpr int kc = 16;
  static constexpr int mc = threads_per_side * mr;
  static constexpr int nc = threads_per_side * nr;
  static constexpr int team_size = threads_per_side * threads_per_side;
  static constexpr int a_copies = 1;
  static_assert(gemm_slice_depth<T> % kc == 0,
                "ordo: the device shape's stages must tile the slices the host shape accumulates");
};

// The type a GEMM of T values multiplies and adds in: T for float, double and integers, the
// compute type (float) for a 16-bit storage type. An explicit Compute overrides it
// (ordo::precision<float, double> accumulates float data in double).
template <class T>
using gemm_scalar_t = compute_type_or_t<T>;

template <class Compute, class CView>
using gemm_compute_t =
    std::conditional_t<std::is_void_v<Compute>, gemm_scalar_t<typename CView::non_const_value_type>, Compute>;

// Copies between C and its compute-type twin (see portable_gemm): widened exactly, narrowed with
// one rounding.
template <class To, class From>
struct gemm_convert_copy {
  To to;
  From from;
  std::int64_t n;
  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t e) const {
    using to_type = typename To::non_const_value_type;
    using from_type = typename From::non_const_value_type;
    const std::int64_t i = e / n, j = e % n;
    if constexpr (floating_storage<to_type> && std::is_same_v<from_type, compute_type_t<to_type>>) {
      to(i, j) = narrow<to_type>(from(i, j));
    } else if constexpr (floating_storage<from_type>) {
      to(i, j) = static_cast<to_type>(widen(from(i, j)));
    } else {
      to(i, j) = static_cast<to_type>(from(i, j));
    }
  }
};

// Kokkos 3 takes the byte count of Kokkos::PerTeam as an int, Kokkos 4 as a size_t.
using per_team_bytes_t = decltype(Kokkos::PerTeam(0).value);

// The host shape: one team per mc x nc block of C (league rank = block row * column_blocks +
// block column). Isa: the instruction set its body is compiled for and its tiles are sized for
// (a twin of platform/host_dispatched.hpp, or the build's own code).
template <class ExecutionSpace, class AView, class BView, class CView, class Isa = isa::baseline>
struct portable_gemm_host_kernel {
  using value_type = typename CView::non_const_value_type;
  using tiling = gemm_tiling<ExecutionSpace, value_type, launch_shape::host, Isa>;
  using member_type =
      typename Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>::member_type;
  using scratch_view = Kokkos::View<value_type*, typename ExecutionSpace::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;

  static constexpr int mr = tiling::mr;
  static constexpr int nr = tiling::nr;
  static constexpr int mc = tiling::mc;
  static constexpr int nc = tiling::nc;
  static constexpr int kc = tiling::kc;
  static constexpr int a_copies = tiling::a_copies;
  static constexpr int a_step = mr * a_copies;  // elements of packed A per step of k
  static_assert(mc % mr == 0 && nc % nr == 0,
                "ordo: gemm_tiling needs mc % mr == 0 and nc % nr == 0");
  static_assert(tiling::team_size == 1, "ordo: the host shape's packing loops are written for one thread per team");

  AView a;
  BView b;
  CView c;
  value_type alpha;
  value_type beta;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;  // 0 when alpha == 0: then A and B are not read, as in BLAS
  std::int64_t column_blocks;
  int block_columns;  // nc, or fewer on hosts when n is small (see portable_gemm)
  int scratch_level;

  static std::size_t scratch_bytes() {
    return scratch_view::shmem_size(static_cast<std::size_t>(mc) * kc * a_copies) +
           scratch_view::shmem_size(static_cast<std::size_t>(nc) * kc);
  }

  KOKKOS_INLINE_FUNCTION static std::int64_t smaller(std::int64_t x, std::int64_t y) {
    return x < y ? x : y;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const { run_for_isa<Isa>(*this, team); }

  // An operand's element in the compute type: a half through F16C where the code is compiled for
  // it (one instruction instead of a dozen integer ones; the same value, widening is exact).
  template <class I, class S>
  KOKKOS_FORCEINLINE_FUNCTION static value_type packed(const S& v) {
#if defined(ORDO_IMPL_AVX2_FUNCTION) && !ORDO_DEVICE_COMPILE
    if constexpr (std::is_same_v<S, half> && std::is_same_v<value_type, float> && f16c_for_v<I>) {
      return widen1_f16c(v);
    } else {
      return static_cast<value_type>(v);
    }
#else
    return static_cast<value_type>(v);
#endif
  }

  // Whether eight consecutive operand elements (unit stride) are widened by one F16C instruction.
  template <class I, class Operand, class Stride>
  KOKKOS_FORCEINLINE_FUNCTION static bool packs_eight_halves([[maybe_unused]] Stride stride) {
#if defined(ORDO_IMPL_AVX2_FUNCTION) && !ORDO_DEVICE_COMPILE
    if constexpr (std::is_same_v<typename Operand::non_const_value_type, half> && std::is_same_v<value_type, float> &&
                  f16c_for_v<I>) {
      return stride == 1;
    }
#endif
    return false;
  }

  template <class I, class S>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_eight([[maybe_unused]] const S* from, [[maybe_unused]] value_type* to) {
#if defined(ORDO_IMPL_AVX2_FUNCTION) && !ORDO_DEVICE_COMPILE
    if constexpr (std::is_same_v<S, half> && std::is_same_v<value_type, float> && f16c_for_v<I>) widen8_f16c(from, to);
#endif
  }

  // values[0, n) of a unit-stride run as the compute type into to[t * step], t < n.
  template <class I, class Operand, class S>
  KOKKOS_FORCEINLINE_FUNCTION static void widen_run(const S* from, int n, value_type* to, std::ptrdiff_t step) {
    int t = 0;
    if (packs_eight_halves<I, Operand>(1)) {
      for (; t + 8 <= n; t += 8) {
        value_type eight[8];
        widen_eight<I>(from + t, eight);
        for (int e = 0; e < 8; ++e) to[(t + e) * step] = eight[e];
      }
    }
    for (; t < n; ++t) to[t * step] = packed<I>(from[t]);
  }

  // Packs runs of kb unit-stride values: run t (of count; the rest of the lanes are zeros) starts
  // at first(t) and goes to lane t % width of panel t / width, value p at
  // packed[panel * panel_size + lane * lane_stride + p * step]. run() packs A's rows and B's
  // columns this way where they are contiguous.
  template <class I, class Operand, class First>
  KOKKOS_FORCEINLINE_FUNCTION static void pack_runs(value_type* packed, int panels, int width, int count, int kb,
                                                    std::ptrdiff_t panel_size, int lane_stride, std::ptrdiff_t step,
                                                    const First& first) {
    for (int panel = 0; panel < panels; ++panel) {
      for (int lane = 0; lane < width; ++lane) {
        value_type* to = packed + panel * panel_size + lane * lane_stride;
        const int t = panel * width + lane;
        if (t < count) {
          widen_run<I, Operand>(first(t), kb, to, step);
        } else {
          for (int p = 0; p < kb; ++p) to[p * step] = value_type(0);
        }
      }
    }
  }

  template <class I>
  KOKKOS_FORCEINLINE_FUNCTION void run(const member_type& team) const {
    const std::int64_t block = team.league_rank();
    const std::int64_t i0 = block / column_blocks * mc;
    const std::int64_t j0 = block % column_blocks * block_columns;
    const int mb = static_cast<int>(smaller(mc, m - i0));
    const int nb = static_cast<int>(smaller(block_columns, n - j0));
    const int row_panels = (mb + mr - 1) / mr;
    const int column_panels = (nb + nr - 1) / nr;

    const scratch_view a_packed(team.team_scratch(scratch_level),
                                static_cast<std::size_t>(mc) * kc * a_copies);
    const scratch_view b_packed(team.team_scratch(scratch_level),
                                static_cast<std::size_t>(nc) * kc);

    // k == 0 still runs one (empty) slice so that C = beta * C is written.
    for (std::int64_t p0 = 0; p0 < k || p0 == 0; p0 += kc) {
      const int kb = static_cast<int>(smaller(kc, k - p0));
      const bool first_slice = p0 == 0;

      // Plain loops rather than TeamThreadRange and ThreadVectorRange lambdas: a host team is one
      // thread (tiling::team_size), and g++ leaves an F16C helper out of line when the twin reaches
      // it through a lambda of this function (checked by twin_isa.portable_gemm_test).
      //
      // A(i0 + r * mr + ii, p0 + p) -> a_packed[(r * kc + p) * a_step + ii * a_copies + copy];
      // rows past m are zero. Walked along A's contiguous axis: by rows where A's rows are
      // contiguous (LayoutRight), else by columns. The flat index runs over kc (a constant) rather
      // than kb so that splitting it costs no division.
      if (kb > 0 && a.stride(1) == 1 && a.stride(0) != 1) {
        value_type* const packed_a = a_packed.data();
        pack_runs<I, AView>(packed_a, row_panels, mr, mb, kb, static_cast<std::ptrdiff_t>(kc) * a_step, a_copies, a_step,
                            [&](int row) { return &a(i0 + row, p0); });
        for (int copy = 1; copy < a_copies; ++copy) {  // the broadcast copies of each element
          for (int r = 0; r < row_panels; ++r) {
            for (int e = r * kc * mr; e < (r * kc + kb) * mr; ++e) packed_a[e * a_copies + copy] = packed_a[e * a_copies];
          }
        }
      } else {
        for (int rp = 0; rp < row_panels * kc; ++rp) {
          const int r = rp / kc;
          const int p = rp % kc;
          if (p >= kb) continue;
          value_type* dst = a_packed.data() + static_cast<std::ptrdiff_t>(rp) * a_step;
          const std::int64_t i = i0 + r * mr;
          const std::int64_t q = p0 + p;
          const int rows = static_cast<int>(smaller(mr, mb - r * mr));
          if (rows == mr && a_copies == 1 && mr % 8 == 0 && packs_eight_halves<I, AView>(a.stride(0))) {
            for (int ii = 0; ii < mr; ii += 8) widen_eight<I>(&a(i + ii, q), dst + ii);  // a column of A
          } else if (rows == mr) {
            for (int ii = 0; ii < mr; ++ii) {
              const value_type value = packed<I>(a(i + ii, q));
              for (int copy = 0; copy < a_copies; ++copy) dst[ii * a_copies + copy] = value;
            }
          } else {
            for (int ii = 0; ii < mr; ++ii) {
              const value_type value = ii < rows ? packed<I>(a(i + ii, q)) : value_type(0);
              for (int copy = 0; copy < a_copies; ++copy) dst[ii * a_copies + copy] = value;
            }
          }
        }
      }
      // B(p0 + p, j0 + s * nr + jj) -> b_packed[(s * kc + p) * nr + jj]; columns past n are zero.
      // Walked along B's contiguous axis, as A is.
      if (kb > 0 && b.stride(0) == 1 && b.stride(1) != 1) {
        pack_runs<I, BView>(b_packed.data(), column_panels, nr, nb, kb, static_cast<std::ptrdiff_t>(kc) * nr, 1, nr,
                            [&](int column) { return &b(p0, j0 + column); });
      } else {
        for (int sp = 0; sp < column_panels * kc; ++sp) {
          const int s = sp / kc;
          const int p = sp % kc;
          if (p >= kb) continue;
          value_type* dst = b_packed.data() + static_cast<std::ptrdiff_t>(sp) * nr;
          const std::int64_t j = j0 + s * nr;
          const std::int64_t q = p0 + p;
          const int columns = static_cast<int>(smaller(nr, nb - s * nr));
          if (columns == nr) {
            if (packs_eight_halves<I, BView>(b.stride(1)) && nr % 8 == 0) {  // 8 halves an instruction
              for (int jj = 0; jj < nr; jj += 8) widen_eight<I>(&b(q, j + jj), dst + jj);
            } else {
              for (int jj = 0; jj < nr; ++jj) dst[jj] = packed<I>(b(q, j + jj));
            }
          } else {
            for (int jj = 0; jj < nr; ++jj) dst[jj] = jj < columns ? packed<I>(b(q, j + jj)) : value_type(0);
          }
        }
      }
      team.team_barrier();

      // Column panels outermost: one micro-panel of B stays in L1 across all row panels of A.
      Kokkos::parallel_for(
          Kokkos::TeamThreadRange(team, row_panels * column_panels), [&](const int t) {
            const int s = t / row_panels;
            const int r = t % row_panels;
            micro_tile(a_packed.data() + static_cast<std::ptrdiff_t>(r) * kc * a_step,
                       b_packed.data() + static_cast<std::ptrdiff_t>(s) * kc * nr, kb, i0 + r * mr,
                       j0 + s * nr, static_cast<int>(smaller(mr, mb - r * mr)),
                       static_cast<int>(smaller(nr, nb - s * nr)), first_slice);
          });
      team.team_barrier();
    }
  }

  // acc = A_panel * B_panel over kb, then C_tile = alpha * acc + (first slice ? beta * C : C).
  KOKKOS_INLINE_FUNCTION void micro_tile(const value_type* a_panel, const value_type* b_panel,
                                         const int kb, const std::int64_t i, const std::int64_t j,
                                         const int rows, const int columns,
                                         const bool first_slice) const {
    value_type acc[mr][nr] = {};
    for (int p = 0; p < kb; ++p) {
      const value_type* a_p = a_panel + p * a_step;
      const value_type* b_p = b_panel + p * nr;
      ORDO_IMPL_UNROLL
      for (int ii = 0; ii < mr; ++ii) {
        value_type product[nr];
        ORDO_IMPL_UNROLL
        for (int jj = 0; jj < nr; ++jj) {
          product[jj] = static_cast<value_type>(a_p[ii * a_copies + jj % a_copies] * b_p[jj]);
        }
        ORDO_IMPL_UNROLL
        for (int jj = 0; jj < nr; ++jj) {
          const int column = gemm_reverse_accumulation ? nr - 1 - jj : jj;
          acc[ii][column] = static_cast<value_type>(acc[ii][column] + product[column]);
        }
      }
    }
    if (!first_slice) {
      store(i, j, rows, columns, [&](const value_type& cij, const int ii, const int jj) {
        return static_cast<value_type>(cij + alpha * acc[ii][jj]);
      });
    } else if (k == 0) {
      // Nothing to add: C = beta * C, and BLAS writes zeros (does not read C) when beta == 0.
      if (beta == value_type(0)) {
        store(i, j, rows, columns, [](const value_type&, int, int) { return value_type(0); });
      } else {
        store(i, j, rows, columns,
              [&](const value_type& cij, int, int) { return static_cast<value_type>(beta * cij); });
      }
    } else if (beta == value_type(0)) {
      store(i, j, rows, columns, [&](const value_type&, const int ii, const int jj) {
        return static_cast<value_type>(alpha * acc[ii][jj]);
      });
    } else {
      store(i, j, rows, columns, [&](const value_type& cij, const int ii, const int jj) {
        return static_cast<value_type>(beta * cij + alpha * acc[ii][jj]);
      });
    }
  }

  // C(i + ii, j + jj) = f(C(i + ii, j + jj), ii, jj) over the rows x columns corner of the tile,
  // walking C's contiguous index innermost when the layout says which one it is.
  template <class F>
  KOKKOS_INLINE_FUNCTION void store(const std::int64_t i, const std::int64_t j, const int rows,
                                    const int columns, const F& f) const {
    if constexpr (std::is_same_v<typename CView::array_layout, Kokkos::LayoutLeft>) {
      for (int jj = 0; jj < columns; ++jj) {
        for (int ii = 0; ii < rows; ++ii) {
          value_type& cij = c(i + ii, j + jj);
          cij = f(cij, ii, jj);
        }
      }
    } else {
      for (int ii = 0; ii < rows; ++ii) {
        for (int jj = 0; jj < columns; ++jj) {
          value_type& cij = c(i + ii, j + jj);
          cij = f(cij, ii, jj);
        }
      }
    }
  }
};

// Whether a rank-2 View's first index walks its contiguous axis (LayoutLeft, or strides that
// say so): neighbouring threads then take neighbouring rows.
template <class View>
bool first_index_is_contiguous(const View& v) {
  if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutLeft>) {
    return true;
  } else if constexpr (std::is_same_v<typename View::array_layout, Kokkos::LayoutRight>) {
    return false;
  } else {
    return v.stride(0) < v.stride(1);
  }
}

// The device shape: one team per mc x nc block of C, a grid of threads_per_side^2 threads.
// Thread v of the grid has a fast coordinate v % threads_per_side and a slow one
// v / threads_per_side; the fast one runs along C's contiguous axis, and the thread owns the
// mr x nr elements (row0 + threads_per_side * ii, column0 + threads_per_side * jj).
// A team smaller than the grid (host spaces offer one or a few threads per team) plays the grid
// in turns, staging A and B again for each turn: slow, but the same code and the same bits, so
// tests run this shape on the host.
template <class ExecutionSpace, class AView, class BView, class CView>
struct portable_gemm_device_kernel {
  using value_type = typename CView::non_const_value_type;
  using tiling = gemm_tiling<ExecutionSpace, value_type, launch_shape::device>;
  using member_type = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using scratch_view = Kokkos::View<value_type*, typename ExecutionSpace::scratch_memory_space,
                                    Kokkos::MemoryUnmanaged>;

  static constexpr int side = tiling::threads_per_side;
  static constexpr int grid = side * side;
  static constexpr int mr = tiling::mr;
  static constexpr int nr = tiling::nr;
  static constexpr int mc = tiling::mc;
  static constexpr int nc = tiling::nc;
  static constexpr int kc = tiling::kc;
  static constexpr int slice = gemm_slice_depth<value_type>;
  // Staged A is kc rows of mc (+1 padding), staged B kc rows of nc (+1): a thread walking k while
  // its neighbours walk rows or columns then hits a different shared-memory bank.
  static constexpr int a_stride = mc + 1;
  static constexpr int b_stride = nc + 1;

  AView a;
  BView b;
  CView c;
  value_type alpha;
  value_type beta;
  std::int64_t m;
  std::int64_t n;
  std::int64_t k;  // 0 when alpha == 0: then A and B are not read, as in BLAS
  std::int64_t column_blocks;
  int scratch_level;
  bool a_rows_contiguous;     // A's row index is its fast axis (LayoutLeft-like)
  bool b_rows_contiguous;     // B's row index is its fast axis (LayoutLeft-like)
  bool c_columns_contiguous;  // C's column index is its fast axis (LayoutRight-like)

  static std::size_t scratch_bytes() {
    return scratch_view::shmem_size(static_cast<std::size_t>(kc) * a_stride) +
           scratch_view::shmem_size(static_cast<std::size_t>(kc) * b_stride);
  }

  KOKKOS_INLINE_FUNCTION static std::int64_t smaller(std::int64_t x, std::int64_t y) {
    return x < y ? x : y;
  }

  KOKKOS_INLINE_FUNCTION void operator()(const member_type& team) const {
    const std::int64_t block = team.league_rank();
    const std::int64_t i0 = block / column_blocks * mc;
    const std::int64_t j0 = block % column_blocks * nc;
    const int mb = static_cast<int>(smaller(mc, m - i0));
    const int nb = static_cast<int>(smaller(nc, n - j0));
    const scratch_view a_staged(team.team_scratch(scratch_level),
                                static_cast<std::size_t>(kc) * a_stride);
    const scratch_view b_staged(team.team_scratch(scratch_level),
                                static_cast<std::size_t>(kc) * b_stride);

    for (int turn = 0; turn < grid; turn += team.team_size()) {
      const int v = turn + team.team_rank();
      const bool playing = v < grid;
      const int fast = v % side;
      const int slow = v / side;
      const int row0 = c_columns_contiguous ? slow : fast;
      const int column0 = c_columns_contiguous ? fast : slow;
      // k == 0 still runs one (empty) slice so that C = beta * C is written.
      for (std::int64_t p0 = 0; p0 < k || p0 == 0; p0 += slice) {
        const int depth = static_cast<int>(smaller(slice, k - p0));
        value_type acc[mr][nr] = {};
        for (int q0 = 0; q0 < depth; q0 += kc) {
          const int kb = depth - q0 < kc ? depth - q0 : kc;
          team.team_barrier();  // the previous stage has been read
          stage(team, i0, j0, mb, nb, p0 + q0, kb, a_staged.data(), b_staged.data());
          team.team_barrier();
          if (playing) {
            for (int p = 0; p < kb; ++p) {
              const value_type* a_p = a_staged.data() + p * a_stride + row0;
              const value_type* b_p = b_staged.data() + p * b_stride + column0;
              ORDO_IMPL_UNROLL
              for (int ii = 0; ii < mr; ++ii) {
                const value_type a_value = a_p[side * ii];
                ORDO_IMPL_UNROLL
                for (int jj = 0; jj < nr; ++jj) {
                  const auto product = static_cast<value_type>(a_value * b_p[side * jj]);
                  acc[ii][jj] = static_cast<value_type>(acc[ii][jj] + product);
                }
              }
            }
          }
        }
        if (playing) store(i0, j0, mb, nb, row0, column0, acc, p0 == 0);
      }
    }
  }

  // A(i0 + i, q + p) -> a_staged[p * a_stride + i] and B(q + p, j0 + j) -> b_staged[p * b_stride
  // + j], zeros outside the matrices; consecutive threads take consecutive elements of each
  // operand's contiguous axis.
  KOKKOS_INLINE_FUNCTION void stage(const member_type& team, const std::int64_t i0,
                                    const std::int64_t j0, const int mb, const int nb,
                                    const std::int64_t q, const int kb, value_type* a_staged,
                                    value_type* b_staged) const {
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, mc * kc), [&](const int e) {
      const int i = a_rows_contiguous ? e % mc : e / kc;
      const int p = a_rows_contiguous ? e / mc : e % kc;
      a_staged[p * a_stride + i] =
          i < mb && p < kb ? static_cast<value_type>(a(i0 + i, q + p)) : value_type(0);
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, kc * nc), [&](const int e) {
      const int j = b_rows_contiguous ? e / kc : e % nc;
      const int p = b_rows_contiguous ? e % kc : e / nc;
      b_staged[p * b_stride + j] =
          j < nb && p < kb ? static_cast<value_type>(b(q + p, j0 + j)) : value_type(0);
    });
  }

  // C = alpha * acc + beta * C on the first slice, C + alpha * acc after it: the host shape's
  // expressions, element by element.
  KOKKOS_INLINE_FUNCTION void store(const std::int64_t i0, const std::int64_t j0, const int mb,
                                    const int nb, const int row0, const int column0,
                                    const value_type (&acc)[mr][nr], const bool first_slice) const {
    ORDO_IMPL_UNROLL
    for (int ii = 0; ii < mr; ++ii) {
      const int row = row0 + side * ii;
      if (row >= mb) continue;
      ORDO_IMPL_UNROLL
      for (int jj = 0; jj < nr; ++jj) {
        const int column = column0 + side * jj;
        if (column >= nb) continue;
        value_type& cij = c(i0 + row, j0 + column);
        if (!first_slice) {
          cij = static_cast<value_type>(cij + alpha * acc[ii][jj]);
        } else if (k == 0) {
          // Nothing to add: C = beta * C, and BLAS writes zeros (does not read C) when beta == 0.
          cij = beta == value_type(0) ? value_type(0) : static_cast<value_type>(beta * cij);
        } else if (beta == value_type(0)) {
          cij = static_cast<value_type>(alpha * acc[ii][jj]);
        } else {
          cij = static_cast<value_type>(beta * cij + alpha * acc[ii][jj]);
        }
      }
    }
  }
};

// Whether the host shape compiles its kernel for each instruction set and picks one at run
// time: for 16-bit operands, whose products only this kernel computes (BLAS takes float and
// double); 1024^3 on this project's 2-core AMD EPYC: half 31.2 -> 8.5 ms, bfloat16 24.6 -> 7.6 ms
// with the AVX-512 twin (docs/performance.md). float and double GEMMs reach it only without BLAS
// or for operands BLAS cannot take, and three instantiations would triple its compile time in
// every program that multiplies. Not with clang (14): its flatten leaves micro_tile out of line
// and its twins ran slower than its baseline kernel (half 34.1 and 45.2 ms against 28.2 ms).
template <class AView, class BView>
inline constexpr bool gemm_host_dispatch_v =
#if defined(__clang__)
    false;
#else
    !std::is_arithmetic_v<typename AView::non_const_value_type> ||
    !std::is_arithmetic_v<typename BView::non_const_value_type>;
#endif

// The host shape's launch with its kernel compiled for Isa (and tiled for it).
template <class Isa, class ExecutionSpace, class AView, class BView, class CView>
void launch_portable_gemm_host(const ExecutionSpace& space, typename CView::non_const_value_type alpha, const AView& a,
                               const BView& b, typename CView::non_const_value_type beta, const CView& c,
                               const std::int64_t m, const std::int64_t n, const std::int64_t k) {
  using kernel = portable_gemm_host_kernel<ExecutionSpace, AView, BView, CView, Isa>;
  const std::int64_t row_blocks = (m + kernel::mc - 1) / kernel::mc;
  // Host threads take blocks dynamically; a small C is cut into narrower column blocks so that
  // every thread gets a few, and a thread the OS preempts holds up at most one (the tiles are
  // compile-time sizes, the narrower width only leaves part of the packed B unused).
  int block_columns = kernel::nc;
  const std::int64_t wanted_blocks = 4 * static_cast<std::int64_t>(space.concurrency());
  while (block_columns > 4 * kernel::nr && block_columns % (2 * kernel::nr) == 0 &&
         row_blocks * ((n + block_columns - 1) / block_columns) < wanted_blocks) {
    block_columns /= 2;
  }
  const std::int64_t column_blocks = (n + block_columns - 1) / block_columns;
  const std::size_t bytes = kernel::scratch_bytes();
  using policy_type = Kokkos::TeamPolicy<ExecutionSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
  // Level 0 is the fast scratch (shared memory on GPUs); host spaces advertise a small level-0
  // limit but back both levels with the same memory, so large host tiles use level 1.
  const int level = bytes <= static_cast<std::size_t>(policy_type::scratch_size_max(0)) ? 0 : 1;
  const kernel functor{a, b, c, alpha, beta, m, n, k, column_blocks, block_columns, level};
  const int league_size = static_cast<int>(row_blocks * column_blocks);
  const auto scratch = Kokkos::PerTeam(static_cast<per_team_bytes_t>(bytes));
  // Fewer threads than micro-tiles is fine (the team loops); more than the space allows is not.
  const int team_size = team_size_at_most(policy_type(space, league_size, 1).set_scratch_size(level, scratch),
                                          functor, kernel::tiling::team_size);
  const policy_type policy =
      policy_type(space, league_size, team_size).set_scratch_size(level, scratch);
  Kokkos::parallel_for("ordo::portable_gemm", policy, functor);
}

// C = alpha * A * B + beta * C. A (m x k), B (k x n), C (m x n) are rank-2 Kokkos::Views whose
// memory ExecutionSpace can access, of any layout, value type any arithmetic type. When
// beta == 0, C is not read; when alpha == 0 or k == 0, A and B are not read (BLAS semantics).
// Asynchronous on `space`. Preconditions (extents conform) are checked by the caller.
// portable_gemm<Shape>(...) runs the given launch shape on any space (tests run the device shape
// on the host); portable_gemm(...) the one made for the space.
//
// Compute (default: gemm_scalar_t of C's value type) is what products and sums run in. When C's
// value type is narrower (16-bit storage, or float data under precision<float, double>), the
// product goes into a compute-type twin of C (C widened into it first when beta != 0) and each
// element of C is rounded once at the end: the bits of the same GEMM on the widened operands,
// rounded to storage. (C itself cannot hold the partial results between slices of k without
// rounding them.) The twin costs two passes over C, little next to the 2 m n k operations.
template <launch_shape Shape, class Compute = void, class ExecutionSpace, class AView, class BView, class CView>
void portable_gemm(const ExecutionSpace& space, gemm_compute_t<Compute, CView> alpha, const AView& a,
                   const BView& b, gemm_compute_t<Compute, CView> beta, const CView& c) {
  static_assert(Kokkos::is_view<AView>::value && Kokkos::is_view<BView>::value &&
                    Kokkos::is_view<CView>::value,
                "ordo::detail::portable_gemm(space, alpha, a, b, beta, c) requires Kokkos::Views");
  static_assert(AView::rank == 2 && BView::rank == 2 && CView::rank == 2,
                "ordo::detail::portable_gemm(space, alpha, a, b, beta, c) requires rank-2 views");
  using value_type = gemm_compute_t<Compute, CView>;
  static_assert(std::is_arithmetic_v<value_type> && !std::is_same_v<value_type, bool>,
                "ordo::detail::portable_gemm(space, alpha, a, b, beta, c) requires an arithmetic "
                "value type other than bool, or a storage type ordo::scalar_traits describes");

  const auto m = static_cast<std::int64_t>(c.extent(0));
  const auto n = static_cast<std::int64_t>(c.extent(1));
  const auto k = alpha == value_type(0) ? std::int64_t{0} : static_cast<std::int64_t>(a.extent(1));
  if (m == 0 || n == 0 || (k == 0 && beta == value_type(1))) return;

  if constexpr (!std::is_same_v<typename CView::non_const_value_type, value_type>) {
    using layout = std::conditional_t<std::is_same_v<typename CView::array_layout, Kokkos::LayoutLeft>,
                                      Kokkos::LayoutLeft, Kokkos::LayoutRight>;
    using wide_view = Kokkos::View<value_type**, layout, typename CView::memory_space>;
    const wide_view wide(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ordo::gemm compute-type C")),
                         c.extent(0), c.extent(1));
    const Kokkos::RangePolicy<ExecutionSpace, Kokkos::IndexType<std::int64_t>> elements(space, 0, m * n);
    if (beta != value_type(0)) {
      Kokkos::parallel_for("ordo::gemm widen C", elements, gemm_convert_copy<wide_view, CView>{wide, c, n});
    }
    portable_gemm<Shape, value_type>(space, alpha, a, b, beta, wide);
    Kokkos::parallel_for("ordo::gemm round C", elements, gemm_convert_copy<CView, wide_view>{c, wide, n});
    space.fence();  // the twin is released on return
  } else if constexpr (Shape == launch_shape::device) {
    using kernel = portable_gemm_device_kernel<ExecutionSpace, AView, BView, CView>;
    using policy_type = Kokkos::TeamPolicy<ExecutionSpace>;
    const std::int64_t column_blocks = (n + kernel::nc - 1) / kernel::nc;
    const std::int64_t blocks = (m + kernel::mc - 1) / kernel::mc * column_blocks;
    const std::size_t bytes = kernel::scratch_bytes();
    const int level = bytes <= static_cast<std::size_t>(policy_type::scratch_size_max(0)) ? 0 : 1;
    const kernel functor{a,
                         b,
                         c,
                         alpha,
                         beta,
                         m,
                         n,
                         k,
                         column_blocks,
                         level,
                         first_index_is_contiguous(a),
                         first_index_is_contiguous(b),
                         !first_index_is_contiguous(c)};
    const auto scratch = Kokkos::PerTeam(static_cast<per_team_bytes_t>(bytes));
    const int team_size = team_size_at_most(
        policy_type(space, static_cast<int>(blocks), 1).set_scratch_size(level, scratch), functor,
        kernel::tiling::team_size);
    Kokkos::parallel_for(
        "ordo::portable_gemm",
        policy_type(space, static_cast<int>(blocks), team_size).set_scratch_size(level, scratch),
        functor);
  } else if constexpr (gemm_host_dispatch_v<AView, BView> && is_host_space_v<ExecutionSpace>) {
    with_host_isa([&](auto isa) { launch_portable_gemm_host<decltype(isa)>(space, alpha, a, b, beta, c, m, n, k); });
  } else {
    launch_portable_gemm_host<isa::baseline>(space, alpha, a, b, beta, c, m, n, k);
  }
}

template <class Compute = void, class ExecutionSpace, class AView, class BView, class CView>
void portable_gemm(const ExecutionSpace& space, gemm_compute_t<Compute, CView> alpha, const AView& a,
                   const BView& b, gemm_compute_t<Compute, CView> beta, const CView& c) {
  portable_gemm<default_launch_shape_v<ExecutionSpace>, Compute>(space, alpha, a, b, beta, c);
}

}  // namespace ordo::detail

ORDO_IMPL_FP_CONTRACT_OFF_END

#endif
