// Measures the rates of ordo::cost_model::predicted_time on this machine (docs/structured_chains.md,
// "Cost models"): for each kernel of ordo::chain_kernel, the time of a call at order 1 (its
// overhead) and at orders 32, 256 and 1024 (one per size class), with this machine's BLAS/LAPACK,
// double; and the streaming bandwidth of a 256 MB copy. Prints an ordo::cost_model::machine_rates
// initializer (paste it into your code, or into core/cost_model.hpp's default) and a markdown
// table. Each time is the median of --repeats calls on fresh copies of the inputs.
#include <ordo/core/chain_kernel.hpp>
#include <ordo/core/cost_model.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
void dgemv_(const char*, const int*, const int*, const double*, const double*, const int*, const double*, const int*,
            const double*, double*, const int*);
double ddot_(const int*, const double*, const int*, const double*, const int*);
void dtrmm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*, const double*,
            const int*, double*, const int*);
void dtrmv_(const char*, const char*, const char*, const int*, const double*, const int*, double*, const int*);
void dsyrk_(const char*, const char*, const int*, const int*, const double*, const double*, const int*, const double*,
            double*, const int*);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*, const double*,
            const int*, double*, const int*);
void dtrsv_(const char*, const char*, const char*, const int*, const double*, const int*, double*, const int*);
void dposv_(const char*, const int*, const int*, double*, const int*, double*, const int*, int*);
void dsysv_(const char*, const int*, const int*, double*, const int*, int*, double*, const int*, double*, const int*,
            int*);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void dtrtri_(const char*, const char*, const int*, double*, const int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
void dpotri_(const char*, const int*, double*, const int*, int*);
void dsytrf_(const char*, const int*, double*, const int*, int*, double*, const int*, int*);
void dsytri_(const char*, const int*, double*, const int*, const int*, double*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dgetri_(const int*, double*, const int*, const int*, double*, const int*, int*);
}

namespace {

using ordo::chain_kernel;

struct operands {
  std::vector<double> a, b, c, spd, tri, sym;
  std::vector<int> pivots;
};

operands make_operands(int s) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  operands o;
  const auto fill = [&](std::vector<double>& v) {
    v.resize(static_cast<std::size_t>(s) * s);
    for (double& x : v) x = u(rng);
  };
  fill(o.a), fill(o.b), fill(o.c), fill(o.spd), fill(o.tri), fill(o.sym);
  for (int i = 0; i < s; ++i) {
    for (int j = 0; j < s; ++j) {
      const std::size_t ij = static_cast<std::size_t>(i) * s + j, ji = static_cast<std::size_t>(j) * s + i;
      o.sym[ij] = o.sym[ji];
      o.spd[ij] = o.spd[ji] = 0.1 * u(rng);
    }
    o.spd[static_cast<std::size_t>(i) * s + i] = s;        // diagonally dominant: SPD
    o.tri[static_cast<std::size_t>(i) * s + i] = 2;        // well-conditioned triangles
    o.sym[static_cast<std::size_t>(i) * s + i] = i % 2 ? s : -s;  // indefinite, nonsingular
    o.a[static_cast<std::size_t>(i) * s + i] += s;          // nonsingular general
  }
  for (std::size_t e = 0; e < o.tri.size(); ++e) o.tri[e] /= s;
  o.pivots.resize(static_cast<std::size_t>(s));
  return o;
}

// One call of the kernel on order-s operands (vector kernels: an s x s matrix and an s-vector).
// Inputs that the kernel overwrites are restored by the caller between calls (not timed).
void run(chain_kernel kernel, int s, operands& o, std::vector<double>& work_a, std::vector<double>& work_b) {
  const double one = 1, zero = 0;
  const int inc = 1;
  int info = 0;
  int lwork = static_cast<int>(work_b.size());
  switch (kernel) {
    case chain_kernel::gemm: dgemm_("N", "N", &s, &s, &s, &one, o.a.data(), &s, o.b.data(), &s, &zero, o.c.data(), &s); break;
    case chain_kernel::gemv: dgemv_("N", &s, &s, &one, o.a.data(), &s, o.b.data(), &inc, &zero, o.c.data(), &inc); break;
    case chain_kernel::dot: o.c[0] = ddot_(&s, o.a.data(), &inc, o.b.data(), &inc); break;
    case chain_kernel::trmm: dtrmm_("L", "L", "N", "N", &s, &s, &one, o.tri.data(), &s, work_b.data(), &s); break;
    case chain_kernel::trmv: dtrmv_("L", "N", "N", &s, o.tri.data(), &s, work_b.data(), &inc); break;
    case chain_kernel::syrk: dsyrk_("L", "T", &s, &s, &one, o.a.data(), &s, &zero, o.c.data(), &s); break;
    case chain_kernel::trsm: dtrsm_("L", "L", "N", "N", &s, &s, &one, o.tri.data(), &s, work_b.data(), &s); break;
    case chain_kernel::trsv: dtrsv_("L", "N", "N", &s, o.tri.data(), &s, work_b.data(), &inc); break;
    case chain_kernel::posv: dposv_("L", &s, &s, work_a.data(), &s, work_b.data(), &s, &info); break;
    case chain_kernel::sysv: {
      std::vector<double> query(1);
      dsysv_("L", &s, &s, work_a.data(), &s, o.pivots.data(), work_b.data(), &s, o.c.data(), &lwork, &info);
      break;
    }
    case chain_kernel::gesv: dgesv_(&s, &s, work_a.data(), &s, o.pivots.data(), work_b.data(), &s, &info); break;
    case chain_kernel::scale_rows:
    case chain_kernel::scale_cols: {
      const std::size_t n = static_cast<std::size_t>(s);
      const bool rows = kernel == chain_kernel::scale_rows;
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < n; ++i) o.c[j * n + i] = (rows ? o.b[i] : o.b[j]) * o.a[j * n + i];
      break;
    }
    case chain_kernel::diagonal_product:
      for (std::size_t i = 0; i < static_cast<std::size_t>(s); ++i) o.c[i] = o.a[i] * o.b[i];
      break;
    case chain_kernel::trtri: dtrtri_("L", "N", &s, work_a.data(), &s, &info); break;
    case chain_kernel::potri:
      dpotrf_("L", &s, work_a.data(), &s, &info);
      dpotri_("L", &s, work_a.data(), &s, &info);
      break;
    case chain_kernel::sytri:
      dsytrf_("L", &s, work_a.data(), &s, o.pivots.data(), o.c.data(), &lwork, &info);
      dsytri_("L", &s, work_a.data(), &s, o.pivots.data(), o.c.data(), &info);
      break;
    case chain_kernel::getri:
      dgetrf_(&s, &s, work_a.data(), &s, o.pivots.data(), &info);
      dgetri_(&s, work_a.data(), &s, o.pivots.data(), o.c.data(), &lwork, &info);
      break;
    case chain_kernel::reciprocal:
      for (std::size_t i = 0; i < static_cast<std::size_t>(s); ++i) o.c[i] = 1 / o.a[i];
      break;
  }
  if (info != 0) {
    std::fprintf(stderr, "bench_calibrate: %s at order %d returned info %d\n", std::string(ordo::kernel_name(kernel)).c_str(), s, info);
    std::exit(1);
  }
}

