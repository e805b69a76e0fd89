#!/usr/bin/python3
"""ordo against PyTorch, batch norm, in one process (run by bench/batch_norm/run; needs Debian's
python3-torch, so /usr/bin/python3, and build/bench/bench/batch_norm/libbench_batch_norm_paired.so).

Contenders, on the very same buffers (PyTorch tensors are views of ordo's Kokkos allocations):
  - ordo: ordo::nn::batch_norm_forward_training and ordo::nn::batch_norm_backward (float,
    Kokkos::OpenMP), called through ctypes;
  - PyTorch: torch.ops.aten.native_batch_norm (training=True, momentum 0.1, eps 1e-5) and
    torch.ops.aten.native_batch_norm_backward (output_mask [True, True, True]), the ATen CPU
    kernels autograd calls for nn.BatchNorm{1,2}d in training, without the autograd bookkeeping;
    outputs are allocated by each call, as for any PyTorch user. The channels-last case is an
    NCHW-shaped tensor in channels_last memory format (ordo's (N, H, W, C) array viewed through
    permute(0, 3, 1, 2), which is exactly x.to(memory_format=torch.channels_last)), dy too;
  - copy: a STREAM-like Kokkos parallel_for y(i) = x(i) of the case's x.
Kokkos::OpenMP and ATen share the process's libgomp, so both run on the same OpenMP threads
(torch.set_num_threads(THREADS), OMP_NUM_THREADS from the environment for Kokkos).

Timing: warm-up rounds, then rounds of (ordo forward, ordo backward, PyTorch forward, PyTorch
backward, copy), with ordo first in even rounds and PyTorch first in odd ones, until --min-rounds
and --min-seconds; time.perf_counter around each call (a ctypes call adds about a microsecond to
ordo's), the garbage collector off during a round. Load from other jobs thus falls on all
contenders alike, and the per-round ratio PyTorch / ordo is reported besides the medians.

Before timing, one training step from running_mean = 0, running_var = 1 by ordo, by PyTorch in
float and by PyTorch's float64 kernels on the same float inputs (the reference): the largest
|result - reference| / max(|reference|, 1) of each array for ordo and for PyTorch float.

Prints one JSON object per case, then one with versions, on stdout.
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

LIBRARY = ob.binary("batch_norm", "libbench_batch_norm_paired.so")
MEMORY_SHAPES = {"nchw": (32, 64, 56, 56), "nhwc": (32, 56, 56, 64), "bn1d": (256, 1024)}


class Ordo:
    def __init__(self, path):
        lib = ctypes.CDLL(path)
        lib.ordo_bn_initialize.restype = ctypes.c_int
        lib.ordo_bn_error.restype = ctypes.c_char_p
        lib.ordo_bn_capability.restype = ctypes.c_char_p
        lib.ordo_bn_case_new.restype = ctypes.c_void_p
        lib.ordo_bn_case_new.argtypes = [ctypes.c_char_p]
        lib.ordo_bn_size.restype = ctypes.c_longlong
        lib.ordo_bn_size.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.ordo_bn_data.restype = ctypes.c_void_p
        lib.ordo_bn_data.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        for f in ("ordo_bn_case_delete", "ordo_bn_reset_running", "ordo_bn_forward", "ordo_bn_backward",
                  "ordo_bn_copy"):
            getattr(lib, f).argtypes = [ctypes.c_void_p]
            getattr(lib, f).restype = None
        self.lib = lib
        self.threads = lib.ordo_bn_initialize()
        if self.threads == 0:
            sys.exit("Kokkos::initialize failed: %s" % lib.ordo_bn_error().decode())

    def new_case(self, name):
        h = self.lib.ordo_bn_case_new(name.encode())
        if not h:
            sys.exit("ordo_bn_case_new(%s): %s" % (name, self.lib.ordo_bn_error().decode()))
        return h

    def array(self, h, name):
        """A numpy view of one of the case's arrays (no copy)."""
        size = self.lib.ordo_bn_size(h, name.encode())
        ptr = self.lib.ordo_bn_data(h, name.encode())
        ctype = ctypes.c_double if name in ("mean", "invstd") else ctypes.c_float
        return np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctype)), shape=(size,))


def torch_view(flat, case):
    t = torch.from_numpy(flat.reshape(MEMORY_SHAPES[case]))
    if case == "nhwc":
        t = t.permute(0, 3, 1, 2)
        assert t.is_contiguous(memory_format=torch.channels_last)
    return t


def to_memory_order(t, case):
    if case == "nhwc":
        t = t.permute(0, 2, 3, 1)
    return t.contiguous().numpy().reshape(-1)


