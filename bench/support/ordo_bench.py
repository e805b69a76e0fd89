"""What the benchmarks of bench/ share, the Python side of bench_support.hpp: bench/run hands each
bench/<name>/bench.py a Context; a module imports this file as `import ordo_bench as ob`. Standard
library only; numpy and torch are imported by the functions that use them.
"""

import collections
import contextlib
import datetime
import functools
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
THREADS = 2  # OpenMP and OpenBLAS threads of every C++ contender (thread_env: no binding)
GAMMA = 0x9E3779B97F4A7C15

# One part of a doc: name (its <!-- name:begin/end --> markers), text (markdown), software (the footer's
# software line), doc (relative to the repository), footer (whether bench/run adds the footer lines).
Section = collections.namedtuple("Section", "name text software doc footer",
                                 defaults=("", "docs/performance.md", True))


class Context:
    """What measure() gets: args, loads (1-minute load averages), problems (failed checks) and drivers."""

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
        return os.path.join(BUILD, "bench", folder or self.name, target)

    def driver(self, target, *argv, folder=None, env=None, **extra_env):
        """The JSON lines of <build>/bench/<folder or name>/<target> argv under thread_env(**extra_env)."""
        return json_lines(run([self.binary(target, folder), *map(str, argv)], stdout=subprocess.PIPE, text=True,
                              env=env or thread_env(**extra_env)).stdout)

    def run_lines(self, command, software, finished):
        """The lines that end every section: command, machine and load, software, commit and time."""
        m, (head, dirty) = machine(), self.measured
        waited = "; the run first waited %.0f s for it to drop" % self.waited if self.waited >= 1 else ""
        return [
            "- Command: `%s` (from the repository root)." % command,
            "- Machine: %s, %d cores%s, shared with other work; 1-minute load average %s%s." % (
                m["cpu"], m["cores"], ", L3 %s" % m["l3"] if m["l3"] else "",
                " → ".join("%.2f" % x for x in self.loads), waited),
            "- Software: %s." % software,
            "- ordo commit %s%s; measured %s to %s UTC." % (
                head, " (with uncommitted changes to %s)" % ", ".join(self.watch) if dirty else "",
                self.started.strftime("%Y-%m-%d %H:%M"), finished.strftime("%H:%M")),
        ]


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run(cmd, check=True, **kw):
    log("+", " ".join(os.path.relpath(c, ROOT) if os.path.isabs(c) and c.startswith(ROOT) else c for c in cmd))
    return subprocess.run(cmd, cwd=ROOT, check=check, **kw)


def shell(cmd, default="unknown"):
    """cmd's standard output, stripped; default when it cannot run or fails."""
    try:
        return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return default


def build(*targets):
    """Builds targets in BUILD, configuring the bench preset first unless it knows them all."""
    ninja = os.path.join(BUILD, "build.ninja")
    text = open(ninja).read() if os.path.exists(ninja) else ""
    if not all(t in text for t in targets):
        run(["cmake", "--preset", "bench", "-B", BUILD], stdout=subprocess.DEVNULL)
    run(["cmake", "--build", BUILD, "-j2", "--target", *targets], stdout=subprocess.DEVNULL)


def thread_env(**extra):
    return dict(os.environ, OMP_NUM_THREADS=str(THREADS), OPENBLAS_NUM_THREADS=str(THREADS),
                OMP_PROC_BIND="false", **extra)


# The Debian package of each Python peer the benchmarks import (the project installs nothing from PyPI).
DEBIAN_PACKAGE = {"numpy": "python3-numpy", "torch": "python3-torch"}


def require_python_modules(benchmark, modules):
    """Exits with the apt-get line to run when /usr/bin/python3 lacks one of `modules`."""
    import importlib.util
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        packages = " ".join(DEBIAN_PACKAGE.get(m, m) for m in missing)
        sys.exit("bench/run %s: /usr/bin/python3 has no %s (a peer this benchmark times); install it from "
                 "Debian: apt-get install %s" % (benchmark, ", ".join(missing), packages))