// The kernel's call at order s as the cost model describes it.
ordo::kernel_call call_of(chain_kernel kernel, std::uint64_t s) {
  switch (kernel) {
    case chain_kernel::gemv:
    case chain_kernel::trmv:
    case chain_kernel::trsv: return {kernel, s, s, 1};
    case chain_kernel::dot: return {kernel, 1, s, 1};
    case chain_kernel::diagonal_product: return {kernel, s, s, s};
    default: return {kernel, s, s, s};
  }
}

// Median seconds of one call.
double time_kernel(chain_kernel kernel, int s, int repeats) {
  operands o = make_operands(s);
  const std::size_t elements = static_cast<std::size_t>(s) * s;
  std::vector<double> work_a(elements), work_b(elements);
  const std::vector<double>& factor = kernel == chain_kernel::posv || kernel == chain_kernel::potri ? o.spd
                                      : kernel == chain_kernel::sysv || kernel == chain_kernel::sytri ? o.sym
                                      : kernel == chain_kernel::trtri ? o.tri
                                                                     : o.a;
  o.c.resize(std::max<std::size_t>(elements, 64 * static_cast<std::size_t>(s) + 64));
  work_b.resize(o.c.size());
  std::vector<double> seconds;
  for (int r = 0; r < repeats; ++r) {
    std::copy(factor.begin(), factor.end(), work_a.begin());
    std::copy(o.b.begin(), o.b.end(), work_b.begin());
    const auto start = std::chrono::steady_clock::now();
    run(kernel, s, o, work_a, work_b);
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(seconds.begin(), seconds.begin() + repeats / 2, seconds.end());
  return seconds[static_cast<std::size_t>(repeats / 2)];
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 21;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = std::atoi(argv[++i]);
  }
  // Streaming bandwidth: a 256 MB copy, read + write.
  std::vector<double> from(32 << 20, 1.0), to(32 << 20, 0.0);
  std::vector<double> copies;
  for (int r = 0; r < 7; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::memcpy(to.data(), from.data(), from.size() * sizeof(double));
    copies.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(copies.begin(), copies.end());
  const double bytes = 2.0 * static_cast<double>(from.size() * sizeof(double));
  const auto fs_per_byte = static_cast<std::uint64_t>(copies[3] / bytes * 1e15);

  constexpr int orders[3] = {32, 256, 1024};
  std::printf("// bench_calibrate: ordo::cost_model::machine_rates, double, median of %d calls\n", repeats);
  std::printf("inline constexpr ordo::cost_model::machine_rates measured_rates = {\n    {\n");
  std::string table = "| kernel | overhead (us) | GFLOP/s at 32 | at 256 | at 1024 |\n|---|---:|---:|---:|---:|\n";
  for (std::size_t k = 0; k < ordo::chain_kernel_count; ++k) {
    const auto kernel = static_cast<chain_kernel>(k);
    const double overhead = time_kernel(kernel, 1, repeats);
    std::uint64_t fs_per_flop[3];
    double gflops[3];
    for (int c = 0; c < 3; ++c) {
      const int s = orders[c];
      const double t = time_kernel(kernel, s, c == 2 ? std::max(3, repeats / 4) : repeats);
      const auto flops = static_cast<double>(ordo::kernel_flops(call_of(kernel, static_cast<std::uint64_t>(s))));
      fs_per_flop[c] = static_cast<std::uint64_t>(std::max(t - overhead, t / 2) / flops * 1e15);
      gflops[c] = flops / t * 1e-9;
    }
    const std::string name(ordo::kernel_name(kernel));
    std::printf("        /* %s */ {%llu, {%llu, %llu, %llu}},\n", name.c_str(),
                static_cast<unsigned long long>(overhead * 1e15), static_cast<unsigned long long>(fs_per_flop[0]),
                static_cast<unsigned long long>(fs_per_flop[1]), static_cast<unsigned long long>(fs_per_flop[2]));
    char row[160];
    std::snprintf(row, sizeof row, "| %s | %.2f | %.2f | %.2f | %.2f |\n", name.c_str(), overhead * 1e6, gflops[0],
                  gflops[1], gflops[2]);
    table += row;
  }
  std::printf("    },\n    %llu,\n};\n\n", static_cast<unsigned long long>(fs_per_byte));
  std::printf("Streaming copy: %.1f GB/s (read + write)\n\n%s", bytes / copies[3] * 1e-9, table.c_str());
}
