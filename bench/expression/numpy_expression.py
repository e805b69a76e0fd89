#!/usr/bin/python3
"""numpy on the cases of bench_expression: `@` chained as written (left to right) and
numpy.linalg.multi_dot (optimal order), with the same inputs and timing scheme.

Usage: /usr/bin/python3 bench/expression/numpy_expression.py CPP_JSON OUT_DIR > numpy.json

CPP_JSON is bench_expression's output (run with --out-dir OUT_DIR): it gives the seed, each case's
operands with fingerprints of their bits and the file holding the reference result (hand-ordered
OpenBLAS, row-major float64). The operands are regenerated here bit for bit (expression_bench.hpp's
input_value, vectorized) and checked against the fingerprints; both results are checked against
the reference (relative Frobenius difference).

Vectors are (n, 1) arrays, so that `x.T` is a row. Threads come from the environment (run sets
OPENBLAS_NUM_THREADS=2 before this starts). Use /usr/bin/python3: Debian's python3-numpy.
"""

import functools
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ordo_bench as ob  # noqa: E402

import numpy as np  # noqa: E402

GAMMA = np.uint64(ob.GAMMA)
multi_dot = np.linalg.multi_dot


def operand_stream(seed, case, k):
    return ob.mix64(np.uint64(seed) ^ (np.uint64(case) << np.uint64(32)) ^ np.uint64(k))


def input_matrix(stream, rows, cols):
    """expression_bench.hpp's input_value for every element, row-major."""
    bits = ob.splitmix64(int(stream), rows * cols)
    unit = (bits >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    return ((2.0 * unit - 1.0) * np.sqrt(3.0 / cols)).reshape(rows, cols)


def fingerprint(m):
    bits = np.ascontiguousarray(m).reshape(-1).view(np.uint64)
    index = np.arange(bits.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        return int(np.sum(ob.mix64(bits ^ (index * GAMMA)), dtype=np.uint64))


def chain(ops):
    return [ops["A%d" % (k + 1)] for k in range(len(ops))]


# Each case as numpy users write it: (`@` chained, multi_dot).
CASES = {
    "hth_x": (lambda o: o["H"].T @ o["H"] @ o["x"], lambda o: multi_dot([o["H"].T, o["H"], o["x"]])),
    "hty_xth": (lambda o: o["H"].T @ o["y"] @ o["x"].T @ o["H"],
                lambda o: multi_dot([o["H"].T, o["y"], o["x"].T, o["H"]])),
    "m_a_b": (lambda o: o["M"] @ o["A"] @ o["B"], lambda o: multi_dot([o["M"], o["A"], o["B"]])),
    "a_b_m": (lambda o: o["A"] @ o["B"] @ o["M"], lambda o: multi_dot([o["A"], o["B"], o["M"]])),
    "a_m1_m2_b": (lambda o: o["A"] @ o["M1"] @ o["M2"] @ o["B"],
                  lambda o: multi_dot([o["A"], o["M1"], o["M2"], o["B"]])),
    "clrs_x10": (lambda o: functools.reduce(np.matmul, chain(o)), lambda o: multi_dot(chain(o))),
    "random_16": (lambda o: functools.reduce(np.matmul, chain(o)), lambda o: multi_dot(chain(o))),
}


def time_case(fn, cfg):
    """The C++ side's scheme: per round a settle pause, then ordo_bench.time_calls: a warm-up (kept
    when it alone takes the block time), then runs until min_reps and block_seconds are both reached."""
    samples = []
    for _ in range(cfg["rounds"]):
        time.sleep(cfg["settle_seconds"])
        samples += ob.time_calls(fn, min_reps=cfg["min_reps"], max_reps=cfg["max_reps"],
                                 min_seconds=cfg["block_seconds"], keep_slow_warm_up=True)[0]
    return samples


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        cpp = json.load(f)
    out_dir = sys.argv[2]
    cases = {}
    all_agree = True
    for case in cpp["cases"]:
        ops = {}
        for k, o in enumerate(case["operands"]):
            a = input_matrix(operand_stream(cpp["seed"], case["index"], k), o["rows"], o["cols"])
            if fingerprint(a) != int(o["fingerprint"]):
                sys.exit("numpy_expression: case %s, %s differs from the C++ inputs" % (case["name"], o["name"]))
            ops[o["name"]] = a
        reference = np.fromfile(os.path.join(out_dir, case["reference"]), dtype=np.float64)
        reference = reference.reshape(case["dims"][0], case["dims"][-1])
        entries = {}
        for key, fn in zip(("numpy_matmul", "numpy_multi_dot"), CASES[case["name"]]):
            time.sleep(cpp["settle_seconds"])
            result = np.asarray(fn(ops)).reshape(reference.shape)
            difference = float(np.linalg.norm(result - reference) / np.linalg.norm(reference))
            del result
            all_agree = all_agree and difference < 1e-10
            samples = time_case(lambda: fn(ops), cpp)
            entries[key] = dict(ob.summary(samples), relative_difference=difference, samples=samples)
            print("case %s: %s median %.4g s over %d runs, relative difference %.3e" % (
                case["name"], key, entries[key]["median"], len(samples), difference), file=sys.stderr, flush=True)
        cases[case["name"]] = entries
    json.dump({"numpy": np.__version__, "python": sys.version.split()[0],
               "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS", "unset"),
               "cases": cases, "all_agree": all_agree}, sys.stdout, indent=1)
    print()
    sys.exit(0 if all_agree else 1)


if __name__ == "__main__":
    main()
