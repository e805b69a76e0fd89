// Synchronized batch norm across 1 to 4 ranks equals single-process batch norm on the
// concatenated batch (forward, running statistics, backward; channels first and last; ranks
// holding no samples), gives every rank the same bits, and throws on every rank on mismatches.

#include "mpi_support.hpp"

#include <ordo/mpi/batch_norm.hpp>
#include <support/execution_spaces.hpp>
#include <support/host_views.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

using ordo_test::readable_on_host;

// A batch (N, C, H, W) held on the host in logical order, viewed as channels first or last.
template <class T>
struct global_batch {
  std::int64_t n, c, h, w;
  std::vector<T> x, dy;

  global_batch(std::int64_t n_, std::int64_t c_, std::int64_t h_, std::int64_t w_, double offset, std::uint64_t seed)
      : n(n_), c(c_), h(h_), w(w_) {
    std::mt19937_64 random(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::int64_t i = 0; i < n * c * h * w; ++i) {
      x.push_back(static_cast<T>(offset + normal(random)));
      dy.push_back(static_cast<T>(normal(random)));
    }
  }
  std::size_t index(std::int64_t i, std::int64_t ch, std::int64_t y, std::int64_t z) const {
    return static_cast<std::size_t>(((i * c + ch) * h + y) * w + z);
  }
};

template <class T, class Memory>
using tensor = Kokkos::View<T****, Kokkos::LayoutRight, Memory>;

// Samples [begin, end) of `values` as a View, (N, C, H, W) or (N, H, W, C).
template <class Memory, class T>
tensor<T, Memory> slice(const global_batch<T>& b, const std::vector<T>& values, std::int64_t begin, std::int64_t end,
                        bool last) {
  const auto rows = static_cast<std::size_t>(end - begin);
  tensor<T, Memory> v = last ? tensor<T, Memory>("x", rows, static_cast<std::size_t>(b.h), static_cast<std::size_t>(b.w),
                                                 static_cast<std::size_t>(b.c))
                             : tensor<T, Memory>("x", rows, static_cast<std::size_t>(b.c), static_cast<std::size_t>(b.h),
                                                 static_cast<std::size_t>(b.w));
  auto host = Kokkos::create_mirror_view(v);
  for (std::int64_t i = begin; i < end; ++i)
    for (std::int64_t ch = 0; ch < b.c; ++ch)
      for (std::int64_t y = 0; y < b.h; ++y)
        for (std::int64_t z = 0; z < b.w; ++z) {
          const T value = values[b.index(i, ch, y, z)];
          if (last) {
            host(static_cast<std::size_t>(i - begin), static_cast<std::size_t>(y), static_cast<std::size_t>(z),
                 static_cast<std::size_t>(ch)) = value;
          } else {
            host(static_cast<std::size_t>(i - begin), static_cast<std::size_t>(ch), static_cast<std::size_t>(y),
                 static_cast<std::size_t>(z)) = value;
          }
        }
  Kokkos::deep_copy(v, host);
  return v;
}

// Everything one training step produces.
template <class T, class Memory>
struct step_result {
  tensor<T, Memory> y, dx;
  Kokkos::View<double*, Memory> mean, invstd;
  Kokkos::View<T*, Memory> running_mean, running_var, dgamma, dbeta;
};

template <class T, class Memory>
struct parameters {
  Kokkos::View<T*, Memory> gamma, beta;
  explicit parameters(std::int64_t c) : gamma("gamma", static_cast<std::size_t>(c)), beta("beta", static_cast<std::size_t>(c)) {
    auto g = Kokkos::create_mirror_view(gamma);
    auto b = Kokkos::create_mirror_view(beta);
    for (std::int64_t i = 0; i < c; ++i) {
      g(static_cast<std::size_t>(i)) = static_cast<T>(0.5 + 0.25 * static_cast<double>(i));
      b(static_cast<std::size_t>(i)) = static_cast<T>(-0.125 * static_cast<double>(i));
    }
    Kokkos::deep_copy(gamma, g);
    Kokkos::deep_copy(beta, b);
  }
};