def single_threaded_numpy():  # call before importing numpy: numpy and the BLAS behind it on one thread
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
        os.environ[var] = "1"


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@functools.lru_cache(None)
def machine():
    """dict(cpu, cores, flags, l3, cxx) of this machine (cxx: first line of g++ --version)."""
    cpu, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name") and cpu == "unknown CPU":
                    cpu = line.split(":", 1)[1].strip()
                elif line.startswith("flags") and not flags:
                    flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    m = re.search(r"L3 cache:\s*([^(\n]+)", shell(["lscpu"], ""))
    return dict(cpu=cpu, cores=os.cpu_count(), flags=flags, l3=m.group(1).strip() if m else None,
                cxx=shell(["g++", "--version"]).splitlines()[0])


def loadavg():
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def wait_for_load(limit, max_wait, poll=15.0):
    """Waits at most max_wait s until the load average is at most limit (if any); returns the wait."""
    start = time.monotonic()
    while limit and loadavg() > limit and time.monotonic() - start < max_wait:
        log("load average %.2f > %g; waiting" % (loadavg(), limit))
        time.sleep(min(poll, max(1.0, max_wait - (time.monotonic() - start))))
    return time.monotonic() - start


utc_now = functools.partial(datetime.datetime.now, datetime.timezone.utc)


def commit(paths=("include",)):
    """(short hash of HEAD, whether paths have uncommitted changes)."""
    return shell(["git", "rev-parse", "--short", "HEAD"]), bool(shell(["git", "status", "--porcelain", "--", *paths], ""))


def update_doc(name, text, doc):
    """Replaces what lies between <!-- name:begin --> and <!-- name:end --> of doc with text."""
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    with open(doc) as f:
        content = f.read()
    if begin not in content or end not in content:
        sys.exit("%s lacks the markers %s and %s" % (os.path.relpath(doc, ROOT), begin, end))
    head, rest = content.split(begin, 1)
    with open(doc, "w") as f:
        f.write(head + begin + "\n\n" + text.strip("\n") + "\n\n" + end + rest.split(end, 1)[1])
    log("updated", os.path.relpath(doc, ROOT))


def mix64(z):
    """splitmix64's output function on uint64 numpy arrays or scalars (wrapping arithmetic)."""
    import numpy as np
    u, z = np.uint64, np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> u(30))) * u(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> u(27))) * u(0x94D049BB133111EB)
    return z ^ (z >> u(31))


def splitmix64(seed, n):
    """Outputs 0 .. n-1 of ordo_bench::splitmix64 seeded with seed, mix(seed + (i + 1) * gamma), as uint64."""
    import numpy as np
    with np.errstate(over="ignore"):
        return mix64(np.arange(1, n + 1, dtype=np.uint64) * np.uint64(GAMMA) + np.uint64(seed % 2**64))


median = statistics.median


def summary(samples):
    """dict(median, q1, q3, min, reps), quantiles interpolated between order statistics (numpy's default)."""
    v, n = sorted(samples), len(samples) - 1

    def q(p):
        lo = int(p * n)
        return v[lo] + (p * n - lo) * (v[min(lo + 1, n)] - v[lo])
    return dict(median=q(0.5), q1=q(0.25), q3=q(0.75), min=v[0], reps=n + 1)


def time_calls(fn, min_reps=1, max_reps=None, min_seconds=0.0, max_seconds=None, warm_up=True,
               keep_slow_warm_up=False, collect=False):
    """ordo_bench::time_calls for Python callables (gc off in each call; collect: gc.collect() before
    each); no call that would pass max_seconds in total at the last one's pace. Returns (samples, result)."""
    samples, total, result = [], 0.0, None

    def timed():
        gc.disable()
        try:
            start = time.perf_counter()
            out = fn()
            return time.perf_counter() - start, out
        finally:
            gc.enable()

    if warm_up:
        t, result = timed()
        if keep_slow_warm_up and t >= min_seconds:
            samples, total = [t], t
    while (max_reps is None or len(samples) < max_reps) and (len(samples) < min_reps or total < min_seconds):
        if max_seconds is not None and samples and total + samples[-1] > max_seconds:
            break
        if collect:
            result = None
            gc.collect()
        t, result = timed()
        samples.append(t)
        total += t
    return samples, result


