// needs: kokkos
// expect: ordo::nn::softmax(x, y) requires rank-2 Views (rows x classes)
// Softmax over a single vector: make it a 1 x n View.
#include <ordo/nn/softmax.hpp>

void probabilities(const Kokkos::View<float*>& x, const Kokkos::View<float*>& y) { ordo::nn::softmax(x, y); }
