#!/usr/bin/env python3
"""The sort's tables from the three CSVs of one session (gpu-algos' sort_bench, bench/sort.cu with CUB
and the nvcc twin of the library's algorithm, bench/torch_sort.py): one row per workload,
distribution and n, with each implementation's median time and the ratios (the other's time over
ours: above 1, ours is faster; the twin's ratio below 1 is what the Rust build loses to nvcc).

    python3 bench/sort_tables.py bench/sort-gpu-algos.csv bench/sort-cub.csv bench/sort-torch.csv > bench/sort.md
"""
import csv
import sys


def main():
    rows = {}
    for path in sys.argv[1:]:
        for r in csv.DictReader(open(path)):
            rows[(r["timing"], r["workload"], r["dist"], int(r["n"]), r["impl"])] = float(r["ms"])
    keys = sorted({(t, w, d) for (t, w, d, _, _) in rows}, key=lambda k: (k[0] != "host", k[1], k[2]))
    print("# The sort on an H200: gpu-algos, its nvcc twin, CUB, torch\n")
    print("Times in µs, medians; ratios are the other's time over gpu-algos' (above 1: gpu-algos is faster).")
    print("`host`: events around the call on an idle stream; `flushed`: the same after a 256 MiB memset.\n")
    for t, w, d in keys:
        ns = sorted({n for (t2, w2, d2, n, _) in rows if (t2, w2, d2) == (t, w, d)})
        print(f"## {w}, {d} keys, {t}\n")
        print("| n | gpu-algos | nvcc twin | CUB | torch | twin / ours | CUB / ours | torch / ours |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for n in ns:
            o, tw, c, th = (rows.get((t, w, d, n, i)) for i in ("gpu-algos", "nvcc-twin", "cub", "torch"))
            f = lambda v: f"{v * 1000:.1f}" if v is not None else "—"
            r = lambda v: f"{v / o:.2f}x" if o and v else "—"
            print(f"| 2^{n.bit_length() - 1} | {f(o)} | {f(tw)} | {f(c)} | {f(th)} | {r(tw)} | {r(c)} | {r(th)} |")
        print()


if __name__ == "__main__":
    main()
