"""Run-time chain planner: ordo::plan_chain against numpy's multi_dot planner, one thread.

plan_chain: ordo's DP against numpy 1.24's pure-Python planner (linalg._multi_dot_matrix_chain_order, on
zero-stride operands: it reads only shapes); checks the cost, every split and cost table entry and the order.
--long (plan_chain_long): Hu-Shing and its O(n) approximation, n = 10^2 .. 10^6, beside the DP and numpy; its
cost must equal theirs, the approximation be within 15.5 %. numpy runs while a run is predicted (n^3) to fit."""

import functools
import platform

import ordo_bench as ob

TARGETS = ("bench_plan_chain",)
PYTHON_MODULES = ("numpy",)
WATCH = ("include", "bench/plan_chain")
SEED, GOAL_N, GOAL_SECONDS, DP_MAX_N = 20240601, 1000, 0.1, 3000
LONG_GOALS = [(1000, 0.002), (1000000, 1.0)]  # Hu-Shing, issue 15
RANGES, RANGE_N, RANGE_GOAL, RANGE_CHECK_N = (10, 1000, 100000, 1000000), 1000000, 0.5, 1000  # issue 30
# Without and with --long: sizes; numpy's largest n, longest predicted run and seconds per size (<= 5 runs).
SIZES = {False: "100,200,400,700,1000,1500,2000", True: "100,300,1000,3000,10000,100000,1000000"}
NUMPY = {False: (700, 90.0, 20.0), True: (3000, 60.0, 60.0)}


def options(p):
    p.add_argument("--long", action="store_true", help="plan_chain_long: Hu-Shing, n = 10^2 .. 10^6")
    p.add_argument("--sizes")
    p.add_argument("--min-reps", type=int, default=5, help="ordo: timed runs per n and planner, at least")
    p.add_argument("--min-seconds", type=float, default=1.0, help="ordo: timed seconds per n and planner, at least")


def smoke(args):
    args.sizes, args.numpy = ("10,100,1000", (100, 60.0, 1.0)) if args.long else ("5,10,50", (50, 90.0, 1.0))
    args.min_reps, args.min_seconds = 1, 0.0


def numpy_runs(rows, too_big, max_n, max_seconds, budget):
    """Plans each row's dims with numpy, n ascending, while allowed: numpy_s (min), numpy_reps, numpy_tables or skip."""
    ob.single_threaded_numpy()
    import numpy as np
    from numpy.linalg import linalg
    zero, previous = np.zeros(()), None
    for r in rows:
        if r["n"] > max_n or "dims" not in r:
            r["skip"] = too_big
        elif previous and previous[1] * (r["n"] / previous[0]) ** 3 > max_seconds:
            r["skip"] = "one run would take over %g s" % max_seconds
        else:
            arrays = [np.broadcast_to(zero, (a, b)) for a, b in zip(r["dims"], r["dims"][1:])]
            times, r["numpy_tables"] = ob.time_calls(lambda: linalg._multi_dot_matrix_chain_order(
                arrays, return_costs=True), min_reps=5, max_reps=5, max_seconds=budget, warm_up=False)
            r["numpy_s"], r["numpy_reps"], previous = min(times), len(times), (r["n"], min(times))
    return np


def disagreements(r, np):
    (s, m), n, problems = r["numpy_tables"], r["n"], []
    if m[0, n - 1] >= 2.0 ** 53 or int(m[0, n - 1]) != r["cost"]:
        problems.append("optimal cost: ordo %d, numpy %r" % (r["cost"], m[0, n - 1]))
    upper = np.triu_indices(n, 1)  # row-major i < j, the driver's order
    for name, ours, theirs in (("split", np.array(r["splits"]), s[upper]),
                               ("cost", np.array(r["costs"], float), m[upper])):
        bad = np.count_nonzero(ours != theirs) if ours.size == theirs.size else theirs.size
        problems += ["%d of %d %s entries differ" % (bad, theirs.size, name)] if bad else []

    def order(i, j):  # numpy's order string in ordo's format (depth < n <= numpy's max_n: recursion is fine)
        return "A%d" % (i + 1) if i == j else "(%s%s)" % (order(i, int(s[i, j])), order(int(s[i, j]) + 1, j))
    if order(0, n - 1) != r["order"]:
        problems.append("order strings differ")
    return problems


