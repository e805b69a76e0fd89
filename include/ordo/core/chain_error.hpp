#ifndef ORDO_CORE_CHAIN_ERROR_HPP
#define ORDO_CORE_CHAIN_ERROR_HPP

// What the chain planner throws at run time: ordo::chain_error, a std::exception, as
// chain_argument_error (input it cannot plan) or chain_overflow_error (a count past 64 bits).
// Not std::invalid_argument and std::overflow_error: the standard header that declares them
// brings std::string with it, a third of what core/chain.hpp cost a translation unit (issue 30),
// for errors that a plan made at compile time reports as compile errors anyway. The message lives
// in the exception, so copying one never allocates or throws, as the standard's exceptions promise.

#include <cstddef>
#include <exception>
#include <string_view>

namespace ordo {

class chain_error : public std::exception {
 public:
  // Messages longer than message_capacity characters are cut there.
  static constexpr std::size_t message_capacity = 255;

  explicit chain_error(std::string_view message) noexcept {
    const std::size_t length = message.size() < message_capacity ? message.size() : message_capacity;
    for (std::size_t i = 0; i < length; ++i) message_[i] = message[i];
    message_[length] = '\0';
  }

  const char* what() const noexcept override { return message_; }

 private:
  char message_[message_capacity + 1];
};

// Input the planner cannot plan: fewer than 2 dims, a negative dim, structures that do not fit
// the dims, a chain too long for its planner, chain_tables indices out of range.
class chain_argument_error : public chain_error {
 public:
  using chain_error::chain_error;
};

// A count the plan reports (cost, flops, left-to-right cost, peak intermediate elements) does not
// fit in 64 bits. ordo never returns a wrapped number.
class chain_overflow_error : public chain_error {
 public:
  using chain_error::chain_error;
};

}  // namespace ordo

#endif
