#!/usr/bin/python3
"""Grouped bars: each contender's median time over hand-ordered OpenBLAS's, per chain.

Usage: /usr/bin/python3 bench/chain_eval/plot.py RESULTS_JSON OUT_PNG

RESULTS_JSON is what bench/chain_eval/run writes (build/bench/chain_eval_results.json). Whiskers
span the contender's interquartile range over the floor's median. Needs python3-matplotlib.
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import ordo_bench as ob  # noqa: E402

import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

CONTENDERS = [
    ("ordo", "ordo (BLAS)", "#1f77b4"),
    ("ordo_portable", "ordo (portable kernel)", "#aec7e8"),
    ("eigen", "Eigen 3.4", "#d62728"),
    ("armadillo", "Armadillo", "#2ca02c"),
    ("numpy", "numpy multi_dot", "#ff7f0e"),
]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        results = json.load(f)
    chains = results["chains"]
    fig, ax = plt.subplots(figsize=(10, 5.2), dpi=120)
    width = 0.8 / len(CONTENDERS)
    for c, (key, label, color) in enumerate(CONTENDERS):
        xs, heights, low, high = [], [], [], []
        for i, chain in enumerate(chains):
            entry = chain["contenders"].get(key)
            if entry is None:
                continue
            floor = chain["contenders"]["openblas"]["median"]
            ratio = entry["median"] / floor
            xs.append(i - 0.4 + width * (c + 0.5))
            heights.append(ratio)
            low.append(max(ratio - entry["q1"] / floor, 0.0))
            high.append(max(entry["q3"] / floor - ratio, 0.0))
        ax.bar(xs, heights, width, label=label, color=color, edgecolor="black", linewidth=0.4,
               yerr=[low, high], error_kw={"elinewidth": 0.7, "capsize": 1.5})
    top = max(ch["contenders"][k]["q3"] / ch["contenders"]["openblas"]["median"]
              for ch in chains for k, _, _ in CONTENDERS if k in ch["contenders"])
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.1, color="black", linewidth=0.8, linestyle="--", label="1.1 x the floor (goal)")
    ax.set_yscale("log")
    ax.set_ylim(top=max(top, 1.1) * 12)  # room for the legend above the bars
    ax.set_ylabel("median time / hand-ordered OpenBLAS (log scale)")
    ax.set_xticks(range(len(chains)))
    ax.set_xticklabels(["%s\n%d matrices, %.3g mults" % (ch["name"], len(ch["dims"]) - 1, ch["cost"]) for ch in chains],
                       fontsize=8)
    ax.set_title("Matrix-chain evaluation, double, 2 threads: time relative to hand-ordered OpenBLAS dgemm (lower is better)\n"
                 "medians, whiskers = interquartile range; %d-core machine, 1-minute load average %.1f to %.1f"
                 % (ob.machine()["cores"], results["load_start"], results["load_end"]), fontsize=9)
    ax.grid(axis="y", which="both", linewidth=0.3, alpha=0.6)
    handles, labels = ax.get_legend_handles_labels()
    order = [i for i, l in enumerate(labels) if "goal" not in l] + [i for i, l in enumerate(labels) if "goal" in l]
    ax.legend([handles[i] for i in order], [labels[i] for i in order], fontsize=8, ncol=3, loc="upper left")
    fig.tight_layout()
    fig.savefig(sys.argv[2])


if __name__ == "__main__":
    main()
