#ifndef ORDO_MPI_ERROR_HPP
#define ORDO_MPI_ERROR_HPP

// ordo::mpi::error: what every rank throws when the ranks disagree (channel counts, value types,
// layouts, summation policies) or when MPI returns an error code, whose text it carries.

#include <mpi.h>

#include <stdexcept>
#include <string>

namespace ordo::mpi {

class error : public std::runtime_error {
 public:
  explicit error(const std::string& what, int mpi_code = MPI_SUCCESS) : std::runtime_error(what), code_(mpi_code) {}
  // The MPI error code, or MPI_SUCCESS when ordo found the problem itself.
  int mpi_code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {

// MPI's own words for an error code: "MPI_ERR_COMM: invalid communicator".
inline std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return "MPI error code " + std::to_string(code);
  return std::string(text, static_cast<std::size_t>(length));
}

inline void check(int code, const char* operation, const char* call) {
  if (code != MPI_SUCCESS) {
    throw error(std::string(operation) + ": " + call + " failed: " + mpi_error_text(code), code);
  }
}

}  // namespace detail
}  // namespace ordo::mpi

#endif
