// bench_batch_norm_paired: a Python extension-free shared module (loaded with ctypes by
// bench/batch_norm/paired.py) that lets one Python process time ordo and PyTorch in the same
// rounds, on the same buffers and the same OpenMP runtime (libgomp, shared by Kokkos::OpenMP and
// ATen), so that the shared machine's load falls on both alike.
//
// C interface (all functions fence before returning):
//   int   ordo_bn_initialize(void)          Kokkos::initialize() unless already done; returns the
//                                           concurrency of Kokkos::OpenMP
//   void  ordo_bn_finalize(void)            Kokkos::finalize() (delete every case first)
//   void* ordo_bn_case_new(const char* name)   "nchw", "nhwc" or "bn1d" (bench/batch_norm/cases.hpp)
//   void  ordo_bn_case_delete(void* c)
//   long long ordo_bn_size(void* c, const char* array)   number of elements of an array
//   void* ordo_bn_data(void* c, const char* array)       host pointer to it: float x, dy, y, dx,
//         gamma, beta, dgamma, dbeta, running_mean, running_var; double mean, invstd (saved)
//   void  ordo_bn_reset_running(void* c)    running_mean = 0, running_var = 1
//   void  ordo_bn_forward(void* c)          ordo::nn::batch_norm_forward_training
//   void  ordo_bn_backward(void* c)         ordo::nn::batch_norm_backward
//   void  ordo_bn_copy(void* c)             copy of x into a scratch array (Kokkos parallel_for)
//   const char* ordo_bn_error(void)         message of the last exception, "" if none
//   const char* ordo_bn_capability(void)    "avx2" or "baseline": which kernels ordo runs here
// Functions that can fail return 0 / nullptr and set the error message.

#include "cases.hpp"

#include <cstring>
#include <string>

namespace {
std::string last_error;

bench_bn::case_base* as_case(void* c) { return static_cast<bench_bn::case_base*>(c); }
}  // namespace

extern "C" {

int ordo_bn_initialize(void) {
  try {
    if (!Kokkos::is_initialized()) Kokkos::initialize();
    return bench_bn::space().concurrency();
  } catch (const std::exception& e) {
    last_error = e.what();
    return 0;
  }
}

void ordo_bn_finalize(void) {
  if (Kokkos::is_initialized()) Kokkos::finalize();
}

const char* ordo_bn_error(void) { return last_error.c_str(); }

const char* ordo_bn_capability(void) {
  return ordo::detail::host_capability() == ordo::detail::cpu_capability::avx2 ? "avx2" : "baseline";
}

void* ordo_bn_case_new(const char* name) {
  try {
    return bench_bn::make_case(name).release();
  } catch (const std::exception& e) {
    last_error = e.what();
    return nullptr;
  }
}

void ordo_bn_case_delete(void* c) { delete as_case(c); }

long long ordo_bn_size(void* cp, const char* array) {
  auto* c = as_case(cp);
  const std::string a = array;
  if (a == "x" || a == "dy" || a == "y" || a == "dx") return c->n;
  if (a == "gamma" || a == "beta" || a == "dgamma" || a == "dbeta" || a == "running_mean" || a == "running_var" ||
      a == "mean" || a == "invstd")
    return c->channels;
  last_error = "unknown array " + a;
  return 0;
}

void* ordo_bn_data(void* cp, const char* array) {
  auto* c = as_case(cp);
  const std::string a = array;
  if (a == "x") return c->x.data();
  if (a == "dy") return c->dy.data();
  if (a == "y") return c->y.data();
  if (a == "dx") return c->dx.data();
  if (a == "gamma") return c->gamma.data();
  if (a == "beta") return c->beta.data();
  if (a == "dgamma") return c->dgamma.data();
  if (a == "dbeta") return c->dbeta.data();
  if (a == "running_mean") return c->running_mean.data();
  if (a == "running_var") return c->running_var.data();
  if (a == "mean") return c->saved.mean.data();
  if (a == "invstd") return c->saved.invstd.data();
  last_error = "unknown array " + a;
  return nullptr;
}

void ordo_bn_reset_running(void* c) { as_case(c)->reset_running(); }
void ordo_bn_forward(void* c) { as_case(c)->forward(); }
void ordo_bn_backward(void* c) { as_case(c)->backward(); }
void ordo_bn_copy(void* c) { as_case(c)->copy_x(); }

}  // extern "C"
