// Question 5: why did GPUs win for deep learning, and GPU vs TPU?
//
// A roofline (Williams, Waterman and Patterson, CACM 52(4), 2009) for every product of a plan,
// on H100 and TPU v4 from their published figures and on this CPU as measured. The classification
// of each product is a static_assert in support/q05_roofline.hpp, which the tour uses too.
#include "support/q05_roofline.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  ordo_examples::q05::demonstrate();
}
