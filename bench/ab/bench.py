"""A/B: the kernels of ab.cpp against ordo's headers at --base and in the working tree.

Builds bench/ab (its own CMake project) twice, against BASE's include/ (git archive) and the
working tree's, runs the two in alternating processes (--rounds each, 2 OpenMP threads) and
prints each kernel's median and new / old; it writes no doc. Run it after a refactoring.
"""

import os
import statistics
import subprocess
import tempfile

import ordo_bench as ob

IN_ALL, TARGETS = False, ()


def options(p):
    p.add_argument("--base", default="HEAD", help="the commit to compare the working tree with")
    p.add_argument("--rounds", type=int, default=5)


def smoke(args):
    args.rounds = 1


def measure(ctx):
    a, times = ctx.args, {}
    kokkos = ob.shell(["scripts/setup", "--compiler", "g++"]).splitlines()[-1]
    with tempfile.TemporaryDirectory(prefix="ordo_ab_") as work:
        os.mkdir(os.path.join(work, "old"))
        ob.run(["sh", "-c", 'git archive "$0" include | tar -x -C "$1"', a.base, os.path.join(work, "old")])
        for side, root in (("old", os.path.join(work, "old")), ("new", ob.ROOT)):
            ob.run(["cmake", "-S", "bench/ab", "-B", os.path.join(work, side), "-G", "Ninja", "-DCMAKE_CXX_COMPILER=g++",
                    "-DCMAKE_BUILD_TYPE=Release", "-DKokkos_ROOT=" + kokkos, "-DORDO_AB_INCLUDE=%s/include" % root],
                   stdout=subprocess.DEVNULL)
            ob.run(["cmake", "--build", os.path.join(work, side)], stdout=subprocess.DEVNULL)
        for _ in range(a.rounds):
            for side in ("old", "new"):
                out = ob.run([os.path.join(work, side, "ordo_ab")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env=ob.thread_env()).stdout
                for name, us in (line.split("\t") for line in out.splitlines() if not line.startswith("#")):
                    times.setdefault(name, {}).setdefault(side, []).append(float(us))
    head, dirty = ob.commit()
    print("ordo at %s (old) and %s%s (new), %d alternating rounds, load %s\n" % (
        ob.shell(["git", "rev-parse", "--short", a.base]), head, "+changes" if dirty else "", a.rounds,
        " → ".join("%.2f" % x for x in ctx.loads + [ob.loadavg()])))
    medians = [(name, statistics.median(t["old"]), statistics.median(t["new"])) for name, t in times.items()]
    print(ob.table(["kernel", "old, us (median of rounds)", "new, us", "new / old"],
                   [[name, "%.4g" % old, "%.4g" % new, "%.3f" % (new / old)] for name, old, new in medians], "lrrr"))
    return []
