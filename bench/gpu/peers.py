#!/usr/bin/env python3
"""PyTorch on the shapes of bench_gpu, on the same device, and the tables of both with ratios.

  peers.py --ordo ordo.jsonl [--out peers.jsonl] [--tables tables.md] [--device cuda|cpu]
           [--min-seconds T] [--batch B]

Timing matches bench_gpu's: warm-up calls, then rounds of --batch back-to-back calls, each round
synchronized once; the time per call is the median round over the batch. On CUDA, PyTorch's
caching allocator makes fresh outputs cheap, but every peer that has one writes into a
preallocated output anyway (`out=` variants), so kernels are compared with kernels.

Data follow bench_gpu: uniform in [-1, 1), batch norm inputs shifted by 0.01 per channel. The
exact values differ (PyTorch's generator), which moves no timing.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def timer(device, min_seconds, batch, min_rounds=10, warmup=3):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def run(f):
        for _ in range(warmup):
            f()
        sync()
        rounds, total = [], 0.0
        while len(rounds) < min_rounds or total < min_seconds:
            start = time.perf_counter()
            for _ in range(batch):
                f()
            sync()
            seconds = time.perf_counter() - start
            rounds.append(seconds / batch)
            total += seconds
            if len(rounds) >= 2000:
                break
        q = statistics.quantiles(rounds, n=4) if len(rounds) > 1 else [rounds[0]] * 3
        return {"seconds": statistics.median(rounds), "q1": q[0], "q3": q[2]}

    return run


def peers(device, time_of, scale):
    rows = []

    def add(group, case, contender, t, bytes_=0, note=""):
        rows.append(dict(group=group, case=case, contender=contender, bytes=bytes_, note=note, **t))
        print(f"  {group:10s} {case:28s} {contender:22s} {t['seconds'] * 1e6:10.1f} us", file=sys.stderr)

    dev = torch.device(device)
    n = (1 << 28) // scale
    a = torch.rand(n, device=dev) * 2 - 1
    b = torch.empty_like(a)
    add("copy", "2^28 float", "torch_copy", time_of(lambda: b.copy_(a)), 2 * n * 4)
    del a, b

    for dtype, type_name in ((torch.float32, "float"), (torch.bfloat16, "bfloat16")):
        batch = max(1, 32 // scale)
        for case, shape, channels_last in (("(32,64,56,56) NCHW", (batch, 64, 56, 56), False),
                                           ("(32,64,56,56) NHWC", (batch, 64, 56, 56), True),
                                           ("(256,1024)", (256, 1024), False)):
            c = shape[1]
            shift = (0.01 * torch.arange(c, device=dev, dtype=torch.float32)).reshape((1, c) + (1,) * (len(shape) - 2))
            x = (torch.rand(shape, device=dev) * 2 - 1 + shift).to(dtype)
            dy = (torch.rand(shape, device=dev) * 2 - 1).to(dtype)
            if channels_last:
                x = x.contiguous(memory_format=torch.channels_last)
                dy = dy.contiguous(memory_format=torch.channels_last)
            weight = torch.ones(c, device=dev)
            bias = torch.zeros(c, device=dev)
            running_mean, running_var = torch.zeros(c, device=dev), torch.ones(c, device=dev)

            def forward_backward():
                y, save_mean, save_invstd = torch.ops.aten.native_batch_norm(
                    x, weight, bias, running_mean, running_var, True, 0.1, 1e-5)
                torch.ops.aten.native_batch_norm_backward(
                    dy, x, weight, running_mean, running_var, save_mean, save_invstd, True, 1e-5, [True, True, True])

            add("batch_norm", f"{case} {type_name}", "torch_native_batch_norm", time_of(forward_backward),
                8 * x.numel() * x.element_size(), "allocates y, dx (caching allocator)")

        rows_ = max(1, 4096 // scale)
        x = torch.rand((rows_, 32000), device=dev).to(dtype) * 2 - 1
        y = torch.empty_like(x)
        add("softmax", f"(4096,32000) {type_name}", "torch_softmax_out",
            time_of(lambda: torch.ops.aten._softmax.out(x, -1, False, out=y)), 2 * x.numel() * x.element_size())

    for dtype, type_name in ((torch.float32, "float"), (torch.float64, "double")):
        x = torch.rand(n, device=dev, dtype=dtype) * 2 - 1
        out = torch.empty((), device=dev, dtype=dtype)
        add("sum", f"2^28 {type_name}", "torch_sum_out", time_of(lambda: torch.sum(x, 0, out=out)),
            n * x.element_size())
        del x

    def chain(name, dims):
        mats = [torch.rand((dims[k], dims[k + 1]), device=dev, dtype=torch.float64) for k in range(len(dims) - 1)]
        add("chain", name, "torch_multi_dot", time_of(lambda: torch.linalg.multi_dot(mats)), 0,
            "allocates its result (caching allocator)")

    chain("clrs_x10", [300, 350, 150, 50, 100, 200, 250])
    chain("six_1000", [1000, 900, 1100, 800, 1200, 950, 1050])
    rows_h = 20000 // scale
    h = torch.rand((rows_h, 300), device=dev, dtype=torch.float64)
    v = torch.rand((300, 1), device=dev, dtype=torch.float64)
    add("chain", f"H^T H x, H {rows_h}x300", "torch_multi_dot", time_of(lambda: torch.linalg.multi_dot([h.T, h, v])))
    return rows


def key(row):
    case = row["case"]
    # bench_gpu names chains with their planned order appended ("clrs_x10 ((A1(A2A3))...)").
    if row["group"] == "chain" and not case.startswith("H^T"):
        case = case.split(" ")[0]
    return row["group"], case


def tables(ordo_rows, peer_rows, device_name):
    copy = [r for r in ordo_rows if r["group"] == "copy"]
    copy_bw = copy[0]["bytes"] / copy[0]["seconds"] if copy else None
    torch_copy = [r for r in peer_rows if r["group"] == "copy"]
    lines = [f"Device: {device_name}. Median time per call; bandwidth = the bytes a call must move "
             "(bench/gpu/bench_gpu.cpp says which) over its time."]
    if copy_bw:
        lines.append(f"Copy bandwidth (Kokkos::deep_copy, 2^28 floats, read + write): {copy_bw / 1e9:.0f} GB/s"
                     + (f"; PyTorch copy_: {torch_copy[0]['bytes'] / torch_copy[0]['seconds'] / 1e9:.0f} GB/s"
                        if torch_copy else "") + ".")
    lines.append("")
    lines.append("| kernel | case | ordo | peer | peer time / ordo time | ordo % of copy bandwidth | note |")
    lines.append("|---|---|---|---|---|---|---|")
    peers_by_key = {}
    for r in peer_rows:
        peers_by_key.setdefault(key(r), []).append(r)
    ordo_by_key = {}
    for r in ordo_rows:
        ordo_by_key.setdefault(key(r), []).append(r)
    for k, rows in ordo_by_key.items():
        if k[0] == "copy":
            continue
        ours = [r for r in rows if r["contender"].startswith("ordo")]
        others = [r for r in rows if not r["contender"].startswith("ordo") and r["seconds"] > 0]
        others += peers_by_key.get(k, [])
        notes = "; ".join(r["note"] for r in rows if r["note"])
        for o in ours:
            bw = (f"{100 * o['bytes'] / o['seconds'] / copy_bw:.0f} %" if copy_bw and o["bytes"] else "")
            for p in others or [None]:
                lines.append("| {} | {} | {} {:.1f} µs | {} | {} | {} | {} |".format(
                    k[0], rows[0]["case"], o["contender"], o["seconds"] * 1e6,
                    f"{p['contender']} {p['seconds'] * 1e6:.1f} µs" if p else "",
                    f"{p['seconds'] / o['seconds']:.2f}" if p else "", bw, notes))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ordo", required=True)
    parser.add_argument("--out")
    parser.add_argument("--tables")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--scale", type=int, default=1)
    parser.add_argument("--min-seconds", type=float, default=0.4)
    parser.add_argument("--batch", type=int, default=10)
    args = parser.parse_args()
    with open(args.ordo) as f:
        ordo_rows = [json.loads(line) for line in f if line.strip()]
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"peers.py: PyTorch {torch.__version__} on {device_name}", file=sys.stderr)
    peer_rows = peers(args.device, timer(args.device, args.min_seconds, args.batch), args.scale)
    if args.out:
        with open(args.out, "w") as f:
            for r in peer_rows:
                f.write(json.dumps(r) + "\n")
    text = tables(ordo_rows, peer_rows, f"{device_name}, PyTorch {torch.__version__}")
    if args.tables:
        with open(args.tables, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
