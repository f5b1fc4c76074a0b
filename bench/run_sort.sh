#!/usr/bin/env bash
# The radix sort's benchmark on this machine's GPU: gpu-algos' `sort_bench`, then CUB and the nvcc
# twin of the library's algorithm (`sort.cu`), then `torch.sort` (`torch_sort.py`), one after the
# other with the same sizes and options; then the tables (`sort_tables.py`).
#
#   bench/run_sort.sh SORT_BENCH OUTDIR [KMIN [KMAX]] [-- OPTIONS...]
#
# SORT_BENCH: the gpu-algos `sort_bench` example built with the `cuda` feature. KMIN and KMAX default
# to 10 and 28. OPTIONS go to all three programs: `--only W,W` (workloads: keys_u32, pairs_u32,
# keys_f32, keys_u64), `--dists D,D` (uniform, few, equal, narrow, sorted). Needs nvcc (built once
# into OUTDIR/sort), an NVIDIA GPU, and Python with torch. Writes OUTDIR/sort-{gpu-algos,cub,torch}.
# {csv,log} and OUTDIR/sort.md (from the CSVs that were written); exits 1 if any program failed or
# any check failed.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 2 ]; then
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
bench="$1"
out="$2"
shift 2
kmin=10
kmax=28
if [ $# -gt 0 ] && [ "$1" != "--" ]; then kmin="$1"; shift; fi
if [ $# -gt 0 ] && [ "$1" != "--" ]; then kmax="$1"; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
mkdir -p "$out"
sizes=(--kmin "$kmin" --kmax "$kmax")
failed=()

echo "== gpu-algos sort_bench"
"$bench" "${sizes[@]}" --csv "$out/sort-gpu-algos.csv" "$@" 2>&1 | tee "$out/sort-gpu-algos.log" || failed+=(sort_bench)

echo "== CUB and the nvcc twin"
if [ ! -x "$out/sort" ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/sort" "$here/sort.cu" || failed+=(nvcc)
fi
if [ -x "$out/sort" ]; then
    "$out/sort" "${sizes[@]}" --csv "$out/sort-cub.csv" "$@" 2>&1 | tee "$out/sort-cub.log" || failed+=(sort.cu)
fi

echo "== torch.sort"
python3 "$here/torch_sort.py" "${sizes[@]}" --csv "$out/sort-torch.csv" "$@" 2>&1 | tee "$out/sort-torch.log" ||
    failed+=(torch_sort.py)

csvs=()
for c in "$out"/sort-gpu-algos.csv "$out"/sort-cub.csv "$out"/sort-torch.csv; do
    [ -s "$c" ] && csvs+=("$c")
done
if [ "${#csvs[@]}" -gt 0 ]; then
    python3 "$here/sort_tables.py" "${csvs[@]}" > "$out/sort.md" || failed+=(sort_tables.py)
fi
if [ "${#failed[@]}" -ne 0 ]; then
    echo "run_sort.sh: FAILED: ${failed[*]}"
    exit 1
fi
echo "run_sort.sh: all three ran, every check passed; tables in $out/sort.md"
