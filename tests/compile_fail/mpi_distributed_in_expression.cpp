// needs: mpi
// needs: scalapack
// expect: ordo::mpi: operator*: a distributed_matrix does not join single-node expressions
// A distributed operand in a single-node product: refused with what to write instead, not as a
// missing operator*.
#include <ordo/kernels/matrix.hpp>
#include <ordo/mpi/distributed_chain.hpp>

void mixed(const ordo::mpi::distributed_matrix<double>& a, const ordo::matrix<double, 4, 4>& b) {
  static_cast<void>(a * b);
}
