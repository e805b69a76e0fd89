"""Products of several matrices against peers: chain evaluation (chain_eval) and `*` (expression).

bench_chains times hand-ordered OpenBLAS (the floor), ordo, Eigen and Armadillo, this file as a script numpy on
the same inputs (regenerated bit for bit), 2 threads each, the processes in alternating rounds (chain_eval adds
OMP_WAIT_POLICY=passive and draws docs/chain_eval.png); results must agree to 1e-10.
"""

import functools
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ordo_bench as ob  # noqa: E402

TARGETS, WATCH, SEED = ("bench_chains",), ("include", "bench/chains"), 20240601  # SEED: chains.hpp's
PYTHON_MODULES = ("numpy",)
NAMES = {"blas": "hand-ordered OpenBLAS", "ordo_multiply": "ordo (BLAS)", "ordo_portable": "ordo (portable)",
         "ordo": "ordo (dynamic)", "ordo_static": "ordo (static)", "eigen": "Eigen", "armadillo": "Armadillo",
         "numpy_matmul": "numpy `@`", "numpy_multi_dot": "numpy multi_dot", "blas_into": "hand-ordered OpenBLAS, into",
         "ordo_into": "ordo (dynamic), into", "eigen_noalias": "Eigen `.noalias()`, into"}
SECTIONS = {  # cases, smoke cases, C++ contenders, numpy's, diagnostic pass (passive OpenMP threads)
    "chain_eval": ("seed,clrs_x10,six_1000,random_8,random_16", "seed,clrs_x10",
                   "blas,ordo_multiply,ordo_portable,ordo_uninitialized,eigen,armadillo", ["numpy_multi_dot"],
                   "ordo_multiply,ordo_uninitialized"),
    "expression": ("hth_x,hty_xth,m_a_b,a_b_m,a_m1_m2_b,clrs_x10,random_16s", "m_a_b,clrs_x10",
                   "blas,blas_into,blas_hugepages,ordo,ordo_static,ordo_into,eigen,eigen_noalias,armadillo",
                   ["numpy_matmul", "numpy_multi_dot"], None),
}
LABELS = {"random_16s": "random_16"}  # expression's random_16, bench_chains's random_16s
FORMULAS = {"hth_x": ("Hᵀ·H·x", "H x"), "hty_xth": ("Hᵀ·y·xᵀ·H", "H y x"), "m_a_b": ("M·A·B", "M A B"),
            "a_b_m": ("A·B·M", "A B M"), "a_m1_m2_b": ("A·M1·M2·B", "A M1 M2 B")}


def options(p):
    p.add_argument("--sections", default="chain_eval,expression", help="of docs/performance.md, comma-separated")
    # Per round and process, each contender: a pause (settle), then timed runs (>= min_reps, >= block seconds).
    p.set_defaults(rounds=3, block_seconds=0.25, settle_seconds=0.3, min_reps=3)


def smoke(args):
    args.rounds, args.block_seconds, args.settle_seconds, args.min_reps = 1, 0.0, 0.0, 1


class Results:
    """A section's records, samples merged over the rounds; res(case, contender, diagnostic): statistics."""

    def __init__(self):
        self.samples, self.diffs, self.cases, self.info = {}, {}, {}, {}

    def add(self, records, diagnostic=False):
        for r in records:
            if "contender" in r:
                key = r["case"], r["contender"]
                self.samples.setdefault((diagnostic, *key), []).extend(r["samples"])
                self.diffs[key] = max(self.diffs.get(key, 0.0), r["difference"])
            else:
                (self.cases.setdefault(r["case"], r) if "case" in r else self.info.update(r))

    def __call__(self, case, contender, diagnostic=False):
        return ob.summary(self.samples[(diagnostic, case, contender)])


def measure(ctx):
    return [measure_section(ctx, ctx.args, name) for name in ctx.args.sections.split(",")]


