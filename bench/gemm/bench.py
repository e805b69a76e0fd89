"""Portable GEMM (ordo::detail::portable_gemm on Kokkos::OpenMP) against OpenBLAS dgemm/sgemm.

bench_gemm (ordo with the baseline x86-64 flags, SSE2) and bench_gemm_native (-march=native) time
C = A * B on column-major n x n matrices, double and float, with 2 threads each, ordo and OpenBLAS
in alternating rounds on the same inputs; each checks that both results agree within k eps. Then
16-bit operands (half, bfloat16) into a float C: bench_gemm's kernels at the level chosen at run
time and forced to the baseline (ORDO_CPU_CAPABILITY=baseline), against sgemm on float copies.
"""

import ordo_bench as ob

TARGETS = ("bench_gemm", "bench_gemm_native", "bench_sum_of_products")
WATCH = ("include/ordo/kernels/detail/portable_gemm.hpp", "bench/gemm")
GOAL_N, GOAL_RATIO = 1024, 0.30


def options(p):
    p.add_argument("--sizes", default="256,512,1024,2048")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min-seconds", type=float, default=2.0, help="per library, size and type, over the rounds")
    p.add_argument("--sum-sizes", default="256,1024,2048", help="n of r = A B + C D (sum of products)")


def smoke(args):
    args.sizes, args.rounds, args.min_seconds, args.sum_sizes = "64", 1, 0.0, "64"


def isa():
    flags = ob.machine()["flags"]
    return "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE2"


def label(variant):
    return "baseline x86-64 (SSE2)" if variant == "baseline" else "`-march=native` (%s)" % isa()


def openblas_isa_note(core):
    """What the OpenBLAS core type means for the vector instructions its dgemm uses."""
    name = core.strip().lower()
    used = ("AVX2" if name in {"haswell", "zen", "skylake", "cooperlake_avx2"}
            else "AVX-512" if name in {"skylakex", "cooperlake", "sapphirerapids"} else None)
    if used is None:
        return ""
    return ", i.e. its %s kernels%s" % (
        used, " (this CPU has %s, which this OpenBLAS build does not use for it)" % isa() if used != isa() else "")


def measure(ctx):
    a = ctx.args
    rows, header = [], {}
    for variant, target in (("baseline", "bench_gemm"), ("native", "bench_gemm_native")):
        records = ctx.driver(target, "--sizes", a.sizes, "--types", "double,float", "--rounds", a.rounds,
                             "--min-reps", 3, "--min-seconds", a.min_seconds)
        header = next(r for r in records if "openblas_config" in r)
        rows += [r for r in records if "type" in r]
    rows.sort(key=lambda r: (r["type"] != "double", r["m"], r["variant"] != "baseline"))
    for r in rows:
        ctx.check(r["diff_over_k_eps"] <= 4, "%s %s %d: ordo and OpenBLAS differ by %.2g k eps" % (
            r["variant"], r["type"], r["m"], r["diff_over_k_eps"]))

    lines = ["**Project goal:** at least %d%% of OpenBLAS dgemm at %d^3 with %d threads." % (
        round(100 * GOAL_RATIO), GOAL_N, ob.THREADS), ""]
    for variant in ("baseline", "native"):
        r = next((r for r in rows if r["variant"] == variant and r["type"] == "double" and r["m"] == GOAL_N), None)
        if r is None:
            lines.append("- %s: %d^3 double was not measured." % (label(variant), GOAL_N))
            continue
        ratio = r["ordo_gflops"] / r["blas_gflops"]
        lines.append("- %s: %.1f vs %.1f GFLOP/s, **%.0f%%** of OpenBLAS dgemm (%s)" % (
            label(variant), r["ordo_gflops"], r["blas_gflops"], 100 * ratio,
            "goal met" if ratio >= GOAL_RATIO else "goal not met"))
    core = header.get("openblas_core", "unknown")
    lines += [
        "",
        ob.table(["build of ordo", "type", "m = n = k", "ordo (GFLOP/s)", "OpenBLAS (GFLOP/s)", "ordo / OpenBLAS",
                  "micro-tile mr x nr", "max \\|C_ordo - C_blas\\| / (k eps)"],
                 [[label(r["variant"]), r["type"], r["m"], "%.1f" % r["ordo_gflops"], "%.1f" % r["blas_gflops"],
                   "**%.2f**" % (r["ordo_gflops"] / r["blas_gflops"]),
                   "%d x %d%s" % (r["mr"], r["nr"], ", A packed %dx" % r["a_copies"] if r["a_copies"] > 1 else ""),
                   "%.2g" % r["diff_over_k_eps"]] for r in rows], "llrrrrlr"),
        "",
        "- OpenBLAS core type (chosen at run time, the same under both builds of ordo): `%s`%s." % (
            core, openblas_isa_note(core)),
        "- %d alternating rounds per size and type, each at least 3 calls and %.2g s per library after an untimed "
        "warm-up call; %d threads each (`OMP_NUM_THREADS`, `OPENBLAS_NUM_THREADS`, `OMP_PROC_BIND=false`)." % (
            a.rounds, a.min_seconds / a.rounds, ob.THREADS),
    ]
    lines += sixteen_bit(ctx)
    lines += sum_of_products(ctx)
    software = "%s, `-O3 -DNDEBUG` (CMake Release), Kokkos %s (OpenMP); %s" % (
        ob.machine()["cxx"], header.get("kokkos_version", "?"), header.get("openblas_config", "OpenBLAS").strip())
    return [ob.Section("gemm", "\n".join(lines), software)]


