// bench_paired: ordo's side of bench/batch_norm and bench/precision against PyTorch, loaded with ctypes by
// ordo_bench.Paired (which documents the C interface), so that one Python process times ordo and PyTorch on the same
// buffers and OpenMP runtime (libgomp, shared by Kokkos::OpenMP and ATen). A case ("batch_norm nchw|nhwc|bn1d",
// "softmax ROWS COLS float|bfloat16") has arrays (host pointers), facts (JSON) and operations (they fence).

#include "cases.hpp"
#include "../precision/cases.hpp"
#include "bench_support.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

std::string info;

// A case as Python sees it; its functions hold the case object.
struct paired_case {
  std::function<void*(const std::string&, long long&)> data;
  std::string facts = "{}";
  std::vector<std::pair<std::string, std::function<void()>>> ops;
};

template <class V, class... Extents>
paired_case batch_norm(ordo::nn::memory_format layout, Extents... e) {
  const auto b = std::make_shared<bench_bn::batch_norm_case<V>>(layout, e...);
#define BENCH_OP(name) {#name, [b] { b->name(); }}
  return {[b](const std::string& a, long long& size) -> void* {  // a map per call: saved changes in forward
            size = a == "x" || a == "y" || a == "dy" || a == "dx" ? b->n : b->channels;
            const std::map<std::string, void*> arrays{
                {"x", b->x.data()}, {"y", b->y.data()}, {"dy", b->dy.data()}, {"dx", b->dx.data()},
                {"mean", b->saved.mean.data()}, {"invstd", b->saved.invstd.data()}, {"gamma", b->gamma.data()},
                {"beta", b->beta.data()}, {"dgamma", b->dgamma.data()}, {"dbeta", b->dbeta.data()},
                {"running_mean", b->running_mean.data()}, {"running_var", b->running_var.data()}};
            return arrays.count(a) != 0 ? arrays.at(a) : nullptr;
          },
          "{\"elements\": " + std::to_string(b->n) + ", \"channels\": " + std::to_string(b->channels) +
              ", \"inner\": " + std::to_string(b->g.inner) + ", \"work_items\": " + std::to_string(b->p.items()) + "}",
          {BENCH_OP(forward), BENCH_OP(backward), BENCH_OP(reset_running), BENCH_OP(copy), BENCH_OP(statistics),
           BENCH_OP(normalize), BENCH_OP(backward_sums), BENCH_OP(input_gradient)}};
#undef BENCH_OP
}

template <class T>
paired_case softmax(long long rows, long long cols) {
  const auto s = std::make_shared<bench_sm::softmax_case<T>>(rows, cols);
  paired_case pc{[s](const std::string& a, long long& size) -> void* {
    size = s->rows * s->cols;
    return a == "x" ? s->x.data() : a == "y" ? s->y.data() : nullptr;
  }, "{}", {{"softmax", [s] { s->softmax(); }}, {"copy", [s] { s->copy(); }}}};
  if constexpr (std::is_same_v<T, float>) pc.ops.emplace_back("online", [s] { s->online(); });
  return pc;
}

paired_case make(const std::string& spec) {
  using v4 = Kokkos::View<float****, Kokkos::LayoutRight, bench_bn::memory>;
  using v2 = Kokkos::View<float**, Kokkos::LayoutRight, bench_bn::memory>;
  std::istringstream in(spec);
  std::string kind, name;
  long long rows = 0, cols = 0;
  in >> kind;
  if (kind == "batch_norm" && in >> name) {
    if (name == "nchw") return batch_norm<v4>(ordo::nn::channels_first, 32, 64, 56, 56);
    if (name == "nhwc") return batch_norm<v4>(ordo::nn::channels_last, 32, 56, 56, 64);
    if (name == "bn1d") return batch_norm<v2>(ordo::nn::channels_first, 256, 1024);
  }
  if (kind == "softmax" && in >> rows >> cols >> name) {
    if (name == "float") return softmax<float>(rows, cols);
    if (name == "bfloat16") return softmax<ordo::bfloat16>(rows, cols);
  }
  throw std::invalid_argument("bad case: " + spec);
}

paired_case& as_case(void* c) { return *static_cast<paired_case*>(c); }

}  // namespace

extern "C" {

void ordo_paired_finalize() { Kokkos::finalize(); }
void* ordo_paired_new(const char* spec) { return new paired_case(make(spec)); }
void ordo_paired_delete(void* c) { delete &as_case(c); }
void* ordo_paired_data(void* c, const char* array, long long* size) { return as_case(c).data(array, *size); }
const char* ordo_paired_facts(void* c) { return as_case(c).facts.c_str(); }

const char* ordo_paired_initialize() {
  if (!Kokkos::is_initialized()) Kokkos::initialize();
  info = "{\"kokkos_threads\": " + std::to_string(Kokkos::OpenMP().concurrency()) + ", \"ordo_capability\": \"" +
         ordo::detail::to_string(ordo::detail::host_capability()) + "\", \"kokkos\": " +
         std::to_string(KOKKOS_VERSION) + "}";
  return info.c_str();
}

int ordo_paired_op(void* c, const char* name) {
  const auto& ops = as_case(c).ops;
  const auto it = std::find_if(ops.begin(), ops.end(), [&](const auto& op) { return op.first == name; });
  return it == ops.end() ? -1 : static_cast<int>(it - ops.begin());
}
void ordo_paired_run(void* c, int op) { as_case(c).ops[static_cast<std::size_t>(op)].second(); }

int ordo_paired_time(void* c, const char* ops, int min_rounds, int max_rounds, double min_seconds, int warmup,
                     double* samples) {
  std::vector<ordo_bench::timed_item> items;
  for (const std::string& name : ordo_bench::split(ops)) {
    const int k = ordo_paired_op(c, name.c_str());
    if (k < 0) return 0;
    items.push_back({name, as_case(c).ops[static_cast<std::size_t>(k)].second, {}});
  }
  const int rounds = ordo_bench::time_rounds(items, {min_rounds, max_rounds, min_seconds}, warmup).reps;
  for (std::size_t k = 0; k < items.size(); ++k)
    std::copy(items[k].samples.begin(), items[k].samples.end(), samples + k * static_cast<std::size_t>(max_rounds));
  return rounds;
}

}  // extern "C"