def measure_section(ctx, a, name):
    """One section: rounds of bench_chains (and its passive pass) and numpy, checks, plot, text."""
    cases, smoke_cases, cpp, numpy, diagnostic = SECTIONS[name]
    cases = (smoke_cases if a.smoke else cases).split(",")
    kinds = ["cpp", "diagnostic", "numpy"] if diagnostic else ["cpp", "numpy"]
    res = Results()
    with tempfile.TemporaryDirectory(prefix="chains_") as tmp:
        timing = ["--block-seconds", a.block_seconds, "--settle-seconds", a.settle_seconds, "--min-reps", a.min_reps]
        for r in range(a.rounds):
            for kind in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:  # C++ first: numpy needs its results
                ob.log("%s round %d/%d: %s (load average %.2f)" % (name, r + 1, a.rounds, kind, ob.loadavg()))
                if kind == "numpy":
                    spec = dict(cases=[res.cases[c] for c in cases], contenders=numpy, timing=timing[1::2], folder=tmp)
                    res.add(ob.json_lines(ob.run(["/usr/bin/python3", __file__], input=json.dumps(spec),
                                                 stdout=subprocess.PIPE, text=True, env=ob.thread_env()).stdout))
                    continue
                passive = dict(OMP_WAIT_POLICY="passive") if kind == "diagnostic" else {}
                res.add(ctx.driver("bench_chains", "--cases", ",".join(cases), "--contenders",
                                   diagnostic if passive else cpp, "--rotate", r, "--out-dir", tmp, *timing, **passive),
                        bool(passive))
    for (case, contender), d in sorted(res.diffs.items()):
        ctx.check(d < 1e-10, "%s %s: relative difference %.2g from hand-ordered OpenBLAS" % (case, contender, d))
    if name == "chain_eval":
        plot(res, cases, ctx.loads[0], os.path.join(*(
            (ob.BUILD, "chain_eval_smoke.png") if a.no_docs else (ob.ROOT, "docs", "chain_eval.png"))))
    i = res.info
    lines = (chain_eval_text if name == "chain_eval" else expression_text)(res, [res.cases[c] for c in cases]) + [
        "- %s%d rounds; per round and process each contender gets a %g s pause, one warm-up run, then timed runs until "
        ">= %d runs and >= %g s (at most 2000)." % ("Seed %d. " % SEED if name == "chain_eval" else "", a.rounds,
                                                   a.settle_seconds, a.min_reps, a.block_seconds),
        "- Threads: OMP_NUM_THREADS=2 (Kokkos::OpenMP concurrency %d), OPENBLAS_NUM_THREADS=2 "
        "(openblas_get_num_threads() = %d), Eigen::nbThreads() = %d, OMP_PROC_BIND=false." % (
            i["kokkos_threads"], i["openblas_threads"], i["eigen_threads"])]
    software = ("%s, `-O3 -DNDEBUG -march=native` (CMake Release); Kokkos %s; Eigen %s; Armadillo %s; %s; Python %s, "
                "numpy %s" % (ob.machine()["cxx"], i["kokkos"], i["eigen"], i["armadillo"].split(" ")[0],
                              i["openblas"].strip(), i["python"], i["numpy"]))
    return ob.Section(name, "\n".join(lines), software)


def agreement(res):
    return ("Every result agrees with hand-ordered OpenBLAS's to a relative Frobenius difference below 1e-10 "
            "(largest: %.1e)." % max(res.diffs.values()))


def versus(st, case, peer, mine, judged=True, strict=False):
    """(verdict, met) of ordo contender mine against peer: at least as fast (strict: faster); not a goal (met None)
    unless judged (the peer's order takes more multiplications)."""
    p, o = st(case, peer)["median"], st(case, mine)["median"]
    met = (o < p if strict else o <= p) if judged else None
    return "%s %s vs %s %s: %.2fx%s" % (
        NAMES[peer], ob.fmt_time(p), NAMES[mine], ob.fmt_time(o), p / o,
        " (same number of multiplications: not a goal)" if met is None else ", interquartile ranges overlap: within "
        "noise" if not met and st(case, mine)["q1"] <= st(case, peer)["q3"] else ""), met


def within(st, case, mine, floor, goal):
    """(verdict, met) of mine's median at most goal times floor's."""
    m, f = st(case, mine), st(case, floor)
    r = m["median"] / f["median"]
    return "%s / %s %.3fx%s" % (NAMES[mine], NAMES[floor], r, "" if r <= goal or m["q1"] > goal * f["q3"] else
                                " (first quartile within %.2fx of the floor's third: within noise)" % goal), r <= goal


def goal_lines(rows, what):
    """A bullet per (label, [(verdict, met)]) of rows (met None: not a goal), then the overall verdict."""
    ok = [all(m is not False for _, m in v) for _, v in rows]
    return ["- **%s: %s.** %s." % (label, "met" if met else "not met", "; ".join(
        ("**not met:** " if m is False else "") + t for t, m in v)) for (label, v), met in zip(rows, ok)] + [
        "", "**Overall: %s.**" % ("goal met on every " + what if all(ok) else "goal not met everywhere; see above")]


