// Question 8: are the architecture and the hyperparameters enough to know the memory needed?
//
// No. The same layers need different memory for another batch size or dtype, and what a process
// really allocates includes things no formula over the model sees: padding and headers added by the
// allocator, whole pages, a library's private workspace, the outputs, scratch memory of the
// parallel runtime. This example predicts the peak temporary memory of a matrix-chain plan at
// compile time, then records every allocation Kokkos makes while ordo evaluates that chain
// (Kokkos Tools' allocate/deallocate callbacks, present in Kokkos 3.4 and 4.x alike) and compares.
#include "support/harness.hpp"

#include <ordo/ordo.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <unistd.h>
#include "support/kokkos_session.hpp"

namespace {

using ordo_examples::expect;
using ordo_examples::wrong_results;

// Live and peak bytes per allocation label, from Kokkos Tools' hooks. Kokkos may call the hooks
// from several host threads at once (OpenMP threads growing their team scratch), hence the mutex.
class allocation_tracker {
 public:
  allocation_tracker() {
    Kokkos::Tools::Experimental::set_allocate_data_callback(&on_allocate);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(&on_deallocate);
  }
  ~allocation_tracker() {
    Kokkos::Tools::Experimental::set_allocate_data_callback(nullptr);
    Kokkos::Tools::Experimental::set_deallocate_data_callback(nullptr);
  }
  allocation_tracker(const allocation_tracker&) = delete;
  allocation_tracker& operator=(const allocation_tracker&) = delete;

  struct by_label {
    std::uint64_t allocations = 0;
    std::uint64_t allocated = 0;  // bytes, summed over every allocation
    std::uint64_t live = 0;
    std::uint64_t peak = 0;
  };

  // Starts a new phase: peaks restart from what is live now.
  void start_phase() {
    const std::lock_guard<std::mutex> lock(guard());
    auto& s = state();
    for (auto& entry : s.labels) entry.second = by_label{0, 0, entry.second.live, entry.second.live};
    s.peak_live = s.live;
    s.phase_start_live = s.live;
  }
  std::map<std::string, by_label> labels() const {
    const std::lock_guard<std::mutex> lock(guard());
    return state().labels;
  }
  // The most bytes live at once since the phase started, above what was live when it started.
  std::uint64_t peak_above_start() const {
    const std::lock_guard<std::mutex> lock(guard());
    return state().peak_live - state().phase_start_live;
  }

 private:
  struct recorded {
    std::map<std::string, by_label> labels;
    std::map<const void*, std::pair<std::string, std::uint64_t>> blocks;
    std::uint64_t live = 0, peak_live = 0, phase_start_live = 0;
  };
  static recorded& state() {
    static recorded r;
    return r;
  }
  static std::mutex& guard() {
    static std::mutex m;
    return m;
  }
  static void on_allocate(Kokkos::Profiling::SpaceHandle, const char* label, const void* ptr, std::uint64_t size) {
    const std::lock_guard<std::mutex> lock(guard());
    auto& s = state();
    auto& entry = s.labels[label];
    ++entry.allocations;
    entry.allocated += size;
    entry.live += size;
    entry.peak = std::max(entry.peak, entry.live);
    s.blocks[ptr] = {label, size};
    s.live += size;
    s.peak_live = std::max(s.peak_live, s.live);
  }
  static void on_deallocate(Kokkos::Profiling::SpaceHandle, const char*, const void* ptr, std::uint64_t) {
    const std::lock_guard<std::mutex> lock(guard());
    auto& s = state();
    const auto block = s.blocks.find(ptr);
    if (block == s.blocks.end()) return;  // allocated before the tracker started
    s.labels[block->second.first].live -= block->second.second;
    s.live -= block->second.second;
    s.blocks.erase(block);
  }
};

void print_phase(const char* title, const allocation_tracker& tracker) {
  std::printf("%s\n", title);
  for (const auto& [label, entry] : tracker.labels()) {
    if (entry.allocations == 0) continue;
    std::printf("    %-40s %3llu allocation(s), %9llu bytes, live at its peak %9llu bytes\n", ("\"" + label + "\"").c_str(),
                static_cast<unsigned long long>(entry.allocations), static_cast<unsigned long long>(entry.allocated),
                static_cast<unsigned long long>(entry.peak));
  }
  std::printf("    peak of all live bytes during the call: %llu\n",
              static_cast<unsigned long long>(tracker.peak_above_start()));
}

const char workspace_label[] = "ordo::chain workspace";

// A, B, C, D of 128x1024, 1024x128, 128x1024, 1024x128: the planner multiplies AB and CD, two
// 128x128 intermediates that are both alive when the final product reads them.
constexpr std::size_t m = 128, k = 1024;
using a_shape = ordo::shape<m, k>;
using b_shape = ordo::shape<k, m>;
constexpr auto& plan = ordo::chain_plan_v<a_shape, b_shape, a_shape, b_shape>;
static_assert(plan.order() == "((A1A2)(A3A4))");
static_assert(plan.cost() == m * k * m + m * k * m + m * m * m);
static_assert(plan.peak_temporary_elements() == m * m + m * m);
constexpr std::uint64_t predicted_bytes = plan.peak_temporary_elements() * sizeof(float);
static_assert(predicted_bytes == 131072);  // 128 KiB, whatever the machine
static_assert(plan.peak_temporary_elements() * sizeof(double) == 262144);
static_assert(plan.peak_temporary_elements() * sizeof(ordo::bfloat16) == 65536);

}  // namespace

