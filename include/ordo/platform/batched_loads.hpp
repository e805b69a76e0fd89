#ifndef ORDO_PLATFORM_BATCHED_LOADS_HPP
#define ORDO_PLATFORM_BATCHED_LOADS_HPP

// A strided walk whose loads are issued a batch at a time, for the device shapes' long serial
// chains (softmax's lanes, batch norm's runs and channel columns). A GPU issues a thread's
// instructions in order, so a loop that uses each value as it loads it keeps one load (or the
// few an unrolled body holds) in flight per thread. Where a kernel has few threads (one per
// lane or channel, as the bitwise contracts require), that left most of the memory system idle:
// softmax at 7 % and batch norm at 2-14 % of the H200's copy bandwidth (docs/gpu.md). Loading a
// batch first keeps every use in the plain loop's order, so a kernel's results keep their bits.

#include <ordo/core/config.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace ordo::detail {

// Values a thread loads before it uses the first of them: 16 floats or doubles stay in registers
// (the loops unroll fully, so every index into the batch is a constant).
inline constexpr int load_batch = 16;

// use(i, load(i)) for i = first, first + step, ... below end, in that order. Returns the first i
// of that progression at or past end, where a plain loop would have stopped.
template <int Batch = load_batch, class Load, class Use>
KOKKOS_FORCEINLINE_FUNCTION std::int64_t for_each_batched(std::int64_t first, std::int64_t end, std::int64_t step,
                                                          const Load& load, const Use& use) {
  std::int64_t i = first;
  for (; i + (Batch - 1) * step < end; i += Batch * step) {
    decltype(load(i)) batch[Batch];
    ORDO_IMPL_UNROLL
    for (int b = 0; b < Batch; ++b) batch[b] = load(i + b * step);
    ORDO_IMPL_UNROLL
    for (int b = 0; b < Batch; ++b) use(i + b * step, batch[b]);
  }
  for (; i < end; i += step) use(i, load(i));
  return i;
}

}  // namespace ordo::detail

#endif
