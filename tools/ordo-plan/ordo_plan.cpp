// ordo-plan: plans a matrix chain from the command line with ordo::plan_chain and prints the
// order, its cost, a JSON object or a Graphviz tree. Usage, formats and exit codes are in
// docs/ordo-plan.md; `ordo-plan --help` prints the same summary.
//
// Pure C++20 on ordo::core (no Kokkos), so it builds in every configuration of ordo.

#include <ordo/core/chain.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#ifndef ORDO_PLAN_VERSION
#define ORDO_PLAN_VERSION "unknown"
#endif

namespace {

constexpr int exit_success = 0;
constexpr int exit_failure = 1;  // out of memory, standard output not writable
constexpr int exit_usage = 2;    // bad options, bad dims, a number that does not fit in 64 bits

constexpr std::string_view help_text =
    R"(usage: ordo-plan [options] [--] d0 d1 ... dn
       ordo-plan [options] < dims.txt

Plans the product A1 A2 ... An of n matrices, where Ai is d(i-1) x d(i), with
ordo::plan_chain: the order of the products that needs the fewest scalar
multiplications. Dims come from the arguments or, when no argument holds one, from
standard input; whitespace and commas separate them (commas never group digits:
write 1000, not 1,000). A dim is a non-negative integer below 2^64; 0 is legal.

options:
  --planner NAME  dynamic_programming  CLRS 15.2, O(n^3); ties to the smallest split
                  hu_shing             Hu and Shing, exact, O(n log n)
                  approximate          Hu and Shing, O(n), cost at most 2/sqrt(3) x optimal
                  automatic            the DP up to 32 matrices, Hu-Shing beyond (default)
  --json          print a JSON object instead of text
  --dot           print the plan tree as a Graphviz digraph (ordo-plan --dot ... | dot -Tpng)
  --stats         also print the planning time, the number of matrices and products and the
                  tree's height (not with --dot)
  --cost-only     leave out the order (text and JSON): for long chains, whose order line is
                  about 10 bytes a matrix (not with --dot)
  --help, -h      print this help and exit
  --version       print the version and exit
  --              everything after it is a dim

output (text):
  order: (A1(A2A3))   cost: 30,000 mults (left-to-right 500,000, 16.7x less)   flops: 60,000
  peak temporary: 100 elements

  cost is the number of scalar multiplications of the planned order, flops twice that,
  left-to-right the cost of ((A1 A2) A3) ... An, and peak temporary the most intermediate
  elements alive at once (operands and the result excluded).

exit status: 0 success; 1 out of memory or standard output not writable;
2 a bad option, a bad or missing dim, or a dim or optimal cost beyond 64 bits. A left-to-right
cost, flop count or peak beyond 64 bits prints as "beyond 64 bits" (JSON: null).
Errors are one line on standard error. Details: docs/ordo-plan.md.
)";

// An error in what the user gave: one line on stderr, exit status 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class output_format { text, json, dot };

enum class planner_choice { automatic, dynamic_programming, hu_shing, approximate };

constexpr std::string_view planner_name(planner_choice p) {
  switch (p) {
    case planner_choice::dynamic_programming: return "dynamic_programming";
    case planner_choice::hu_shing: return "hu_shing";
    case planner_choice::approximate: return "approximate";
    case planner_choice::automatic: break;
  }
  return "automatic";
}

struct options {
  output_format format = output_format::text;
  planner_choice planner = planner_choice::automatic;
  bool stats = false;
  bool cost_only = false;  // no order: for chains whose order line would be megabytes
  bool help = false;
  bool version = false;
  std::vector<std::string_view> dim_arguments;
};

