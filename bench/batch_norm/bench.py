"""Batch norm: ordo::nn::batch_norm (forward training + backward, float) against PyTorch CPU and a copy.

Per shape, in one process (ob.Paired): a training step checked against PyTorch's float64 kernels;
ordo and aten.native_batch_norm(_backward) (allocating) in interleaved rounds, with a copy; ordo's
calls and four kernels in C++ rounds. As built (the best level the CPU has: AVX-512 or AVX2) and with
ORDO_CPU_CAPABILITY=baseline (SSE2)."""

import json

import ordo_bench as ob

TARGETS = ("bench_paired", "bench_batch_norm_storage")
PYTHON_MODULES = ("numpy", "torch")
WATCH = ("include/ordo/nn", "bench/batch_norm")
BUILDS = ("dispatch", "baseline")
BUILD_LABEL = {"dispatch": "as built (the CPU's best kernels, chosen at run time)",
               "baseline": "with `ORDO_CPU_CAPABILITY=baseline` (SSE2 kernels)"}
CASE_LABEL = {"nchw": "(32, 64, 56, 56) NCHW", "nhwc": "(32, 64, 56, 56) NHWC (channels last)",
              "bn1d": "(256, 1024) BatchNorm1d"}
MEMORY_SHAPE = {"nchw": (32, 64, 56, 56), "nhwc": (32, 56, 56, 64), "bn1d": (256, 1024)}
KERNELS = ("statistics", "normalize", "backward_sums", "input_gradient")
# Minimum memory traffic per element of x, in floats (docs/performance.md).
TRAFFIC = dict(forward=3, backward=5, total=8, copy=2, statistics=1, normalize=2, backward_sums=2, input_gradient=3)
CHECKED = ("y", "dx", "dgamma", "dbeta", "mean", "invstd", "running_mean", "running_var")


def options(p):
    p.add_argument("--min-seconds", type=float, default=8.0, help="paired rounds per shape, at least")
    p.add_argument("--min-rounds", type=int, default=30, help="paired rounds per shape, at least")
    p.add_argument("--diag-seconds", type=float, default=3.0, help="C++ rounds (10 at least) per shape, at least")


def smoke(args):
    args.min_seconds, args.diag_seconds, args.min_rounds = 0.0, 0.0, 1


def worker(argv):
    """In a fresh python3 (ob.paired_worker): one JSON line per case, the large copy's, the versions."""
    import torch
    a, ordo = json.loads(argv[0]), ob.Paired()
    fwd, bwd = torch.ops.aten.native_batch_norm, torch.ops.aten.native_batch_norm_backward
    for case in a["cases"]:
        with ordo.case("batch_norm " + case) as c, torch.no_grad():
            x, dy = (torch.from_numpy(c.array(name).reshape(MEMORY_SHAPE[case])) for name in ("x", "dy"))
            x, dy = (t.permute(0, 3, 1, 2) for t in (x, dy)) if case == "nhwc" else (x, dy)  # channels_last
            w, b = torch.from_numpy(c.array("gamma")), torch.from_numpy(c.array("beta"))
            checks = check(c, case, x, dy, w, b)
            rm, rv, state = torch.zeros(w.numel()), torch.ones(w.numel()), {}
            ordo_items = [("ordo_forward", c.op("forward")), ("ordo_backward", c.op("backward"))]
            torch_items = [  # backward frees y; results live to the end of the round
                ("torch_forward", lambda: state.update(fwd=fwd(x, w, b, rm, rv, True, 0.1, 1e-5))),
                ("torch_backward", lambda: state.update(bwd=bwd(dy, x, w, rm, rv, *state.pop("fwd")[1:], True, 1e-5,
                                                                [True, True, True])))]
            copy = [("copy", c.op("copy"))]  # last in every round; ordo and PyTorch alternate first
            samples = ob.paired_rounds(lambda r: (ordo_items + torch_items if r % 2 == 0 else torch_items + ordo_items)
                                       + copy, a["rounds"], a["seconds"], a["warmup"], end_round=state.clear)
            kernels = c.time(("forward", "backward") + KERNELS + ("copy",), a["diag_rounds"], 400, a["diag_seconds"],
                             a["warmup"])
            print(json.dumps(dict(case=case, facts=c.facts, checks=checks, samples=samples, kernels=kernels)))
    if a["copy"]:  # y = x on float arrays of a["copy"] elements
        with ordo.case("softmax 1 %d float" % a["copy"]) as c:
            samples = c.time(("copy",), a["diag_rounds"], 400, min(a["diag_seconds"], 2.0), a["warmup"])["copy"]
        print(json.dumps(dict(large_copy=a["copy"], samples=samples)))
    print(json.dumps(dict(versions=ordo.versions())))