def chain_eval_text(st, chains):
    goal, t = 1.1, ob.fmt_time
    cols = ["blas", "ordo_multiply", "ordo_portable", "eigen", "armadillo", "numpy_multi_dot"]

    def cell(ch, k, stat="median", passive=None):
        m, floor = st(ch["case"], k, bool(passive))[stat], st(ch["case"], "blas", bool(passive))[stat]
        if passive is not None:
            return "%.2fx (%s vs %s)" % (m / floor, t(m), t(floor))
        r = "%.2fx" % (m / floor)
        return r if stat == "min" else "%s (%s)" % (t(m), r if k != "blas" else 1)

    goal_chains = [ch for ch in chains if ch["cost"] >= 10**7]
    lines = [
        ob.table(["chain", "matrices", "optimal mults", "left-to-right mults"] + [NAMES[k] for k in cols],
                 [[ch["case"], len(ch["dims"]) - 1, ob.fmt_count(ch["cost"], " "),
                   ob.fmt_count(ch["left_to_right_cost"], " ")] + [cell(ch, k) for k in cols] for ch in chains]),
        "", agreement(st), "", "![median time over hand-ordered OpenBLAS, per chain and contender](chain_eval.png)", "",
        "### Goals", "",
        "Goal: on every chain with >= 10^7 multiplications (%s), ordo (`ordo::multiply`, BLAS path) is at least as "
        "fast as every peer (Eigen, Armadillo, numpy) and within %.1fx of hand-ordered OpenBLAS." % (
            ", ".join(ch["case"] for ch in goal_chains), goal), "",
    ]
    lines += goal_lines([(ch["case"], [versus(st, ch["case"], peer, "ordo_multiply") for peer in (
        "eigen", "armadillo", "numpy_multi_dot")] + [within(st, ch["case"], "ordo_multiply", "blas", goal)])
        for ch in goal_chains], "chain")
    return lines + [
        "", "### Fastest runs", "", "Each contender's fastest run over hand-ordered OpenBLAS's fastest run:", "",
        ob.table(["chain"] + [NAMES[k] for k in cols[1:]], [[ch["case"]] + [cell(ch, k, "min") for k in cols[1:]]
                                                           for ch in chains]),
        "", "### Diagnostic: ordo's BLAS path and OpenMP's idle threads", "",
        ob.table(["chain", "ordo::multiply / floor", "ordo_uninitialized / floor", "ordo::multiply / floor, passive",
                  "ordo_uninitialized / floor, passive"],
                 [[ch["case"]] + [cell(ch, k, passive=p) for p in (False, True)
                                  for k in ("ordo_multiply", "ordo_uninitialized")] for ch in chains]),
        "", "### Chains", ""] + ["- `%s`: dims %s; optimal order `%s`." % (
            ch["case"], ", ".join(map(str, ch["dims"])), ch["order"]) for ch in chains] + [""]


def armadillo_cost(d):
    """Multiplications of Armadillo 11's order for A1 ... Ak (glue_times_meat.hpp): for k = 3 or 4, (A1...Ak-1)Ak
    when A1...Ak-1 has at most A2...Ak's elements, else A1(A2...Ak), each part by the same rules; for k > 4, the
    first k - 1 operands by these rules, then the last."""
    if len(d) == 3:
        return d[0] * d[1] * d[2]
    if len(d) > 5 or d[0] * d[-2] <= d[1] * d[-1]:
        return armadillo_cost(d[:-1]) + d[0] * d[-2] * d[-1]
    return armadillo_cost(d[1:]) + d[0] * d[1] * d[-1]