def fmt_time(seconds):
    """3 significant digits in µs, ms or s; whole seconds from 100 s."""
    if seconds is None or seconds != seconds:
        return "n/a"
    if seconds >= 1:
        return "{:,.0f} s".format(seconds) if seconds >= 100 else "%.3g s" % seconds
    return "%.3g ms" % (seconds * 1e3) if seconds >= 1e-3 else "%.3g µs" % (seconds * 1e6)


def fmt_count(n, separator=","):
    return "{:,}".format(n).replace(",", separator)


def table(head, rows, align=None):
    """A markdown table; align: one letter per column, l or r (default: l, then r)."""
    align = align or "l" + "r" * (len(head) - 1)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|"]
    return "\n".join(lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])


# ---- bn-precision: ordo beside PyTorch in a fresh /usr/bin/python3 (paired_worker) that loads bench_paired
# (paired.cpp) with ctypes (Paired) and times both on the same buffers and threads in rounds (paired_rounds).


def paired_worker(path, *argv, **env):
    """The JSON lines of worker(argv) of the module at path, run in /usr/bin/python3 under thread_env(**env)."""
    code = "import sys; sys.path[:0] = %r; import bench; bench.worker(sys.argv[1:])" % [
        os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.abspath(path))]
    return json_lines(run(["/usr/bin/python3", "-c", code, *map(str, argv)], stdout=subprocess.PIPE, text=True,
                          env=thread_env(**env)).stdout)


class Paired:
    """libbench_paired.so (its C functions ordo_paired_*: paired.cpp) after torch.set_num_threads(THREADS);
    case(spec) makes one of its cases, for a with statement."""

    def __init__(self):
        import atexit
        import ctypes as c
        import torch
        torch.set_num_threads(THREADS)
        self.lib = c.CDLL(os.path.join(BUILD, "bench", "batch_norm", "libbench_paired.so"))
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

    @contextlib.contextmanager
    def case(self, spec):
        c = _PairedCase(self.lib, spec)
        try:
            yield c
        finally:
            self.lib.ordo_paired_delete(c.h)

    def versions(self):
        import platform
        import numpy
        import torch
        m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
        return dict(self.info, torch=torch.__version__, numpy=numpy.__version__, python=platform.python_version(),
                    cpu_capability=m.group(1) if m else "unknown", torch_threads=torch.get_num_threads())


class _PairedCase:
    """array(name, dtype): a view of one of its arrays; op(name): a callable; time(...): C++ rounds."""

    def __init__(self, lib, spec):
        self.lib, self.h = lib, lib.ordo_paired_new(spec.encode())
        self.facts = json.loads(lib.ordo_paired_facts(self.h))

    def array(self, name, dtype="float32"):
        import ctypes
        import numpy as np
        size, dtype = ctypes.c_longlong(), np.dtype(dtype)
        address = self.lib.ordo_paired_data(self.h, name.encode(), ctypes.byref(size)) or sys.exit("no array " + name)
        return np.frombuffer((ctypes.c_char * (size.value * dtype.itemsize)).from_address(address), dtype)

    def op(self, name):
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
    """order(r): round r's [(name, callable)]; warmup untimed rounds, then timed ones (gc off) until
    min_rounds and min_seconds, or max_rounds; end_round() after each. Returns {name: [seconds]}."""
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


def fmt_quartiles(s):  # a summary() as "median [q1, q3]"
    return "%s [%s, %s]" % (fmt_time(s["median"]), fmt_time(s["q1"]), fmt_time(s["q3"]))


def paired_lines(v):  # (threads line, software) of a section, from Paired.versions()
    k = v["kokkos"]
    return ("- Threads: OMP_NUM_THREADS=%d, OMP_PROC_BIND=false; Kokkos::OpenMP concurrency %s, "
            "`torch.get_num_threads()` = %s; ATen CPU capability %s; ordo's kernels as built: %s." % (
                THREADS, v["kokkos_threads"], v["torch_threads"], v["cpu_capability"], v["ordo_capability"].upper()),
            "%s, `-O3 -DNDEBUG` (CMake Release), Kokkos %d.%d.%02d; Python %s, PyTorch %s (Debian python3-torch, "
            "OpenMP backend), numpy %s" % (machine()["cxx"], k // 10000, k // 100 % 100, k % 100, v["python"],
                                           v["torch"], v["numpy"]))
