#ifndef ORDO_KERNELS_FORMAT_HPP
#define ORDO_KERNELS_FORMAT_HPP

// Formatting an ordo::matrix, or the value of a product or a sum, as operator<< prints it
// ("[[1, 2],\n [3, 4]]"): a std::formatter where the standard library has `<format>`
// (__cpp_lib_format; not libstdc++ 12) and a fmt::formatter where {fmt} is installed; neither
// under nvcc (below). The format spec applies to the whole text, as for a string:
// fmt::format("{:>40}", m). Opt-in, so that other users do not pay for `<format>` or {fmt} in
// compile time; a program that formats with {fmt} links fmt::fmt as usual.

#include <ordo/kernels/chain_expression.hpp>
#include <ordo/kernels/matrix.hpp>
#include <ordo/kernels/sum_expression.hpp>

#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <version>

namespace ordo::detail {

template <class T>
concept printable_value = any_matrix<T> || is_chain_expression_v<T> || is_sum_expression_v<T>;

// The text operator<< writes; a product or a sum is evaluated into a new matrix first.
template <class T>
std::string printed_text(const T& value) {
  std::ostringstream out;
  if constexpr (any_matrix<T> || is_chain_expression_v<T>) {
    out << value;
  } else {
    const typename T::result_type evaluated = value;
    out << evaluated;
  }
  return std::move(out).str();
}

}  // namespace ordo::detail

// Neither formatter exists in a translation unit that nvcc compiles: nvcc 13 rejects std::format
// of a type whose std::formatter is a constrained partial specialization (libstdc++ 13: "no
// instance of constructor basic_format_arg"), and {fmt} 9's format functions do not compile
// through nvcc at all (its front end cannot evaluate their constexpr checks). CUDA programs print
// with operator<<, or format in a file the host compiler compiles. ORDO_HAS_STD_FORMATTER and
// ORDO_HAS_FMT_FORMATTER say which formatter a translation unit has.
#if defined(__cpp_lib_format) && !defined(__CUDACC__)
#define ORDO_HAS_STD_FORMATTER 1
#include <format>

template <class T>
  requires ordo::detail::printable_value<T>
struct std::formatter<T, char> : std::formatter<std::string_view, char> {
  auto format(const T& value, std::format_context& context) const {
    return std::formatter<std::string_view, char>::format(ordo::detail::printed_text(value), context);
  }
};
#endif

#if __has_include(<fmt/format.h>) && !defined(__CUDACC__)
#define ORDO_HAS_FMT_FORMATTER 1
#include <fmt/format.h>

template <class T>
struct fmt::formatter<T, char, std::enable_if_t<ordo::detail::printable_value<T>>>
    : fmt::formatter<fmt::string_view, char> {
  template <class Context>
  auto format(const T& value, Context& context) const {
    const std::string text = ordo::detail::printed_text(value);
    return fmt::formatter<fmt::string_view, char>::format(fmt::string_view(text), context);
  }
};
#endif

#endif
