#!/usr/bin/python3
"""Precision of synchronized batch-norm statistics: PyTorch's SyncBatchNorm vs ordo, emulated in numpy.

Prints the table of docs/distributed.md: both methods' arithmetic redone in numpy in the precision
each uses (not a run of PyTorch or MPI) on channels of 512 x 64 float32 values cut over R = 1, 8,
64, 512 ranks, against exact rational arithmetic. PyTorch (CUDA, float input, NCHW, float32
throughout), as read in pytorch/pytorch: torch/nn/modules/_functions.py @ c90c4dc6cc42
(SyncBatchNorm.forward; the same in substance at 016ec49da759); aten/src/ATen/native/cuda/
Normalization.cuh @ 3f55db3aea69 (batch_norm_collect_statistics_kernel: Welford per thread of a
(64, 8) block, XOR-butterfly merges within and across warps with 1 / n computed in double, stored
in float; batch_norm_reduce_statistics_kernel: each device's variance rebuilt as 1/invstd^2 - eps,
merged in float); Normalization.cu (2.x: batch_norm_stats_cuda, batch_norm_gather_stats_with_counts_cuda).
Not emulated: nvcc's FMA contraction, the channels-last kernels. ordo (nn/batch_norm.hpp), float64:
each rank's two-pass (count, mean, M2), merged in rank order with Chan's formula.
"""
import argparse
import decimal
import math
from fractions import Fraction

import numpy as np

F32, F64, EPS, BATCH, VALUES, RANKS, WARP = np.float32, np.float64, 1e-5, 512, 64, (1, 8, 64, 512), 32
BLOCK_Y = 8  # threads (64, MAX_BLOCK_SIZE / 64): thread (tx, ty) reads samples ty, ty + 8, ... of value tx
decimal.getcontext().prec = 40


