#ifndef ORDO_MPI_DETAIL_COMMUNICATOR_HPP
#define ORDO_MPI_DETAIL_COMMUNICATOR_HPP

// What every ordo::mpi operation does around its payload: checks the communicator, makes MPI
// return error codes instead of aborting while ordo runs (and restores the user's handler), and
// checks with one small allreduce that the ranks agree before any payload is sent, so that a
// mismatch throws on every rank instead of hanging or corrupting the payload.

#include <ordo/core/float16.hpp>
#include <ordo/mpi/error.hpp>

#include <mpi.h>

#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <exception>
#include <string>
#include <type_traits>

namespace ordo::mpi::detail {

// MPI_ERRORS_RETURN on comm for the lifetime of the object. The default handler
// (MPI_ERRORS_ARE_FATAL) would abort every rank before ordo could throw.
class errors_return_scope {
 public:
  errors_return_scope(MPI_Comm comm, const char* operation) : comm_(comm) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
      throw error(std::string(operation) + ": MPI is not initialized (call MPI_Init first, and MPI_Finalize after)");
    }
    if (comm == MPI_COMM_NULL) throw error(std::string(operation) + ": the communicator is MPI_COMM_NULL");
    check(MPI_Comm_get_errhandler(comm, &previous_), operation, "MPI_Comm_get_errhandler");
    check(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), operation, "MPI_Comm_set_errhandler");
  }
  ~errors_return_scope() {
    MPI_Comm_set_errhandler(comm_, previous_);
    MPI_Errhandler_free(&previous_);
  }
  errors_return_scope(const errors_return_scope&) = delete;
  errors_return_scope& operator=(const errors_return_scope&) = delete;

 private:
  MPI_Comm comm_;
  MPI_Errhandler previous_ = MPI_ERRHANDLER_NULL;
};

// One fact every rank must agree on, with the words for its values.
struct agreement_item {
  const char* what;           // "the number of channels"
  std::int64_t value;         // this rank's
  std::string (*name)(std::int64_t);  // words for a value, or nullptr to print the number
};

inline std::string value_text(const agreement_item& item, std::int64_t value) {
  return item.name != nullptr ? item.name(value) : std::to_string(value);
}

// A double as an agreement value: its bits (-0 as +0, so that negating the value cannot
// overflow), and the words for them.
inline std::int64_t double_id(double value) { return std::bit_cast<std::int64_t>(value == 0 ? 0.0 : value); }
inline std::string double_text(std::int64_t id) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, std::bit_cast<double>(id)).ptr;  // shortest round trip
  return std::string(text, end);
}

// One MPI_Allreduce(MAX) of (v, -v) for each item gives every rank the smallest and largest
// value; every rank sees the same ones, so every rank throws, with the same words. The same
// allreduce carries whether each rank's own checks passed: a rank whose arguments were rejected
// (local_failure) rethrows its own exception, and the others throw ordo::mpi::error, instead of
// waiting forever for its payload.
template <std::size_t N>
void check_agreement(MPI_Comm comm, const char* operation, const std::array<agreement_item, N>& items,
                     const std::exception_ptr& local_failure = nullptr) {
  std::array<std::int64_t, 2 * N + 1> extremes;
  for (std::size_t i = 0; i < N; ++i) {
    extremes[2 * i] = items[i].value;
    extremes[2 * i + 1] = -items[i].value;
  }
  extremes[2 * N] = local_failure != nullptr;
  check(MPI_Allreduce(MPI_IN_PLACE, extremes.data(), static_cast<int>(extremes.size()), MPI_INT64_T, MPI_MAX, comm),
        operation, "MPI_Allreduce (the ranks' agreement)");
  if (local_failure != nullptr) std::rethrow_exception(local_failure);
  std::string disagreements;
  for (std::size_t i = 0; i < N; ++i) {
    const std::int64_t largest = extremes[2 * i], smallest = -extremes[2 * i + 1];
    if (smallest == largest) continue;
    if (!disagreements.empty()) disagreements += "; ";
    disagreements += std::string(items[i].what) + ": this rank has " + value_text(items[i], items[i].value) +
                     ", the ranks have " + value_text(items[i], smallest) + " to " + value_text(items[i], largest);
  }
  if (!disagreements.empty()) {
    throw error(std::string(operation) + ": the ranks disagree on " + disagreements);
  }
  if (extremes[2 * N] != 0) {
    throw error(std::string(operation) +
                ": another rank rejected its arguments (that rank threw the reason); this rank's were valid");
  }
}

// Value types as numbers the ranks can compare, and their names.
template <class T>
constexpr std::int64_t value_type_id() {
  if constexpr (std::is_same_v<T, float>) {
    return 1;
  } else if constexpr (std::is_same_v<T, double>) {
    return 2;
  } else if constexpr (std::is_same_v<T, ordo::half>) {
    return 3;
  } else {
    static_assert(std::is_same_v<T, ordo::bfloat16>, "ordo::mpi: value types are float, double, half, bfloat16");
    return 4;
  }
}
inline std::string value_type_name(std::int64_t id) {
  switch (id) {
    case 1: return ordo::scalar_name<float>();
    case 2: return ordo::scalar_name<double>();
    case 3: return ordo::scalar_name<ordo::half>();
    case 4: return ordo::scalar_name<ordo::bfloat16>();
    default: return "an unknown type";
  }
}

inline int rank_count(MPI_Comm comm, const char* operation) {
  int size = 0;
  check(MPI_Comm_size(comm, &size), operation, "MPI_Comm_size");
  return size;
}

}  // namespace ordo::mpi::detail

#endif