def expression_text(st, cases):
    goal, new, into = 1.05, ["blas", "ordo", "ordo_static", "eigen", "armadillo", "numpy_matmul", "numpy_multi_dot"], \
        ["blas_into", "ordo_into", "eigen_noalias"]
    # Each peer, the ordo contender it is held against, and the multiplications of the peer's order.
    peers = [("eigen", "ordo", "left_to_right_cost"), ("armadillo", "ordo", "armadillo"),
             ("numpy_matmul", "ordo", "left_to_right_cost"), ("numpy_multi_dot", "ordo", "cost"),
             ("eigen_noalias", "ordo_into", "left_to_right_cost")]
    floors = [("ordo", "blas"), ("ordo_static", "blas"), ("ordo_into", "blas_into")]
    for c in cases:
        c["label"], c["armadillo"] = LABELS.get(c["case"], c["case"]), armadillo_cost(c["dims"])
        c["formula"], names = FORMULAS.get(c["case"], ("A1·A2·…·A%d" % len(c["shapes"]), None))
        c["names"] = names.split() if names else ["A%d" % (k + 1) for k in range(len(c["shapes"]))]

    def med(c, k):
        return st(c["case"], k)["median"]

    def ratio(c, num, den, bold=False):
        return ("**%.2f**" if bold else "%.2f") % (med(c, num) / med(c, den))

    lines = [
        "### Times", "",
        "Median time; in parentheses its ratio to hand-ordered OpenBLAS's (new results) or to hand-ordered OpenBLAS "
        "into a preallocated result (the three `into` columns). Multiplications: of the optimal order (ordo, "
        "multi_dot, hand-ordered), of left to right (Eigen, `@`) and of Armadillo's order.", "",
        ob.table(["case", "mults: optimal / left to right / Armadillo"] + [NAMES[k] for k in new + into],
                 [["`%s` %s" % (c["label"], c["formula"]),
                   " / ".join("%.3g" % c[k] if c[k] >= 1e6 else ob.fmt_count(c[k], " ")
                              for k in ("cost", "left_to_right_cost", "armadillo"))]
                  + ["%s (%.2fx)" % (ob.fmt_time(med(c, k)), med(c, k) / med(c, floor))
                     for ks, floor in ((new, "blas"), (into, "blas_into")) for k in ks] for c in cases]),
        "", "### Ratios", "",
        "Peer / ordo (above 1: ordo is faster; **bold**: the peer's order takes more multiplications than ordo's) and "
        "ordo / hand-ordered OpenBLAS (goal: at most %.2f)." % goal, "",
        ob.table(["case"] + ["%s / %s" % (NAMES[p], NAMES[m]) for p, m, _ in peers]
                 + ["ordo (dynamic) / OpenBLAS", "ordo (static) / OpenBLAS", "ordo into / OpenBLAS into"],
                 [["`%s`" % c["label"]] + [ratio(c, p, m, c[cost] > c["cost"]) for p, m, cost in peers]
                  + [ratio(c, m, f) for m, f in floors] for c in cases]),
        "", agreement(st), "", "### Goals", "",
        "Goal (issue 17): ordo faster than every peer whose order takes more multiplications, and never slower than "
        "%.2fx hand-ordered OpenBLAS." % goal, "",
    ]
    lines += goal_lines([("`%s`" % c["label"], [versus(st, c["case"], p, m, c[cost] > c["cost"], strict=True)
                                              for p, m, cost in peers]
                          + [within(st, c["case"], m, f, goal) for m, f in floors]) for c in cases], "case")
    return lines + [
        "", "### Diagnostic: allocation", "",
        "Hand-ordered OpenBLAS with its intermediates and result allocated 2 MiB-aligned and advised "
        "`madvise(MADV_HUGEPAGE)` when they reach 4 MiB (what numpy does), over plain hand-ordered OpenBLAS and over "
        "ordo (dynamic):", "",
        ob.table(["case", "huge pages", "/ hand-ordered OpenBLAS", "/ ordo (dynamic)"],
                 [["`%s`" % c["label"], ob.fmt_time(med(c, "blas_hugepages")), ratio(c, "blas_hugepages", "blas"),
                   ratio(c, "blas_hugepages", "ordo")] for c in cases]),
        "", "### Cases", ""] + ["- `%s` = %s: %s; chain dims %s; ordo's order `%s`%s." % (
            c["label"], c["formula"], ", ".join("%s %d×%d" % (n, r, k) for n, (r, k) in zip(c["names"], c["shapes"])),
            ", ".join(map(str, c["dims"])), c["order"], "" if c["static_order"] in ("", c["order"]) else
            "; **static plan differs: `%s`**" % c["static_order"]) for c in cases] + [
        "", "- `random_16`: dims uniform in [16, 2048] from splitmix64 seeded with %d, fixed at compile time. Inputs: "
        "seed %d; numpy regenerates them bit for bit (checked by fingerprint)." % (SEED, SEED)]


