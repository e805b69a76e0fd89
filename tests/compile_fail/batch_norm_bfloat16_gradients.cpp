// needs: kokkos
// expect: ordo::nn::batch_norm: x of ordo::half or ordo::bfloat16 requires gamma, beta, the running statistics, dgamma and dbeta of float
// expect: operand_types<ordo::nn::detail::operation::batch_norm_backward
// bfloat16 gamma and gradients would round the parameters' updates to 8 bits: refused.
#include <ordo/core/float16.hpp>
#include <ordo/nn/batch_norm.hpp>

void backward(const Kokkos::View<ordo::bfloat16**>& dy, const Kokkos::View<ordo::bfloat16**>& x,
              const Kokkos::View<ordo::bfloat16*>& gamma, const ordo::nn::batch_norm_saved<Kokkos::HostSpace>& saved,
              const Kokkos::View<ordo::bfloat16**>& dx, const Kokkos::View<ordo::bfloat16*>& dgamma,
              const Kokkos::View<ordo::bfloat16*>& dbeta) {
  ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta);
}
