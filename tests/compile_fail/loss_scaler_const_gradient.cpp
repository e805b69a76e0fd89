// needs: kokkos
// expect: gradients are unscaled in place; they cannot be const
// unscale_and_check writes the unscaled gradients back.
#include <ordo/nn/loss_scaler.hpp>

bool check(ordo::nn::loss_scaler& scaler, const Kokkos::View<const float*>& grad) {
  return scaler.unscale_and_check(grad);
}
