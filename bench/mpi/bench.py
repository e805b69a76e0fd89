"""MPI on this machine's loopback: MPI_Allreduce latency and bandwidth, and synchronized batch norm.

bench_mpi under mpirun -np 1 .. 4, one OpenMP thread per rank: MPI_Allreduce of 8 bytes to 2 MiB
(alpha + beta * bytes fitted per rank count) and a batch-norm training step (ordo::mpi against
ordo::nn on each rank's part alone). Writes the `mpi` section of docs/distributed.md.
bench_mpi_chain under mpirun -np 1, 2, 4: distributed chains planned under the SUMMA model
calibrated on the grid and under the flop count, predicted against measured. Writes the
`mpi-chain` section.
"""

import os
import statistics
import subprocess

import ordo_bench as ob

TARGETS = ("bench_mpi", "bench_mpi_chain")
WATCH = ("include", "bench/mpi")


def options(p):
    p.add_argument("--seconds", type=float, default=2.0, help="per step kind and rank count")


def smoke(args):
    args.seconds = 0.0


def measure(ctx):
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
    results = []
    for ranks in (1, 2, 3, 4):
        out = ob.run(["mpirun", "-np", str(ranks), "--oversubscribe", ctx.binary("bench_mpi"), "--seconds",
                      str(ctx.args.seconds)], env=env, capture_output=True, text=True).stdout
        results.append(ob.json_lines(out)[-1])
        ctx.loads.append(ob.loadavg())
    rows = []
    for r in results:
        beta, alpha = statistics.linear_regression(*zip(*r["allreduce"]))
        rows.append([r["ranks"], "%.1f" % (alpha * 1e6), "%.2f" % (beta * 1e9), "%.2f" % (r["local_step"] * 1e3),
                     "%.2f" % (r["sync_step"] * 1e3), "%.3f" % (r["sync_step"] / r["local_step"]),
                     "%.1f" % (r["sync_tiny_step"] * 1e6)])
    sizes = [size for size, _ in results[0]["allreduce"]]
    payload = 8 * (2 * results[0]["channels"] + 1)
    text = "\n".join([
        "Loopback (shared memory on one machine), one OpenMP thread per rank. With 3 and 4 ranks the",
        "2 cores are oversubscribed: those rows show message costs under contention, not scaling.",
        "Batch (32, 64, 56, 56) float cut among the ranks; a step is forward + backward, timed as the",
        "slowest rank's median. \"Messages only\" is the synchronized step on a (2, 64, 1, 1) part per rank:",
        "the four allreduces and little else. Batch norm is memory-bound and the ranks share one",
        "machine's memory bus, so the local step does not shrink with p here as it would across",
        "machines; the ratio column is what synchronizing costs on top of it.", "",
        ob.table(["ranks", "allreduce α (µs)", "β (ns/byte)", "local BN step (ms)", "synchronized step (ms)", "ratio",
                  "messages only (µs)"], rows, "r" * 7), "",
        "MPI_Allreduce(MPI_SUM) of doubles, median µs, by message size (α and β above are the",
        "least-squares fit of these):", "",
        ob.table(["bytes"] + ["%d rank%s" % (r["ranks"], "s" if r["ranks"] > 1 else "") for r in results],
                 [[ob.fmt_count(size)] + ["%.2f" % (r["allreduce"][i][1] * 1e6) for r in results]
                  for i, size in enumerate(sizes)], "r" * (len(results) + 1)), "",
        "Payload per step with C = %d: forward %d bytes and backward %d bytes (16 per channel plus the count), and "
        "before each an agreement message of 72 bytes (4 facts as (v, -v) plus a failure flag, int64)." % (
            results[0]["channels"], payload, payload)])
    software = "%s, Kokkos 3.4.01 (OpenMP), %s" % (
        ob.shell(["ompi_info", "--version"]).splitlines()[0], ob.machine()["cxx"])
    chain_text = chain_section(ctx, env)
    return [ob.Section("mpi", text, software, "docs/distributed.md"),
            ob.Section("mpi-chain", chain_text, software + ", ScaLAPACK 2.2.1 (Debian, Open MPI)", "docs/distributed.md")]


# The transports the chains run over: shared memory (Open MPI's default on one machine) and TCP
# over loopback, a slower "network" (larger alpha and beta) on the same machine.
TRANSPORTS = (("shared memory", []), ("TCP loopback", ["--mca", "btl", "self,tcp"]))


def chain_section(ctx, env):
    calibrations, rows = [], []
    for (transport, mca), ranks in [(t, r) for t in TRANSPORTS for r in (1, 2, 4)]:
        if ranks == 1 and mca:
            continue  # one rank sends nothing
        out = ob.run(["mpirun", "-np", str(ranks), "--oversubscribe", *mca, ctx.binary("bench_mpi_chain"), "--seconds",
                      str(ctx.args.seconds / 2)], env=env, capture_output=True, text=True).stdout
        lines = ob.json_lines(out)
        ctx.loads.append(ob.loadavg())
        lines[0]["transport"] = transport
        calibrations.append(lines[0])
        by_chain = {}
        for r in lines[1:]:
            by_chain.setdefault(r["chain"], {})[r["plan"]] = r
        for chain, plans in by_chain.items():
            o, f = plans["ordo"], plans["flops"]
            same = o["order"] == f["order"]
            rows.append([transport, ranks, chain, o["order"], "%.3f" % (o["predicted_s"] * 1e3), "%.3f" % (o["measured_s"] * 1e3),
                         "same" if same else f["order"],
                         "" if same else "%.3f" % (f["predicted_s"] * 1e3), "" if same else "%.3f" % (f["measured_s"] * 1e3)])
    calibration_rows = [[c["transport"], c["ranks"], "%d x %d" % tuple(c["grid"]), "%.2f" % (c["alpha_s"] * 1e6),
                         "%.3f" % (c["beta_s_per_byte"] * 1e9), "%.1f" % (c["s_per_flop"] * 1e12)] for c in calibrations]
    return "\n".join([
        "One 2-core machine, one OpenMP thread per rank (4 ranks oversubscribe the cores), over shared memory",
        "and over TCP loopback (`--mca btl self,tcp`: a slower network on the same machine).",
        "Calibration per grid (bench_mpi_chain): α and β of one broadcast stage (MPI_Bcast of 8 bytes and",
        "4 MiB on all ranks, over its ceil(log2 P) stages), and the time per flop of one rank's share of",
        "a 512³ p?gemm with the model's own communication taken out:", "",
        ob.table(["transport", "ranks", "grid", "α (µs)", "β (ns/byte)", "time per flop (ps)"], calibration_rows,
                 "lrrrrr"), "",
        "Each chain planned under that calibrated model (ordo's order) and under the flop count alone",
        "(the order one rank would use), predicted by the model and measured with ordo::mpi::evaluate",
        "(slowest rank's median, ms, block 64, double):", "",
        ob.table(["transport", "ranks", "chain (dims)", "ordo's order", "predicted", "measured", "flop-count order",
                  "its predicted", "its measured"], rows, "lrllrrlrr")])
