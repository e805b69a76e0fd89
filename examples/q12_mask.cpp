// Question 12: what is wrong with make_mask's three nested loops, and how would you improve it?
//
// The original loop ported to C++, the textbook bounding-box fix and ordo::sphere_mask, checked
// voxel by voxel against each other and timed on a 128^3 volume. The demonstration (and the
// question's Python code) lives in support/q12_mask.hpp, which the tour calls too.
#include "support/q12_mask.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  const bool correct = ordo_examples::q12::demonstrate();
  if (!correct) std::fprintf(stderr, "%d claims did not hold\n", ordo_examples::wrong_results);
  return correct ? 0 : 1;
}
