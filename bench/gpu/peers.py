#!/usr/bin/env python3
"""PyTorch on bench_gpu's shapes and device, then the tables of both with ratios (scripts/gpu-check).

Timed as bench_gpu times (3 warm-up calls, rounds of 10 calls synchronized once, the median round over 10),
into preallocated outputs where PyTorch has `out=` variants, on data uniform in [-1, 1) (batch norm inputs
shifted by 0.01 per channel) from PyTorch's generator.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def peers(device, scale, min_seconds):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    dev, rows = torch.device(device), []

    def add(group, case, contender, f, bytes_=0, note=""):
        for _ in range(3):
            f()
        sync()
        rounds, total = [], 0.0
        while len(rounds) < 2000 and (len(rounds) < 10 or total < min_seconds):
            start = time.perf_counter()
            for _ in range(10):
                f()
            sync()
            rounds.append((time.perf_counter() - start) / 10)
            total += rounds[-1] * 10
        q = statistics.quantiles(rounds, n=4)
        rows.append(dict(group=group, case=case, contender=contender, bytes=bytes_, note=note,
                         seconds=statistics.median(rounds), q1=q[0], q3=q[2]))
        print(f"  {group:10s} {case:28s} {contender:22s} {rows[-1]['seconds'] * 1e6:10.1f} us", file=sys.stderr)

    def rand(shape, dtype=torch.float32):
        return torch.rand(shape, device=dev, dtype=dtype) * 2 - 1

    n = (1 << 28) // scale
    a = rand(n)
    b = torch.empty_like(a)
    add("copy", "2^28 float", "torch_copy", lambda: b.copy_(a), 2 * n * 4)
    del a, b
    for dtype, type_name in ((torch.float32, "float"), (torch.bfloat16, "bfloat16")):
        for case, shape, channels_last in (("(32,64,56,56) NCHW", (max(1, 32 // scale), 64, 56, 56), False),
                                           ("(32,64,56,56) NHWC", (max(1, 32 // scale), 64, 56, 56), True),
                                           ("(256,1024)", (256, 1024), False)):
            c = shape[1]
            shift = 0.01 * torch.arange(c, device=dev, dtype=torch.float32).reshape((1, c) + (1,) * (len(shape) - 2))
            x, dy = (rand(shape) + shift).to(dtype), rand(shape).to(dtype)
            if channels_last:
                x, dy = (t.contiguous(memory_format=torch.channels_last) for t in (x, dy))
            weight, bias, mean, var = (torch.full((c,), v, device=dev) for v in (1.0, 0.0, 0.0, 1.0))

            def forward_backward():
                _, save_mean, save_invstd = torch.ops.aten.native_batch_norm(x, weight, bias, mean, var, True, 0.1, 1e-5)
                torch.ops.aten.native_batch_norm_backward(dy, x, weight, mean, var, save_mean, save_invstd, True, 1e-5,
                                                          [True, True, True])

            add("batch_norm", f"{case} {type_name}", "torch_native_batch_norm", forward_backward,
                8 * x.numel() * x.element_size(), "allocates y, dx (caching allocator)")
        x = rand((max(1, 4096 // scale), 32000)).to(dtype)
        y = torch.empty_like(x)
        add("softmax", f"(4096,32000) {type_name}", "torch_softmax_out",
            lambda: torch.ops.aten._softmax.out(x, -1, False, out=y), 2 * x.numel() * x.element_size())
    for dtype, type_name in ((torch.float32, "float"), (torch.float64, "double")):
        x, out = rand(n, dtype), torch.empty((), device=dev, dtype=dtype)
        add("sum", f"2^28 {type_name}", "torch_sum_out", lambda: torch.sum(x, 0, out=out), n * x.element_size())
        del x
    for name, dims in (("clrs_x10", [300, 350, 150, 50, 100, 200, 250]),
                       ("six_1000", [1000, 900, 1100, 800, 1200, 950, 1050])):
        mats = [rand((p, q), torch.float64) for p, q in zip(dims, dims[1:])]
        add("chain", name, "torch_multi_dot", lambda: torch.linalg.multi_dot(mats), 0,
            "allocates its result (caching allocator)")
    h, v = rand((20000 // scale, 300), torch.float64), rand((300, 1), torch.float64)
    add("chain", f"H^T H x, H {20000 // scale}x300", "torch_multi_dot", lambda: torch.linalg.multi_dot([h.T, h, v]))
    return rows


def key(row):  # bench_gpu appends the planned order to a chain's name ("clrs_x10 ((A1(A2A3))...)")
    chain = row["group"] == "chain" and not row["case"].startswith("H^T")
    return row["group"], row["case"].split(" ")[0] if chain else row["case"]


def tables(ordo_rows, peer_rows, device_name):
    by_key = {}
    for r in ordo_rows + peer_rows:
        by_key.setdefault(key(r), []).append(r)
    copy_bw = {r["contender"]: r["bytes"] / r["seconds"] for r in by_key.get(("copy", "2^28 float"), [])}
    lines = [f"Device: {device_name}. Median time per call; bandwidth = the bytes a call must move "
             "(bench/gpu/bench_gpu.cpp says which) over its time."]
    if "kokkos_deep_copy" in copy_bw:
        lines.append(f"Copy bandwidth (Kokkos::deep_copy, 2^28 floats, read + write): {copy_bw['kokkos_deep_copy'] / 1e9:.0f}"
                     " GB/s" + (f"; PyTorch copy_: {copy_bw['torch_copy'] / 1e9:.0f} GB/s" if "torch_copy" in copy_bw
                                else "") + ".")
    lines += ["", "| kernel | case | ordo | peer | peer time / ordo time | ordo % of copy bandwidth | note |",
              "|---|---|---|---|---|---|---|"]
    for k, rows in by_key.items():
        ours = [r for r in rows if r["contender"].startswith("ordo")]
        others = [r for r in rows if not r["contender"].startswith("ordo") and r["seconds"] > 0]
        notes = "; ".join(r["note"] for r in rows if r["note"] and r in ordo_rows)
        for o in ours:
            bw = f"{100 * o['bytes'] / o['seconds'] / copy_bw['kokkos_deep_copy']:.0f} %" if (
                "kokkos_deep_copy" in copy_bw and o["bytes"]) else ""
            for p in others or [None]:
                lines.append("| {} | {} | {} {:.1f} µs | {} | {} | {} | {} |".format(
                    k[0], rows[0]["case"], o["contender"], o["seconds"] * 1e6,
                    f"{p['contender']} {p['seconds'] * 1e6:.1f} µs" if p else "",
                    f"{p['seconds'] / o['seconds']:.2f}" if p else "", bw, notes))
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ordo", required=True, help="bench_gpu's output")
    parser.add_argument("--out", help="the peers' JSON lines")
    parser.add_argument("--tables", help="the tables (markdown)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--scale", type=int, default=1, help="divides the big sizes, as bench_gpu's")
    parser.add_argument("--min-seconds", type=float, default=0.4)
    args = parser.parse_args()
    ordo_rows = [json.loads(line) for line in open(args.ordo) if line.strip()]
    device_name = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    print(f"peers.py: PyTorch {torch.__version__} on {device_name}", file=sys.stderr)
    peer_rows = peers(args.device, args.scale, args.min_seconds)
    if args.out:
        with open(args.out, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in peer_rows)
    text = tables(ordo_rows, peer_rows, f"{device_name}, PyTorch {torch.__version__}")
    if args.tables:
        open(args.tables, "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
