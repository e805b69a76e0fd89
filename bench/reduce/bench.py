"""ordo::sum's summation policies against a plain Kokkos sum, numpy.sum and math.fsum.

bench_reduce times ordo::sum (2 threads) under each policy and a plain Kokkos::parallel_reduce on float and double
data, uniform in [0, 1) or "wide" (+-[1, 2) * 2^e, e in [-32, 31], mixed signs). numpy regenerates the same data
(checked by checksum) for numpy.sum and math.fsum (1 thread); an integer oracle, independent of ordo and fsum, gives
the correctly rounded sums that every error is counted from.
"""

import fractions
import math
import platform

import ordo_bench as ob

ob.single_threaded_numpy()
import numpy as np  # noqa: E402

TARGETS = ("bench_reduce",)
PYTHON_MODULES = ("numpy",)
WATCH = ("include/ordo/kernels/reduce.hpp", "include/ordo/kernels/detail", "bench/reduce")
DISTS, TYPES, M1, M64, SIZES = ("uniform", "wide"), ("float", "double"), 2**20, 2**26, {2**20: "1M", 2**26: "64M"}
HEAD = sum((["%s: median (min)" % d, "× plain", "error (ulps)", "rel. error"] for d in DISTS), ["contender"])
# Per type: numpy type, bits type, signed bits type, mantissa bits, exponent mask, log2 of a subnormal's last bit.
FORMATS = {"float": (np.float32, np.uint32, np.int32, 23, 0xFF, -149),
           "double": (np.float64, np.uint64, np.int64, 52, 0x7FF, -1074)}
LABELS = {"plain": "plain Kokkos sum (`parallel_reduce`, `s += x(i)`)", "float32(math.fsum)": "`float32(math.fsum)`",
          "exact_double": "ordo `sum<double>`, `exact` (double result)", "numpy.sum": "`numpy.sum` (pairwise, 1 thread)",
          "math.fsum": "`math.fsum` (double result, 1 thread)"}


def options(p):  # min_seconds, min_rounds: of the C++ rounds per case; fsum_budget: seconds of math.fsum runs (<= 5)
    p.set_defaults(sizes="%d,%d" % (M1, M64), seed=20240611, min_seconds=2.0, min_rounds=11, fsum_budget=10.0)


def smoke(args):
    args.sizes, args.min_seconds, args.min_rounds = "4096", 0.0, 1


