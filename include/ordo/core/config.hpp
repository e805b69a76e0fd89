#ifndef ORDO_CORE_CONFIG_HPP
#define ORDO_CORE_CONFIG_HPP

// What the compiler and target offer, decided once for every layer. Pure C++: no Kokkos, so the
// planner and the scalar types can use it too. Kernels test these macros instead of compiler
// macros, so that CUDA and HIP are handled alike and a new target needs one edit here.
//
//   ORDO_DEVICE_COMPILE     1 while compiling device code (the CUDA or HIP device pass), else 0.
//   ORDO_GPU_COMPILER       1 when the translation unit is compiled by nvcc, clang-cuda or hipcc
//                           (host and device passes alike), else 0.
//   ORDO_HOST_DEVICE        marks a function callable from host and device code; empty on plain
//                           host compilers (Kokkos code may use KOKKOS_INLINE_FUNCTION instead).
//   ORDO_RESTRICT           the pointers of a loop do not alias (g++, clang, nvcc, hipcc).
//   ORDO_X86_HOST_SIMD      1 when host code may use SSE2 intrinsics: an x86-64 host pass.
//   ORDO_IMPL_AVX2_FUNCTION compiles one host function for AVX2 (x86-64, g++ or clang).
//   ORDO_IMPL_DISPATCH_AVX2 1 when host kernels are also compiled for AVX2 and chosen at run time
//                           (platform/x86/cpu_dispatch.hpp).
//   ORDO_IMPL_AVX512_FUNCTION, ORDO_IMPL_DISPATCH_AVX512  the same for AVX-512 (F, BW, DQ, VL).
//   ORDO_IMPL_FP_CONTRACT_OFF_BEGIN / _END  around the code of dispatched kernels: no multiply-add
//                           there is fused (clang fuses within an expression by default; g++'s
//                           AVX-512 twin is compiled with contraction off as a whole).
//   ORDO_IMPL_UNROLL        asks for full unrolling of the next loop.

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define ORDO_DEVICE_COMPILE 1
#else
#define ORDO_DEVICE_COMPILE 0
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define ORDO_GPU_COMPILER 1
#define ORDO_HOST_DEVICE __host__ __device__
#else
#define ORDO_GPU_COMPILER 0
#define ORDO_HOST_DEVICE
#endif

#define ORDO_RESTRICT __restrict__

#if (defined(__SSE2__) || defined(_M_X64)) && (defined(__x86_64__) || defined(_M_X64)) && !ORDO_DEVICE_COMPILE
#define ORDO_X86_HOST_SIMD 1
#else
#define ORDO_X86_HOST_SIMD 0
#endif

// AVX2 functions need g++ or clang's target attribute; nvcc and hipcc front ends need not accept
// it. A build that targets AVX2 already has nothing to dispatch to.
#if ORDO_X86_HOST_SIMD && (defined(__GNUC__) || defined(__clang__)) && !ORDO_GPU_COMPILER
// AVX2 comes with F16C here (every AVX2 CPU has it; platform/x86/cpu_dispatch.hpp checks both).
#define ORDO_IMPL_AVX2_FUNCTION __attribute__((target("avx2,f16c")))
#if !defined(__AVX2__)
#define ORDO_IMPL_DISPATCH_AVX2 1
#endif
// AVX-512F has fused multiply-adds of its own, which g++ (-ffp-contract=fast in GNU mode) would
// use for a * b + c: contraction off keeps the AVX-512 twin's bits those of the other levels.
#if defined(__clang__)
#define ORDO_IMPL_AVX512_FUNCTION __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#else
#define ORDO_IMPL_AVX512_FUNCTION \
  __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c"), optimize("fp-contract=off")))
#endif
// Not when the build targets FMA itself: its own code may then fuse (g++'s -ffp-contract=fast, the
// GNU default), and the levels would round differently.
#if !defined(__AVX512F__) && !defined(__FMA__)
#define ORDO_IMPL_DISPATCH_AVX512 1
#endif
#endif

#if defined(__clang__)
#define ORDO_IMPL_FP_CONTRACT_OFF_BEGIN _Pragma("float_control(push)") _Pragma("clang fp contract(off)")
#define ORDO_IMPL_FP_CONTRACT_OFF_END _Pragma("float_control(pop)")
#else
#define ORDO_IMPL_FP_CONTRACT_OFF_BEGIN
#define ORDO_IMPL_FP_CONTRACT_OFF_END
#endif

// Full unrolling of fixed-size loops is what lets accumulators live in registers. nvcc's front end
// reads host code first: it does not know `GCC unroll` (warning #1675-D), and a plain `unroll` it
// hands to g++, which warns in turn; so nvcc's host pass gets no hint.
#if ORDO_DEVICE_COMPILE || defined(__clang__)
#define ORDO_IMPL_UNROLL _Pragma("unroll")
#elif defined(__GNUC__) && !ORDO_GPU_COMPILER
#define ORDO_IMPL_UNROLL _Pragma("GCC unroll 64")
#else
#define ORDO_IMPL_UNROLL
#endif

#endif
