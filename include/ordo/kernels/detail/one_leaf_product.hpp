#ifndef ORDO_KERNELS_DETAIL_ONE_LEAF_PRODUCT_HPP
#define ORDO_KERNELS_DETAIL_ONE_LEAF_PRODUCT_HPP

// What a product leaf other than a matrix (a transpose, a diagonal) is on its own: the value of a
// one-operand product, so that it converts to, and assigns into, an ordo::matrix:
// `ordo::matrix<double, 3, 2> t = ordo::transpose(m);`, `m = ordo::diagonal(d);`. The product is
// ordo::chain(leaf), found by argument-dependent lookup when a conversion is instantiated (the
// leaves' public headers include chain_expression.hpp).

#include <ordo/kernels/matrix.hpp>

namespace ordo::detail {

template <class Leaf>
class converts_as_product {
 public:
  template <any_matrix Result>
  operator Result() const {
    return chain(static_cast<const Leaf&>(*this));
  }
  template <any_matrix Result>
  void evaluate_into(const Result& result) const {
    chain(static_cast<const Leaf&>(*this)).evaluate_into(result);
  }
};

}  // namespace ordo::detail

#endif
