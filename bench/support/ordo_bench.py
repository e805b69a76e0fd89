"""What the benchmarks of bench/ share (the Python side of bench_support.hpp).

bench/run imports it and hands each benchmark (bench/<name>/bench.py) a Context; a benchmark
module imports it as `import ordo_bench as ob` (bench/run puts bench/support on the path).
It needs only the standard library; numpy is imported by the functions that use it.

- the runner's side: Section (what measure returns), Context (options, drivers, checks, load);
- running: log, run, shell, build (the bench preset), binary, thread_env, json_lines;
- the machine: machine, loadavg, wait_for_load, utc_now, commit, run_lines (the command /
  machine / software / commit lines that end every section);
- docs: update_doc rewrites the part of a doc between <!-- name:begin --> and <!-- name:end -->;
- data: mix64 and splitmix64, bit for bit the generator of bench_support.hpp;
- statistics and timing: median, quantile, summary, time_calls;
- formatting: fmt_time, fmt_count, table (markdown).
"""

import collections
import datetime
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# ORDO_BENCH_BUILD: another build folder of the bench preset (two runs at once need two).
BUILD = os.path.abspath(os.path.join(ROOT, os.environ.get("ORDO_BENCH_BUILD", os.path.join("build", "bench"))))
PERFORMANCE = os.path.join(ROOT, "docs", "performance.md")
THREADS = 2  # OpenMP (and OpenBLAS) threads of every C++ contender
GAMMA = 0x9E3779B97F4A7C15


# ---- the runner's side -------------------------------------------------------------------------

# One part of a doc: name (its <!-- name:begin/end --> markers), text (markdown), software (what
# the footer's software line says), doc (relative to the repository), footer (whether bench/run
# ends it with the command, machine, software and commit lines).
Section = collections.namedtuple("Section", "name text software doc footer",
                                 defaults=("", "docs/performance.md", True))


class Context:
    """What bench/run hands a benchmark's measure(): args (parsed options), loads (1-minute load
    averages: at the start, then whatever the benchmark adds, then at the end), problems (the
    failed checks: fail(message) adds one) and the ways to run its drivers."""

    def __init__(self, name, args, watch, waited):
        self.name, self.args, self.watch, self.waited = name, args, tuple(watch), waited
        self.started, self.loads, self.problems = utc_now(), [loadavg()], []
        self.measured = commit(self.watch)

    def fail(self, message):
        log("CHECK FAILED:", message)
        self.problems.append(message)

    def check(self, condition, message):
        if not condition:
            self.fail(message)
        return condition

    def binary(self, target, folder=None):
        return binary(folder or self.name, target)

    def driver(self, target, *argv, folder=None, env=None, **extra_env):
        """Runs build/bench/bench/<folder or this benchmark>/<target> with argv under thread_env
        (plus extra_env) and returns the JSON objects of its output lines."""
        out = run([self.binary(target, folder), *map(str, argv)], stdout=subprocess.PIPE, text=True,
                  env=env or thread_env(**extra_env)).stdout
        return json_lines(out)

    def run_lines(self, command, software, finished):
        return run_lines(command, self.loads, software, self.started, finished, self.watch, self.waited,
                         self.measured)


# ---- running ------------------------------------------------------------------------------------


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    """Runs cmd from the repository root, logging it."""
    log("+", " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) and c.startswith(ROOT) else c for c in cmd))
    return subprocess.run(cmd, cwd=ROOT, check=check, **kw)


def shell(cmd, default="unknown"):
    """cmd's standard output, stripped; default when it cannot run or fails."""
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return default


def build(*targets):
    """Configures the bench preset unless build/bench already knows every target, then builds
    the targets (cmake --build --preset bench -j2 --target ...)."""
    ninja = os.path.join(BUILD, "build.ninja")
    text = open(ninja).read() if os.path.exists(ninja) else ""
    if not all(t in text for t in targets):
        run(["cmake", "--preset", "bench", "-B", BUILD], stdout=subprocess.DEVNULL)
    run(["cmake", "--build", BUILD, "-j2", "--target", *targets], stdout=subprocess.DEVNULL)


def binary(folder, name=None):
    """The path of a benchmark target: build/bench/bench/<folder>/<name or bench_<folder>>."""
    return os.path.join(BUILD, "bench", folder, name or "bench_" + folder)


def thread_env(**extra):
    """The environment of the C++ contenders: THREADS OpenMP and OpenBLAS threads, no binding."""
    return dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS),
                OMP_PROC_BIND="false", **extra)


def single_threaded_numpy():
    """Call before importing numpy: numpy and the BLAS behind it on one thread."""
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = "1"


