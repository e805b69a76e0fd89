// needs: kokkos
// expect: ordo::nn::batch_norm: x of ordo::half or ordo::bfloat16 requires gamma, beta, the running statistics, dgamma and dbeta of float
// expect: operand_types<ordo::nn::detail::operation::batch_norm_forward_training
// half x takes its parameters in float, as PyTorch's autocast keeps them: double gamma is refused.
#include <ordo/core/float16.hpp>
#include <ordo/nn/batch_norm.hpp>

void train(const Kokkos::View<ordo::half**>& x, const Kokkos::View<double*>& gamma, const Kokkos::View<double*>& beta,
           const Kokkos::View<float*>& running_mean, const Kokkos::View<float*>& running_var,
           const Kokkos::View<ordo::half**>& y) {
  ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y);
}
