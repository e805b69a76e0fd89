// bench_batch_norm_storage: a batch-norm training step (forward training + backward) on one shape in
// float, ordo::half and ordo::bfloat16 storage (float parameters), in interleaved rounds, under the
// instruction-set level the process chose (ORDO_CPU_CAPABILITY caps it). Prints one JSON object:
// the level and, per type, the step's median, quartiles and samples in seconds.
//   bench_batch_norm_storage [--layout nchw|nhwc] [--min-rounds R] [--min-seconds S]
#include "bench_support.hpp"

#include <ordo/nn/batch_norm.hpp>
#include <ordo/precision.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using space = Kokkos::DefaultHostExecutionSpace;
using vec_f = Kokkos::View<float*, Kokkos::HostSpace>;

// x = 0.01 c + uniform[-1, 1), dy = uniform[-1, 1) (c the channel), rounded once to T.
template <class T>
struct step_case {
  using view = Kokkos::View<T****, Kokkos::LayoutRight, Kokkos::HostSpace>;
  view x, y, dy, dx;
  vec_f gamma, beta, running_mean, running_var, dgamma, dbeta;
  ordo::nn::batch_norm_options options;

  step_case(bool channels_last, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w)
      : options{.eps = 1e-5, .momentum = 0.1,
                .layout = channels_last ? ordo::nn::channels_last : ordo::nn::channels_first} {
    const auto make = [&](const char* name) {
      const auto e = [](std::int64_t v) { return static_cast<std::size_t>(v); };
      const std::string label(name);  // Kokkos 3.4 takes a string or a literal as the label
      return channels_last ? view(label, e(n), e(h), e(w), e(c)) : view(label, e(n), e(c), e(h), e(w));
    };
    x = make("x"), y = make("y"), dy = make("dy"), dx = make("dx");
    for (vec_f* v : {&gamma, &beta, &running_mean, &running_var, &dgamma, &dbeta}) *v = vec_f("parameter", c);
    Kokkos::deep_copy(gamma, 1.0f);
    Kokkos::deep_copy(running_var, 1.0f);
    T *xp = x.data(), *dyp = dy.data();
    const std::int64_t inner = h * w;
    Kokkos::parallel_for(Kokkos::RangePolicy<space>(0, static_cast<std::int64_t>(x.size())), [=](std::int64_t i) {
      const std::int64_t channel = channels_last ? i % c : (i / inner) % c;
      const double u = ordo_bench::unit_double(ordo_bench::splitmix64::at(1, static_cast<std::uint64_t>(i))) * 2 - 1;
      const double v = ordo_bench::unit_double(ordo_bench::splitmix64::at(2, static_cast<std::uint64_t>(i))) * 2 - 1;
      xp[i] = T(0.01 * static_cast<double>(channel) + u);
      dyp[i] = T(v);
    });
    space().fence();
  }
  void step() const {
    const auto saved = ordo::nn::batch_norm_forward_training(x, gamma, beta, running_mean, running_var, y, options);
    ordo::nn::batch_norm_backward(dy, x, gamma, saved, dx, dgamma, dbeta, options);
    space().fence();
  }
};

}  // namespace

int main(int argc, char** argv) {
  Kokkos::initialize(argc, argv);
  {
    std::string layout = "nchw";
    ordo_bench::limits lim{.min_reps = 15, .max_reps = 1000, .min_seconds = 2.0};
    ordo_bench::for_each_option(argc, argv, [&](std::string_view name, std::string_view value) {
      if (name == "--layout") layout = std::string(value);
      else if (name == "--min-rounds") lim.min_reps = std::stoi(std::string(value));
      else if (name == "--min-seconds") lim.min_seconds = std::stod(std::string(value));
      else throw std::invalid_argument("unknown option " + std::string(name));
    });
    const bool last = layout == "nhwc";
    const step_case<float> f(last, 32, 64, 56, 56);
    const step_case<ordo::half> h(last, 32, 64, 56, 56);
    const step_case<ordo::bfloat16> b(last, 32, 64, 56, 56);
    std::vector<ordo_bench::timed_item> items{{"float", [&] { f.step(); }, {}},
                                              {"half", [&] { h.step(); }, {}},
                                              {"bfloat16", [&] { b.step(); }, {}}};
    ordo_bench::time_rounds(items, lim, 2, true);
    std::printf("{\"level\": \"%s\", \"layout\": \"%s\"", ordo::detail::to_string(ordo::detail::host_capability()),
                layout.c_str());
    for (const auto& item : items) {
      const auto s = ordo_bench::summarize(item.samples);
      std::printf(", \"%s\": {\"median\": %.9g, \"q1\": %.9g, \"q3\": %.9g, \"rounds\": %zu}", item.name.c_str(),
                  s.median, s.q1, s.q3, s.reps);
    }
    std::printf("}\n");
  }
  Kokkos::finalize();
}
