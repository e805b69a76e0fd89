// Question 1: A is 100x5, B is 5x200, C is 200x20. In which order do you compute ABC, and why?
//
// The compiler proves both costs and the order; the run measures both orders and checks that they
// give the same matrix as an independent integer triple loop. The demonstration lives in
// support/q01_chain_order.hpp, which the tour calls too.
#include "support/q01_chain_order.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  return ordo_examples::q01::demonstrate() ? 0 : 1;
}