def check(c, case, x, dy, w, b):
    """A training step from running stats 0, 1: {array: {ordo, torch}}, max |r - float64| / max(|float64|, 1)."""
    import numpy as np
    import torch
    for op in ("reset_running", "forward", "backward"):
        c.op(op)()
    got = {"ordo": [c.array(k, "float64" if k in ("mean", "invstd") else "float32").copy() for k in CHECKED]}
    c.op("reset_running")()
    for who, dtype in (("torch", torch.float32), ("ref", torch.float64)):
        rm, rv = torch.zeros(w.numel(), dtype=dtype), torch.ones(w.numel(), dtype=dtype)
        xd, dyd, wd, bd = (t.to(dtype) for t in (x, dy, w, b))
        y, mean, invstd = torch.ops.aten.native_batch_norm(xd, wd, bd, rm, rv, True, 0.1, 1e-5)
        dx, dw, db = torch.ops.aten.native_batch_norm_backward(dyd, xd, wd, rm, rv, mean, invstd, True, 1e-5,
                                                               [True] * 3)
        y, dx = (t.permute(0, 2, 3, 1) for t in (y, dx)) if case == "nhwc" else (y, dx)  # memory order
        got[who] = [y, dx, dw, db, mean, invstd, rm, rv]
    flat = {who: [np.asarray(v, np.float64).ravel() for v in arrays] for who, arrays in got.items()}
    ref = flat.pop("ref")
    return {k: {who: float((np.abs(v[i] - ref[i]) / np.maximum(np.abs(ref[i]), 1.0)).max()) for who, v in flat.items()}
            for i, k in enumerate(CHECKED)}


def summarize(s):
    """ob.summary of each item, and of ordo_total, torch_total (forward + backward) and round_ratio."""
    for who in ("ordo_", "torch_", ""):
        if who + "forward" in s:
            s[(who or "ordo_") + "total"] = [f + b for f, b in zip(s[who + "forward"], s[who + "backward"])]
    if "torch_total" in s:
        s["round_ratio"] = [t / o for t, o in zip(s["torch_total"], s["ordo_total"])]
    return {k: ob.summary(v) for k, v in s.items()}


def measure(ctx):
    a, res = ctx.args, {}
    for build in BUILDS:
        params = dict(cases=["bn1d"] if a.smoke else list(CASE_LABEL), rounds=a.min_rounds, seconds=a.min_seconds,
                      diag_rounds=1 if a.smoke else 10, diag_seconds=a.diag_seconds, warmup=1 if a.smoke else 3,
                      copy=0 if build != "dispatch" else 2**20 if a.smoke else 2**26)
        lines = ob.paired_worker(__file__, json.dumps(params), ORDO_CPU_CAPABILITY=build)  # not baseline: the CPU's
        res[build] = {r["case"]: dict(r, st=summarize(r["samples"]), kt=summarize(r["kernels"]))
                      for r in lines if "case" in r}
        if build == "dispatch":
            large = next(dict(n=r["large_copy"], st=ob.summary(r["samples"])) for r in lines if "large_copy" in r)
            versions = next(r["versions"] for r in lines if "versions" in r)
        for case, e in ((k, max(v["ordo"] for v in r["checks"].values())) for k, r in res[build].items()):
            ctx.check(e < 1e-5, "%s, ordo %s: error %.1e vs float64" % (CASE_LABEL[case], BUILD_LABEL[build], e))
    threads, software = ob.paired_lines(versions)
    return [ob.Section("batch_norm", "\n".join(section(res, large) + [threads]), software),
            ob.Section("batch_norm_16bit", storage_section(ctx), software, "docs/batch_norm.md")]


STORAGE_LEVELS = (("avx512", "the CPU's best"), ("avx2", "`ORDO_CPU_CAPABILITY=avx2`"),
                  ("baseline", "`ORDO_CPU_CAPABILITY=baseline` (SSE2)"))
HALF_GOAL = 1.3  # issue 29: a half training step within 1.3x float's time


