// bench_precision_paired: a shared module without Python headers, loaded with ctypes by
// bench/precision/paired.py, so that one Python process times ordo's softmax and PyTorch's on the
// same buffers and the same OpenMP runtime (libgomp, shared by Kokkos::OpenMP and ATen).
//
// C interface (every kernel call fences before returning):
//   int   ordo_sm_initialize(void)     Kokkos::initialize() unless done; returns the OpenMP concurrency
//   void  ordo_sm_finalize(void)
//   void* ordo_sm_case_new(long long rows, long long cols, const char* dtype)   "float" or "bfloat16"
//   void  ordo_sm_case_delete(void* c)
//   void* ordo_sm_data(void* c, const char* array)   "x" or "y": host pointer, row-major
//   void  ordo_sm_softmax(void* c)     ordo::nn::softmax(x, y)
//   void  ordo_sm_online(void* c)      the online variant (float cases)
//   void  ordo_sm_copy(void* c)        y = x
//   const char* ordo_sm_error(void)    message of the last exception
//   const char* ordo_sm_capability(void)   "avx2" or "baseline"

#include "cases.hpp"

#include <string>

namespace {
std::string last_error;
bench_sm::case_base* as_case(void* c) { return static_cast<bench_sm::case_base*>(c); }
}  // namespace

extern "C" {

int ordo_sm_initialize(void) {
  try {
    if (!Kokkos::is_initialized()) Kokkos::initialize();
    return bench_sm::space().concurrency();
  } catch (const std::exception& e) {
    last_error = e.what();
    return 0;
  }
}

void ordo_sm_finalize(void) {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

const char* ordo_sm_error(void) { return last_error.c_str(); }

const char* ordo_sm_capability(void) {
  return ordo::detail::host_capability() == ordo::detail::cpu_capability::avx2 ? "avx2" : "baseline";
}

void* ordo_sm_case_new(long long rows, long long cols, const char* dtype) {
  try {
    return bench_sm::make_case(rows, cols, dtype).release();
  } catch (const std::exception& e) {
    last_error = e.what();
    return nullptr;
  }
}

void ordo_sm_case_delete(void* c) { delete as_case(c); }

void* ordo_sm_data(void* c, const char* array) {
  const std::string a = array;
  if (a == "x") return as_case(c)->x_data();
  if (a == "y") return as_case(c)->y_data();
  last_error = "unknown array " + a;
  return nullptr;
}

void ordo_sm_softmax(void* c) { as_case(c)->softmax(); }
void ordo_sm_online(void* c) { as_case(c)->online(); }
void ordo_sm_copy(void* c) { as_case(c)->copy(); }

}  // extern "C"