// A token as it may appear inside a one-line message: control and non-ASCII bytes escaped (a
// stray \r or NUL must not break the line), and long garbage cut short.
std::string quoted(std::string_view token) {
  constexpr std::size_t shown = 40;
  std::string out = "'";
  for (std::size_t i = 0; i < token.size() && i < shown; ++i) {
    const auto byte = static_cast<unsigned char>(token[i]);
    if (byte < 0x20 || byte >= 0x7f || byte == '\\') {
      constexpr std::string_view hex = "0123456789abcdef";
      out += "\\x";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += static_cast<char>(byte);
    }
  }
  if (token.size() > shown) out += "...";
  out += "'";
  return out;
}

options parse_options(std::span<char* const> arguments) {
  options parsed;
  bool only_dims = false;
  const auto set_format = [&](output_format format) {
    if (parsed.format != output_format::text && parsed.format != format) {
      throw usage_error("--json and --dot cannot be combined (choose one output format)");
    }
    parsed.format = format;
  };
  const auto set_planner = [&](std::string_view name) {
    for (const planner_choice p : {planner_choice::dynamic_programming, planner_choice::hu_shing,
                                   planner_choice::approximate, planner_choice::automatic}) {
      if (name == planner_name(p)) {
        parsed.planner = p;
        return;
      }
    }
    throw usage_error("unknown planner " + quoted(name) +
                      " (expected dynamic_programming, hu_shing, approximate or automatic)");
  };
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    const std::string_view arg = arguments[i];
    // "-5" is a negative dim, not an option: the dim parser names the problem.
    const bool looks_like_option = arg.size() > 1 && arg[0] == '-' && !(arg[1] >= '0' && arg[1] <= '9');
    if (only_dims || !looks_like_option) {
      parsed.dim_arguments.push_back(arg);
    } else if (arg == "--") {
      only_dims = true;
    } else if (arg == "--help" || arg == "-h") {
      parsed.help = true;
      return parsed;  // --help wins over anything after it
    } else if (arg == "--version") {
      parsed.version = true;
    } else if (arg == "--json") {
      set_format(output_format::json);
    } else if (arg == "--dot") {
      set_format(output_format::dot);
    } else if (arg == "--stats") {
      parsed.stats = true;
    } else if (arg == "--cost-only") {
      parsed.cost_only = true;
    } else if (arg == "--planner") {
      if (i + 1 == arguments.size()) {
        throw usage_error("--planner needs a name (dynamic_programming, hu_shing, approximate or automatic)");
      }
      set_planner(arguments[++i]);
    } else if (arg.starts_with("--planner=")) {
      set_planner(arg.substr(std::string_view("--planner=").size()));
    } else {
      throw usage_error("unknown option " + quoted(arg) + " (see ordo-plan --help)");
    }
  }
  if (parsed.cost_only && parsed.format == output_format::dot) {
    throw usage_error("--cost-only cannot be combined with --dot (the graph is the order)");
  }
  if (parsed.stats && parsed.format == output_format::dot) {
    throw usage_error("--stats cannot be combined with --dot (a Graphviz graph has no place for timings)");
  }
  return parsed;
}

std::size_t parse_dim(std::string_view token) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  if (token.size() > 1 && token[0] == '-' && std::all_of(token.begin() + 1, token.end(), is_digit)) {
    throw usage_error(quoted(token) + " is negative (a dimension is a non-negative integer)");
  }
  if (!std::all_of(token.begin(), token.end(), is_digit)) {
    throw usage_error(quoted(token) + " is not a dimension (expected a non-negative integer)");
  }
  // A leading zero is almost always a thousands separator gone wrong: "1,000" reads as 1 and 000.
  if (token.size() > 1 && token[0] == '0') {
    throw usage_error(quoted(token) +
                      " has a leading zero (commas separate dims, so write 1000, not 1,000)");
  }
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (error == std::errc::result_out_of_range || value > std::numeric_limits<std::size_t>::max()) {
    throw usage_error(quoted(token) + " is too large (a dimension is at most " +
                      std::to_string(std::numeric_limits<std::size_t>::max()) + ")");
  }
  if (error != std::errc{} || end != token.data() + token.size()) {
    throw usage_error(quoted(token) + " is not a dimension (expected a non-negative integer)");
  }
  return static_cast<std::size_t>(value);
}

