// Question 10: benefits and problems of reduced precision (half and bfloat16 storage).
//
// Half the bytes per value, against range (half overflows above 65504), precision (bfloat16's
// 256 + 1 == 256), 16-bit sums that stall and small gradients that flush to zero; remedies: float
// accumulation and loss scaling. The static_asserts and the demonstration live in
// support/q10_reduced_precision.hpp, which the tour calls too.
#include "support/q10_reduced_precision.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  const bool correct = ordo_examples::q10::demonstrate();
  if (!correct) std::fprintf(stderr, "%d claims did not hold\n", ordo_examples::wrong_results);
  return correct ? 0 : 1;
}