def timing(r, reps="reps", seconds="min_s"):
    return "%.3g (min of %d)" % (r[seconds], r[reps])


def software(np):
    return "%s, `-O3 -DNDEBUG` (CMake Release); Python %s, numpy %s" % (
        ob.machine()["cxx"], platform.python_version(), np.__version__)


def measure(ctx):
    a = ctx.args
    sizes, (max_n, max_seconds, budget) = a.sizes or SIZES[a.long], getattr(a, "numpy", NUMPY[a.long])
    run = functools.partial(ctx.driver, "bench_plan_chain", "--seed", SEED, "--min-reps", a.min_reps,
                            "--min-seconds", a.min_seconds, "--planner")  # then the planner, --sizes and more
    if a.long:
        rows = {r["n"]: r for r in run("hu_shing", "--sizes", sizes, "--print-max-n", max_n)}
        for planner, limit in (("approximate", float("inf")), ("dynamic_programming", DP_MAX_N)):
            ns = ",".join(str(n) for n in rows if n <= limit)
            for r in run(planner, "--sizes", ns, "--print-max-n", 0) if ns else []:
                rows[r["n"]][planner] = r
        np, cells, problems = numpy_runs(list(rows.values()), "n > %d" % max_n, max_n, max_seconds, budget), [], []
        for n, hs in rows.items():
            ap, dp, cost = hs["approximate"], hs.get("dynamic_programming"), hs["cost"]
            numpy_cost = hs["numpy_tables"][1][0, n - 1] if "numpy_s" in hs else None
            problems += ["n = %d: %s cost %r, Hu-Shing %d" % (n, k, c, cost)
                         for k, c in (("DP", dp and dp["cost"]), ("numpy", numpy_cost)) if c not in (None, cost)]
            if ap["cost"] * 10000 > cost * 11547 or ap["cost"] < cost:
                problems.append("n = %d: approximation %d against optimum %d" % (n, ap["cost"], cost))
            cells.append([ob.fmt_count(n), timing(hs), timing(dp) if dp else "not run (n > %d)" % DP_MAX_N,
                          timing(hs, "numpy_reps", "numpy_s") if "numpy_s" in hs else "not run (%s)" % hs["skip"],
                          timing(ap), ob.fmt_count(cost), "%.6f" % (ap["cost"] / cost) if cost else "-"])
        verdicts = ["n = %s in <= %g s: **%s** (%.3g s, minimum of %d runs; median %.3g s)" % (
            ob.fmt_count(n), goal, "met" if rows[n]["min_s"] <= goal else "not met", rows[n]["min_s"],
            rows[n]["reps"], rows[n]["median_s"]) for n, goal in LONG_GOALS if n in rows]
        # Issue 30: the same n = 10^6 over dim ranges whose sums leave the 64-bit path; each range's
        # Hu-Shing cost checked against the DP at n = 1000.
        range_n = min(RANGE_N, max(rows))
        range_cells = []
        for hi in RANGES:
            hs_r = run("hu_shing", "--sizes", range_n, "--max-dim", hi, "--print-max-n", 0)[0]
            small = [run(p, "--sizes", RANGE_CHECK_N, "--max-dim", hi, "--print-max-n", 0, "--min-reps", 1,
                         "--min-seconds", 0)[0]["cost"] for p in ("hu_shing", "dynamic_programming")]
            if small[0] != small[1]:
                problems.append("dims in [1, %d], n = %d: Hu-Shing %d, DP %d" % (hi, RANGE_CHECK_N, *small))
            range_cells.append(["[1, %s]" % ob.fmt_count(hi), timing(hs_r), ob.fmt_count(hs_r["cost"]),
                                "**%s**" % ("met" if hs_r["min_s"] <= RANGE_GOAL else "not met")])
        list(map(ctx.fail, problems))
        text = ["**Goals (Hu-Shing, one core, whole `plan_chain`):** %s." % ("; ".join(verdicts) or "not measured"), "",
            ob.table(["n", "Hu-Shing (s)", "DP (s)", "numpy (s)", "approximation (s)", "optimal cost",
                      "approximation / optimum"], cells, "rrrrrrr"), "",
            "- Agreement: %s." % ("**NO**: " + "; ".join(problems) if problems else "Hu-Shing's cost equals the DP's "
                                  "and numpy's wherever they ran, and the approximation is within 15.5 % of it"),
            "- Chains: dims uniform in [1, 1000] from seed %d (the same generator as above). ordo: at least %d runs "
            "and %g s per n and planner; DP for n <= %d; numpy up to 5 runs within %g s, for n <= %d." % (
                SEED, a.min_reps, a.min_seconds, DP_MAX_N, budget, max_n), "",
            "**Wider dims (issue 30: n = %s in <= %g s for any range up to [1, 10^6]).** Sums past 64 bits take "
            "Hu-Shing's 128-bit path; each range's cost agrees with the DP's at n = %d (same generator):" % (
                ob.fmt_count(range_n), RANGE_GOAL, RANGE_CHECK_N), "",
            ob.table(["dims", "Hu-Shing (s)", "optimal cost", "goal"], range_cells, "lrrl")]
        return [ob.Section("plan_chain_long", "\n".join(text), software(np))]

    rows = run("dynamic_programming", "--sizes", sizes, "--tables-max-n", max_n)
    np, cells = numpy_runs(rows, "numpy limited to n <= %d" % max_n, max_n, max_seconds, budget), []
    for r in rows:
        problems = disagreements(r, np) if "numpy_s" in r else []
        list(ctx.fail("n = %d: %s" % (r["n"], p)) for p in problems)
        check = ("**NO**: " + "; ".join(problems) if problems else "yes: cost, all %d split/cost table entries, "
                 "order" % (r["n"] * (r["n"] - 1) // 2)) if "numpy_s" in r else "not run (%s)" % r["skip"]
        cells.append([r["n"], timing(r)] + ([timing(r, "numpy_reps", "numpy_s"), "%.0f x" % (r["numpy_s"] / r["min_s"])]
                                            if "numpy_s" in r else ["not run"] * 2) + [r["cost"], check])
    goal, verdict = next((r for r in rows if r["n"] == GOAL_N), None), "n = %d was not measured." % GOAL_N
    if goal:
        met, median_met = goal["min_s"] <= GOAL_SECONDS, goal["median_s"] <= GOAL_SECONDS
        verdict = "**Goal %s.** ordo plans n = %d in %.3f s (minimum of %d runs; median %.3f s), %s the %.1f s " \
            "target.%s" % ("met" if met else "not met", GOAL_N, goal["min_s"], goal["reps"], goal["median_s"],
                           "within" if met else "above", GOAL_SECONDS, "" if met == median_met else
                           " The median is above the target, so the margin is within this machine's noise." if met
                           else " (The median is within it; the machine is noisy.)")
    largest = max((r for r in rows if "numpy_s" in r), key=lambda r: r["n"], default=None)
    text = ["**Project goal:** plan n = %d in <= %g s on one core. %s" % (GOAL_N, GOAL_SECONDS, verdict), "",
        ob.table(["n", "ordo (s)", "numpy (s)", "speedup (numpy / ordo)", "optimal cost", "ordo = numpy"], cells,
                 "rrrrrl"),
        "", "- Chains: dims uniform in [1, 1000] from seed %d. ordo: at least %d runs and %g s per n; numpy: up to 5 "
        "runs within %g s, for n <= %d (largest n run: %s, %s per run)." % (
            SEED, a.min_reps, a.min_seconds, budget, max_n, largest["n"] if largest else "none",
            "%.3g s" % largest["numpy_s"] if largest else "-")]
    return [ob.Section("plan_chain", "\n".join(text), software(np))]
