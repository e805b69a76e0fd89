// Question 11: how do you average a million floats with minimal loss of precision?
//
// 10^6 floats in [1, 2) under every summation policy and a sequential float loop, against an
// integer oracle; the exact policy's bits across backends, thread counts, orders and merged
// chunks; and readings near 1000 against an exact double sum. The demonstration lives in
// support/q11_mean_of_floats.hpp, which the tour calls too.
#include "support/q11_mean_of_floats.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  const bool correct = ordo_examples::q11::demonstrate();
  if (!correct) std::fprintf(stderr, "%d claims did not hold\n", ordo_examples::wrong_results);
  return correct ? 0 : 1;
}