def storage_section(ctx):
    """A training step in float, half and bfloat16 storage, each level in its own process (issue 29)."""
    a = ctx.args
    rows, verdicts = [], []
    for layout, label in (("nchw", "(32, 64, 56, 56) NCHW"), ("nhwc", "(32, 64, 56, 56) NHWC (channels last)")):
        for cap, cap_label in STORAGE_LEVELS:
            r = ctx.driver("bench_batch_norm_storage", "--layout", layout, "--min-rounds", 3 if a.smoke else 15,
                           "--min-seconds", 0 if a.smoke else 2, ORDO_CPU_CAPABILITY=cap)[0]
            f = r["float"]["median"]
            rows.append([label, "%s: %s" % (cap_label, r["level"].upper()), ob.fmt_time(f)] + [
                "%s (%.2fx)" % (ob.fmt_time(r[t]["median"]), r[t]["median"] / f) for t in ("half", "bfloat16")] + [
                str(r["float"]["rounds"])])
            if cap == "avx512":
                ratio = r["half"]["median"] / f
                verdicts.append("- %s, %s: half %.2fx float's time: **%s** (goal <= %.1fx)." % (
                    label, r["level"].upper(), ratio, "met" if ratio <= HALF_GOAL else "not met", HALF_GOAL))
    return "\n".join([
        "A training step (forward training + backward, float gamma and beta) in each storage type, the three types "
        "in interleaved rounds in one process per level; medians, and in parentheses the time over float's in "
        "the same process.", "",
        ob.table(["shape", "kernels", "float", "half", "bfloat16", "rounds"], rows), ""] + verdicts)