int main(int argc, char* argv[]) {
  const ordo_examples::kokkos_session kokkos(argc, argv);
  std::printf("Question 8: predicted peak workspace of a plan against the bytes really allocated\n");
  {
    std::printf("\n== The prediction, at compile time ==\n");
    std::printf("chain 128x1024 * 1024x128 * 128x1024 * 1024x128, order %.*s, %llu multiplications\n",
                static_cast<int>(plan.order().size()), plan.order().data(),
                static_cast<unsigned long long>(plan.cost()));
    std::printf("peak temporary elements %llu: %llu bytes in float, %llu in double, %llu in bfloat16\n",
                static_cast<unsigned long long>(plan.peak_temporary_elements()),
                static_cast<unsigned long long>(predicted_bytes),
                static_cast<unsigned long long>(plan.peak_temporary_elements() * sizeof(double)),
                static_cast<unsigned long long>(plan.peak_temporary_elements() * sizeof(ordo::bfloat16)));

    std::printf("\n== The same layers, another batch: the first extent is the batch size (run-time plans) ==\n");
    for (const std::size_t batch : {std::size_t{1}, std::size_t{128}, std::size_t{4096}}) {
      const auto p = ordo::plan_chain(std::array<std::size_t, 5>{batch, k, m, k, m});
      std::printf("batch %5zu: order %-16s peak temporaries %9llu elements = %10llu bytes in float\n", batch,
                  std::string(p.order()).c_str(), static_cast<unsigned long long>(p.peak_temporary_elements()),
                  static_cast<unsigned long long>(p.peak_temporary_elements() * sizeof(float)));
    }

    allocation_tracker tracker;
    tracker.start_phase();
    ordo::matrix<float, m, k> a(ordo::uninitialized), c(ordo::uninitialized);
    ordo::matrix<float, k, m> b(ordo::uninitialized), d(ordo::uninitialized);
    Kokkos::deep_copy(a.view(), 1.0f);
    Kokkos::deep_copy(b.view(), 0.5f);
    Kokkos::deep_copy(c.view(), 0.25f);
    Kokkos::deep_copy(d.view(), 1.0f);
    std::printf("\n== What Kokkos allocated, by label (Kokkos Tools hooks) ==\n");
    print_phase("the four operands (not temporaries, so not in the prediction):", tracker);

    auto e = ordo::chain(a, b, c, d);
    static_assert(decltype(e)::order() == "((A1A2)(A3A4))");
    tracker.start_phase();
    const auto r = ordo::multiply(a, b, c, d);
    print_phase("ordo::multiply(a, b, c, d), a new result:", tracker);
    const auto multiply_labels = tracker.labels();

    tracker.start_phase();
    ordo::evaluate(e, r);
    print_phase("ordo::evaluate(chain, r) into that result (BLAS where found):", tracker);
    const auto evaluate_labels = tracker.labels();

    tracker.start_phase();
    ordo::evaluate(e, r, ordo::gemm_backend::portable);
    print_phase("the same with ordo's portable GEMM (Kokkos team scratch):", tracker);
    const auto portable_labels = tracker.labels();
    const std::uint64_t portable_peak = tracker.peak_above_start();

    // Every entry is 128 * (1024 * 1 * 0.5) * (1024 * 0.25 * 1) = 2^24, exact in float.
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), r.view());
    bool correct = true;
    for (std::size_t i = 0; i < m; ++i) {
      for (std::size_t j = 0; j < m; ++j) correct = correct && host(i, j) == 16777216.0f;
    }
    expect(correct, "every entry of the product must be 2^24");

    const auto workspace_of = [&](const std::map<std::string, allocation_tracker::by_label>& labels) {
      const auto found = labels.find(workspace_label);
      return found == labels.end() ? std::uint64_t{0} : found->second.peak;
    };
    const std::uint64_t measured = workspace_of(evaluate_labels);
    std::printf("\n== Prediction against measurement ==\n");
    std::printf("predicted peak workspace: %llu bytes; measured \"%s\": %llu bytes (%+lld)\n",
                static_cast<unsigned long long>(predicted_bytes), workspace_label,
                static_cast<unsigned long long>(measured),
                static_cast<long long>(measured) - static_cast<long long>(predicted_bytes));
    expect(measured >= predicted_bytes && workspace_of(multiply_labels) >= predicted_bytes &&
               workspace_of(portable_labels) >= predicted_bytes,
           "the measured chain workspace must hold the predicted peak");
    expect(workspace_of(evaluate_labels) - predicted_bytes < 4096,
           "the workspace must not exceed the prediction by more than allocator padding");
    // Kokkos puts a header before every allocation (label, reference count); the hook reports
    // the bytes the View asked for, without it.
    constexpr std::uint64_t header = sizeof(Kokkos::Impl::SharedAllocationHeader);
    const auto page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    const std::uint64_t pages = (measured + header + page - 1) / page;
    std::printf("what the prediction cannot know:\n");
    std::printf("  - the result matrix (%llu bytes here) and the operands: outputs and inputs, not temporaries;\n",
                static_cast<unsigned long long>(m * m * sizeof(float)));
    std::printf("  - allocator overhead: Kokkos adds a %llu-byte header to each allocation, which the hook\n"
                "    does not count; glibc serves blocks of 128 KiB and more with mmap, in whole %llu-byte\n"
                "    pages: %llu + %llu bytes take %llu pages = %llu bytes; ordo asks for 2 MiB huge pages for\n"
                "    its host allocations of 4 MiB and more;\n",
                static_cast<unsigned long long>(header), static_cast<unsigned long long>(page),
                static_cast<unsigned long long>(measured), static_cast<unsigned long long>(header),
                static_cast<unsigned long long>(pages), static_cast<unsigned long long>(pages * page));
    std::printf("  - library workspaces: OpenBLAS packs operands in buffers of its own, allocated outside\n"
                "    Kokkos, so no hook sees them; the portable GEMM's team scratch is Kokkos' and shows up:\n"
                "    %llu bytes live at the peak of that call, against %llu for the workspace alone;\n",
                static_cast<unsigned long long>(portable_peak), static_cast<unsigned long long>(workspace_of(portable_labels)));
    std::printf("  - and for a network: batch size, dtype, the activations saved for backward, optimizer\n"
                "    state, fragmentation of a caching allocator, the CUDA context.\n");
  }
  if (wrong_results > 0) std::fprintf(stderr, "%d claims did not hold\n", wrong_results);
  return wrong_results == 0 ? 0 : 1;
}
