// Question 4: why the small epsilon in batch norm?
//
// y = (x - mean) / sqrt(var + eps) * gamma + beta: without eps a constant channel gives 0 / 0 =
// NaN, with eps = 1e-5 it gives y = beta exactly; on a normal channel eps is a tiny, uniform,
// deterministic shrink, not noise and not a regularizer. The demonstration lives in
// support/q04_batch_norm_eps.hpp, which the tour calls too.
#include "support/q04_batch_norm_eps.hpp"
#include "support/kokkos_session.hpp"

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  const bool correct = ordo_examples::q04::demonstrate();
  if (!correct) std::fprintf(stderr, "%d claims did not hold\n", ordo_examples::wrong_results);
  return correct ? 0 : 1;
}
