#ifndef ORDO_MPI_DISTRIBUTED_MATRIX_HPP
#define ORDO_MPI_DISTRIBUTED_MATRIX_HPP

// ordo::mpi::distributed_matrix<T>: a rows x cols matrix over a process_grid in ScaLAPACK's 2-D
// block-cyclic layout (square blocks of `block`, the first block on process (0, 0)): each rank
// holds its blocks column-major, as ScaLAPACK's local arrays. float or double, host memory.
//
//   ordo::mpi::process_grid grid(MPI_COMM_WORLD);                  // 4 ranks: 2 x 2
//   auto a = ordo::mpi::distributed_matrix<double>::scatter(grid, values, 1000, 800);  // from rank 0
//   if (a.owns(3, 5)) a.at(3, 5) = 1.0;                             // on the owning rank
//   std::vector<double> all = a.gather();                           // row-major, on rank 0
//
// Construction, scatter and gather are collective over the grid's communicator; ranks that
// disagree on the shape, the block or the root throw ordo::mpi::error, every one of them, instead
// of hanging (detail/communicator.hpp).

#include <ordo/mpi/detail/communicator.hpp>
#include <ordo/mpi/detail/scalapack.hpp>
#include <ordo/mpi/error.hpp>
#include <ordo/mpi/process_grid.hpp>

#include <mpi.h>

#include <array>
#include <cstddef>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ordo::mpi {