template <class T, class Memory>
step_result<T, Memory> fresh_result(const tensor<T, Memory>& x, std::int64_t c) {
  step_result<T, Memory> r;
  r.y = tensor<T, Memory>("y", x.extent(0), x.extent(1), x.extent(2), x.extent(3));
  r.dx = tensor<T, Memory>("dx", x.extent(0), x.extent(1), x.extent(2), x.extent(3));
  const auto cs = static_cast<std::size_t>(c);
  r.running_mean = Kokkos::View<T*, Memory>("running_mean", cs);
  r.running_var = Kokkos::View<T*, Memory>("running_var", cs);
  Kokkos::deep_copy(r.running_var, T(1));
  r.dgamma = Kokkos::View<T*, Memory>("dgamma", cs);
  r.dbeta = Kokkos::View<T*, Memory>("dbeta", cs);
  return r;
}

template <class Memory, class T>
step_result<T, Memory> single_process(const global_batch<T>& b, bool last) {
  const ordo::nn::batch_norm_options options{1e-5, 0.1, last ? ordo::nn::channels_last : ordo::nn::channels_first};
  const auto x = slice<Memory>(b, b.x, 0, b.n, last);
  const auto dy = slice<Memory>(b, b.dy, 0, b.n, last);
  const parameters<T, Memory> p(b.c);
  auto r = fresh_result(x, b.c);
  const auto saved = ordo::nn::batch_norm_forward_training(x, p.gamma, p.beta, r.running_mean, r.running_var, r.y,
                                                           options);
  ordo::nn::batch_norm_backward(dy, x, p.gamma, saved, r.dx, r.dgamma, r.dbeta, options);
  r.mean = saved.mean;
  r.invstd = saved.invstd;
  return r;
}

template <class Memory, class T>
step_result<T, Memory> synchronized(MPI_Comm comm, const global_batch<T>& b, bool last, std::int64_t begin,
                                    std::int64_t end,
                                    ordo::mpi::detail::payload_path path = ordo::mpi::detail::payload_path_for<Memory>()) {
  const ordo::nn::batch_norm_options options{1e-5, 0.1, last ? ordo::nn::channels_last : ordo::nn::channels_first};
  const auto x = slice<Memory>(b, b.x, begin, end, last);
  const auto dy = slice<Memory>(b, b.dy, begin, end, last);
  const parameters<T, Memory> p(b.c);
  auto r = fresh_result(x, b.c);
  const auto saved = ordo::mpi::detail::forward_training(typename Memory::execution_space(), comm, x, p.gamma, p.beta, r.running_mean, r.running_var,
                                                         r.y, options, path);
  ordo::mpi::detail::backward(typename Memory::execution_space(), comm, dy, x, p.gamma, saved, r.dx, r.dgamma, r.dbeta, options, path);
  r.mean = saved.mean;
  r.invstd = saved.invstd;
  return r;
}

template <class T>
bool close(double got, double expected) {
  const double tolerance = std::is_same_v<T, float> ? 1e-6 : 1e-12;
  return std::fabs(got - expected) <= tolerance * std::fmax(1.0, std::fabs(expected));
}

// Every value of the rank's part against the same samples of the single-process run.
template <class T, class Memory>
void check_against_single_process(const step_result<T, Memory>& part, const step_result<T, Memory>& whole,
                                  std::int64_t begin) {
  int mismatches = 0;
  const auto compare = [&](const auto& got, const auto& expected, std::size_t offset) {
    const auto g = readable_on_host(got);
    const auto e = readable_on_host(expected);
    for (std::size_t i = 0; i < g.extent(0); ++i)
      for (std::size_t j = 0; j < g.extent(1); ++j)
        for (std::size_t k = 0; k < g.extent(2); ++k)
          for (std::size_t l = 0; l < g.extent(3); ++l)
            if (!close<T>(static_cast<double>(g(i, j, k, l)), static_cast<double>(e(i + offset, j, k, l)))) ++mismatches;
  };
  compare(part.y, whole.y, static_cast<std::size_t>(begin));
  compare(part.dx, whole.dx, static_cast<std::size_t>(begin));
  const auto compare_channels = [&](const auto& got, const auto& expected) {
    const auto g = readable_on_host(got);
    const auto e = readable_on_host(expected);
    for (std::size_t i = 0; i < g.extent(0); ++i)
      if (!close<T>(static_cast<double>(g(i)), static_cast<double>(e(i)))) ++mismatches;
  };
  compare_channels(part.mean, whole.mean);
  compare_channels(part.invstd, whole.invstd);
  compare_channels(part.running_mean, whole.running_mean);
  compare_channels(part.running_var, whole.running_var);
  compare_channels(part.dgamma, whole.dgamma);
  compare_channels(part.dbeta, whole.dbeta);
  CHECK(mismatches == 0);
}