def make_data(t, dist, seed, n):
    """The data of reduce.cpp, bit for bit."""
    z, u = ob.splitmix64(seed, n), np.uint64
    if dist == "uniform":
        return (z >> u(40)).astype(np.float32) * np.float32(2.0**-24) if t == "float" else (z >> u(11)) * 2.0**-53
    dtype, bits, _, mant, emask, _ = FORMATS[t]
    sign, exponent = (z >> u(63)) << u(8 * np.dtype(dtype).itemsize - 1), u(emask // 2 - 32) + ((z >> u(57)) & u(63))
    return (sign | (exponent << u(mant)) | (z & u(2**mant - 1))).astype(bits).view(dtype)


def exact_sum(x, t):
    """The exact sum of x as N * 2^scale (N a Python int): the significands binned by exponent with
    numpy.bincount (float64 bin sums, exact below 2^53), the bins added as Python integers."""
    u, (_, bits_type, _, mant, emask, _) = np.uint64, FORMATS[t]
    bits = x.view(bits_type).astype(u)
    exponent = ((bits >> u(mant)) & u(emask)).astype(np.int64)  # no inf or nan in these data
    mantissa = (bits & u(2**mant - 1)) | ((exponent != 0).astype(u) << u(mant))
    position = np.maximum(exponent - 1, 0)  # value = mantissa * 2^(position + scale)
    negative, split, total = (bits >> u(8 * x.itemsize - 1)) != 0, 27 if t == "double" else 0, 0
    for part, shift in [(mantissa >> u(split), split), (mantissa & u(2**split - 1), 0)] if split else [(mantissa, 0)]:
        if int(part.max()) * x.size >= 2**53:
            raise ValueError("bin sums would not be exact")
        weights = part.astype(np.float64)
        np.negative(weights, out=weights, where=negative)
        sums = np.bincount(position, weights=weights, minlength=int(position.max()) + 1)
        total += sum(int(sums[p]) << (int(p) + shift) for p in np.flatnonzero(sums))
    return total


def round_exact(N, scale, prec):
    """N * 2^scale rounded to nearest-even with prec significand bits, in integer arithmetic."""
    shift = max(abs(N).bit_length() - prec, 0)
    q, r, half = abs(N) >> shift, abs(N) & ((1 << shift) - 1), (1 << shift) >> 1
    q += shift > 0 and (r > half or (r == half and q & 1))
    return math.ldexp(-q if N < 0 else q, scale + shift)


def ulps(a, b, t):
    """The number of values of type t from a to b."""
    dtype, _, signed, *_ = FORMATS[t]
    (i, j), low = (int(np.array([v], dtype).view(signed)[0]) for v in (a, b)), int(np.iinfo(signed).min)
    return abs((i if i >= 0 else low - i) - (j if j >= 0 else low - j))


def peers(ctx, case, notes):
    """Adds numpy.sum and math.fsum to the case, the errors to every contender, and the checks."""
    n, t, args, name = case["n"], case["type"], ctx.args, case["key"]
    x = make_data(t, case["dist"], case["seed"], n)
    bits = x.view(FORMATS[t][1]).astype(np.uint64)
    if int(np.add.reduce(bits * np.arange(1, 2 * n, 2, dtype=np.uint64), dtype=np.uint64)) != int(case["checksum"]):
        raise SystemExit("bench/reduce: numpy regenerated other data than bench_reduce for %s" % name)
    scale, N = FORMATS[t][5], exact_sum(x, t)
    S = fractions.Fraction(N) * fractions.Fraction(2) ** scale
    rounded = {"double": round_exact(N, scale, 53), "float": round_exact(N, scale, 24)}
    ctx.check(rounded["double"] == N / (1 << -scale), "%s: integer rounding disagrees with int / int division" % name)

    def peer(label, result_type, times, result):
        case["contenders"].append(dict(name=label, result=float(result), result_type=result_type, reps=len(times),
                                       median_s=ob.median(times) if times else None, min_s=min(times, default=None)))
        return result

    peer("numpy.sum", t, *ob.time_calls(lambda: np.sum(x), min_reps=21, max_reps=5000, min_seconds=args.min_seconds/2))
    fsum = peer("math.fsum", "double", *ob.time_calls(lambda: math.fsum(x), min_reps=5, max_reps=5, warm_up=False,
                                                      max_seconds=args.fsum_budget))
    if t == "float":
        peer("float32(math.fsum)", "float", [], np.float32(fsum))
    for c in case["contenders"]:  # the table's cells: median (min), × plain, error in ulps, relative error
        value = float.fromhex(c["result"]) if isinstance(c["result"], str) else c["result"]
        c["ulps"], rel = ulps(value, rounded[c["result_type"]], c["result_type"]), abs(fractions.Fraction(value) - S)
        c["cells"] = ["—", "—"] if c["median_s"] is None else [
            "%s (%s)" % (ob.fmt_time(c["median_s"]), "1 run" if c.get("reps") == 1 else ob.fmt_time(c["min_s"])),
            "%.2f" % (c["median_s"] / case["contenders"][0]["median_s"])]
        c["cells"] += ["**0**" if not c["ulps"] else "%d" % c["ulps"] if c["ulps"] < 1e6 else "%.3g" % c["ulps"],
                       "%.1e" % (rel / abs(S) if S else rel) if rel else "0"]
        ctx.check(c.get("repeatable", True), "%s: %s gave different results across repetitions" % (name, c["name"]))
        ctx.check(c["ulps"] == 0 or c["name"] not in ("exact", "exact_double", "math.fsum", "float32(math.fsum)"),
                  "%s: %s is %d ulps from the integer oracle's correctly rounded sum" % (name, c["name"], c["ulps"]))
    if t == "float":  # can float32(fsum) differ from the correctly rounded float sum (double rounding)?
        f32, ok = np.float32(fsum), float(np.float32(fsum)) == rounded["float"]
        other = np.nextafter(f32, np.float32(np.inf if fsum > f32 else -np.inf))
        notes.append("%s: float32(math.fsum) %s the correctly rounded float sum (%s)." % (
            name, "equals" if ok else "DIFFERS from",
            "the exact sum is a double, so fsum returned it unrounded and the float conversion rounds once"
            if fractions.Fraction(fsum) == S else
            "the exact sum is not a double and rounding fsum's double to float rounded twice" if not ok else
            "fsum's double is halfway between two floats and ties-to-even happened to pick the correctly rounded one"
            if (float(f32) + float(other)) / 2 == fsum else
            "the exact sum is not a double: fsum rounded it and the float conversion rounded again, harmlessly "
            "because fsum's double is not halfway between two floats"))
    if n <= M1:  # fsum on a list of Python floats (the conversion not timed), for reference
        values = x.tolist()
        times, _ = ob.time_calls(lambda: math.fsum(values), min_reps=3, max_reps=5)
        notes.append("%s: `math.fsum` on a list of Python floats (`x.tolist()` not timed) takes %.3g ms." % (
            name, ob.median(times) * 1e3))


def summaries(cases):
    """The goals with verdicts, and the observations: time per element and thread of each C++ contender."""
    def time(case, name, base="plain"):  # the median time of name, over that of base (None: 1 s)
        return case["by"][name]["median_s"] / (case["by"][base]["median_s"] if base else 1)

    def per_element(case, name):  # ns per element and thread
        return time(case, name, None) * ob.THREADS / case["n"] * 1e9

    goals, out = [], []
    small = [c for c in cases if c["n"] == M1 and c["type"] == "float"]
    if small:
        r = time(next((c for c in small if c["dist"] == "uniform"), small[0]), "exact", "numpy.sum")
        goals.append("- **`exact` <= 1.5× `numpy.sum`'s time at 1M float: %s** on uniform data (%s; exact on 2 "
                     "threads, numpy on 1)." % ("met" if r <= 1.5 else "NOT met", "; ".join(
                         "%s: %.2f×" % (c["dist"], time(c, "exact", "numpy.sum")) for c in small)))
    big = [c for c in cases if c["n"] == M64]
    if big:
        goals.append("- **`exact` <= 1.2× the plain Kokkos sum at 64M: %s** (%s)." % (
            "met on every case" if all(time(c, "exact") <= 1.2 for c in big) else "met on uniform data, not on wide "
            "data" if all(time(c, "exact") <= 1.2 for c in big if c["dist"] == "uniform") else "NOT met",
            "; ".join("%s %s: %.2f×" % (c["type"], c["dist"], time(c, "exact")) for c in big)))
    if big:  # issue 29: with the CPU's best kernels (AVX-512 where it has it)
        goals.append("- **`exact` <= 1.1× `pairwise` at 64M (issue 29; exact sum's kernels: %s): %s** (%s)." % (
            "/".join(sorted({c["exact_kernels"] for c in big})),
            "met on every case" if all(time(c, "exact", "pairwise") <= 1.1 for c in big) else "met on %d of %d cases" % (
                sum(time(c, "exact", "pairwise") <= 1.1 for c in big), len(big)),
            "; ".join("%s %s: %.2f×" % (c["type"], c["dist"], time(c, "exact", "pairwise")) for c in big)))
    for name in ("kahan", "neumaier"):
        failed = sum(time(c, name) > 1.1 for c in cases)
        goals.append("- **`%s` <= 1.1× plain: %s** (%s)." % (
            name, "met on %d of %d cases" % (len(cases) - failed, len(cases)) if failed else "met on every case",
            "; ".join("%s: %.2f×" % (c["key"], time(c, name)) for c in cases)))
    big = {(c["type"], c["dist"]): c for c in cases if c["n"] == M64}
    small = {(c["type"], c["dist"]): c for c in cases if c["n"] == M1}
    if ("float", "uniform") in big and ("double", "uniform") in big:
        f, d = big[("float", "uniform")], big[("double", "uniform")]
        out.append("- At 64M (uniform data) the plain Kokkos sum reads %.1f GB/s (float) and %.1f GB/s (double); ordo "
                   "`pairwise` reads %.1f and %.1f GB/s." % tuple(c["n"] * (4 if c is f else 8) / time(c, k, None) / 1e9
                                                                  for k in ("plain", "pairwise") for c in (f, d)))
    pairs = [(small[k], big[k]) for k in big if k in small]
    for name in ("exact", "neumaier") if pairs else ():
        r = [per_element(b, name) / per_element(a, name) for a, b in pairs]
        out.append("- ordo `%s`: time per element at 64M within %.0f%% of its time at 1M." % (
            name, 100 * (max(max(r), 1 / min(r)) - 1)))
    order = sorted(cases, key=lambda c: (TYPES.index(c["type"]), DISTS.index(c["dist"]), c["n"]))
    names = [k["name"] for k in cases[0]["contenders"] if k["name"] not in LABELS or k["name"] == "plain"]
    return goals, ["### Observations", "", "Median time × %d threads / n, in ns per element and thread:" % ob.THREADS,
                   "", ob.table(["contender"] + [c["key"] for c in order], [
                       [LABELS.get(k, "ordo `%s`" % k).split(" (")[0]] + ["%.2f" % per_element(c, k) for c in order]
                       for k in names])] + [""] * bool(out) + out + [""]


def half_section(ctx, halves, goals):
    """16-bit storage: the exact sum of the uniform float data rounded to half, against the exact sum of the same
    values stored as float, with the dispatched kernels and with the baseline's (ORDO_CPU_CAPABILITY=baseline)."""
    if not halves:
        return []
    rows = []
    for h in halves:
        ctx.check(h["same_bits"], "%s half: the half and float exact sums of the same values differ" % h["n"])
        rows.append([SIZES.get(h["n"], h["n"]), ob.fmt_time(h["half_s"]), ob.fmt_time(h["float_s"]),
                     "%.2f" % (h["half_s"] / h["float_s"]), ob.fmt_time(h["half_baseline_s"]),
                     ob.fmt_time(h["float_baseline_s"]), "%.2f" % (h["half_baseline_s"] / h["float_baseline_s"]),
                     "%s%s" % (h["exact_kernels"], " + F16C" if h["f16c"] else ""),
                     "yes" if h["same_bits"] else "**NO**"])
    big = halves[-1]
    ratio = big["half_s"] / big["float_s"]
    goals.append("- **`exact` on half <= 1.2× float's time on the same values at %s: %s** (%.2f×; with the baseline "
                 "kernels, no F16C: %.2f×)." % (SIZES.get(big["n"], big["n"]), "met" if ratio <= 1.2 else "NOT met",
                                                ratio, big["half_baseline_s"] / big["float_baseline_s"]))
    return ["### 16-bit storage: half", "",
            "The uniform float data rounded to `ordo::half`; float: the same values stored as float. Dispatched: the "
            "kernels chosen at run time (AVX2, and F16C's `vcvtph2ps` to widen half, where the CPU has them); "
            "baseline: `ORDO_CPU_CAPABILITY=baseline` (SSE2, half widened by integer operations). Medians of "
            "interleaved rounds.", "",
            ob.table(["n", "half", "float", "half / float", "half, baseline", "float, baseline", "half / float",
                      "kernels", "same bits"], rows), ""]


def measure(ctx):
    a = ctx.args
    lines_in = ctx.driver("bench_reduce", "--sizes", a.sizes, "--seed", a.seed, "--min-rounds", a.min_rounds,
                          "--min-seconds", a.min_seconds)
    halves = sorted((c for c in lines_in if c["type"] == "half"), key=lambda c: c["n"])
    cases = sorted((c for c in lines_in if c["type"] != "half"), key=lambda c: c["n"])
    notes = []
    for case in cases:
        case["key"] = "%s %s %s" % (SIZES.get(case["n"], case["n"]), case["type"], case["dist"])
        peers(ctx, case, notes)
        case["by"] = {c["name"]: c for c in case["contenders"]}

    goals, observations = summaries(cases)
    half_lines = half_section(ctx, halves, goals)
    lines = ["### Goals", "", *goals, ""]
    for n in sorted({c["n"] for c in cases}):
        for t in TYPES:
            cs = {c["dist"]: c for c in cases if c["n"] == n and c["type"] == t}
            lines += ["### %s %s (%d MB)" % (SIZES.get(n, n), t, n * (4 if t == "float" else 8) // 2**20), "",
                      ob.table(HEAD, [[LABELS.get(k, "ordo `%s`" % k)] + cs["uniform"]["by"][k]["cells"]
                                      + cs["wide"]["by"][k]["cells"] for k in cs["uniform"]["by"]]), "",
                      "C++ rounds: %s; numpy.sum repetitions: %s; math.fsum runs: %s." % tuple(", ".join(
                          "%s %d" % (d, cs[d]["by"][k]["reps"] if k else cs[d]["rounds"]) for d in DISTS)
                          for k in (None, "numpy.sum", "math.fsum")), ""]
    lines += half_lines
    lines += observations + ["### Checks", ""] + ["- %s" % p for p in ctx.problems or [
        "ordo `exact` (float and double results), `math.fsum` and the integer oracle agree bitwise on every case; "
        "every C++ contender returned the same bits in every repetition."]] + ["- %s" % note for note in notes]
    lines += ["", "- Data seed %d; %d OpenMP threads for the C++ contenders, numpy and fsum on 1. ordo's exact sum ran "
              "its %s block kernels (chosen at run time)." % (
                  a.seed, ob.THREADS, "/".join(sorted({c["exact_kernels"] for c in cases})))]
    software = "%s, `-O3 -DNDEBUG` (CMake Release, no `-march`), Kokkos 3.4.01 (OpenMP); Python %s, numpy %s" % (
        ob.machine()["cxx"], platform.python_version(), np.__version__)
    return [ob.Section("reduce", "\n".join(lines), software)]
