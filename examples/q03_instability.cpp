// Question 3: what causes numerical instability in deep learning?
//
// Three causes, each computed the textbook way and then by an ordo kernel, against references
// that do not use the code under test: overflow in softmax, cancellation in E[x^2] - E[x]^2, and
// accumulation error in a long float sum. The demonstration lives in support/q03_instability.hpp,
// which the tour calls too.
#include "support/q03_instability.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  const bool correct = ordo_examples::q03::demonstrate();
  if (!correct) std::fprintf(stderr, "%d claims did not hold\n", ordo_examples::wrong_results);
  return correct ? 0 : 1;
}
