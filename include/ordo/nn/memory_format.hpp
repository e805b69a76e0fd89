#ifndef ORDO_NN_MEMORY_FORMAT_HPP
#define ORDO_NN_MEMORY_FORMAT_HPP

// Where the channel axis of an (N, C, ...) tensor lies in memory, as PyTorch's memory_format:
// channels_first is (N, C, spatial...), channels_last is (N, spatial..., C).

namespace ordo::nn {

enum class memory_format { channels_first, channels_last };
inline constexpr memory_format channels_first = memory_format::channels_first;
inline constexpr memory_format channels_last = memory_format::channels_last;

}  // namespace ordo::nn

#endif