def sum_of_products(ctx):
    """r = A B + C D through ordo against the two dgemm_ calls written by hand (issue 28)."""
    rows = ctx.driver("bench_sum_of_products", "--sizes", ctx.args.sum_sizes, "--min-seconds", ctx.args.min_seconds,
                      "--min-rounds", 1 if ctx.args.smoke else 10)
    out = ["", "### Sum of products: `r = a * b + c * d` against two hand-written `dgemm_` calls", "",
           "double, n x n, 2 threads, into a preallocated r; ordo plans each product and adds the second with "
           "dgemm's beta = 1; by hand: `dgemm_(beta = 0)` then `dgemm_(beta = 1)`. Interleaved rounds, medians "
           "[q1, q3]. **Goal:** never slower than by hand.", ""]
    table = []
    for r in rows:
        ratio = r["ordo_median_s"] / r["blas_median_s"]
        overlap = r["ordo_q1_s"] <= r["blas_q3_s"]
        verdict = "met" if ratio <= 1 else "met, within noise (quartiles overlap)" if overlap else "**not met**"
        ctx.check(r["max_abs_diff"] <= 1e-12 * r["n"], "sum of products n = %d differs by %g" % (r["n"], r["max_abs_diff"]))
        table.append([r["n"], "%s [%s, %s]" % tuple(ob.fmt_time(r["ordo_" + q]) for q in ("median_s", "q1_s", "q3_s")),
                      "%s [%s, %s]" % tuple(ob.fmt_time(r["blas_" + q]) for q in ("median_s", "q1_s", "q3_s")),
                      "%.3f" % ratio, "%.2g" % r["max_abs_diff"], r["rounds"], verdict])
    return out + [ob.table(["n", "ordo", "two dgemm_ calls", "ordo / by hand", "max \\|difference\\|", "rounds",
                            "goal"], table, "rllrrrl")]


def sixteen_bit(ctx):
    """16-bit A and B into a float C (issue 29): the kernel the CPU gets against the baseline one."""
    a = ctx.args
    common = ("--sizes", a.sizes, "--types", "half,bfloat16", "--rounds", a.rounds, "--min-reps", 3,
              "--min-seconds", a.min_seconds)
    chosen = [r for r in ctx.driver("bench_gemm", *common) if "type" in r]
    base = {(r["type"], r["m"]): r for r in ctx.driver("bench_gemm", *common, ORDO_CPU_CAPABILITY="baseline")
            if "type" in r}
    table = []
    for r in sorted(chosen, key=lambda r: (r["type"] != "half", r["m"])):
        b = base[(r["type"], r["m"])]
        for x in (r, b):
            ctx.check(x["diff_over_k_eps"] <= 4, "%s %d (%s): ordo and sgemm differ by %.2g k eps" % (
                x["type"], x["m"], x["level"], x["diff_over_k_eps"]))
        table.append([r["type"], r["m"], "%.1f (%s, %d x %d)" % (r["ordo_gflops"], r["level"], r["mr"], r["nr"]),
                      "%.1f (%d x %d, A packed %dx)" % (b["ordo_gflops"], b["mr"], b["nr"], b["a_copies"]),
                      "**%.2f**" % (r["ordo_gflops"] / b["ordo_gflops"]), "%.1f" % r["blas_gflops"],
                      "**%.2f**" % (r["ordo_gflops"] / r["blas_gflops"]), "%.2g" % r["diff_over_k_eps"]])
    return ["", "### 16-bit operands (issue 29)", "",
            "A and B of `ordo::half` or `ordo::bfloat16`, C float (the product ordo's 16-bit GEMMs compute "
            "before rounding C): `ordo::detail::portable_gemm` of the default build, whose host kernel is "
            "compiled for the baseline, AVX2 and AVX-512 and picked at run time for 16-bit operands (g++ builds), "
            "with F16C widening half in the packing; against the same binary with `ORDO_CPU_CAPABILITY=baseline` "
            "(the SSE2 kernel, what every 16-bit GEMM ran before 7f28a6b) and OpenBLAS `sgemm_` on float copies "
            "of the same values (converted beforehand, not timed). Column-major, best of the calls, GFLOP/s.", "",
            ob.table(["storage", "m = n = k", "ordo, level chosen at run time", "ordo, baseline kernel",
                      "chosen / baseline", "OpenBLAS sgemm (float copies)", "ordo / sgemm",
                      "max \\|C_ordo - C_blas\\| / (k eps)"], table, "lrllrrrr")]
