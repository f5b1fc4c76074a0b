#!/usr/bin/env python3
"""torch.sort on the workloads of gpu-algos' sort_bench example, timed the same way: device events
around the call on an idle stream (`host`), and the same after a 256 MiB memset that has finished
(`flushed`); medians of 50 calls up to 2^20, 20 up to 2^26, 10 above, after 3 warm-ups. Keys: int32
(torch has no unsigned 32-bit sort; the same random bits), float32 in [-1, 1), int64; `keys_*` is
`torch.sort(x)`, `pairs_u32` is `torch.sort(x, stable=True)` with its int64 indices (the positions:
torch's pairs). Every output is checked against the sorted input (torch.sort of a CPU copy
for n <= 2^24, elsewhere sortedness and the sum of the keys: exact in int64 for integers, within
1e-6 of the sum of |x| for floats).

    python3 bench/torch_sort.py --csv torch-sort.csv [--kmin 10] [--kmax 30] [--only W,W] [--dists D,D]

`--dists`: the distributions (default uniform,few,equal; also narrow, keys below 2^16, and sorted);
float32 keys take uniform only, int64 keys uniform, narrow and sorted.

CSV columns: timing,workload,dist,n,impl,ms,gkeys.
"""
import argparse
import sys

import torch


def reps_for(n):
    return 50 if n <= 1 << 20 else 20 if n <= 1 << 26 else 10


def time_calls(reps, flush, call):
    ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    t = []
    for k in range(reps + 3):
        if flush is not None:
            flush.fill_(k & 0xFF)
        torch.cuda.synchronize()
        ev0.record()
        call()
        ev1.record()
        ev1.synchronize()
        if k >= 3:
            t.append(ev0.elapsed_time(ev1))
    t.sort()
    return t[len(t) // 2]


def make_keys(n, dist, dtype, gen):
    if dtype == torch.float32:
        pool = lambda m: torch.rand(m, device="cuda", generator=gen) * 2 - 1
    else:
        info = torch.iinfo(dtype)
        pool = lambda m: torch.randint(info.min, info.max, (m,), dtype=dtype, device="cuda", generator=gen)
    if dist == "few":
        few = pool(16)
        return few[torch.randint(0, 16, (n,), device="cuda", generator=gen)]
    if dist == "equal":
        return pool(1).expand(n).contiguous()
    if dist == "narrow":
        return torch.randint(0, 1 << 16, (n,), dtype=dtype, device="cuda", generator=gen)
    if dist == "sorted":
        return pool(n).sort().values
    return pool(n)


def check(x, out, idx, what):
    ok = bool((out[1:] >= out[:-1]).all())
    if idx is not None:
        ok = ok and bool((x[idx] == out).all())
        same = out[1:] == out[:-1]
        ok = ok and bool(((idx[1:] > idx[:-1]) | ~same).all())
    elif x.numel() <= 1 << 24:
        ok = ok and bool((torch.sort(x.cpu()).values == out.cpu()).all())
    elif x.dtype == torch.float32:
        # A sum of 2^30 values in two orders differs by rounding: within 1e-6 of each other.
        a, b = float(x.double().sum()), float(out.double().sum())
        ok = ok and abs(a - b) <= 1e-6 * max(1.0, float(x.double().abs().sum()))
    else:
        ok = ok and bool(x.long().sum() == out.long().sum())
    if not ok:
        print(f"CHECK FAILED {what}", file=sys.stderr)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--kmin", type=int, default=10)
    ap.add_argument("--kmax", type=int, default=30)
    ap.add_argument("--only", help="only these workloads: keys_u32, pairs_u32, keys_f32, keys_u64")
    ap.add_argument("--dists", default="uniform,few,equal",
                    help="distributions: uniform, few, equal, narrow (keys below 2^16), sorted")
    a = ap.parse_args()
    dists = a.dists.split(",")
    unknown = [d for d in dists if d not in ("uniform", "few", "equal", "narrow", "sorted")]
    if unknown:
        ap.error(f"unknown distribution {unknown[0]}")
    csv = open(a.csv, "w") if a.csv else None
    if csv:
        csv.write("timing,workload,dist,n,impl,ms,gkeys\n")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", file=sys.stderr)
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    failures = 0
    for k in range(a.kmin, a.kmax + 1, 2):
        n = 1 << k
        jobs = [("keys_u32", d, torch.int32, False) for d in dists]
        jobs += [("pairs_u32", d, torch.int32, True) for d in dists]
        if "uniform" in dists:
            jobs += [("keys_f32", "uniform", torch.float32, False)]
        if k <= 28:
            jobs += [("keys_u64", d, torch.int64, False) for d in dists if d in ("uniform", "narrow", "sorted")]
        if a.only:
            jobs = [j for j in jobs if j[0] in a.only.split(",")]
        for workload, dist, dtype, pairs in jobs:
            x = make_keys(n, dist, dtype, gen)
            call = (lambda: torch.sort(x, stable=True)) if pairs else (lambda: torch.sort(x))
            out, idx = call()
            if not check(x, out, idx if pairs else None, f"{workload} {dist} n = {n}"):
                failures += 1
            for timing, f in (("host", None), ("flushed", flush)):
                ms = time_calls(reps_for(n), f, call)
                gkeys = n / (ms * 1e-3) / 1e9
                print(f"{timing:7} {workload:12} {dist:7} n = 2^{k:2}  {ms:10.4f} ms  {gkeys:7.2f} Gkeys/s")
                if csv:
                    csv.write(f"{timing},{workload},{dist},{n},torch,{ms:.6f},{gkeys:.4f}\n")
            del x, out, idx
        if csv:
            csv.flush()
    if failures:
        print(f"{failures} CHECK FAILED", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