def plot(st, chains, load, path):
    """Grouped bars: each contender's median over the floor's, per chain; whiskers: its interquartile range."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    bars = dict(ordo_multiply="#1f77b4", ordo_portable="#aec7e8", eigen="#d62728", armadillo="#2ca02c",
                numpy_multi_dot="#ff7f0e")
    fig, ax = plt.subplots(figsize=(10, 5.2), dpi=120)
    width, top = 0.8 / len(bars), 1.1
    for b, (key, color) in enumerate(bars.items()):
        s = [(st(ch, key), st(ch, "blas")["median"]) for ch in chains]
        top = max([top] + [e["q3"] / f for e, f in s])
        ax.bar([i - 0.4 + width * (b + 0.5) for i in range(len(chains))], [e["median"] / f for e, f in s], width,
               yerr=[[(e["median"] - e["q1"]) / f for e, f in s], [(e["q3"] - e["median"]) / f for e, f in s]],
               label=NAMES[key], color=color, edgecolor="black", linewidth=0.4,
               error_kw={"elinewidth": 0.7, "capsize": 1.5})
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.1, color="black", linewidth=0.8, linestyle="--", label="1.1 x the floor (goal)")
    ax.set(yscale="log", ylim=(None, top * 12), ylabel="median time / hand-ordered OpenBLAS (log scale)",
           xticks=range(len(chains)))  # room above the bars for the legend
    ax.set_xticklabels(["%s\n%d matrices, %.3g mults" % (ch, len(st.cases[ch]["dims"]) - 1, st.cases[ch]["cost"])
                        for ch in chains], fontsize=8)
    ax.set_title("Matrix-chain evaluation, double, 2 threads: time relative to hand-ordered OpenBLAS dgemm (lower is "
                 "better)\nmedians, whiskers = interquartile range; %d-core machine, 1-minute load average %.1f to %.1f"
                 % (ob.machine()["cores"], load, ob.loadavg()), fontsize=9)
    ax.grid(axis="y", which="both", linewidth=0.3, alpha=0.6)
    handles, names = ax.get_legend_handles_labels()  # the goal line last
    ax.legend(handles[1:] + handles[:1], names[1:] + names[:1], fontsize=8, ncol=3, loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    ob.log("wrote", os.path.relpath(path, ob.ROOT))


def numpy_process(spec):
    """numpy on the cases of a bench_chains run (spec["folder"]: its --out-dir); prints its records."""
    import numpy as np

    u, (block, settle, min_reps), folder = np.uint64, spec["timing"], spec["folder"]
    for case in spec["cases"]:
        ops = []
        for k, ((rows, cols), fingerprint) in enumerate(zip(case["shapes"], case["fingerprints"])):
            bits = ob.splitmix64(int(ob.mix64(u(SEED) ^ (u(case["index"]) << u(32)) ^ u(k))), rows * cols)
            m = ((2.0 * (bits >> u(11)).astype(np.float64) * 2.0**-53 - 1.0) * np.sqrt(3.0 / cols)).reshape(rows, cols)
            with np.errstate(over="ignore"):
                mixed = ob.mix64(m.reshape(-1).view(u) ^ (np.arange(m.size, dtype=u) * u(ob.GAMMA)))
            if int(np.sum(mixed, dtype=u)) != fingerprint:
                sys.exit("bench/chains: case %s, operand %d differs from bench_chains's" % (case["case"], k + 1))
            ops.append(m)
        terms = [ops[k].T if t else ops[k] for k, t in case["terms"]]
        reference = np.fromfile(os.path.join(folder, case["case"] + ".f64")).reshape(case["dims"][0], -1)
        calls = {"numpy_matmul": lambda: functools.reduce(np.matmul, terms),
                 "numpy_multi_dot": lambda: np.linalg.multi_dot(terms)}
        for key in spec["contenders"]:
            time.sleep(settle)
            diff = float(np.linalg.norm(calls[key]().reshape(reference.shape) - reference) / np.linalg.norm(reference))
            time.sleep(settle)
            samples = ob.time_calls(calls[key], min_reps=min_reps, max_reps=2000, min_seconds=block,
                                    keep_slow_warm_up=True)[0]
            print(json.dumps(dict(case=case["case"], contender=key, difference=diff, samples=samples)), flush=True)
    print(json.dumps(dict(numpy=np.__version__, python=sys.version.split()[0])))


if __name__ == "__main__":
    numpy_process(json.load(sys.stdin))