def json_lines(text):
    """The JSON objects of the lines of text that start with '{'."""
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


# ---- the machine --------------------------------------------------------------------------------

_machine = None


def machine():
    """dict(cpu, cores, flags, l3, mem_gb, cxx) of this machine (cxx: first line of g++ --version)."""
    global _machine
    if _machine is None:
        cpu, flags, mem_gb = "unknown CPU", set(), None
        try:
            with open("/proc/cpuinfo") as f:
                for line in f:
                    if line.startswith("model name") and cpu == "unknown CPU":
                        cpu = line.split(":", 1)[1].strip()
                    elif line.startswith("flags") and not flags:
                        flags = set(line.split(":", 1)[1].split())
            with open("/proc/meminfo") as f:
                kib = next(line.split()[1] for line in f if line.startswith("MemTotal"))
                mem_gb = round(int(kib) / 2**20, 1)
        except (OSError, StopIteration):
            pass
        m = re.search(r"L3 cache:\s*([^(\n]+)", shell(["lscpu"], ""))
        _machine = dict(cpu=cpu, cores=os.cpu_count(), flags=flags, l3=m.group(1).strip() if m else None,
                        mem_gb=mem_gb, cxx=shell(["g++", "--version"]).splitlines()[0])
    return _machine


def loadavg():
    """The 1-minute load average (nan when unknown)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def wait_for_load(limit, max_wait, poll=15.0):
    """Waits (at most max_wait seconds) until the 1-minute load average is at most limit; returns
    the seconds waited. No wait when limit is None or 0."""
    start = time.monotonic()
    while limit and loadavg() > limit and time.monotonic() - start < max_wait:
        log("load average %.2f > %g; waiting" % (loadavg(), limit))
        time.sleep(min(poll, max(1.0, max_wait - (time.monotonic() - start))))
    return time.monotonic() - start


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc)


def commit(paths=("include",)):
    """(short hash of HEAD, whether paths have uncommitted changes)."""
    return shell(["git", "rev-parse", "--short", "HEAD"]), bool(shell(["git", "status", "--porcelain", "--", *paths], ""))


def run_lines(command, loads, software, started, finished, paths=("include",), waited=0.0, measured=None):
    """The lines that end every section: command, machine and load, software, commit and time.
    paths: what counts as uncommitted changes that the commit line names; measured: commit(paths)
    when the measurement was taken (default: now)."""
    m = machine()
    head, dirty = measured or commit(paths)
    waited = "; the run first waited %.0f s for it to drop" % waited if waited >= 1 else ""
    return [
        "- Command: `%s` (from the repository root)." % command,
        "- Machine: %s, %d cores%s, shared with other work; 1-minute load average %s%s." % (
            m["cpu"], m["cores"], ", L3 %s" % m["l3"] if m["l3"] else "",
            " → ".join("%.2f" % x for x in loads), waited),
        "- Software: %s." % software,
        "- ordo commit %s%s; measured %s to %s UTC." % (
            head, " (with uncommitted changes to %s)" % ", ".join(paths) if dirty else "",
            started.strftime("%Y-%m-%d %H:%M"), finished.strftime("%H:%M")),
    ]


# ---- docs ---------------------------------------------------------------------------------------


def update_doc(name, text, doc=PERFORMANCE, begin=None, end=None):
    """Replaces what lies between the markers <!-- name:begin --> and <!-- name:end --> of doc
    (or begin and end) with text. The markers must be there: the text around them is written by
    hand."""
    begin = begin or "<!-- %s:begin -->" % name
    end = end or "<!-- %s:end -->" % name
    with open(doc) as f:
        content = f.read()
    if begin not in content or end not in content:
        sys.exit("%s lacks the markers %s and %s" % (os.path.relpath(doc, ROOT), begin, end))
    head, rest = content.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(doc, "w") as f:
        f.write(head + begin + "\n\n" + text.strip("\n") + "\n\n" + end + tail)
    log("updated", os.path.relpath(doc, ROOT))


# ---- data ---------------------------------------------------------------------------------------


def mix64(z):
    """splitmix64's output function on uint64 numpy arrays or scalars (wrapping arithmetic)."""
    import numpy as np

    u = np.uint64
    z = np.asarray(z, dtype=u)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> u(30))) * u(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u(27))) * u(0x94D049BB133111EB)
    return z ^ (z >> u(31))


