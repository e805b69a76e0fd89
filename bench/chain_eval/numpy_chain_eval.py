#!/usr/bin/python3
"""numpy.linalg.multi_dot on the chains of bench_chain_eval, with the same inputs and timing scheme.

Usage: /usr/bin/python3 bench/chain_eval/numpy_chain_eval.py CPP_JSON OUT_DIR > numpy.json

CPP_JSON is bench_chain_eval's output (run with --out-dir OUT_DIR): it gives the seed, each
chain's dims, fingerprints of its inputs and the file holding the reference result (hand-ordered
OpenBLAS, row-major float64). The inputs are regenerated here bit for bit (chain_eval.hpp's
input_value, vectorized) and checked against the fingerprints; the result of multi_dot is checked
against the reference (relative Frobenius difference).

Threads come from the environment (run sets OPENBLAS_NUM_THREADS=2 before this starts). Use
/usr/bin/python3: Debian's python3-numpy is installed for it.
"""

import gc
import json
import os
import statistics
import sys
import time

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)


def mix64(z):
    """splitmix64's output function on uint64 scalars or arrays (wrapping arithmetic)."""
    z = np.asarray(z, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def matrix_stream(seed, chain, matrix):
    return mix64(np.uint64(seed) ^ (np.uint64(chain) << np.uint64(32)) ^ np.uint64(matrix))


def input_matrix(stream, rows, cols):
    """chain_eval.hpp's input_value for every element, row-major."""
    index = np.arange(rows * cols, dtype=np.uint64)
    with np.errstate(over="ignore"):
        bits = mix64(stream + (index + np.uint64(1)) * GAMMA)
    unit = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return ((2.0 * unit - 1.0) * np.sqrt(3.0 / cols)).reshape(rows, cols)


def fingerprint(m):
    bits = np.ascontiguousarray(m).reshape(-1).view(np.uint64)
    index = np.arange(bits.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(mix64(bits ^ (index * GAMMA)), dtype=np.uint64))


def seconds_of(arrays):
    start = time.perf_counter()
    result = np.linalg.multi_dot(arrays)
    return time.perf_counter() - start, result


def time_chain(arrays, cfg):
    """The C++ side's scheme: per round a settle pause, a discarded warm-up (kept when it alone
    exceeds the block time), then runs until min_reps and block_seconds are both reached."""
    samples = []
    for _ in range(cfg["rounds"]):
        time.sleep(cfg["settle_seconds"])
        gc.collect()
        gc.disable()
        try:
            warm_up, _ = seconds_of(arrays)
            reps, total = 0, 0.0
            if warm_up > cfg["block_seconds"]:
                samples.append(warm_up)
                reps, total = 1, warm_up
            while reps < cfg["max_reps"] and (reps < cfg["min_reps"] or total < cfg["block_seconds"]):
                t, _ = seconds_of(arrays)
                samples.append(t)
                reps += 1
                total += t
        finally:
            gc.enable()
    return samples


def quantile(v, q):
    v = sorted(v)
    pos = q * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        cpp = json.load(f)
    out_dir = sys.argv[2]
    chains = {}
    all_agree = True
    for chain in cpp["chains"]:
        dims = chain["dims"]
        arrays = []
        for k in range(len(dims) - 1):
            m = input_matrix(matrix_stream(cpp["seed"], chain["index"], k), dims[k], dims[k + 1])
            if fingerprint(m) != int(chain["fingerprints"][k]):
                sys.exit("numpy_chain_eval: chain %s, A%d differs from the C++ inputs" % (chain["name"], k + 1))
            arrays.append(m)
        reference = np.fromfile(os.path.join(out_dir, chain["reference"]), dtype=np.float64).reshape(dims[0], dims[-1])
        time.sleep(cpp["settle_seconds"])
        result = np.linalg.multi_dot(arrays)
        difference = float(np.linalg.norm(result - reference) / np.linalg.norm(reference))
        all_agree = all_agree and difference < 1e-10
        samples = time_chain(arrays, cpp)
        chains[chain["name"]] = {
            "median": statistics.median(samples), "q1": quantile(samples, 0.25), "q3": quantile(samples, 0.75),
            "min": min(samples), "reps": len(samples), "relative_difference": difference, "samples": samples,
        }
        print("chain %s: numpy median %.4g s over %d runs, relative difference %.3e" % (
            chain["name"], chains[chain["name"]]["median"], len(samples), difference), file=sys.stderr, flush=True)
    json.dump({"numpy": np.__version__, "python": sys.version.split()[0],
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
               "chains": chains, "all_agree": all_agree}, sys.stdout, indent=1)
    print()
    sys.exit(0 if all_agree else 1)


if __name__ == "__main__":
    main()