// The per-channel results every rank must hold bit for bit.
template <class T, class Memory>
bool channels_same_on_every_rank(MPI_Comm comm, const step_result<T, Memory>& r) {
  const auto m = readable_on_host(r.mean);
  const auto s = readable_on_host(r.invstd);
  const auto rm = readable_on_host(r.running_mean);
  const auto rv = readable_on_host(r.running_var);
  const auto dg = readable_on_host(r.dgamma);
  const auto db = readable_on_host(r.dbeta);
  return ordo_test::same_on_every_rank(comm, m.data(), m.extent(0)) &&
         ordo_test::same_on_every_rank(comm, s.data(), s.extent(0)) &&
         ordo_test::same_on_every_rank(comm, rm.data(), rm.extent(0)) &&
         ordo_test::same_on_every_rank(comm, rv.data(), rv.extent(0)) &&
         ordo_test::same_on_every_rank(comm, dg.data(), dg.extent(0)) &&
         ordo_test::same_on_every_rank(comm, db.data(), db.extent(0));
}

template <class Space, class T>
void check_every_rank_count_and_split(double offset) {
  using memory = typename Space::memory_space;
  const global_batch<T> b(11, 3, 4, 5, offset, 42);
  for (const bool last : {false, true}) {
    const auto whole = single_process<memory>(b, last);
    // An independent check of the single-process statistics: long double, two passes.
    {
      const auto mean = readable_on_host(whole.mean);
      const auto invstd = readable_on_host(whole.invstd);
      for (std::int64_t ch = 0; ch < b.c; ++ch) {
        long double sum = 0, squares = 0;
        const auto count = static_cast<long double>(b.n * b.h * b.w);
        for (std::int64_t i = 0; i < b.n; ++i)
          for (std::int64_t y = 0; y < b.h; ++y)
            for (std::int64_t z = 0; z < b.w; ++z) sum += static_cast<long double>(b.x[b.index(i, ch, y, z)]);
        const long double mu = sum / count;
        for (std::int64_t i = 0; i < b.n; ++i)
          for (std::int64_t y = 0; y < b.h; ++y)
            for (std::int64_t z = 0; z < b.w; ++z) {
              const long double d = static_cast<long double>(b.x[b.index(i, ch, y, z)]) - mu;
              squares += d * d;
            }
        CHECK(close<double>(mean(static_cast<std::size_t>(ch)), static_cast<double>(mu)));
        CHECK(close<double>(invstd(static_cast<std::size_t>(ch)),
                            static_cast<double>(1 / std::sqrt(squares / count + 1e-5L))));
      }
    }
    for (int ranks = 1; ranks <= ordo_test::world_size(); ++ranks) {
      const ordo_test::first_ranks group(ranks);
      if (!group.member()) continue;
      for (const auto s : ordo_test::all_splits()) {
        if (s == ordo_test::split::skewed) continue;
        CAPTURE(ranks);
        CAPTURE(last);
        CAPTURE(ordo_test::split_name(s));
        const auto range = ordo_test::cut(b.n, ranks, s)[static_cast<std::size_t>(ordo_test::rank_in(group.get()))];
        const auto part = synchronized<memory>(group.get(), b, last, range.first, range.second);
        check_against_single_process(part, whole, range.first);
        CHECK(channels_same_on_every_rank(group.get(), part));
      }
    }
  }
}

}  // namespace

TEST_CASE_TEMPLATE_DEFINE("synchronized batch norm equals single-process batch norm on the whole batch", ExecutionSpace,
                          equal_id) {
  SUBCASE("double") { check_every_rank_count_and_split<ExecutionSpace, double>(0.0); }
  SUBCASE("float") { check_every_rank_count_and_split<ExecutionSpace, float>(0.0); }
  SUBCASE("float with a large mean (1e4 + N(0, 1))") { check_every_rank_count_and_split<ExecutionSpace, float>(1e4); }
}
ORDO_TEST_ALL_SPACES(equal_id);