def check(ordo, h, case, x, dy, w, b):
    """One training step by ordo, PyTorch float and PyTorch float64; errors against float64."""
    fwd, bwd = torch.ops.aten.native_batch_norm, torch.ops.aten.native_batch_norm_backward
    C = w.numel()
    ordo.lib.ordo_bn_reset_running(h)
    ordo.lib.ordo_bn_forward(h)
    ordo.lib.ordo_bn_backward(h)
    ours = {name: ordo.array(h, name).astype(np.float64) for name in
            ("y", "dx", "dgamma", "dbeta", "mean", "invstd", "running_mean", "running_var")}
    ordo.lib.ordo_bn_reset_running(h)
    results, formats = {}, {}
    for dtype in (torch.float32, torch.float64):
        rm, rv = torch.zeros(C, dtype=dtype), torch.ones(C, dtype=dtype)
        xd, dyd, wd, bd = (t.to(dtype) for t in (x, dy, w, b))
        with torch.no_grad():
            y, mean, invstd = fwd(xd, wd, bd, rm, rv, True, 0.1, 1e-5)
            dx, dw, db = bwd(dyd, xd, wd, rm, rv, mean, invstd, True, 1e-5, [True, True, True])
        results[dtype] = dict(y=to_memory_order(y, case), dx=to_memory_order(dx, case), dgamma=dw.numpy(),
                              dbeta=db.numpy(), mean=mean.numpy(), invstd=invstd.numpy(),
                              running_mean=rm.numpy(), running_var=rv.numpy())
        if dtype == torch.float32:
            fmt = torch.channels_last if case == "nhwc" else torch.contiguous_format
            formats = dict(y_same_format_as_x=y.is_contiguous(memory_format=fmt),
                           dx_same_format_as_x=dx.is_contiguous(memory_format=fmt))

    def error(a, ref):
        a = np.asarray(a, dtype=np.float64).reshape(-1)
        ref = np.asarray(ref, dtype=np.float64).reshape(-1)
        return float((np.abs(a - ref) / np.maximum(np.abs(ref), 1.0)).max())

    ref = results[torch.float64]
    checks = {name: dict(ordo=error(ours[name], ref[name]), torch=error(results[torch.float32][name], ref[name]))
              for name in ref}
    return checks, formats


def run_case(ordo, case, args):
    h = ordo.new_case(case)
    try:
        x = torch_view(ordo.array(h, "x"), case)
        dy = torch_view(ordo.array(h, "dy"), case)
        w = torch.from_numpy(ordo.array(h, "gamma"))
        b = torch.from_numpy(ordo.array(h, "beta"))
        out = dict(kind="case", case=case, shape=list(x.shape), memory_shape=list(MEMORY_SHAPES[case]),
                   elements=x.numel(), channels=w.numel(),
                   torch_memory_format="channels_last" if case == "nhwc" else "contiguous")
        out["checks"], formats = check(ordo, h, case, x, dy, w, b)
        out.update(formats)

        # PyTorch's running statistics are its own tensors; ordo updates its own.
        rm, rv = torch.zeros(w.numel()), torch.ones(w.numel())
        fwd, bwd = torch.ops.aten.native_batch_norm, torch.ops.aten.native_batch_norm_backward
        lib = ordo.lib
        state = {}

        def ordo_forward():
            lib.ordo_bn_forward(h)

        def ordo_backward():
            lib.ordo_bn_backward(h)

        def torch_forward():
            state["fwd"] = fwd(x, w, b, rm, rv, True, 0.1, 1e-5)

        def torch_backward():
            y, mean, invstd = state.pop("fwd")
            del y
            state["bwd"] = bwd(dy, x, w, rm, rv, mean, invstd, True, 1e-5, [True, True, True])

        def copy():
            lib.ordo_bn_copy(h)

        ordo_items = [("ordo_forward", ordo_forward), ("ordo_backward", ordo_backward)]
        torch_items = [("torch_forward", torch_forward), ("torch_backward", torch_backward)]
        times = {name: [] for name, _ in ordo_items + torch_items + [("copy", copy)]}
        clock = time.perf_counter
        with torch.no_grad():
            for _ in range(args.warmup):
                for _, f in ordo_items + torch_items + [("copy", copy)]:
                    f()
                state.clear()
            start = clock()
            r = 0
            while r < args.max_rounds and (r < args.min_rounds or clock() - start < args.min_seconds):
                order = (ordo_items + torch_items if r % 2 == 0 else torch_items + ordo_items) + [("copy", copy)]
                gc.disable()
                try:
                    for name, f in order:
                        t0 = clock()
                        f()
                        t1 = clock()
                        times[name].append(t1 - t0)
                finally:
                    gc.enable()
                state.clear()
                r += 1
        out["rounds"] = r
        out["samples"] = times
        return out
    finally:
        ordo.lib.ordo_bn_case_delete(h)


def cpu_capability():
    m = re.search(r"CPU capability usage: (\S+)", torch.__config__.show())
    return m.group(1) if m else "unknown"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="nchw,nhwc,bn1d")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-rounds", type=int, default=30)
    p.add_argument("--max-rounds", type=int, default=2000)
    p.add_argument("--min-seconds", type=float, default=10.0)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--library", default=LIBRARY)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    ordo = Ordo(args.library)
    try:
        for case in args.cases.split(","):
            print(json.dumps(run_case(ordo, case, args)), flush=True)
    finally:
        ordo.lib.ordo_bn_finalize()
    print(json.dumps(dict(kind="versions", torch=torch.__version__, numpy=np.__version__,
                          cpu_capability=cpu_capability(), torch_threads=torch.get_num_threads(),
                          kokkos_threads=ordo.threads,
                          ordo_capability=ordo.lib.ordo_bn_capability().decode())), flush=True)


if __name__ == "__main__":
    sys.exit(main())
