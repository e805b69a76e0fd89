#ifndef ORDO_TESTS_SUPPORT_FIXTURES_HPP
#define ORDO_TESTS_SUPPORT_FIXTURES_HPP

// Where tests/fixtures is: ctest passes it in the environment (ORDO_FIXTURE_DIR), not as a compile
// definition, so that a test's object does not depend on the folder the sources were cloned into
// and a compiler cache filled by one clone serves another.

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace ordo_test {
inline std::string fixture_path(const std::string& relative) {
  const char* dir = std::getenv("ORDO_FIXTURE_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error("ORDO_FIXTURE_DIR is not set: run this test through ctest, or set it to "
                             "<ordo>/tests/fixtures");
  }
  return std::string(dir) + "/" + relative;
}
}  // namespace ordo_test

#endif