TEST_CASE_TEMPLATE_DEFINE("the staged payload path gives the in-place path's bits", ExecutionSpace, staged_id) {
  using memory = typename ExecutionSpace::memory_space;
  const global_batch<double> b(7, 5, 3, 2, 3.0, 7);
  const auto range = ordo_test::cut(b.n, ordo_test::world_size(), ordo_test::split::skewed)
      [static_cast<std::size_t>(ordo_test::world_rank())];
  using ordo::mpi::detail::payload_path;
  const auto direct = synchronized<memory>(MPI_COMM_WORLD, b, false, range.first, range.second, payload_path::in_place);
  const auto staged = synchronized<memory>(MPI_COMM_WORLD, b, false, range.first, range.second, payload_path::host_staged);
  const auto same = [](const auto& u, const auto& v) {
    const auto a = readable_on_host(u);
    const auto c = readable_on_host(v);
    return a.span() == c.span() && (a.span() == 0 || std::memcmp(a.data(), c.data(), a.span() * sizeof(*a.data())) == 0);
  };
  CHECK(same(direct.y, staged.y));
  CHECK(same(direct.dx, staged.dx));
  CHECK(same(direct.running_var, staged.running_var));
  CHECK(same(direct.dgamma, staged.dgamma));
}
ORDO_TEST_ALL_SPACES(staged_id);

