#ifndef ORDO_MPI_PROCESS_GRID_HPP
#define ORDO_MPI_PROCESS_GRID_HPP

// ordo::mpi::process_grid: the ranks of a communicator as a pr x pc BLACS process grid, row-major
// (rank r at row r / pc, column r % pc), on which distributed matrices live in ScaLAPACK's 2-D
// block-cyclic layout (distributed_matrix.hpp). Copies share one BLACS context, released with the
// last copy (and the matrices that hold it). Creating a grid is collective over the communicator.
// BLACS initializes itself at its first call with a collective over MPI_COMM_WORLD: make the
// program's first grid on every rank of MPI_COMM_WORLD (a grid of a smaller communicator made
// first would wait for the ranks outside it).

#include <ordo/mpi/detail/communicator.hpp>
#include <ordo/mpi/detail/scalapack.hpp>
#include <ordo/mpi/error.hpp>

#include <mpi.h>

#include <array>
#include <memory>
#include <string>

namespace ordo::mpi {

class process_grid {
 public:
  // A rows x cols grid; rows x cols must be the communicator's size. Throws ordo::mpi::error on
  // every rank, naming both, when it is not or when the ranks ask for different grids.
  process_grid(MPI_Comm comm, int rows, int cols) : state_(std::make_shared<state>(comm, rows, cols)) {}
  // The most nearly square grid of the communicator's ranks, rows <= cols (4 ranks: 2 x 2, 6: 2 x 3).
  explicit process_grid(MPI_Comm comm) : process_grid(comm, squarest_rows(comm), 0) {}

  int rows() const noexcept { return state_->rows; }
  int cols() const noexcept { return state_->cols; }
  int my_row() const noexcept { return state_->my_row; }
  int my_col() const noexcept { return state_->my_col; }
  int ranks() const noexcept { return state_->rows * state_->cols; }
  // This rank's number in the grid, row by row (BLACS' default row-major grid order).
  int my_rank() const noexcept { return my_row() * cols() + my_col(); }
  MPI_Comm comm() const noexcept { return state_->comm; }
  int context() const noexcept { return state_->context; }
  // BLACS's handle of the communicator, for other grids over the same ranks (one per communicator:
  // BLACS hands out the same handle again, so it is released once, with the grid).
  int system_handle() const noexcept { return state_->handle; }
  bool operator==(const process_grid& other) const noexcept { return state_ == other.state_; }

 private:
  static int squarest_rows(MPI_Comm comm) {
    const int size = detail::rank_count(comm, "ordo::mpi::process_grid(comm)");
    int rows = 1;
    for (int r = 1; r * r <= size; ++r)
      if (size % r == 0) rows = r;
    return rows;
  }

  struct state {
    MPI_Comm comm;
    int handle = -1, context = -1, rows = 0, cols = 0, my_row = -1, my_col = -1;

    state(MPI_Comm c, int r, int cl) : comm(c) {
      constexpr const char* operation = "ordo::mpi::process_grid";
      const detail::errors_return_scope scope(comm, operation);
      const int size = detail::rank_count(comm, operation);
      if (cl == 0 && r > 0) cl = size / r;  // the squarest grid: the columns follow
      detail::check_agreement<2>(comm, operation, {{{"the grid's rows", r, nullptr}, {"the grid's columns", cl, nullptr}}});
      if (r < 1 || cl < 1 || r * cl != size) {
        throw error(std::string(operation) + ": a " + std::to_string(r) + "x" + std::to_string(cl) + " grid needs " +
                    std::to_string(static_cast<long long>(r) * cl) + " ranks but the communicator has " +
                    std::to_string(size));
      }
      rows = r, cols = cl;
      handle = Csys2blacs_handle(comm);
      context = handle;
      Cblacs_gridinit(&context, "Row", rows, cols);
      int pr = 0, pc = 0;
      Cblacs_gridinfo(context, &pr, &pc, &my_row, &my_col);
    }
    ~state() {
      if (context >= 0) Cblacs_gridexit(context);
      if (handle >= 0) Cfree_blacs_system_handle(handle);
    }
    state(const state&) = delete;
    state& operator=(const state&) = delete;
  };
  std::shared_ptr<state> state_;
};

}  // namespace ordo::mpi

#endif