constexpr bool is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == ',';
}

// Appends the dims in text; where names the source in error messages ("standard input line"),
// or is empty for command-line arguments, which the user can see.
void append_dims(std::string_view text, std::string_view where, std::vector<std::size_t>& dims) {
  std::size_t line = 1;
  std::size_t i = 0;
  while (i < text.size()) {
    if (is_separator(text[i])) {
      if (text[i] == '\n') ++line;
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < text.size() && !is_separator(text[end])) ++end;
    try {
      dims.push_back(parse_dim(text.substr(i, end - i)));
    } catch (const usage_error& e) {
      if (where.empty()) throw;
      throw usage_error(std::string(where) + " " + std::to_string(line) + ": " + e.what());
    }
    i = end;
  }
}

std::string read_standard_input() {
  std::string text;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, stdin)) > 0) text.append(buffer, got);
  if (std::ferror(stdin)) throw std::runtime_error("cannot read standard input");
  return text;
}

// 30000 -> "30,000".
std::string grouped(std::uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// How the planned cost compares with left-to-right evaluation, for the text output. The ratio is
// rounded to one decimal from doubles; no ratio is shown when either cost is 0.
std::string comparison(std::uint64_t cost, std::uint64_t left_to_right) {
  if (cost == left_to_right) return "the same";
  if (cost == 0) return "avoided entirely";
  if (left_to_right == 0) return "more";  // approximate: a cost where none was needed
  const bool less = cost < left_to_right;
  const double ratio = less ? static_cast<double>(left_to_right) / static_cast<double>(cost)
                            : static_cast<double>(cost) / static_cast<double>(left_to_right);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", ratio);
  const std::string_view text = buffer;
  const std::size_t point = text.find('.');
  return grouped(std::stoull(std::string(text.substr(0, point)))) + std::string(text.substr(point)) +
         (less ? "x less" : "x more");
}

std::string seconds(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6f", value);
  return buffer;
}

struct planned {
  ordo::chain_plan<ordo::dynamic> plan;
  std::string_view algorithm;  // what ran: automatic resolves to the DP or Hu-Shing
};

planned plan_with(std::span<const std::size_t> dims, planner_choice choice) {
  switch (choice) {
    case planner_choice::dynamic_programming:
      return {ordo::plan_chain(dims, ordo::planner::dynamic_programming), "dynamic_programming"};
    case planner_choice::hu_shing:
      return {ordo::plan_chain(dims, ordo::planner::hu_shing), "hu_shing"};
    case planner_choice::approximate:
      return {ordo::plan_chain(dims, ordo::planner::approximate), "approximate"};
    case planner_choice::automatic: break;
  }
  return {ordo::plan_chain(dims, ordo::planner::automatic),
          dims.size() - 1 <= ordo::planner::automatic_dp_limit ? "dynamic_programming" : "hu_shing"};
}

// --cost-only: the planner's tree summarized without building the plan's products and order
// (10^7 matrices: 720 MB of products and a 99 MB order otherwise).
struct summarized {
  ordo::detail::tree_summary summary;
  std::string_view algorithm;
};

summarized summarize_with(std::span<const std::size_t> dims, planner_choice choice) {
  const auto summarize = [&](auto tag, std::string_view algorithm) {
    const ordo::detail::preorder_splits splits = ordo::detail::planned_splits(dims, tag);
    summarized s{ordo::detail::summarize_tree(dims, splits), algorithm};
    if (s.summary.cost == ordo::detail::saturated_cost) {
      throw ordo::chain_overflow_error("ordo-plan: the planned cost does not fit in 64 bits");
    }
    return s;
  };
  switch (choice) {
    case planner_choice::dynamic_programming: return summarize(ordo::planner::dynamic_programming, "dynamic_programming");
    case planner_choice::hu_shing: return summarize(ordo::planner::hu_shing, "hu_shing");
    case planner_choice::approximate: return summarize(ordo::planner::approximate, "approximate");
    case planner_choice::automatic: break;
  }
  return summarize(ordo::planner::automatic,
                   dims.size() - 1 <= ordo::planner::automatic_dp_limit ? "dynamic_programming" : "hu_shing");
}

// The numbers the tool prints beside the plan. The cost fits in 64 bits (planning fails
// otherwise); the others may not, for chains whose optimum fits but whose left-to-right order,
// flop count or peak does not (wide dims): those print as "beyond 64 bits" (text) and null
// (JSON) rather than costing the user the plan.
struct plan_numbers {
  std::uint64_t cost = 0;
  std::optional<std::uint64_t> left_to_right_cost, flops, peak_temporary_elements;
};

plan_numbers numbers_of(const ordo::chain_plan<ordo::dynamic>& plan) {
  const auto fitting = [](auto accessor) -> std::optional<std::uint64_t> {
    try {
      return accessor();
    } catch (const ordo::chain_overflow_error&) {
      return std::nullopt;
    }
  };
  return {plan.cost(), fitting([&] { return plan.left_to_right_cost(); }), fitting([&] { return plan.flops(); }),
          fitting([&] { return plan.peak_temporary_elements(); })};
}

// The same numbers from a summary.
plan_numbers numbers_of(std::span<const std::size_t> dims, const ordo::detail::tree_summary& summary) {
  const auto fitting = [](ordo::detail::cost_type value) -> std::optional<std::uint64_t> {
    if (value == ordo::detail::saturated_cost) return std::nullopt;
    return value;
  };
  return {summary.cost, fitting(ordo::detail::left_to_right_cost(dims, ordo::detail::diagonal_ranges({}))),
          fitting(summary.cost > ordo::detail::saturated_cost / 2 ? ordo::detail::saturated_cost : 2 * summary.cost),
          fitting(summary.peak_elements)};
}

// A number that may not fit in 64 bits, as the text output prints it.
std::string grouped(const std::optional<std::uint64_t>& value) {
  return value ? grouped(*value) : std::string("beyond 64 bits");
}
std::string json_number(const std::optional<std::uint64_t>& value) {
  return value ? std::to_string(*value) : std::string("null");
}

// Products on the longest path from the root to an operand.
std::size_t tree_height(const ordo::chain_plan<ordo::dynamic>& plan) {
  const std::size_t n = plan.matrices();
  std::vector<std::size_t> height(2 * n - 1, 0);
  // products() is in post-order: both factors come before their product.
  for (std::size_t p = 0; p < plan.products().size(); ++p) {
    const ordo::planned_product& pr = plan.products()[p];
    height[n + p] = 1 + std::max(height[pr.left], height[pr.right]);
  }
  return height[plan.root()];
}

struct timings {
  double read_seconds = 0;
  double planning_seconds = 0;
};

std::string shape(std::size_t rows, std::size_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

std::string node_name(const ordo::chain_plan<ordo::dynamic>& plan, std::size_t node) {
  return plan.is_operand(node) ? "A" + std::to_string(node + 1)
                               : "P" + std::to_string(node - plan.matrices() + 1);
}

// What the text and JSON outputs print besides the numbers: from a plan, or, for --cost-only,
// from the tree's summary (no products or order built).
struct plan_facts {
  std::string_view order;  // empty with --cost-only
  std::size_t matrices = 0, products = 0, height = 0;
};

plan_facts facts_of(const ordo::chain_plan<ordo::dynamic>& plan, const options& opts) {
  return {plan.order(), plan.matrices(), plan.products().size(), opts.stats ? tree_height(plan) : 0};
}

std::string text_output(const plan_facts& plan, const plan_numbers& n, const options& opts,
                        std::string_view algorithm, const timings& t) {
  std::string out;
  if (!opts.cost_only) {
    out += "order: ";
    out += plan.order;
    out += "   ";
  }
  out += "cost: " + grouped(n.cost) + " mults (left-to-right " + grouped(n.left_to_right_cost) +
         (n.left_to_right_cost ? ", " + comparison(n.cost, *n.left_to_right_cost) : std::string()) +
         ")   flops: " + grouped(n.flops) + "\n";
  out += "peak temporary: " + grouped(n.peak_temporary_elements) +
         (!n.peak_temporary_elements ? "\n" : *n.peak_temporary_elements == 1 ? " element\n" : " elements\n");
  if (opts.stats) {
    out += "matrices: " + grouped(plan.matrices) + "   products: " + grouped(plan.products) +
           "   tree height: " + grouped(plan.height) + "\n";
    out += "planner: " + std::string(planner_name(opts.planner)) + " (ran " + std::string(algorithm) +
           ")   read: " + seconds(t.read_seconds) + " s   planning: " + seconds(t.planning_seconds) + " s\n";
  }
  return out;
}

std::string json_output(const plan_facts& plan, const plan_numbers& n, const options& opts,
                        std::string_view algorithm, const timings& t) {
  // The order holds only 'A', digits and parentheses: nothing to escape.
  std::string out = "{\n";
  if (!opts.cost_only) {
    out += "  \"order\": \"";
    out += plan.order;
    out += "\",\n";
  }
  out += "  \"cost\": " + std::to_string(n.cost) + ",\n";
  out += "  \"left_to_right_cost\": " + json_number(n.left_to_right_cost) + ",\n";
  out += "  \"flops\": " + json_number(n.flops) + ",\n";
  out += "  \"peak_temporary_elements\": " + json_number(n.peak_temporary_elements) + ",\n";
  out += "  \"matrices\": " + std::to_string(plan.matrices) + ",\n";
  out += "  \"planner\": \"" + std::string(planner_name(opts.planner)) + "\",\n";
  out += "  \"algorithm\": \"" + std::string(algorithm) + "\"";
  if (opts.stats) {
    out += ",\n  \"stats\": {\n";
    out += "    \"products\": " + std::to_string(plan.products) + ",\n";
    out += "    \"tree_height\": " + std::to_string(plan.height) + ",\n";
    out += "    \"read_seconds\": " + seconds(t.read_seconds) + ",\n";
    out += "    \"planning_seconds\": " + seconds(t.planning_seconds) + "\n  }";
  }
  out += "\n}\n";
  return out;
}

// Leaves A1..An are boxes labelled with their shapes; product Pk (the k-th in evaluation order)
// is an ellipse labelled with the operands it covers, its shape and its own multiplications.
// ordering=out keeps each product's left factor on the left.
std::string dot_output(const ordo::chain_plan<ordo::dynamic>& plan, const plan_numbers& n) {
  std::string out = "digraph ordo_plan {\n";
  out += "  label=\"" + std::string(plan.order().size() <= 200 ? plan.order() : std::string_view("plan")) +
         ": " + grouped(n.cost) + " mults\";\n";
  out += "  ordering=out;\n";
  const auto dims = plan.dims();
  for (std::size_t i = 0; i < plan.matrices(); ++i) {
    out += "  A" + std::to_string(i + 1) + " [shape=box, label=\"A" + std::to_string(i + 1) + "\\n" +
           shape(dims[i], dims[i + 1]) + "\"];\n";
  }
  for (std::size_t p = 0; p < plan.products().size(); ++p) {
    const ordo::planned_product& pr = plan.products()[p];
    const std::string name = node_name(plan, plan.matrices() + p);
    out += "  " + name + " [shape=ellipse, label=\"A" + std::to_string(pr.first + 1) + "..A" +
           std::to_string(pr.last + 1) + "\\n" + shape(pr.rows, pr.cols) + "\\n" +
           grouped(pr.multiplications()) + " mults\"];\n";
    out += "  " + name + " -> " + node_name(plan, pr.left) + ";\n";
    out += "  " + name + " -> " + node_name(plan, pr.right) + ";\n";
  }
  out += "}\n";
  return out;
}

int run(std::span<char* const> arguments) {
  const options opts = parse_options(arguments);
  if (opts.help) {
    std::fwrite(help_text.data(), 1, help_text.size(), stdout);
    return exit_success;
  }
  if (opts.version) {
    std::puts("ordo-plan " ORDO_PLAN_VERSION);
    return exit_success;
  }

  using clock = std::chrono::steady_clock;
  timings t;
  const auto read_start = clock::now();
  std::vector<std::size_t> dims;
  std::string_view source = "the arguments";
  // Arguments that hold no dim (none, or only empty strings and separators, as a script's empty
  // "$DIMS" gives) leave the dims to standard input.
  for (const std::string_view arg : opts.dim_arguments) append_dims(arg, "", dims);
  if (dims.empty()) {
    append_dims(read_standard_input(), "standard input line", dims);
    source = "standard input";
  }
  dims.shrink_to_fit();  // push_back's doubling leaves up to 2x: 54 MB for 10^7 dims
  t.read_seconds = std::chrono::duration<double>(clock::now() - read_start).count();
  if (dims.size() < 2) {
    throw usage_error("need at least 2 dims (d0..dn describe n >= 1 matrices), but " + std::string(source) +
                      " held " + std::to_string(dims.size()) + " (see ordo-plan --help)");
  }

  const auto plan_start = clock::now();
  planned result;
  summarized summary;
  const bool summary_only = opts.cost_only && opts.format != output_format::dot;
  try {
    if (summary_only) {
      summary = summarize_with(dims, opts.planner);
    } else {
      result = plan_with(dims, opts.planner);
    }
  } catch (const ordo::chain_overflow_error&) {
    throw usage_error(std::string(opts.planner == planner_choice::approximate ? "the approximate plan's cost"
                                                                               : "the optimal cost") +
                      " does not fit in 64 bits (scalar multiplications); the dims are too large");
  } catch (const std::bad_alloc&) {
    const bool dp = opts.planner == planner_choice::dynamic_programming ||
                    (opts.planner == planner_choice::automatic && dims.size() - 1 <= ordo::planner::automatic_dp_limit);
    throw std::runtime_error("out of memory planning " + grouped(dims.size() - 1) + " matrices" +
                             (dp ? " (dynamic_programming keeps n^2 table entries; try --planner hu_shing)" : ""));
  }
  t.planning_seconds = std::chrono::duration<double>(clock::now() - plan_start).count();
  const plan_numbers numbers = summary_only ? numbers_of(dims, summary.summary) : numbers_of(result.plan);
  const plan_facts facts =
      summary_only ? plan_facts{{}, dims.size() - 1, dims.size() - 2, summary.summary.height} : facts_of(result.plan, opts);
  const std::string_view algorithm = summary_only ? summary.algorithm : result.algorithm;

  std::string out;
  switch (opts.format) {
    case output_format::text: out = text_output(facts, numbers, opts, algorithm, t); break;
    case output_format::json: out = json_output(facts, numbers, opts, algorithm, t); break;
    case output_format::dot: out = dot_output(result.plan, numbers); break;
  }
  if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
    std::fputs("ordo-plan: cannot write to standard output\n", stderr);
    return exit_failure;
  }
  return exit_success;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::span<char* const>(argv + 1, argc > 0 ? static_cast<std::size_t>(argc - 1) : 0));
  } catch (const usage_error& e) {
    std::fprintf(stderr, "ordo-plan: %s\n", e.what());
    return exit_usage;
  } catch (const std::bad_alloc&) {
    std::fputs("ordo-plan: out of memory\n", stderr);
    return exit_failure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ordo-plan: %s\n", e.what());
    return exit_failure;
  }
}
