#ifndef ORDO_TESTS_MPI_SUPPORT_HPP
#define ORDO_TESTS_MPI_SUPPORT_HPP

// What the MPI tests share: communicators of every size up to the world's, how a global batch
// is cut among ranks, and a check that every rank holds the same bits.

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace ordo_test {

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// The first `ranks` ranks of the world as a communicator (MPI_COMM_NULL on the others), so that
// one mpirun checks every rank count up to its own.
class first_ranks {
 public:
  explicit first_ranks(int ranks) {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank() < ranks ? 0 : MPI_UNDEFINED, world_rank(), &comm_);
  }
  ~first_ranks() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  first_ranks(const first_ranks&) = delete;
  first_ranks& operator=(const first_ranks&) = delete;
  MPI_Comm get() const { return comm_; }
  bool member() const { return comm_ != MPI_COMM_NULL; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

inline int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}
inline int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

// Ways to cut n samples among p ranks; returns [begin, end) of each rank.
enum class split { even, first_rank_empty, second_rank_empty, all_on_last, skewed };
inline const char* split_name(split s) {
  switch (s) {
    case split::even: return "even";
    case split::first_rank_empty: return "rank 0 empty";
    case split::second_rank_empty: return "rank 1 empty";
    case split::all_on_last: return "all on the last rank";
    default: return "skewed";
  }
}
inline std::vector<split> all_splits() {
  return {split::even, split::first_rank_empty, split::second_rank_empty, split::all_on_last, split::skewed};
}
inline std::vector<std::pair<std::int64_t, std::int64_t>> cut(std::int64_t n, int p, split s) {
  std::vector<std::int64_t> share(static_cast<std::size_t>(p), 0);
  std::vector<std::int64_t> weight(static_cast<std::size_t>(p), 1);
  for (int r = 0; r < p; ++r) {
    if (s == split::skewed) weight[static_cast<std::size_t>(r)] = 1 + 3 * r;
    if (s == split::first_rank_empty && r == 0 && p > 1) weight[0] = 0;
    if (s == split::second_rank_empty && r == 1) weight[1] = 0;
    if (s == split::all_on_last && r != p - 1) weight[static_cast<std::size_t>(r)] = 0;
  }
  std::int64_t total_weight = 0;
  for (auto w : weight) total_weight += w;
  std::int64_t given = 0;
  for (int r = 0; r < p; ++r) {
    share[static_cast<std::size_t>(r)] = n * weight[static_cast<std::size_t>(r)] / total_weight;
    given += share[static_cast<std::size_t>(r)];
  }
  // The remainder to the last rank with a weight.
  for (int r = p - 1; r >= 0; --r) {
    if (weight[static_cast<std::size_t>(r)] != 0) {
      share[static_cast<std::size_t>(r)] += n - given;
      break;
    }
  }
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  std::int64_t begin = 0;
  for (auto s_r : share) {
    ranges.push_back({begin, begin + s_r});
    begin += s_r;
  }
  return ranges;
}

// Whether every rank of comm holds the same bytes.
template <class T>
bool same_on_every_rank(MPI_Comm comm, const T* values, std::size_t count) {
  std::vector<unsigned char> mine(sizeof(T) * count);
  if (count != 0) std::memcpy(mine.data(), values, mine.size());
  std::vector<unsigned char> first = mine;
  MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_UNSIGNED_CHAR, 0, comm);
  int same = first == mine, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, comm);
  return all == 1;
}
template <class T>
bool same_on_every_rank(MPI_Comm comm, const T& value) {
  return same_on_every_rank(comm, &value, 1);
}

}  // namespace ordo_test

#endif
