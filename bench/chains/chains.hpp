#ifndef ORDO_BENCH_CHAINS_HPP
#define ORDO_BENCH_CHAINS_HPP

// bench_chains' cases: products of terms (an operand or its transpose) written left to right, a chain
// A1 ... Ak or an expression such as Hᵀ·H·x, with compile-time extents; inputs row-major doubles from
// splitmix64 (bench.py regenerates them). Plain C++: peers.cpp (Eigen, Armadillo) sees no Kokkos.

#include "bench_support.hpp"  // also <algorithm>, <functional>, <string>, <string_view>, <utility>, <vector>

#include <array>
#include <tuple>

namespace chains {

using ordo_bench::splitmix64;
inline constexpr std::uint64_t seed = 20240601;
using names = std::vector<std::string>;

template <std::size_t Rows, std::size_t Cols, bool Vector = false>
struct shape { static constexpr std::size_t rows = Rows, cols = Cols; static constexpr bool vector = Vector; };
template <std::size_t N>
using vec = shape<N, 1, true>;  // a vector operand
struct term { std::size_t operand; bool transposed = false; };

// Shapes: a std::tuple of shapes; Terms: a std::array of terms; Static: with ordo's static contender;
// Chain: A1 ... Ak, none transposed (for ordo::multiply and ordo::chain).
template <class Shapes, auto Terms, bool Static, bool Chain = false>
struct product_case {
  using shapes = Shapes;
  static constexpr auto terms = Terms;
  static constexpr bool with_static = Static, plain_chain = Chain;
  static constexpr auto extents = []<class... S>(std::tuple<S...>*) {
    return std::array<std::array<std::size_t, 2>, sizeof...(S)>{{{S::rows, S::cols}...}};
  }(static_cast<Shapes*>(nullptr));
  static constexpr auto dims = [] {
    std::array<std::size_t, Terms.size() + 1> d{extents[Terms[0].operand][Terms[0].transposed]};
    for (std::size_t k = 0; k < Terms.size(); ++k) d[k + 1] = extents[Terms[k].operand][!Terms[k].transposed];
    return d;
  }();
};

template <auto Dims, bool Static, std::size_t... I>
product_case<std::tuple<shape<Dims[I], Dims[I + 1]>...>, std::array{term{I}...}, Static, true>
chain_type(std::index_sequence<I...>);
template <auto Dims, bool Static = false>
using chain_case = decltype(chain_type<Dims, Static>(std::make_index_sequence<Dims.size() - 1>{}));

// d0 .. dK uniform in [lo, hi], from splitmix64 seeded with state.
template <std::size_t K>
constexpr std::array<std::size_t, K + 1> random_dims(std::uint64_t state, std::size_t lo, std::size_t hi) {
  splitmix64 rng{state};
  std::array<std::size_t, K + 1> d{};
  for (auto& e : d) e = lo + static_cast<std::size_t>(rng.next() % (hi - lo + 1));
  return d;
}
constexpr std::uint64_t chain_state(std::uint64_t c) { return splitmix64::mix(seed ^ (c << 32) ^ 0xd1b54a32d192ed03); }

inline constexpr std::size_t n = 3000, m = 600;
inline constexpr std::array<std::size_t, 4> seed_dims{100, 5, 200, 20}, m_a_b{n, m, n, m}, a_b_m{n, n, n, m};
inline constexpr std::array<std::size_t, 5> a_m1_m2_b{n, n, m, n, n};
inline constexpr std::array<std::size_t, 7> clrs_x10{300, 350, 150, 50, 100, 200, 250};  // CLRS 15.2's, times 10
inline constexpr auto six_1000 = random_dims<6>(chain_state(2), 800, 1200);
inline constexpr auto random_8 = random_dims<8>(chain_state(3), 16, 2048);
inline constexpr auto random_16 = random_dims<16>(chain_state(4), 16, 2048);
inline constexpr auto random_16s = random_dims<16>(seed, 16, 2048);  // compile_time.md's chain too

// The cases; the position picks the inputs' streams.
inline const names case_names{"seed",  "clrs_x10", "six_1000", "random_8",  "random_16", "hth_x",
                              "hty_xth", "m_a_b", "a_b_m",    "a_m1_m2_b", "random_16s"};

template <class F>
decltype(auto) visit_case(std::string_view name, F&& f) {
  using H = shape<n, n>;
  if (name == "seed") return f(chain_case<seed_dims>{});
  if (name == "clrs_x10") return f(chain_case<clrs_x10, true>{});
  if (name == "six_1000") return f(chain_case<six_1000>{});
  if (name == "random_8") return f(chain_case<random_8>{});
  if (name == "random_16") return f(chain_case<random_16>{});
  using T = term;
  if (name == "hth_x") return f(product_case<std::tuple<H, vec<n>>, std::array<T, 3>{{{0, true}, {0}, {1}}}, true>{});
  if (name == "hty_xth") {
    return f(product_case<std::tuple<H, vec<n>, vec<n>>, std::array<T, 4>{{{0, true}, {1}, {2, true}, {0}}}, true>{});
  }
  if (name == "m_a_b") return f(chain_case<m_a_b, true>{});
  if (name == "a_b_m") return f(chain_case<a_b_m, true>{});
  if (name == "a_m1_m2_b") return f(chain_case<a_m1_m2_b, true>{});
  if (name == "random_16s") return f(chain_case<random_16s, true>{});
  throw std::invalid_argument("bench_chains: unknown case " + std::string(name));
}

struct operand { std::size_t rows, cols; std::vector<double> values; };  // row-major
struct case_data { std::string name; std::vector<operand> operands; std::vector<std::size_t> dims; };

// run() computes the product into a result that it keeps; values() copies it out, row-major.
struct contender { std::string name; std::function<void()> run; std::function<std::vector<double>()> values; };
using contenders = std::vector<contender>;

// The operands of Case as load(shape, operand) gives them, in a tuple.
template <class Case, class Load>
auto load_operands(const case_data& c, Load load) {
  return [&]<class... S, std::size_t... I>(std::tuple<S...>*, std::index_sequence<I...>) {
    return std::make_tuple(load(S{}, c.operands[I])...);
  }(static_cast<typename Case::shapes*>(nullptr), std::make_index_sequence<std::tuple_size_v<typename Case::shapes>>{});
}

// sink(t1 * ... * tk), a term an operand or transpose(operand), in one full-expression (Armadillo's
// expressions refer to their subexpressions).
template <class Case, class Operands, class Transpose, class Sink>
decltype(auto) with_product(const Operands& ops, Transpose transpose, Sink&& sink) {
  const auto term = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) -> decltype(auto) {
    if constexpr (Case::terms[I].transposed) return transpose(std::get<Case::terms[I].operand>(ops));
    else return (std::get<Case::terms[I].operand>(ops));
  };
  return [&]<std::size_t... I>(std::index_sequence<I...>) -> decltype(auto) {
    return sink((... * term(std::integral_constant<std::size_t, I>{})));
  }(std::make_index_sequence<Case::terms.size()>{});
}

inline bool wanted(const names& list, std::string_view name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}

// peers.cpp: eigen, eigen_noalias, armadillo as far as in `selected` (empty: all); setup_peers():
// Eigen::setNbThreads(2), the JSON members "eigen", "armadillo" (versions) and "eigen_threads".
contenders peers(const case_data& c, const names& selected);
std::string setup_peers();

}  // namespace chains

#endif