def section(res, large):
    base, L, med = res["dispatch"], [], lambda st, k: st[k]["median"]
    gbs = lambda elements, traffic, seconds: elements * 4 * TRAFFIC[traffic] / seconds / 1e9  # noqa: E731 (model)
    cases = [c for c in CASE_LABEL if c in base]
    pairs = [(c, b) for c in cases for b in BUILDS]

    def reps(results, key):  # of ordo_total, over the shapes
        r = sorted(v[key]["ordo_total"]["reps"] for v in results.values())
        return "%d" % r[0] if r[0] == r[-1] else "%d to %d" % (r[0], r[-1])
    for build in BUILDS:
        rows = [[CASE_LABEL[c]] + [ob.fmt_quartiles(st[w + k]) for w in ("ordo_", "torch_") for k in
                                   ("forward", "backward", "total")] + [
            "**%.2fx**" % (med(st, "torch_total") / med(st, "ordo_total")), "%.2fx" % med(st, "round_ratio"),
            "%.2fx (%s vs %s)" % (st["torch_total"]["min"] / st["ordo_total"]["min"], ob.fmt_time(
                st["ordo_total"]["min"]), ob.fmt_time(st["torch_total"]["min"]))]
            for c in cases for st in [res[build][c]["st"]]]
        L += ["ordo %s%s:" % (BUILD_LABEL[build], ", in a separate paired run" if build != "dispatch" else ""), "",
              ob.table(["shape", "ordo forward", "ordo backward", "ordo fwd + bwd", "PyTorch forward",
                        "PyTorch backward", "PyTorch fwd + bwd", "**ordo speed vs PyTorch** (medians)",
                        "per-round ratio", "minima"], rows), ""]
    L += ["Speed = PyTorch's time / ordo's (above 1: ordo faster); %s paired rounds per shape." % reps(base, "st"), "",
          "### Goal", "", "Goal: ordo >= 1.0x PyTorch (not slower) on each shape, forward + backward.", ""]
    met_all = dict.fromkeys(BUILDS, True)
    for c, build in pairs:
        st = res[build][c]["st"]
        o, t, ratio = st["ordo_total"], st["torch_total"], med(st, "torch_total") / med(st, "ordo_total")
        met_all[build] &= ratio >= 1.0
        L.append("- **%s, ordo %s: %s** forward + backward: ordo %s, PyTorch %s (medians): ordo runs at **%.2fx** "
                 "PyTorch's speed%s (forward %.2fx, backward %.2fx; median of the per-round ratios %.2fx; ratio of the "
                 "minima %.2fx)%s." % (
                     CASE_LABEL[c], BUILD_LABEL[build], "met." if ratio >= 1.0 else "not met.",
                     ob.fmt_time(o["median"]), ob.fmt_time(t["median"]), ratio,
                     ", i.e. **%.2fx slower**" % (1 / ratio) if ratio < 1.0 else "",
                     *(med(st, "torch_" + k) / med(st, "ordo_" + k) for k in ("forward", "backward")),
                     med(st, "round_ratio"), t["min"] / o["min"], "; the interquartile ranges overlap, so the "
                     "difference is within this machine's noise" if o["q1"] <= t["q3"] and t["q1"] <= o["q3"] else ""))
    L += [""] + ["**Overall, ordo %s: goal %s on every shape.**\n" % (BUILD_LABEL[b], "met" if met_all[b] else
                                                                       "not met") for b in BUILDS]
    lc, large_gbs, rows = large["st"], gbs(large["n"], "copy", large["st"]["median"]), []
    for c in cases:
        st, n = base[c]["st"], base[c]["facts"]["elements"]
        ordo_gbs, copy_gbs = gbs(n, "total", med(st, "ordo_total")), gbs(n, "copy", med(st, "copy"))
        rows.append([CASE_LABEL[c], "%.1f MB" % (n * 4 * TRAFFIC["total"] / 1e6), "%.1f / %.1f / %.1f" % (
            gbs(n, "forward", med(st, "ordo_forward")), gbs(n, "backward", med(st, "ordo_backward")), ordo_gbs),
            "%.1f" % gbs(n, "total", med(st, "torch_total")), "%.1f" % copy_gbs,
            "%.0f%% / %.0f%%" % (100 * ordo_gbs / copy_gbs, 100 * ordo_gbs / large_gbs),
            ob.fmt_time(n * 4 * TRAFFIC["total"] / (copy_gbs * 1e9))])
    L += ["### Memory bandwidth", "",
          "Large copy of %d floats (%d MiB per array) in the C++ run: **%.1f GB/s** (median %s, minimum %s, i.e. %.1f "
          "GB/s)." % (large["n"], large["n"] * 4 // 2**20, large_gbs, ob.fmt_quartiles(lc), ob.fmt_time(lc["min"]),
                      gbs(large["n"], "copy", lc["min"])), "",
          ob.table(["shape", "bytes, fwd + bwd", "ordo GB/s fwd / bwd / both (as built)", "PyTorch GB/s, both (same "
                    "model)", "copy GB/s, same size", "ordo as % of copy (same size / large)",
                    "copy-bound time, fwd + bwd"], rows), "",
          "Medians; array sizes: %s." % ", ".join(
              "%s %.1f MB" % (CASE_LABEL[c], base[c]["facts"]["elements"] * 4 / 1e6) for c in cases), "",
          "### Where ordo's time goes", ""]
    rows, findings = [], []
    cell = lambda k: "%s (%.1f GB/s)" % (ob.fmt_time(m[k]), gbs(f["elements"], k, m[k]))  # noqa: E731
    rest = lambda t: ob.fmt_time(t) if t > 0 else "≈ 0"  # noqa: E731
    for c, build in pairs:
        m, f = {k: v["median"] for k, v in res[build][c]["kt"].items()}, res[build][c]["facts"]
        rows.append([CASE_LABEL[c], BUILD_LABEL[build], f["work_items"], ob.fmt_time(m["forward"]),
                     ob.fmt_time(m["backward"])] + [cell(k) for k in KERNELS] + [
            rest(m["forward"] - m["statistics"] - m["normalize"]),
            rest(m["backward"] - m["backward_sums"] - m["input_gradient"]), cell("copy")])
        if build == "baseline":  # m: the SSE2 kernels' medians, d: the dispatched ones'
            d = {k: v["median"] for k, v in base[c]["kt"].items()}
            findings.append(
                "- **%s** (as built; C = %d, %s): per element, statistics %.2f ns, normalize %.2f ns, backward sums "
                "%.2f ns, input gradient %.2f ns, against %.2f ns for the copy (which moves as many bytes as "
                "normalize). The SSE2 kernels take %.2fx (statistics), %.2fx (backward sums), %.2fx (normalize) and "
                "%.2fx (input gradient) as long; forward + backward %.2fx." % (
                    CASE_LABEL[c], f["channels"], "runs of %d contiguous values per (n, c)" % f["inner"]
                    if f["inner"] > 1 else "rows of C contiguous channels",
                    *(d[k] / f["elements"] * 1e9 for k in KERNELS + ("copy",)),
                    *(m[k] / d[k] for k in ("statistics", "backward_sums", "normalize", "input_gradient",
                                            "ordo_total"))))
    L += [ob.table(["shape", "kernels", "work items", "forward", "backward", "statistics", "normalize",
                    "backward sums", "input gradient", "forward rest", "backward rest", "copy"], rows, "ll" + "r" * 10),
          "", "Medians (%s rounds per shape and build); GB/s by the traffic model." % ", ".join(
              sorted({reps(res[b], "kt") for b in BUILDS})), "", "**Findings.**", ""] + findings
    rows = [[CASE_LABEL[c], label] + ["%.1e" % res[build][c]["checks"][k][who] for k in CHECKED]
            for c, build in pairs for who, label in
            [("ordo", "ordo, " + BUILD_LABEL[build])] + [("torch", "PyTorch float")] * (build == "dispatch")]
    return L + ["", "### Accuracy check", "", "Largest |result - reference| / max(|reference|, 1) over each array, "
                "against PyTorch's float64 kernels:", "",
                ob.table(["shape", "contender", "y", "dx", "dgamma", "dbeta", "batch mean", "invstd", "running_mean",
                          "running_var"], rows, "ll" + "r" * 8), ""]
