#!/usr/bin/env bash
# The library's benchmark on this machine's GPU: gpu-algos against CUB (bench/algos.cu), then against
# torch and CuPy (bench/torch_cupy.py), every call and type from 2^KMIN to 2^KMAX, both timings.
#
#   bench/run.sh PLANS OUTDIR [KMIN KMAX]
#
# PLANS: the gpu-algos `plans` example built with the `cuda` feature (what the library launches on
# this GPU), e.g. target/release/examples/plans. Needs nvcc, an NVIDIA GPU, and Python with torch
# and/or CuPy for the second part. Writes OUTDIR/{plans.tsv,algos.csv,algos.log,torch_cupy.csv,torch_cupy.log}.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
plans="$1"
out="$2"
kmin="${3:-10}"
kmax="${4:-30}"
mkdir -p "$out"
"$plans" --kmin "$kmin" --kmax "$kmax" > "$out/plans.tsv"
if [ ! -x "$out/algos" ]; then
    nvcc -O3 -std=c++17 -arch=sm_90 -o "$out/algos" "$here/algos.cu" -lcuda
fi
"$out/algos" "$here/../gpu-algos/ptx/gpu_algos_kernels.ptx" "$out/plans.tsv" --csv "$out/algos.csv" \
    --kmin "$kmin" --kmax "$kmax" 2>&1 | tee "$out/algos.log"
python3 "$here/torch_cupy.py" --csv "$out/torch_cupy.csv" --kmin "$kmin" --kmax "$kmax" 2>&1 | tee "$out/torch_cupy.log"
