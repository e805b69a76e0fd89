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

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ordo_bench as ob  # noqa: E402

import numpy as np  # noqa: E402

GAMMA = np.uint64(ob.GAMMA)


def matrix_stream(seed, chain, matrix):
    return ob.mix64(np.uint64(seed) ^ (np.uint64(chain) << np.uint64(32)) ^ np.uint64(matrix))


def input_matrix(stream, rows, cols):
    """chain_eval.hpp's input_value for every element, row-major."""
    bits = ob.splitmix64(int(stream), rows * cols)
    unit = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return ((2.0 * unit - 1.0) * np.sqrt(3.0 / cols)).reshape(rows, cols)


def fingerprint(m):
    bits = np.ascontiguousarray(m).reshape(-1).view(np.uint64)
    index = np.arange(bits.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(ob.mix64(bits ^ (index * GAMMA)), dtype=np.uint64))


def time_chain(arrays, cfg):
    """The C++ side's scheme: per round a settle pause, then ordo_bench.time_calls: a warm-up (kept
    when it alone takes the block time), then runs until min_reps and block_seconds are both reached."""
    samples = []
    for _ in range(cfg["rounds"]):
        time.sleep(cfg["settle_seconds"])
        samples += ob.time_calls(lambda: np.linalg.multi_dot(arrays), min_reps=cfg["min_reps"],
                                 max_reps=cfg["max_reps"], min_seconds=cfg["block_seconds"],
                                 keep_slow_warm_up=True, collect=False)[0]
    return samples


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
        chains[chain["name"]] = dict(ob.summary(samples), relative_difference=difference, samples=samples)
        print("chain %s: numpy median %.4g s over %d runs, relative difference %.3e" % (
            chain["name"], chains[chain["name"]]["median"], len(samples), difference), file=sys.stderr, flush=True)
    json.dump({"numpy": np.__version__, "python": sys.version.split()[0],
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
               "chains": chains, "all_agree": all_agree}, sys.stdout, indent=1)
    print()
    sys.exit(0 if all_agree else 1)


if __name__ == "__main__":
    main()
