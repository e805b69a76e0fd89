#!/usr/bin/python3
"""ordo's softmax against PyTorch's, in one process (run by bench/precision/run; needs Debian's
python3-torch, so /usr/bin/python3, and the bench_precision_paired module).

Contenders, on the very same buffers (PyTorch tensors are views of ordo's Kokkos allocations; a
bfloat16 array is viewed as int16 by numpy and reinterpreted by torch):
  - ordo: ordo::nn::softmax(x, y) over the last axis (Kokkos::OpenMP), through ctypes;
  - ordo_online (float only): the online-softmax variant of bench/precision/cases.hpp;
  - torch: torch.ops.aten._softmax.out(x, -1, False, out=y), ATen's CPU kernel writing into a
    preallocated tensor (no allocation, like ordo);
  - torch_alloc: torch.softmax(x, -1), which allocates its output on every call, as most code does;
  - copy: y = x over the same bytes (Kokkos parallel_for), and copy_float: the same for a float
    array of the same shape (the bandwidth reference of both storage types).
Kokkos::OpenMP and ATen share the process's libgomp: torch.set_num_threads(THREADS) and
OMP_NUM_THREADS from the environment for Kokkos.

Timing: warm-up rounds, then rounds of every contender, in an order rotated from round to round,
until --min-rounds and --min-seconds; time.perf_counter around each call, the garbage collector
off during a round. Before timing: the largest |y - reference| / max(reference, 1e-30) relative
error of ordo and of PyTorch (in the case's storage type) against PyTorch's float64 softmax of the
same inputs, on the first --check-rows rows.

Prints one JSON object per case, then one with versions.
"""
import argparse
import ctypes
import gc
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ordo_bench as ob  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

LIBRARY = ob.binary("precision", "libbench_precision_paired.so")
SHAPES = {"vocab": (4096, 32000), "rows": (32768, 1024)}
DTYPES = ("float", "bfloat16")


class Ordo:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.ordo_sm_initialize.restype = ctypes.c_int
        lib.ordo_sm_error.restype = ctypes.c_char_p
        lib.ordo_sm_capability.restype = ctypes.c_char_p
        lib.ordo_sm_case_new.restype = ctypes.c_void_p
        lib.ordo_sm_case_new.argtypes = [ctypes.c_longlong, ctypes.c_longlong, ctypes.c_char_p]
        lib.ordo_sm_data.restype = ctypes.c_void_p
        lib.ordo_sm_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        for f in ("ordo_sm_case_delete", "ordo_sm_softmax", "ordo_sm_online", "ordo_sm_copy"):
            getattr(lib, f).argtypes = [ctypes.c_void_p]
            getattr(lib, f).restype = None
        self.lib = lib
        self.threads = lib.ordo_sm_initialize()
        if self.threads == 0:
            sys.exit("Kokkos::initialize failed: %s" % lib.ordo_sm_error().decode())

    def new_case(self, rows, cols, dtype):
        h = self.lib.ordo_sm_case_new(rows, cols, dtype.encode())
        if not h:
            sys.exit("ordo_sm_case_new: %s" % self.lib.ordo_sm_error().decode())
        return h

    def tensor(self, h, name, rows, cols, dtype):
        """A torch tensor viewing one of the case's arrays (no copy)."""
        ptr = self.lib.ordo_sm_data(h, name.encode())
        ctype = ctypes.c_float if dtype == "float" else ctypes.c_int16
        a = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctype)), shape=(rows, cols))
        t = torch.from_numpy(a)
        return t if dtype == "float" else t.view(torch.bfloat16)


def relative_error(y, ref):
    y = y.to(torch.float64)
    return float(((y - ref).abs() / ref.clamp_min(1e-30)).max())


def run_case(ordo, shape_name, dtype, args):
    rows, cols = SHAPES[shape_name]
    if args.smoke:
        rows = max(rows // 64, 1)
    h = ordo.new_case(rows, cols, dtype)
    f = ordo.new_case(rows, cols, "float") if dtype != "float" else h
    try:
        x = ordo.tensor(h, "x", rows, cols, dtype)
        y = ordo.tensor(h, "y", rows, cols, dtype)
        ty = torch.empty_like(x)
        lib = ordo.lib
        out = dict(kind="case", shape=shape_name, rows=rows, cols=cols, dtype=dtype,
                   element_bytes=x.element_size(), elements=x.numel())
        k = min(args.check_rows, rows)
        with torch.no_grad():
            lib.ordo_sm_softmax(h)
            ref = torch.softmax(x[:k].to(torch.float64), -1)
            torch.ops.aten._softmax.out(x, -1, False, out=ty)
            out["checks"] = dict(ordo=relative_error(y[:k], ref), torch=relative_error(ty[:k], ref))

        items = [("ordo", lambda: lib.ordo_sm_softmax(h)),
                 ("torch", lambda: torch.ops.aten._softmax.out(x, -1, False, out=ty)),
                 ("torch_alloc", lambda: torch.softmax(x, -1)),
                 ("copy", lambda: lib.ordo_sm_copy(h))]
        if dtype == "float":
            items.append(("ordo_online", lambda: lib.ordo_sm_online(h)))
        else:
            items.append(("copy_float", lambda: lib.ordo_sm_copy(f)))
        times = {name: [] for name, _ in items}
        clock = time.perf_counter
        with torch.no_grad():
            for _ in range(args.warmup):
                for _, fn in items:
                    fn()
            start = clock()
            r = 0
            while r < args.max_rounds and (r < args.min_rounds or clock() - start < args.min_seconds):
                shift = r % len(items)
                order = items[shift:] + items[:shift]
                gc.disable()
                try:
                    for name, fn in order:
                        t0 = clock()
                        fn()
                        t1 = clock()
                        times[name].append(t1 - t0)
                finally:
                    gc.enable()
                r += 1
        out["rounds"] = r
        out["samples"] = times
        return out
    finally:
        ordo.lib.ordo_sm_case_delete(h)
        if f != h:
            ordo.lib.ordo_sm_case_delete(f)


def cpu_capability():
    m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shapes", default="vocab,rows")
    p.add_argument("--dtypes", default="float,bfloat16")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-rounds", type=int, default=20)
    p.add_argument("--max-rounds", type=int, default=1000)
    p.add_argument("--min-seconds", type=float, default=6.0)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--check-rows", type=int, default=256)
    p.add_argument("--smoke", action="store_true", help="1/64 of the rows")
    p.add_argument("--library", default=LIBRARY)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    ordo = Ordo(args.library)
    try:
        for shape in args.shapes.split(","):
            for dtype in args.dtypes.split(","):
                print(json.dumps(run_case(ordo, shape, dtype, args)), flush=True)
    finally:
        ordo.lib.ordo_sm_finalize()
    print(json.dumps(dict(kind="versions", torch=torch.__version__, numpy=np.__version__,
                          cpu_capability=cpu_capability(), torch_threads=torch.get_num_threads(),
                          kokkos_threads=ordo.threads,
                          ordo_capability=ordo.lib.ordo_sm_capability().decode())), flush=True)


if __name__ == "__main__":
    sys.exit(main())
