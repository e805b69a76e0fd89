"""Softmax against PyTorch CPU (float and bfloat16 storage), and the mean of bfloat16 values.

softmax: in one process (ob.Paired), rotating rounds of ordo::nn::softmax, aten._softmax.out (preallocated
output), torch.softmax (allocating), a copy and (float) an online softmax. precision_mean: bench_precision_mean."""

import contextlib
import json

import ordo_bench as ob

TARGETS = ("bench_paired", "bench_precision_mean")
PYTHON_MODULES = ("numpy", "torch")
WATCH = ("include/ordo/nn/softmax.hpp", "include/ordo/nn/detail/softmax_kernels.hpp",
         "include/ordo/platform/fast_exp.hpp", "include/ordo/precision.hpp", "include/ordo/kernels/reduce.hpp",
         "bench/precision")
SHAPES = {"vocab": (4096, 32000), "rows": (32768, 1024)}
TOLERANCE = {"float": 1e-5, "bfloat16": 1e-2}  # of ordo's relative error: a few roundings to the storage type


def options(p):
    p.add_argument("--min-seconds", type=float, default=6.0, help="softmax rounds per case, at least")
    p.add_argument("--min-rounds", type=int, default=20)


def smoke(args):
    args.min_seconds, args.min_rounds = 0.0, 1


def worker(argv):
    """In a fresh python3 (ob.paired_worker): one JSON line per case (smoke: 1/64 of the rows), the versions."""
    import torch
    a, ordo = json.loads(argv[0]), ob.Paired()
    for shape, (rows, cols) in SHAPES.items():
        rows = rows // 64 if a["smoke"] else rows
        for dtype in ("float", "bfloat16"):
            with ordo.case("softmax %d %d %s" % (rows, cols, dtype)) as c, torch.no_grad(), contextlib.nullcontext(c) \
                    if dtype == "float" else ordo.case("softmax %d %d float" % (rows, cols)) as f:
                x, y = (torch.from_numpy(c.array(n, "float32" if dtype == "float" else "int16").reshape(rows, cols))
                        .view(torch.float32 if dtype == "float" else torch.bfloat16) for n in "xy")
                ty, ref = torch.empty_like(x), torch.softmax(x[:256].double(), -1)
                c.op("softmax")()
                torch_out = lambda: torch.ops.aten._softmax.out(x, -1, False, out=ty)  # noqa: E731
                torch_out()
                checks = {who: float(((v[:256].double() - ref).abs() / ref.clamp_min(1e-30)).max())
                          for who, v in (("ordo", y), ("torch", ty))}
                items = [("ordo", c.op("softmax")), ("torch", torch_out), ("torch_alloc", lambda: torch.softmax(x, -1)),
                         ("copy", c.op("copy")),
                         ("ordo_online", c.op("online")) if dtype == "float" else ("copy_float", f.op("copy"))]
                samples = ob.paired_rounds(lambda r: items[r % len(items):] + items[:r % len(items)], a["rounds"],
                                           a["seconds"], a["warmup"], max_rounds=1000)
                print(json.dumps(dict(shape=shape, dtype=dtype, elements=rows * cols, element_bytes=x.element_size(),
                                      checks=checks, samples=samples)), flush=True)
    print(json.dumps(dict(versions=ordo.versions())), flush=True)


def measure(ctx):
    a = ctx.args
    lines = ob.paired_worker(__file__, json.dumps(dict(smoke=a.smoke, rounds=a.min_rounds, seconds=a.min_seconds,
                                                       warmup=1 if a.smoke else 2)))
    threads, software = ob.paired_lines(next(r["versions"] for r in lines if "versions" in r))
    cases = {(r["shape"], r["dtype"]): dict(r, st={k: ob.summary(v) for k, v in r["samples"].items()})
             for r in lines if "shape" in r}
    # The float copy of a shape, timed in each of its cases (float's own copy, bfloat16's copy of a float
    # array): the faster of them, what the machine showed it can do. The two can differ by 1.7x on this VM.
    float_copy = {}
    for (shape, dtype), c in cases.items():
        t = c["st"]["copy" if dtype == "float" else "copy_float"]["median"]
        float_copy[shape] = min(t, float_copy.get(shape, t))
    rows = []
    for (shape, dtype), c in cases.items():
        s, err = c["st"], c["checks"]
        ctx.check(err["ordo"] <= TOLERANCE[dtype], "softmax %s %s: ordo's error %.1e" % (shape, dtype, err["ordo"]))
        o, t, ta = (s[k]["median"] for k in ("ordo", "torch", "torch_alloc"))
        gbs, fc_gbs = 2 * c["elements"] * c["element_bytes"] / o / 1e9, 8 * c["elements"] / float_copy[shape] / 1e9
        of_float = cases.get((shape, "float")) if dtype != "float" else None
        rows.append(["(%d, %d)" % SHAPES[shape], dtype, ob.fmt_quartiles(s["ordo"]), ob.fmt_quartiles(s["torch"]),
                     ob.fmt_time(ta), "**%.2fx**" % (t / o), "%.2fx" % (ta / o),
                     "%.2f" % (o / of_float["st"]["ordo"]["median"]) if of_float else "1",
                     ob.fmt_time(s["copy"]["median"]), "%.1f" % gbs, "%.1f" % fc_gbs, "%.0f%%" % (100 * gbs / fc_gbs),
                     ob.fmt_time(s["ordo_online"]["median"]) if "ordo_online" in s else "",
                     "%.1e / %.1e" % (err["ordo"], err["torch"]), s["ordo"]["reps"]])
    softmax = [ob.Section("softmax", "\n".join([
        ob.table(["shape", "storage", "ordo [q1, q3]", "PyTorch out= [q1, q3]", "PyTorch allocating",
                  "**speed vs PyTorch out=**", "speed vs allocating", "ordo time / float's", "copy, same bytes",
                  "ordo GB/s", "float copy GB/s", "ordo / float copy", "online variant",
                  "max rel. error ordo / PyTorch", "rounds"], rows), "",
        "Medians of the rounds; speed = PyTorch's median time / ordo's (above 1: ordo faster). Bytes = read x + write "
        "y. The float copy moves 2 x 4 bytes per element of the same shape (the faster of its two timings, in the float "
        "and the bfloat16 case), the bandwidth both storage types are "
        "measured against. Errors: largest relative error on the first 256 rows against PyTorch's float64 softmax of "
        "the same (rounded) inputs.", "", threads]), software, "docs/softmax.md")]
    mean = ob.run([ctx.binary("bench_precision_mean")], check=False, stdout=ob.subprocess.PIPE, text=True,
                  env=ob.thread_env())
    ctx.check(mean.returncode == 0, "bench_precision_mean: ordo's exact mean is not the __float128 reference")
    text = mean.stdout.strip() + "\n\n- %d threads (`OMP_NUM_THREADS`); the two left-to-right loops run on one. " \
        "Time: median of 7 calls after a warm-up; error: from the `__float128` mean rounded to float." % ob.THREADS
    return softmax + [ob.Section("precision_mean", text, software.split(";")[0], "docs/precision.md")]
