"""The sphere mask of question 12: ordo::fill_sphere_mask against memset, numpy and the original loop.

bench_mask (and bench_mask_native, -march=native, which must give the same masks) time ordo on 2 threads
against memset and the like; numpy broadcasting (1 thread) runs on the same spheres, the original nested loop
on a small volume (extrapolated). Every mask is compared voxel by voxel with ordo's, also on a boundary case.
"""

import math
import platform
import re
import tempfile

import ordo_bench as ob

ob.single_threaded_numpy()
import numpy as np  # noqa: E402

TARGETS = ("bench_mask", "bench_mask_native")
PYTHON_MODULES = ("numpy",)
WATCH = ("include", "bench/mask")


def options(p):  # loop_size: the volume the nested loop runs on
    p.set_defaults(sizes="256,512", fills="0.01,0.3", loop_size=64, loop_reps=3, min_seconds=2.0, min_rounds=31,
                   alloc_reps=11, numpy_min_seconds=3.0, wait_load=2.5, max_wait=60.0)


def smoke(args):
    args.sizes, args.loop_size, args.loop_reps, args.min_seconds, args.min_rounds = "32", 8, 1, 0.0, 1
    args.alloc_reps, args.numpy_min_seconds, args.wait_load = 1, 0.0, 0


def numpy_mask(n, center, r, reference=False):
    """The numpy answer to question 12, d2 < r*r in one broadcast expression (bool result), or the
    question's own test, sqrt(d2) < r, d2 = (dx^2 + dy^2) + dz^2, each operation rounded once."""
    (cx, cy, cz), (x, y, z) = center, np.ogrid[0:n, 0:n, 0:n]
    if not reference:
        return ((x - cx) ** 2 + (y - cy) ** 2 + (z - cz) ** 2) < r * r
    d2 = ((x - cx) ** 2 + (y - cy) ** 2) + (z - cz) ** 2
    return np.sqrt(d2, out=d2) < r


# The original code of question 12, verbatim.
def within_radius(a, b, radius):
    if np.linalg.norm(a - b) < radius:
        return 1
    return 0


def make_mask(volume, roi, radius):
    mask = np.zeros(volume.shape)
    for x in range(volume.shape[0]):
        for y in range(volume.shape[1]):
            for z in range(volume.shape[2]):
                mask[x, y, z] = within_radius((x, y, z), roi, radius)
    return mask


def compare(case):
    """Both numpy tests against ordo's mask (returned), and the huge pages one numpy broadcast call
    faults in (thp_fault_alloc; other processes may add a few)."""
    n, center, r = case["n"], case["center"], case["radius"]
    ordo = np.fromfile(case["dump"], dtype=np.uint8).reshape((n, n, n)) != 0

    def faults():
        m = re.search(r"^thp_fault_alloc (\d+)", ob.shell(["cat", "/proc/vmstat"], ""), re.M)
        return int(m.group(1)) if m else None
    before, mask, after = faults(), numpy_mask(n, center, r), faults()
    case.update(np_thp=None if None in (before, after) else after - before, np_count=int(np.count_nonzero(mask)),
                np_diff=int(np.count_nonzero(mask != ordo)))
    del mask
    case["np_ref_diff"] = int(np.count_nonzero(numpy_mask(n, center, r, True) != ordo))
    return ordo