def splitmix64(seed, n):
    """Outputs 0 .. n-1 of splitmix64 seeded with seed, mix(seed + (i + 1) * gamma): the numbers
    of ordo_bench::splitmix64 (bench_support.hpp), as a uint64 array."""
    import numpy as np

    z = np.arange(1, n + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z *= np.uint64(GAMMA)
        z += np.uint64(seed % 2**64)
    return mix64(z)


# ---- statistics and timing ----------------------------------------------------------------------

median = statistics.median


def quantile(v, q):
    """The q-quantile with linear interpolation between order statistics (numpy's default)."""
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def summary(samples):
    """dict(median, q1, q3, min, reps) of timing samples."""
    return dict(median=quantile(samples, 0.5), q1=quantile(samples, 0.25), q3=quantile(samples, 0.75),
                min=min(samples), reps=len(samples))


def _timed(fn):
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def time_calls(fn, min_reps=1, max_reps=None, min_seconds=0.0, max_seconds=None, warm_up=True,
               keep_slow_warm_up=False, collect=False):
    """The timing loop of bench_support.hpp (ordo_bench::time_calls) for Python callables: an
    untimed warm-up call (kept as the first sample when keep_slow_warm_up and it alone takes
    min_seconds), then timed calls until min_reps calls and min_seconds of them, or max_reps
    calls; no call that would, taking as long as the last, pass max_seconds in total. The garbage
    collector is off during each call; collect runs it before each. Returns (samples, last
    result)."""
    samples, total, result = [], 0.0, None
    if warm_up:
        t, result = _timed(fn)
        if keep_slow_warm_up and t >= min_seconds:
            samples, total = [t], t
    while (max_reps is None or len(samples) < max_reps) and (len(samples) < min_reps or total < min_seconds):
        if max_seconds is not None and samples and total + samples[-1] > max_seconds:
            break
        if collect:
            result = None
            gc.collect()
        t, result = _timed(fn)
        samples.append(t)
        total += t
    return samples, result


# ---- formatting ---------------------------------------------------------------------------------


def fmt_time(seconds):
    """3 significant digits in µs, ms or s; whole seconds from 100 s."""
    if seconds is None or seconds != seconds:
        return "n/a"
    if seconds >= 100:
        return "{:,.0f} s".format(seconds)
    if seconds >= 1:
        return "%.3g s" % seconds
    if seconds >= 1e-3:
        return "%.3g ms" % (seconds * 1e3)
    return "%.3g µs" % (seconds * 1e6)


def fmt_count(n, separator=","):
    return "{:,}".format(n).replace(",", separator)


def table(head, rows, align=None):
    """A markdown table: head and rows are lists of cells; align is one letter per column, l
    (left) or r (right; the default after the first column)."""
    align = align or "l" + "r" * (len(head) - 1)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---- bn-precision ----
# ordo beside PyTorch in one Python process (bench/batch_norm, bench/precision): measure() runs its
# module's worker(argv) in a fresh /usr/bin/python3 (paired_worker); the worker loads the
# bench_paired module (bench/batch_norm/paired.cpp) with ctypes (Paired) and times ordo's and
# PyTorch's calls on the same buffers and libgomp threads in interleaved rounds (paired_rounds).


def paired_worker(path, *argv, **env):
    """Runs worker(argv) of the benchmark module at path in a fresh /usr/bin/python3 (Debian's
    python3-torch) under thread_env(**env); returns the JSON objects it prints."""
    code = "import sys; sys.path[:0] = %r; import bench; bench.worker(sys.argv[1:])" % [
        os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(path))]
    return json_lines(run(["/usr/bin/python3", "-c", code, *map(str, argv)], stdout=subprocess.PIPE, text=True,
                          env=thread_env(**env)).stdout)