template <class T>
class distributed_matrix {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "ordo::mpi::distributed_matrix<T>: ScaLAPACK takes float or double");

 public:
  using value_type = T;

  // Zeros. Collective.
  distributed_matrix(const process_grid& grid, std::size_t rows, std::size_t cols, std::size_t block = 64)
      : distributed_matrix(grid, rows, cols, block, "ordo::mpi::distributed_matrix(grid, rows, cols, block)", nullptr) {
    local_.assign(local_rows_ * local_cols_, T(0));
  }

  // From this rank's blocks, column-major with local_rows(...) rows (local_extents tells the
  // sizes before the matrix exists). Collective; a local array of the wrong size throws on every
  // rank (ordo::mpi::error on the others).
  static distributed_matrix from_local(const process_grid& grid, std::size_t rows, std::size_t cols, std::size_t block,
                                       std::vector<T> local) {
    const auto extents = local_extents(grid, rows, cols, block);
    std::exception_ptr failure;
    if (local.size() != extents[0] * extents[1]) {
      failure = std::make_exception_ptr(error(
          "ordo::mpi::distributed_matrix::from_local: this rank's blocks of a " + std::to_string(rows) + "x" +
          std::to_string(cols) + " matrix in blocks of " + std::to_string(block) + " are " +
          std::to_string(extents[0]) + "x" + std::to_string(extents[1]) + " (" +
          std::to_string(extents[0] * extents[1]) + " values) but " + std::to_string(local.size()) + " were given"));
    }
    distributed_matrix m(grid, rows, cols, block, "ordo::mpi::distributed_matrix::from_local", failure);
    m.local_ = std::move(local);
    return m;
  }

  // Rank root's row-major rows x cols values spread over the grid (ScaLAPACK's p?gemr2d); the
  // other ranks' `values` are not read. Collective.
  static distributed_matrix scatter(const process_grid& grid, std::span<const T> values, std::size_t rows,
                                    std::size_t cols, std::size_t block = 64, int root = 0) {
    constexpr const char* operation = "ordo::mpi::distributed_matrix::scatter";
    std::exception_ptr failure;
    if (grid.my_rank() == root && values.size() != rows * cols) {
      failure = std::make_exception_ptr(error(std::string(operation) + ": rank " + std::to_string(root) + " holds " +
                                              std::to_string(values.size()) + " values for a " + std::to_string(rows) +
                                              "x" + std::to_string(cols) + " matrix"));
    }
    distributed_matrix m(grid, rows, cols, block, operation, failure, root);
    m.local_.assign(m.local_rows_ * m.local_cols_, T(0));
    std::vector<T> column_major;
    if (grid.my_rank() == root) {
      column_major.resize(rows * cols);
      for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) column_major[i + j * rows] = values[i * cols + j];
    }
    m.redistribute(column_major, root, true);
    return m;
  }

  // The whole matrix, row-major, on rank root; empty on the others. Collective.
  std::vector<T> gather(int root = 0) const {
    constexpr const char* operation = "ordo::mpi::distributed_matrix::gather";
    {
      const detail::errors_return_scope scope(grid_.comm(), operation);
      detail::check_agreement<1>(grid_.comm(), operation, {{{"the root rank", root, nullptr}}});
    }
    std::vector<T> column_major(grid_.my_rank() == root ? rows_ * cols_ : 0);
    const_cast<distributed_matrix*>(this)->redistribute(column_major, root, false);
    std::vector<T> row_major;
    if (grid_.my_rank() == root) {
      row_major.resize(rows_ * cols_);
      for (std::size_t i = 0; i < rows_; ++i)
        for (std::size_t j = 0; j < cols_; ++j) row_major[i * cols_ + j] = column_major[i + j * rows_];
    }
    return row_major;
  }

  std::size_t rows() const noexcept { return rows_; }
  std::size_t cols() const noexcept { return cols_; }
  std::size_t block() const noexcept { return block_; }
  const process_grid& grid() const noexcept { return grid_; }
  // This rank's blocks: local_rows() x local_cols(), column-major, leading dimension ld().
  std::size_t local_rows() const noexcept { return local_rows_; }
  std::size_t local_cols() const noexcept { return local_cols_; }
  int ld() const noexcept { return descriptor_[detail::lld_]; }
  T* local_data() noexcept { return local_.data(); }
  const T* local_data() const noexcept { return local_.data(); }
  // ScaLAPACK's array descriptor.
  const int* descriptor() const noexcept { return descriptor_.data(); }
  int* descriptor() noexcept { return descriptor_.data(); }

  // The communicator rank that holds element (i, j) (0-based), and whether it is this one.
  int owner(std::size_t i, std::size_t j) const noexcept {
    const auto pr = static_cast<std::size_t>(grid_.rows()), pc = static_cast<std::size_t>(grid_.cols());
    return static_cast<int>((i / block_) % pr * pc + (j / block_) % pc);
  }
  bool owns(std::size_t i, std::size_t j) const noexcept { return owner(i, j) == grid_.my_rank(); }

  // Element (i, j) on the rank that owns it; elsewhere ordo::mpi::error names the owner.
  T& at(std::size_t i, std::size_t j) { return local_[local_offset(i, j)]; }
  const T& at(std::size_t i, std::size_t j) const { return local_[local_offset(i, j)]; }

  // Rows and columns of this rank's blocks of a rows x cols matrix in blocks of `block`.
  static std::array<std::size_t, 2> local_extents(const process_grid& grid, std::size_t rows, std::size_t cols,
                                                  std::size_t block) {
    return {local_count(rows, block, grid.my_row(), grid.rows()), local_count(cols, block, grid.my_col(), grid.cols())};
  }

 private:
  distributed_matrix(const process_grid& grid, std::size_t rows, std::size_t cols, std::size_t block,
                     const char* operation, const std::exception_ptr& failure, int root = 0)
      : grid_(grid), rows_(rows), cols_(cols), block_(block) {
    {
      const detail::errors_return_scope scope(grid.comm(), operation);
      std::exception_ptr local_failure = failure;
      if (!local_failure && block == 0) {
        local_failure = std::make_exception_ptr(error(std::string(operation) + ": the block size is 0"));
      }
      if (!local_failure && (root < 0 || root >= grid.ranks())) {
        local_failure = std::make_exception_ptr(error(std::string(operation) + ": the root rank " + std::to_string(root) +
                                                      " is not in the grid's " + std::to_string(grid.ranks()) + " ranks"));
      }
      detail::check_agreement<4>(grid.comm(), operation,
                                 {{{"the matrix's rows", static_cast<std::int64_t>(rows), nullptr},
                                   {"the matrix's columns", static_cast<std::int64_t>(cols), nullptr},
                                   {"the block size", static_cast<std::int64_t>(block), nullptr},
                                   {"the root rank", root, nullptr}}},
                                 local_failure);
    }
    const auto extents = local_extents(grid, rows, cols, block);
    local_rows_ = extents[0], local_cols_ = extents[1];
    const int m = static_cast<int>(rows), n = static_cast<int>(cols), b = static_cast<int>(block), zero = 0,
              context = grid.context(), lld = static_cast<int>(local_rows_ > 0 ? local_rows_ : 1);
    int info = 0;
    descinit_(descriptor_.data(), &m, &n, &b, &b, &zero, &zero, &context, &lld, &info);
    if (info != 0) throw error(std::string(operation) + ": ScaLAPACK's DESCINIT refused the matrix (info " + std::to_string(info) + ")");
  }

  // numroc: how many of n rows (or columns) in blocks of `block` process p of `processes` holds.
  static std::size_t local_count(std::size_t n, std::size_t block, int p, int processes) {
    const int count = static_cast<int>(n), b = static_cast<int>(block), zero = 0;
    return static_cast<std::size_t>(numroc_(&count, &b, &p, &zero, &processes));
  }

  std::size_t local_offset(std::size_t i, std::size_t j) const {
    if (i >= rows_ || j >= cols_) {
      throw error("ordo::mpi::distributed_matrix::at(" + std::to_string(i) + ", " + std::to_string(j) + "): outside the " +
                  std::to_string(rows_) + "x" + std::to_string(cols_) + " matrix");
    }
    if (!owns(i, j)) {
      throw error("ordo::mpi::distributed_matrix::at(" + std::to_string(i) + ", " + std::to_string(j) + "): rank " +
                  std::to_string(owner(i, j)) + " holds the element, not rank " + std::to_string(grid_.my_rank()));
    }
    const auto pr = static_cast<std::size_t>(grid_.rows()), pc = static_cast<std::size_t>(grid_.cols());
    const std::size_t li = i / (block_ * pr) * block_ + i % block_, lj = j / (block_ * pc) * block_ + j % block_;
    return li + lj * static_cast<std::size_t>(ld());
  }

  // Copies between this matrix and a column-major rows x cols array on rank root (into this one
  // when `into_this`), through a 1 x 1 BLACS grid holding the root and ScaLAPACK's p?gemr2d.
  void redistribute(std::vector<T>& whole, int root, bool into_this) {
    if (rows_ == 0 || cols_ == 0) return;
    int root_context = grid_.system_handle();
    int map[1] = {root};
    Cblacs_gridmap(&root_context, map, 1, 1, 1);
    std::array<int, 9> whole_descriptor{1, -1, static_cast<int>(rows_), static_cast<int>(cols_), static_cast<int>(rows_),
                                        static_cast<int>(cols_), 0, 0, static_cast<int>(rows_)};
    if (grid_.my_rank() == root) whole_descriptor[detail::ctxt_] = root_context;
    T* whole_data = whole.empty() ? nullptr : whole.data();
    const int m = static_cast<int>(rows_), n = static_cast<int>(cols_);
    if (into_this) {
      detail::pblas<T>::gemr2d(m, n, whole_data, 1, 1, whole_descriptor.data(), local_.data(), 1, 1,
                               descriptor_.data(), grid_.context());
    } else {
      detail::pblas<T>::gemr2d(m, n, local_.data(), 1, 1, descriptor_.data(), whole_data, 1, 1,
                               whole_descriptor.data(), grid_.context());
    }
    if (grid_.my_rank() == root) Cblacs_gridexit(root_context);
  }

  process_grid grid_;
  std::size_t rows_, cols_, block_;
  std::size_t local_rows_ = 0, local_cols_ = 0;
  std::array<int, 9> descriptor_{};
  std::vector<T> local_;
};

}  // namespace ordo::mpi

#endif
