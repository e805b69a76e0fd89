#!/usr/bin/python3
"""Precision of synchronized batch-norm statistics: PyTorch's SyncBatchNorm vs ordo, emulated in numpy.

Run: /usr/bin/python3 bench/mpi/sync_statistics_precision.py [--seed S]   (numpy only, ~1 s)

This is a numpy EMULATION of both methods' arithmetic, operation by operation in the precision each
uses; it runs neither PyTorch nor MPI. Each channel of a float32 batch of 512 samples x 64 values
(32,768 values) is cut evenly over R = 1, 8, 64, 512 devices/ranks (R = 512: 64 values each).

PyTorch (CUDA, float input, contiguous NCHW), float32 throughout (acc_type<float, is_cuda> = float):
  per device, torch.batch_norm_stats -> batch_norm_stats_cuda_template<scalar_t, int32_t, InvStd>
  -> batch_norm_collect_statistics_kernel, one block of (64, 8) threads per channel
  (getNumThreads(64) = 64, MAX_BLOCK_SIZE / 64 = 8): each thread runs Welford over its strided
  values (d1 = v - avg; n++; avg += d1 / n; var_n += d1 * (v - avg)); the 32 lanes of each warp
  merge by an XOR butterfly (factor = 1.0 / fmaxf(1.0, n + o_n) computed in double, stored in
  float; var_n += o_var_n + (avg - o_avg)^2 * n * o_n * factor; avg = (n avg + o_n o_avg) * factor),
  lane by lane (partners round differently, as on the GPU); lane 0 of each of the 16 warps goes to
  shared memory and warp 0 merges them the same way; var = var_n / N; invstd = InvStd{}(var, eps)
  = float(1 / sqrt(double(var) + double(float(eps)))) (epsilon is a double parameter there).
  The device's count is a float32 tensor (torch.full(..., dtype=mean.dtype)). After the all-gather,
  torch.batch_norm_gather_stats_with_counts -> batch_norm_gather_stats_cuda_template ->
  batch_norm_reduce_statistics_kernel, in float, devices in order j = 0..R-1:
      v = 1 / invstd_j;  v = (v * v - eps) * count_j;  factor = 1.0 / (n + count_j)
      var_n += v + (avg - m_j)^2 * n * count_j * factor;  avg = n * factor * avg + count_j * factor * m_j
  then mean = avg, invstd = 1 / sqrtf(var_n / n + eps), running_var's term var_n / (n - 1).
  Not emulated: FMA contraction by nvcc (changes last bits, not the size of the errors below), the
  channels-last kernels (batch_norm_collect_statistics_channels_last_kernel, other merge order).

ordo (docs/distributed.md; include/ordo/nn/batch_norm.hpp channel_moments::merge and
batch_norm_apply_statistics), float64 throughout: per rank, the two-pass (count, mean, M2) of its
float data in double (here numpy's pairwise sums); the ranks merged by Chan's formula in rank order
(a left fold: mean += delta * (nb / n); M2 += M2b + delta^2 * (na * nb / n)); invstd = 1 / sqrt(M2/n
+ eps), running_var's term M2 / (n - 1).

Reference: exact rational arithmetic on the float32 values (integers over a common power of two),
so the mean, biased and unbiased variance are exact; invstd = 1 / sqrt(var + 1e-5) to 40 digits with
decimal. Errors are |computed - exact| / |exact|, themselves evaluated exactly (Fraction/Decimal).

Sources read (pytorch/pytorch, through the code-search corpus):
  - torch/nn/modules/_functions.py @ c90c4dc6cc42 (1.1x-era), class SyncBatchNorm, forward:
    batch_norm_stats, count = torch.full(..., dtype=mean.dtype), all_gather of [mean, invstd, count],
    batch_norm_gather_stats_with_counts, batch_norm_elemt; unchanged in substance in the current
    file (016ec49da759), which uses all_gather_into_tensor and drops zero-count ranks.
  - aten/src/ATen/native/cuda/Normalization.cuh @ 3f55db3aea69 (1.13-era): getNumThreads,
    struct InvStd, batch_norm_collect_statistics_kernel, batch_norm_reduce_statistics_kernel,
    batch_norm_stats_cuda_template (threads (tf, MAX_BLOCK_SIZE / tf), epsilon passed as float).
  - aten/src/ATen/native/cuda/Normalization.cu (2.x, namespace at::native): batch_norm_stats_cuda
    (accumulate type of float on CUDA is float; contiguous input -> batch_norm_stats_cuda_template
    with InvStd), batch_norm_gather_stats_with_counts_cuda (scalar_t = running_mean's type,
    accscalar_t = acc_type<scalar_t, true>).
  Not read: batch_norm_gather_stats_cuda_template's body (assumed to launch the kernel above with
  epsilon and momentum as accscalar_t, as its signature says).
"""
import argparse
import decimal
import math
from fractions import Fraction

import numpy as np