def boundary_radius(n, fill):
    """k near the fill's radius^2, fl(fl(sqrt(k))^2) > k, lattice points at distance sqrt(k) (k != 4^a (8b + 7))."""
    k = round((3 * fill * n**3 / (4 * math.pi)) ** (2 / 3))
    while math.sqrt(k) * math.sqrt(k) <= k or (k >> ((k & -k).bit_length() - 1) // 2 * 2) % 8 == 7:
        k += 1
    return k, math.sqrt(k)


def measure(ctx):
    a = ctx.args
    bn = min(int(s) for s in a.sizes.split(","))  # the boundary case: integer centre, r = fl(sqrt(k))
    k, r = boundary_radius(bn, max(float(f) for f in a.fills.split(",")))
    common = ["--sizes", a.sizes, "--fills", a.fills, "--min-seconds", a.min_seconds, "--min-rounds", a.min_rounds,
              "--alloc-reps", a.alloc_reps, "--dump-prefix"]
    with tempfile.TemporaryDirectory(prefix="ordo_mask_", dir=ob.BUILD) as tmp:
        all_cases = ctx.driver("bench_mask", *common, tmp + "/base_", "--check-sizes", a.loop_size, "--extra",
                               f"{bn},{bn // 2},{bn // 2},{bn // 2},{r!r}")
        natives = ctx.driver("bench_mask_native", *common, tmp + "/native_", "--check-sizes", "",
                             "--contenders", "ordo,memset")
        dumps = {c["name"]: c["dump"] for c in all_cases}
        same = all(np.array_equal(np.fromfile(dumps[c["name"]], np.uint8), np.fromfile(c["dump"], np.uint8))
                   for c in natives)
        ctx.check(same, "the -march=native build's masks differ from the baseline build's")
        ctx.loads.append(ob.loadavg())
        cases, loops = [c for c in all_cases if c["rounds"]], {}
        for c in cases:
            c["np_times"], _ = ob.time_calls(lambda: numpy_mask(c["n"], c["center"], c["radius"]), min_reps=5,
                                             max_reps=15, min_seconds=a.numpy_min_seconds, warm_up=False, collect=True)
            compare(c)
            ctx.check(c["np_ref_diff"] == 0, f"{c['name']}: numpy sqrt(d2) < r differs from ordo on {c['np_ref_diff']}")
            ctx.check(c["alloc_count"] == c["count"], f"{c['name']}: sphere_mask count {c['alloc_count']}, not {c['count']}")
            ctx.check(c["interval_memset_mismatches"] == 0, f"{c['name']}: the memset diagnostic differs from ordo")
        for c in all_cases:
            if c["name"].startswith("n") and not c["rounds"]:  # the nested loop, on --loop-size^3
                n, center, volume = c["n"], np.array(c["center"]), np.zeros((c["n"],) * 3)
                times, mask = ob.time_calls(lambda: make_mask(volume, center, c["radius"]),
                                            min_reps=a.loop_reps, max_reps=a.loop_reps, warm_up=False, collect=True)
                loops[c["fill"]] = dict(times=times, count=int(np.count_nonzero(mask)), per_voxel=ob.median(times) / n**3,
                                        diff=int(np.count_nonzero((mask != 0) != compare(c))))
                ctx.check(not loops[c["fill"]]["diff"], f"nested loop, fill {c['fill']}: voxels differ from ordo")
        bnd = next(c for c in all_cases if c["name"] == "extra0")
        compare(bnd)
        x, y, z = np.ogrid[0:bn, 0:bn, 0:bn]
        bnd.update(k=k, on_sphere=int(np.count_nonzero((x - bn // 2)**2 + (y - bn // 2)**2 + (z - bn // 2)**2 == k)))
    software = (f"{ob.machine()['cxx']}, `-O3 -DNDEBUG` (CMake Release), Kokkos 3.4.01 (OpenMP); Python "
                f"{platform.python_version()}, numpy {np.__version__}")
    return [ob.Section("mask", section(cases, natives, same, loops, bnd, a), software)]


def section(cases, natives, native_identical, loops, bnd, a):
    def ratio(x):
        return "n/a" if x is None or x != x else f"{x:,.0f}x" if x >= 100 else f"{x:.3g}x"
    t = ob.fmt_time
    for c in cases + natives:
        c["med"], c["min"] = ({k["name"]: k[q] for k in c["contenders"]} for q in ("median_s", "min_s"))
        c["pct"] = f"{c['fill'] * 100:g}%"
    for c in cases:
        c["med"]["numpy"], c["min"]["numpy"] = ob.median(c["np_times"]), min(c["np_times"])
        c["loop"] = loops[c["fill"]]["per_voxel"] * c["n"] ** 3 if c["fill"] in loops else None

    def cells(c, s, other):  # s: "med" or "min"; other: the fifth contender
        v = c[s]
        return [t(v["ordo"]), t(v["memset"]), ratio(v["ordo"] / v["memset"]), t(v["memset_one"]), t(v[other]),
                t(v["sphere_mask_alloc"]), t(v["numpy"]), ratio(v["numpy"] / v["ordo"])]

    lines = [ob.table(
        ["volume", "sphere fill (radius; voxels inside)", "ordo `fill_sphere_mask`", "`memset` 0 (floor)",
         "ordo / memset", "`memset` 1", "`Kokkos::deep_copy(v, 0)`",
         "`ordo::sphere_mask`, new View (allocation + first touch)", "numpy broadcast (1 thread)", "numpy / ordo",
         "original nested loop (**extrapolated**)", "nested loop / ordo"],
        [[f"{c['n']}^3 ({c['bytes'] / 2**20:g} MiB)",
          f"{c['pct']} (r = {c['radius']:.2f}; {c['count']:,} voxels = {c['count'] / c['n'] ** 3 * 100:.2f}%)",
          *cells(c, "med", "deep_copy"), f"{t(c['loop'])} (extrapolated)",
          ratio(c["loop"] / c["med"]["ordo"]) if c["loop"] else "n/a"] for c in cases], "ll" + "r" * 10)]
    reps = ", ".join(f"{c['n']}^3 {c['pct']}: {c['rounds']} rounds, numpy {len(c['np_times'])} runs" for c in cases)
    lines += ["", f"Repetitions: {reps}; `ordo::sphere_mask` {a.alloc_reps} runs per case; nested loop "
                  f"{a.loop_reps} runs per fill on {a.loop_size}^3.", "", "Minimum times (the goals use the medians above):",
              "", ob.table(["volume", "fill", "ordo", "memset 0", "ordo / memset 0", "memset 1",
                            "diagnostic: ordo's intervals + memset", "`ordo::sphere_mask`, new View", "numpy broadcast",
                            "numpy / ordo"],
                           [[f"{c['n']}^3", c["pct"], *cells(c, "min", "interval_memset")] for c in cases], "ll" + "r" * 8),
              "", f"The nested loop, measured on {a.loop_size}^3:", "", ob.table(
                  ["fill", f"measured time on {a.loop_size}^3 (median)", "per voxel", "voxels inside",
                   "differing voxels vs ordo"],
                  [[f"{fill * 100:g}%", t(ob.median(loop["times"])), f"{loop['per_voxel'] * 1e6:.2f} µs",
                    f"{loop['count']:,}", loop["diff"]] for fill, loop in loops.items()]),
              "", "### Goals", ""]
    for c in cases:
        o, m, o_min, m_min = c["med"]["ordo"], c["med"]["memset"], c["min"]["ordo"], c["min"]["memset"]
        lines += [f"- ordo <= 1.3x memset at 1% fill, {c['n']}^3: **{'met' if o / m <= 1.3 else 'not met'}** — {t(o)} "
                  f"vs {t(m)} = {o / m:.2f}x (minima: {t(o_min)} vs {t(m_min)} = {o_min / m_min:.2f}x)."
                  ] if abs(c["fill"] - 0.01) < 1e-12 else []
    lines += [f"- ordo >= 20x faster than numpy broadcast at 512^3, {c['pct']} fill: **{'met' if x >= 20 else 'not met'}** "
              f"— numpy {t(c['med']['numpy'])} / ordo {t(c['med']['ordo'])} = {x:.1f}x."
              for c in cases if c["n"] == 512 for x in [c["med"]["numpy"] / c["med"]["ordo"]]]
    b = max(cases, key=lambda c: c["n"])  # the first case of the largest volume
    bm, bn = b["med"], b["min"]

    def gbps(s):
        return b["bytes"] / s / 1e9
    isa = "AVX-512" if "avx512f" in ob.machine()["flags"] else "host ISA"
    numpy_hugepage = getattr(np.core.multiarray, "_get_madvise_hugepage", lambda: "unknown")()
    thp = re.search(r"\[(\w+)\]", ob.shell(["cat", "/sys/kernel/mm/transparent_hugepage/enabled"], "[?]")).group(1)
    lines += [
        "", "### Findings", "",
        f"- At {b['n']}^3 ordo's fill takes {t(bm['ordo'])} (median; {gbps(bm['ordo']):.2f} GB/s). The bench-only "
        "diagnostic that writes the same intervals with three `memset` calls per row takes "
        + "; ".join(f"{t(c['med']['interval_memset'])} ({c['n']}^3, {c['pct']})" for c in cases) + " (medians).",
        f"- Compiled with `-march=native` ({isa}), ordo's fill takes "
        + "; ".join(f"{c['n']}^3 {c['pct']}: {t(c['med']['ordo'])} (memset {t(c['med']['memset'])})" for c in natives)
        + f"; its masks are {'byte-identical' if native_identical else '**not** identical'} to the baseline build's.",
        f"- memset 0 vs memset 1 of the same {b['n']}^3 bytes: {t(bn['memset'])} vs {t(bn['memset_one'])} (minima; "
        f"{gbps(bn['memset']):.3g} vs {gbps(bn['memset_one']):.3g} GB/s), medians {t(bm['memset'])} vs "
        f"{t(bm['memset_one'])} ({gbps(bm['memset']):.3g} vs {gbps(bm['memset_one']):.3g} GB/s): "
        + ("**zero stores are cheaper than other stores on this machine**." if bn["memset"] < 0.8 * bn["memset_one"]
           else "zero and nonzero stores cost about the same here."),
        f"- `Kokkos::deep_copy(view, 0)`: {t(bm['deep_copy'])} at {b['n']}^3 ({gbps(bm['deep_copy']):.3g} GB/s, "
        f"median), {bm['deep_copy'] / bm['memset']:.1f}x memset 0.",
        f"- `ordo::sphere_mask` with a new View: {t(bm['sphere_mask_alloc'])} vs {t(bm['ordo'])} steady state at "
        f"{b['n']}^3 (+{t(bm['sphere_mask_alloc'] - bm['ordo'])}, medians); numpy broadcast, which allocates a "
        f"{b['bytes'] * 8 / 2**30:g} GiB float64 temporary and the bool result in every call, {t(bm['numpy'])}. "
        f"Transparent huge pages: '{thp}'; `numpy.core.multiarray._get_madvise_hugepage()` = {numpy_hugepage}; "
        f"one numpy call faulted in {b['np_thp']} huge pages (thp_fault_alloc; {(b['bytes'] * 9) // 2**21} would "
        f"cover both arrays), one `ordo::sphere_mask` call {b['alloc_thp_faults']} ({b['bytes'] // 4096:,} pages of "
        "4 KiB cover its View).",
        "", "### Agreement", "", ob.table(
            ["case", "voxels inside (ordo)", "numpy broadcast `d2 < r*r`: voxels / differing from ordo",
             "numpy `sqrt(d2) < r`: differing from ordo", "`ordo::sphere_mask` count", "diagnostic vs ordo"],
            [[f"{c['n']}^3, {c['pct']}", f"{c['count']:,}", f"{c['np_count']:,} / {c['np_diff']}", c["np_ref_diff"],
              f"{c['alloc_count']:,}", f"{c['interval_memset_mismatches']} differing"] for c in cases]),
        "", f"Boundary case: {bnd['n']}^3, integer centre ({', '.join(f'{v:g}' for v in bnd['center'])}), "
        f"r = fl(sqrt({bnd['k']})) = {bnd['radius']!r}, fl(r*r) = {bnd['radius'] * bnd['radius']!r}; "
        f"{bnd['on_sphere']:,} voxels lie at distance exactly sqrt({bnd['k']}). numpy broadcast `d2 < r*r` differs "
        f"from ordo on **{bnd['np_diff']:,}** voxels, numpy `sqrt(d2) < r` on {bnd['np_ref_diff']}.",
        "", f"- {ob.THREADS} OpenMP threads (`OMP_NUM_THREADS={ob.THREADS}`, `OMP_PROC_BIND=false`); numpy on 1."]
    return "\n".join(lines)