TEST_CASE("bad input throws on every rank, never hangs") {
  using memory = Kokkos::DefaultHostExecutionSpace::memory_space;
  const int rank = ordo_test::world_rank(), size = ordo_test::world_size();
  const auto make = [](std::size_t n, std::size_t c) {
    return tensor<double, memory>("x", n, c, 2, 2);
  };
  const auto run = [](MPI_Comm comm, const tensor<double, memory>& x, std::size_t gamma_size,
                      ordo::nn::memory_format layout = ordo::nn::channels_first) {
    const std::size_t c = x.extent(layout == ordo::nn::channels_first ? 1 : 3);
    Kokkos::View<double*, memory> gamma("gamma", gamma_size), beta("beta", c), rm("rm", c), rv("rv", c);
    tensor<double, memory> y("y", x.extent(0), x.extent(1), x.extent(2), x.extent(3));
    ordo::mpi::batch_norm_forward_training(comm, x, gamma, beta, rm, rv, y, {1e-5, 0.1, layout});
  };

  SUBCASE("one value per channel in the whole batch") {
    const tensor<double, memory> x("x", rank == 0 ? 1 : 0, 3, 1, 1);
    Kokkos::View<double*, memory> gamma("gamma", 3), beta("beta", 3), rm("rm", 3), rv("rv", 3);
    tensor<double, memory> y("y", x.extent(0), 3, 1, 1);
    const std::string expected =
        "ordo::mpi::batch_norm_forward_training: expected more than 1 value per channel when training, got 1 in total "
        "across " + std::to_string(size) + (size == 1 ? " rank" : " ranks");
    CHECK_THROWS_WITH_AS(ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, x, gamma, beta, rm, rv, y),
                         expected.c_str(), std::invalid_argument);
  }
  if (size > 1) {
    SUBCASE("channel counts differ") {
      const std::size_t c = rank % 2 == 0 ? 3 : 4;
      const std::string expected =
          "ordo::mpi::batch_norm_forward_training: the ranks disagree on the number of channels: this rank has " +
          std::to_string(c) + ", the ranks have 3 to 4";
      CHECK_THROWS_WITH_AS(run(MPI_COMM_WORLD, make(2, c), c), expected.c_str(), ordo::mpi::error);
    }
    SUBCASE("value types differ") {
      Kokkos::View<float*, memory> gamma("gamma", 3), beta("beta", 3), rm("rm", 3), rv("rv", 3);
      const tensor<float, memory> xf("x", 2, 3, 2, 2), yf("y", 2, 3, 2, 2);
      const std::string expected =
          std::string("ordo::mpi::batch_norm_forward_training: the ranks disagree on the value type of x: this rank "
                      "has ") + (rank == 0 ? "float" : "double") + ", the ranks have float to double";
      if (rank == 0) {
        CHECK_THROWS_WITH_AS(ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, xf, gamma, beta, rm, rv, yf),
                             expected.c_str(), ordo::mpi::error);
      } else {
        CHECK_THROWS_WITH_AS(run(MPI_COMM_WORLD, make(2, 3), 3), expected.c_str(), ordo::mpi::error);
      }
    }
    SUBCASE("memory formats differ") {
      // (2, 3, 2, 3) has 3 channels either way, so only the format differs. First rank 0 alone is
      // channels_last, then the last rank alone is channels_first: each rank's message names its
      // own format, and the range is the same on every rank whichever rank is the odd one out.
      const tensor<double, memory> x("x", 2, 3, 2, 3);
      for (const bool first_rank_odd : {true, false}) {
        CAPTURE(first_rank_odd);
        const std::string mine = first_rank_odd ? (rank == 0 ? "channels_last" : "channels_first")
                                                : (rank == size - 1 ? "channels_first" : "channels_last");
        const auto layout = mine == "channels_last" ? ordo::nn::channels_last : ordo::nn::channels_first;
        const std::string expected =
            "ordo::mpi::batch_norm_forward_training: the ranks disagree on the memory format: this rank has " + mine +
            ", the ranks have channels_first to channels_last";
        CHECK_THROWS_WITH_AS(run(MPI_COMM_WORLD, x, 3, layout), expected.c_str(), ordo::mpi::error);
      }
    }
    SUBCASE("eps or momentum differ") {
      // Every rank applies the merged statistics with its own eps and momentum: ranks that
      // disagreed would normalize differently and keep different running statistics.
      const tensor<double, memory> x("x", 2, 3, 2, 2), y("y", 2, 3, 2, 2);
      Kokkos::View<double*, memory> gamma("gamma", 3), beta("beta", 3), rm("rm", 3), rv("rv", 3);
      const ordo::nn::batch_norm_options eps_differs{rank == 0 ? 1e-3 : 1e-5, 0.1, ordo::nn::channels_first};
      const std::string eps_expected =
          std::string("ordo::mpi::batch_norm_forward_training: the ranks disagree on eps: this rank has ") +
          (rank == 0 ? "0.001" : "1e-05") + ", the ranks have 1e-05 to 0.001";
      CHECK_THROWS_WITH_AS(ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, x, gamma, beta, rm, rv, y, eps_differs),
                           eps_expected.c_str(), ordo::mpi::error);
      const ordo::nn::batch_norm_options momentum_differs{1e-5, rank == size - 1 ? 0.25 : 0.1,
                                                          ordo::nn::channels_first};
      const std::string momentum_expected =
          std::string("ordo::mpi::batch_norm_forward_training: the ranks disagree on momentum: this rank has ") +
          (rank == size - 1 ? "0.25" : "0.1") + ", the ranks have 0.1 to 0.25";
      CHECK_THROWS_WITH_AS(
          ordo::mpi::batch_norm_forward_training(MPI_COMM_WORLD, x, gamma, beta, rm, rv, y, momentum_differs),
          momentum_expected.c_str(), ordo::mpi::error);
    }
    SUBCASE("one rank's gamma has the wrong size: it throws ordo::nn's error, the others ordo::mpi::error") {
      if (rank == 1) {
        CHECK_THROWS_AS(run(MPI_COMM_WORLD, make(2, 3), 2), std::invalid_argument);
      } else {
        CHECK_THROWS_WITH_AS(run(MPI_COMM_WORLD, make(2, 3), 3),
                             "ordo::mpi::batch_norm_forward_training: another rank rejected its arguments (that rank "
                             "threw the reason); this rank's were valid",
                             ordo::mpi::error);
      }
    }
  }
  SUBCASE("the communicator works afterwards") {
    const global_batch<double> b(4, 2, 1, 3, 0.0, 3);
    const auto range = ordo_test::cut(b.n, size, ordo_test::split::even)[static_cast<std::size_t>(rank)];
    const auto part = synchronized<memory>(MPI_COMM_WORLD, b, false, range.first, range.second);
    const auto whole = single_process<memory>(b, false);
    check_against_single_process(part, whole, range.first);
  }
}