def exact(x):
    """Exact mean, biased variance, invstd (Decimal) and unbiased variance of float32 data."""
    ratios = [v.as_integer_ratio() for v in x.astype(F64).ravel().tolist()]
    scale = max(d for _, d in ratios)  # a power of two
    ints = [n * (scale // d) for n, d in ratios]
    n, s, q = len(ints), sum(ints), sum(i * i for i in ints)
    m2 = Fraction(q * n - s * s, n * scale * scale)
    v = m2 / n + Fraction(EPS)
    return Fraction(s, n * scale), m2 / n, 1 / (decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)).sqrt(), m2 / (n - 1)


def rel_err(value, exact):
    value = float(value)
    if not math.isfinite(value):
        return "inf"
    e = float(abs(type(exact)(value) - exact) / abs(exact))
    return "0" if e == 0 else f"{e:.1e}"


def butterfly(avg, var_n, n):
    """The XOR-shuffle merge of batch_norm_collect_statistics_kernel over the last axis (32 lanes)."""
    for i in range(int(math.log2(WARP))):
        p = np.arange(WARP) ^ (1 << i)
        factor = (1.0 / np.maximum(1, n + n[..., p]).astype(F32).astype(F64)).astype(F32)
        nf, of, d = n.astype(F32), n[..., p].astype(F32), avg - avg[..., p]
        var_n = var_n + (var_n[..., p] + d * d * nf * of * factor)
        avg, n = (nf * avg + of * avg[..., p]) * factor, n + n[..., p]
    return avg, var_n, n


def pytorch_sync(x, ranks):
    """SyncBatchNorm of x (C, BATCH, VALUES): per device batch_norm_stats, then the gather."""
    xd = x.reshape(x.shape[0], ranks, BATCH // ranks, VALUES).transpose(1, 0, 2, 3)  # (R, C, b, VALUES)
    b, shape = xd.shape[2], xd.shape[:2] + (BLOCK_Y, VALUES)
    avg, var_n, n = np.zeros(shape, F32), np.zeros(shape, F32), np.zeros(shape, np.int64)
    for k in range(-(-b // BLOCK_Y)):  # Welford per thread
        rows = np.arange(BLOCK_Y) + BLOCK_Y * k
        v, valid = xd[..., np.minimum(rows, b - 1), :], (rows < b)[:, None]
        d1, n1 = v - avg, n + 1
        avg1 = avg + d1 / n1.astype(F32)
        avg, var_n, n = np.where(valid, avg1, avg), np.where(valid, var_n + d1 * (v - avg1), var_n), np.where(valid, n1, n)
    warps = BLOCK_Y * VALUES // WARP  # tid = tx + 64 ty: warp tid / 32, lane tid % 32
    merged = butterfly(*(a.reshape(xd.shape[:2] + (warps, WARP)) for a in (avg, var_n, n)))
    pad = [(0, 0), (0, 0), (0, WARP - warps)]  # lanes >= 16 of warp 0 load zeros
    means, var_n, _ = (a[..., 0] for a in butterfly(*(np.pad(a[..., 0], pad) for a in merged)))
    invstds = (1.0 / np.sqrt((var_n / F32(b * VALUES)).astype(F64) + F64(F32(EPS)))).astype(F32)
    eps, count = F32(EPS), F32(b * VALUES)  # batch_norm_reduce_statistics_kernel, devices in order
    avg, var_n, n = np.zeros(x.shape[0], F32), np.zeros(x.shape[0], F32), 0
    for m, invstd in zip(means, invstds):
        v = F32(1.0) / invstd
        v, factor, nf, d = (v * v - eps) * count, F32(1.0 / float(F32(F32(n) + count))), F32(n), avg - m
        var_n = var_n + (v + d * d * nf * count * factor)
        avg, n = nf * factor * avg + count * factor * m, int(F32(n) + count)
    return avg, var_n / F32(n), F32(1.0) / np.sqrt(var_n / F32(n) + eps), var_n / F32(n - 1)


def ordo_sync(x, ranks):
    xd = x.reshape(x.shape[0], ranks, -1).astype(F64)  # (C, R, values per rank)
    nr = float(xd.shape[2])
    means = xd.sum(axis=2) / nr
    m2s = ((xd - means[:, :, None]) ** 2).sum(axis=2)
    count, mean, m2 = 0.0, np.zeros(x.shape[0]), np.zeros(x.shape[0])
    for j in range(ranks):
        n, delta = count + nr, means[:, j] - mean
        mean, m2, count = mean + delta * (nr / n), m2 + (m2s[:, j] + delta * delta * (count * nr / n)), n
    return mean, m2 / count, 1.0 / np.sqrt(m2 / count + EPS), m2 / (count - 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=20240607)
    seed = ap.parse_args().seed
    rng = np.random.default_rng(seed)
    cases = [(name, (shift + scale * rng.standard_normal((BATCH, VALUES))).astype(F32)) for name, shift, scale in (
        ("1 + N(0,1) (baseline)", 1.0, 1.0), ("1e4 + N(0,1)", 1e4, 1.0), ("1e4 + 0.01 N(0,1)", 1e4, 0.01),
        ("1 + N(0,1e-9), var << eps", 1.0, math.sqrt(1e-9)), ("1 + N(0,1e-12), var << eps", 1.0, 1e-6))]
    x, refs = np.stack([c for _, c in cases]), [exact(c) for _, c in cases]
    print(f"Numpy emulation of both methods' arithmetic (not a run of PyTorch or MPI): PyTorch SyncBatchNorm's "
          f"float32 CUDA kernels vs ordo's float64 two-pass + Chan merge. Seed {seed}, numpy {np.__version__}, eps "
          f"{EPS:g}, {BATCH} x {VALUES} float32 values per channel cut evenly over R devices/ranks. Relative error "
          f"against exact rational arithmetic on the float32 data (invstd to 40 digits).\n")
    labels = ("mean", "biased var", "invstd", "unbiased var (running_var)")
    print("| channel | R | " + " | ".join(f"{label}: PyTorch | {label}: ordo" for label in labels) + " |")
    print("|" + "---|" * (2 + 2 * len(labels)))
    results = {r: (pytorch_sync(x, r), ordo_sync(x, r)) for r in RANKS}
    for c, (name, _) in enumerate(cases):
        for r, (pt, od) in results.items():
            print(f"| {name} | {r} | " + " | ".join(f"{rel_err(pt[k][c], e)} | {rel_err(od[k][c], e)}"
                                                 for k, e in enumerate(refs[c])) + " |")
    const = np.full((1, BATCH, VALUES), 3.0, F32)  # variance 0: relative errors are undefined
    print("\nConstant channel (x = 3, variance 0), unbiased var fed to running_var: PyTorch %s; ordo %s." % tuple(
        ", ".join(f"R={r}: {float(sync(const, r)[3][0]):.2e}" for r in RANKS) for sync in (pytorch_sync, ordo_sync)))


if __name__ == "__main__":
    main()
