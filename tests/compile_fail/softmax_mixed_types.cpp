// needs: kokkos
// expect: ordo::nn::log_softmax(x, y) requires the output View to hold the input's element type
// bfloat16 logits into float log-probabilities: one storage type in and out.
#include <ordo/nn/softmax.hpp>
#include <ordo/precision.hpp>

void log_probabilities(const Kokkos::View<ordo::bfloat16**>& x, const Kokkos::View<float**>& y) {
  ordo::nn::log_softmax(x, y);
}