class Paired:
    """The bench_paired module, after torch.set_num_threads(THREADS). case(spec) makes one of its
    cases, for a with statement: array(name, dtype) views one of its arrays (no copy), op(name)
    is a callable that runs an operation, time(ops, ...) times operations in C++ rounds, facts is
    a dict. The module's C functions (ordo_paired_*): initialize() -> JSON (kokkos_threads,
    ordo_capability, kokkos), finalize(), new(spec) -> case, delete(case), data(case, name, &size)
    -> pointer or NULL, facts(case) -> JSON, op(case, name) -> index or -1, run(case, index),
    time(case, "op,op", min_rounds, max_rounds, min_seconds, warmup, samples) -> rounds (0: an
    unknown op), samples[k * max_rounds + i] the seconds of op k in round i."""

    def __init__(self):
        import atexit
        import ctypes as c
        import torch

        torch.set_num_threads(THREADS)
        self.lib = c.CDLL(binary("batch_norm", "libbench_paired.so"))
        for name, result, args in (
                ("initialize", c.c_char_p, []), ("new", c.c_void_p, [c.c_char_p]), ("delete", None, [c.c_void_p]),
                ("data", c.c_void_p, [c.c_void_p, c.c_char_p, c.POINTER(c.c_longlong)]),
                ("facts", c.c_char_p, [c.c_void_p]), ("op", c.c_int, [c.c_void_p, c.c_char_p]),
                ("run", None, [c.c_void_p, c.c_int]),
                ("time", c.c_int, [c.c_void_p, c.c_char_p, c.c_int, c.c_int, c.c_double, c.c_int, c.c_void_p])):
            f = getattr(self.lib, "ordo_paired_" + name)
            f.restype, f.argtypes = result, args
        self.info = json.loads(self.lib.ordo_paired_initialize())
        atexit.register(self.lib.ordo_paired_finalize)

    def case(self, spec):
        return _PairedCase(self.lib, spec)

    def versions(self):
        """info (kokkos_threads, ordo_capability, kokkos) and the Python side's versions."""
        import platform
        import numpy
        import torch

        m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
        return dict(self.info, torch=torch.__version__, numpy=numpy.__version__, python=platform.python_version(),
                    cpu_capability=m.group(1) if m else "unknown", torch_threads=torch.get_num_threads())


class _PairedCase:
    def __init__(self, lib, spec):
        self.lib, self.h = lib, lib.ordo_paired_new(spec.encode())
        self.facts = json.loads(lib.ordo_paired_facts(self.h))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.lib.ordo_paired_delete(self.h)

    def array(self, name, dtype="float32"):
        import ctypes
        import numpy as np

        size, dtype = ctypes.c_longlong(), np.dtype(dtype)
        address = self.lib.ordo_paired_data(self.h, name.encode(), ctypes.byref(size)) or sys.exit("no array " + name)
        return np.frombuffer((ctypes.c_char * (size.value * dtype.itemsize)).from_address(address), dtype)

    def op(self, name):
        import functools

        index = self.lib.ordo_paired_op(self.h, name.encode())
        return functools.partial(self.lib.ordo_paired_run, self.h, index if index >= 0 else sys.exit("no op " + name))

    def time(self, ops, min_rounds, max_rounds, min_seconds, warmup):
        """ops in rounds of ordo_bench::time_rounds (no Python between them): {op: samples}."""
        import numpy as np

        out = np.zeros((len(ops), max_rounds))
        rounds = self.lib.ordo_paired_time(self.h, ",".join(ops).encode(), min_rounds, max_rounds, min_seconds, warmup,
                                           out.ctypes.data) or sys.exit("no op among " + ",".join(ops))
        return {op: out[k, :rounds].tolist() for k, op in enumerate(ops)}


def paired_rounds(order, min_rounds, min_seconds, warmup, max_rounds=2000, end_round=None):
    """order(r): round r's [(name, callable)]. warmup untimed rounds, then timed rounds until
    min_rounds and min_seconds (or max_rounds), the garbage collector off during each; end_round()
    after each round. Returns {name: [seconds of each round]}."""
    clock, times = time.perf_counter, {name: [] for name, _ in order(0)}
    for r in range(warmup):
        for _, f in order(r):
            f()
        end_round and end_round()
    start, r = clock(), 0
    while r < max_rounds and (r < min_rounds or clock() - start < min_seconds):
        gc.disable()
        try:
            for name, f in order(r):
                t0 = clock()
                f()
                times[name].append(clock() - t0)
        finally:
            gc.enable()
        end_round and end_round()
        r += 1
    return times


def fmt_quartiles(s):
    """A summary() as "median [q1, q3]"."""
    return "%s [%s, %s]" % (fmt_time(s["median"]), fmt_time(s["q1"]), fmt_time(s["q3"]))


def paired_lines(v):
    """(threads line, software) of a section, from Paired.versions()."""
    k = v["kokkos"]
    return ("- Threads: OMP_NUM_THREADS=%d, OMP_PROC_BIND=false; Kokkos::OpenMP concurrency %s, "
            "`torch.get_num_threads()` = %s; ATen CPU capability %s; ordo's kernels as built: %s." % (
                THREADS, v["kokkos_threads"], v["torch_threads"], v["cpu_capability"], v["ordo_capability"].upper()),
            "%s, `-O3 -DNDEBUG` (CMake Release), Kokkos %d.%d.%02d; Python %s, PyTorch %s (Debian python3-torch, "
            "OpenMP backend), numpy %s" % (machine()["cxx"], k // 10000, k // 100 % 100, k % 100, v["python"],
                                           v["torch"], v["numpy"]))