F32 = np.float32
F64 = np.float64
EPS = 1e-5
BATCH, VALUES = 512, 64          # per channel: 512 samples x 64 values (e.g. 8 x 8)
RANKS = (1, 8, 64, 512)
WARP = 32
BLOCK_X, BLOCK_Y = 64, 8          # getNumThreads(64) = 64, MAX_BLOCK_SIZE / 64 = 8

decimal.getcontext().prec = 40


def make_cases(rng):
    """(name, float32 data of shape (BATCH, VALUES)) per channel."""
    def z():
        return rng.standard_normal((BATCH, VALUES))
    return [
        ("1 + N(0,1) (baseline)", (1.0 + z()).astype(F32)),
        ("1e4 + N(0,1)", (1e4 + z()).astype(F32)),
        ("1e4 + 0.01 N(0,1)", (1e4 + 0.01 * z()).astype(F32)),
        ("1 + N(0,1e-9), var << eps", (1.0 + math.sqrt(1e-9) * z()).astype(F32)),
        ("1 + N(0,1e-12), var << eps", (1.0 + 1e-6 * z()).astype(F32)),
    ]


# ---------------------------------------------------------------- exact reference
def exact_stats(x):
    """Exact mean, biased and unbiased variance (Fractions) and invstd (Decimal) of float32 data."""
    ratios = [v.as_integer_ratio() for v in x.astype(F64).ravel().tolist()]
    scale = max(d for _, d in ratios)                       # a power of two
    ints = [n * (scale // d) for n, d in ratios]
    n = len(ints)
    s = sum(ints)
    q = sum(i * i for i in ints)
    mean = Fraction(s, n * scale)
    m2 = Fraction(q * n - s * s, n * scale * scale)
    var = m2 / n
    unbiased = m2 / (n - 1)
    v = var + Fraction(EPS)
    invstd = 1 / (decimal.Decimal(v.numerator) / decimal.Decimal(v.denominator)).sqrt()
    return {"mean": mean, "var": var, "invstd": invstd, "unbiased": unbiased}


def rel_err(value, exact):
    value = float(value)
    if not math.isfinite(value):
        return math.inf
    if isinstance(exact, decimal.Decimal):
        return float(abs(decimal.Decimal(value) - exact) / abs(exact))
    return float(abs(Fraction(value) - exact) / abs(exact))


# ---------------------------------------------------------------- PyTorch (float32 CUDA kernels)
def f32_recip_via_double(x):
    """float factor = 1.0 / <float>: the division is done in double, the result stored in float."""
    return (1.0 / x.astype(F64)).astype(F32)


def butterfly(avg, var_n, n):
    """The XOR-shuffle merge of batch_norm_collect_statistics_kernel over the last axis (32 lanes)."""
    lanes = np.arange(WARP)
    for i in range(int(math.log2(WARP))):
        p = lanes ^ (1 << i)
        o_avg, o_var, o_n = avg[..., p], var_n[..., p], n[..., p]
        factor = f32_recip_via_double(np.maximum(1, n + o_n).astype(F32))
        d = avg - o_avg
        nf, of = n.astype(F32), o_n.astype(F32)
        var_n = var_n + (o_var + d * d * nf * of * factor)
        avg = (nf * avg + of * o_avg) * factor
        n = n + o_n
    return avg, var_n, n


def pytorch_device_stats(xd, eps):
    """batch_norm_stats on each device. xd: float32 (..., b, VALUES) -> mean, invstd (float32)."""
    assert xd.shape[-1] == BLOCK_X
    lead, b = xd.shape[:-2], xd.shape[-2]
    shape = lead + (BLOCK_Y, BLOCK_X)
    avg = np.zeros(shape, F32)
    var_n = np.zeros(shape, F32)
    n = np.zeros(shape, np.int64)
    ty = np.arange(BLOCK_Y)
    for k in range(-(-b // BLOCK_Y)):                     # thread (tx, ty) reads batch ty, ty+8, ...
        rows = ty + BLOCK_Y * k
        valid = rows < b
        v = xd[..., np.minimum(rows, b - 1), :]
        d1 = v - avg
        n1 = n + 1
        avg1 = avg + d1 / n1.astype(F32)
        var1 = var_n + d1 * (v - avg1)
        m = valid[:, None]
        avg, var_n, n = np.where(m, avg1, avg), np.where(m, var1, var_n), np.where(m, n1, n)
    # tid = tx + ty * 64; warp = tid / 32, lane = tid % 32
    warps = BLOCK_X * BLOCK_Y // WARP
    avg, var_n, n = (a.reshape(lead + (warps, WARP)) for a in (avg, var_n, n))
    avg, var_n, n = butterfly(avg, var_n, n)
    pad = [(0, 0)] * len(lead) + [(0, WARP - warps)]      # lanes >= 16 of warp 0 load zeros
    avg, var_n, n = (np.pad(a[..., 0], pad) for a in (avg, var_n, n))
    avg, var_n, n = butterfly(avg, var_n, n)
    avg, var_n = avg[..., 0], var_n[..., 0]
    N = b * VALUES
    var = var_n / F32(N)
    eps_f = F64(F32(eps))                                  # kernel parameter is float, InvStd's is double
    invstd = (1.0 / np.sqrt(var.astype(F64) + eps_f)).astype(F32)
    return avg, invstd, F32(N)


def pytorch_gather(means, invstds, counts, eps):
    """batch_norm_reduce_statistics_kernel in float. means, invstds: (R, C); counts: (R,) float32."""
    eps = F32(eps)
    C = means.shape[1]
    avg = np.zeros(C, F32)
    var_n = np.zeros(C, F32)
    n = 0
    for j in range(means.shape[0]):
        count = counts[j]
        m = means[j]
        v = F32(1.0) / invstds[j]
        v = (v * v - eps) * count
        factor = F32(1.0 / float(F32(F32(n) + count)))
        nf = F32(n)
        d = avg - m
        var_n = var_n + (v + d * d * nf * count * factor)
        avg = nf * factor * avg + count * factor * m
        n = int(F32(n) + count)
    invstd = F32(1.0) / np.sqrt(var_n / F32(n) + eps)
    return avg, var_n / F32(n), invstd, var_n / F32(n - 1)


def pytorch_sync(x, ranks, eps):
    """x: (C, BATCH, VALUES) float32."""
    C = x.shape[0]
    xd = x.reshape(C, ranks, BATCH // ranks, VALUES).transpose(1, 0, 2, 3)   # (R, C, b, VALUES)
    means, invstds, count = pytorch_device_stats(xd, eps)
    counts = np.full(ranks, count, F32)
    return pytorch_gather(means, invstds, counts, eps)


# ---------------------------------------------------------------- ordo (float64, Chan)
def ordo_sync(x, ranks, eps):
    C = x.shape[0]
    xd = x.reshape(C, ranks, -1).astype(F64)               # (C, R, values per rank)
    nr = float(xd.shape[2])
    means = xd.sum(axis=2) / nr                             # pass 1
    m2s = ((xd - means[:, :, None]) ** 2).sum(axis=2)       # pass 2
    count, mean, m2 = 0.0, np.zeros(C), np.zeros(C)
    for j in range(ranks):                                  # rank order
        n = count + nr
        delta = means[:, j] - mean
        mean = mean + delta * (nr / n)
        m2 = m2 + (m2s[:, j] + delta * delta * (count * nr / n))
        count = n
    var = m2 / count
    return mean, var, 1.0 / np.sqrt(var + eps), m2 / (count - 1)


# ---------------------------------------------------------------- main
def fmt(e):
    if e == 0:
        return "0"
    if not math.isfinite(e):
        return "inf"
    return f"{e:.1e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=20240607)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    cases = make_cases(rng)
    x = np.stack([c[1] for c in cases])
    refs = [exact_stats(c[1]) for c in cases]

    print(f"Numpy emulation of both methods' arithmetic (not a run of PyTorch or MPI): PyTorch "
          f"SyncBatchNorm's float32 CUDA kernels vs ordo's float64 two-pass + Chan merge. "
          f"Seed {args.seed}, numpy {np.__version__}, eps {EPS:g}, {BATCH} x {VALUES} float32 "
          f"values per channel cut evenly over R devices/ranks. Relative error against exact "
          f"rational arithmetic on the float32 data (invstd to 40 digits).\n")
    keys = [("mean", "mean"), ("var", "biased var"), ("invstd", "invstd"), ("unbiased", "unbiased var (running_var)")]
    head = "| channel | R | " + " | ".join(f"{label}: PyTorch | {label}: ordo" for _, label in keys) + " |"
    print(head)
    print("|" + "---|" * (2 + 2 * len(keys)))
    rows = []
    for ranks in RANKS:
        pt = pytorch_sync(x, ranks, EPS)
        od = ordo_sync(x, ranks, EPS)
        for c, (name, _) in enumerate(cases):
            row = []
            for k, (key, _) in enumerate(keys):
                row.append(fmt(rel_err(pt[k][c], refs[c][key])))
                row.append(fmt(rel_err(od[k][c], refs[c][key])))
            rows.append((c, ranks, name, row))
    for c, ranks, name, row in sorted(rows, key=lambda r: (r[0], r[1])):
        print(f"| {name} | {ranks} | " + " | ".join(row) + " |")
    # A constant channel (variance exactly 0): relative errors are undefined, so print the values.
    const = np.full((1, BATCH, VALUES), 3.0, F32)
    pt_vals = ", ".join(f"R={r}: {float(pytorch_sync(const, r, EPS)[3][0]):.2e}" for r in RANKS)
    od_vals = ", ".join(f"R={r}: {float(ordo_sync(const, r, EPS)[3][0]):.2e}" for r in RANKS)
    print(f"\nConstant channel (x = 3, variance 0), unbiased var fed to running_var: "
          f"PyTorch {pt_vals}; ordo {od_vals}.")

if __name__ == "__main__":
    main()
