#ifndef ORDO_PLATFORM_X86_STREAMING_STORES_HPP
#define ORDO_PLATFORM_X86_STREAMING_STORES_HPP

// Host-only: writing a large contiguous byte range with non-temporal stores. A plain store first
// reads its cache line from memory (read for ownership), so filling memory larger than the cache
// moves every byte twice; a non-temporal store writes whole lines straight to memory, as glibc's
// memset does for large sizes. SSE2's 16-byte stream store (movntdq) is the x86-64 baseline: no
// dispatch. Included only where ORDO_X86_HOST_SIMD is set (core/config.hpp). Written with the
// compilers' builtins and vector types rather than <emmintrin.h>, as half_conversion.hpp is, so
// that every includer of the mask does not parse the intrinsics headers.

#include <ordo/core/config.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace ordo::detail {

typedef long long stream_block __attribute__((vector_size(16)));
typedef char stream_bytes __attribute__((vector_size(16)));

// *p = v, bypassing the cache; p is 16-byte aligned.
inline void stream_store(std::uint8_t* p, stream_block v) {
#if defined(__clang__)
  __builtin_nontemporal_store(v, reinterpret_cast<stream_block*>(p));
#else
  __builtin_ia32_movntdq(reinterpret_cast<stream_block*>(p), v);
#endif
}

// Writes [begin, end) front to back as runs of one byte value each (fill), then finish(). Every
// aligned 16-byte block inside the range is written by one stream store: whole blocks of one value
// directly, a block where runs meet after its bytes are gathered. The bytes before the first and
// after the last aligned boundary get plain stores, so that a neighbouring range written by another
// thread shares no streamed block with this one.
class streaming_byte_writer {
 public:
  streaming_byte_writer(std::uint8_t* begin, std::uint8_t* end) : next_(begin) {
    const auto address = reinterpret_cast<std::uintptr_t>(begin);
    const auto end_address = reinterpret_cast<std::uintptr_t>(end);
    const std::uintptr_t first_block = (address + 15) & ~std::uintptr_t{15};
    const std::uintptr_t last_block = end_address & ~std::uintptr_t{15};
    if (first_block < last_block) {
      streamed_begin_ = begin + (first_block - address);
      streamed_end_ = begin + (last_block - address);
    } else {
      streamed_begin_ = streamed_end_ = end;  // too short to hold an aligned block
    }
  }
  streaming_byte_writer(const streaming_byte_writer&) = delete;
  streaming_byte_writer& operator=(const streaming_byte_writer&) = delete;

  // The next `count` bytes are `value`; the caller never writes past the range's end.
  void fill(std::uint8_t value, std::size_t count) {
    while (count > 0) {
      if (next_ < streamed_begin_ || next_ >= streamed_end_) {
        *next_++ = value;
        --count;
        continue;
      }
      const std::size_t offset = reinterpret_cast<std::uintptr_t>(next_) & 15;
      if (offset == 0 && count >= 16) {
        const std::size_t blocks =
            std::min(count / 16, static_cast<std::size_t>(streamed_end_ - next_) / 16);
        const stream_block splat = reinterpret_cast<stream_block>(stream_bytes{} + static_cast<char>(value));
        for (std::size_t b = 0; b < blocks; ++b) stream_store(next_ + 16 * b, splat);
        next_ += 16 * blocks;
        count -= 16 * blocks;
        continue;
      }
      // Runs meet inside this block: gather its bytes, stream it once it is whole.
      const std::size_t take = std::min(count, 16 - offset);
      std::memset(pending_ + offset, value, take);
      next_ += take;
      count -= take;
      if (offset + take == 16) {
        stream_block gathered;
        std::memcpy(&gathered, pending_, sizeof gathered);
        stream_store(next_ - 16, gathered);
      }
    }
  }

  // Orders the stream stores before whatever this thread does next (they are weakly ordered).
  void finish() { __builtin_ia32_sfence(); }

 private:
  std::uint8_t* next_;
  std::uint8_t* streamed_begin_;
  std::uint8_t* streamed_end_;
  alignas(16) std::uint8_t pending_[16] = {};
};

// Outputs at least this large are written with stream stores: the last-level cache's size, below
// which the output can stay in cache for whoever reads it next. Linux's sysfs gives the size of
// the cache instance this CPU sees; sysconf(_SC_LEVEL3_CACHE_SIZE) is the fallback (in a VM it may
// report the host's total: 384 MiB on this project's 32 MiB EPYC guests), then 32 MiB. Read once.
inline std::size_t streaming_store_threshold_bytes() {
  static const std::size_t threshold = [] {
    std::size_t bytes = 0;
    if (std::FILE* f = std::fopen("/sys/devices/system/cpu/cpu0/cache/index3/size", "r")) {
      unsigned long long amount = 0;
      char unit = 0;
      if (std::fscanf(f, "%llu%c", &amount, &unit) >= 1) {
        bytes = static_cast<std::size_t>(amount) * (unit == 'K' ? 1024U : (unit == 'M' ? 1024U * 1024U : 1U));
      }
      std::fclose(f);
    }
#if defined(_SC_LEVEL3_CACHE_SIZE)
    if (bytes == 0) {
      const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE);
      if (reported > 0) bytes = static_cast<std::size_t>(reported);
    }
#endif
    return bytes > 0 ? bytes : std::size_t{32} << 20;
  }();
  return threshold;
}

}  // namespace ordo::detail

#endif
