#!/usr/bin/env python3
"""Builds every CUDA original of the corpus (this folder's *.cu) once per mutant (-DMUTANT=k, 0 = the
original) with nvcc, runs each plainly and under compute-sanitizer's racecheck and synccheck, and writes
one JSON row per (CUDA original, mutant) to OUT/sanitize.json with a summary table on stdout.

    python3 tests/corpus/cuda/sanitize.py [OUT] [--jobs J] [--only NAME]

Each CUDA original lists its mutants in comment lines `// MUTANT k: <what> — Rust: <file>.rs line <L> <mutation>`
and its size in `./a.out N` on its build line; a line `// Timeout: S s` bounds its plain run to S seconds
(2 S + 60 under a sanitizer) instead of 120. Needs nvcc and compute-sanitizer on PATH (or under
/usr/local/cuda/bin) and a GPU; every run is bounded by a timeout.
"""
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MUTANT_LINE = re.compile(r"^// MUTANT (\d+): (.*?)(?: — Rust: (\S+) line (\d+) (.*))?$")
SIZE = re.compile(r"\./a\.out (\d+)")
TIMEOUT = re.compile(r"^// Timeout: (\d+) s", re.M)
# compute-sanitizer's summary lines differ between releases ("ERROR SUMMARY: 0 errors", "RACECHECK
# SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"); both are matched loosely and the raw tail is kept.
ERRORS = re.compile(r"ERROR SUMMARY:\s*(\d+)\s*error", re.I)
HAZARDS = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s*hazard", re.I)
REPORTED = re.compile(r"(Race reported|Potential .*hazard|Barrier error|Invalid .*barrier|divergent)", re.I)


def tool(name):
    found = shutil.which(name) or (os.path.exists(f"/usr/local/cuda/bin/{name}") and f"/usr/local/cuda/bin/{name}")
    if not found:
        sys.exit(f"sanitize.py: `{name}` not found on PATH or in /usr/local/cuda/bin")
    return found


def originals(only):
    for f in sorted(os.listdir(HERE)):
        if not f.endswith(".cu") or (only and only not in f):
            continue
        text = open(os.path.join(HERE, f)).read()
        mutants = [(0, "original", None, None, None)]
        for line in text.splitlines():
            m = MUTANT_LINE.match(line.strip())
            if m:
                k, what, rs, ln, mut = m.groups()
                mutants.append((int(k), what.strip(), rs, int(ln) if ln else None, mut.strip() if mut else None))
        size, limit = SIZE.search(text), TIMEOUT.search(text)
        yield f, mutants, int(size.group(1)) if size else 4096, int(limit.group(1)) if limit else 120


def run(cmd, timeout):
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.time() - start
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, time.time() - start


def main():
    args = sys.argv[1:]
    out_dir = args[0] if args and not args[0].startswith("--") else os.environ.get("OUT", ".")
    jobs = int(args[args.index("--jobs") + 1]) if "--jobs" in args else 8
    only = args[args.index("--only") + 1] if "--only" in args else None
    nvcc, sanitizer = tool("nvcc"), tool("compute-sanitizer")
    build = os.path.join(out_dir, "build")
    os.makedirs(build, exist_ok=True)
    cases = [(f, m, n, limit) for f, ms, n, limit in originals(only) for m in ms]

    def compile_one(case):
        f, m = case[0], case[1]
        exe = os.path.join(build, f"{f[:-3]}_m{m[0]}")
        rc, log, _ = run([nvcc, "-O2", "-arch=sm_90", f"-DMUTANT={m[0]}", "-o", exe, os.path.join(HERE, f)], 300)
        return exe if rc == 0 else None, log

    start = time.time()
    with cf.ThreadPoolExecutor(jobs) as pool:
        built = list(pool.map(compile_one, cases))
    print(f"sanitize.py: {len(cases)} builds in {time.time() - start:.0f} s", flush=True)

    def check_one(item):
        (f, m, n, limit), (exe, log) = item
        row = {"cuda": f, "mutant": m[0], "what": m[1], "rust_file": m[2], "rust_line": m[3], "rust_mutation": m[4], "n": n}
        if exe is None:
            row["build"] = log[-2000:]
            return row
        rc, out, secs = run([exe, str(n)], limit)
        row["run"] = "timeout" if rc is None else ("PASS" if rc == 0 and "PASS" in out else "FAIL")
        row["run_out"] = out.strip().splitlines()[-1][:300] if out.strip() else ""
        for name in ("racecheck", "synccheck"):
            rc, out, secs = run([sanitizer, "--tool", name, exe, str(n)], 2 * limit + 60)
            errs = ERRORS.search(out)
            hazards = HAZARDS.search(out)
            if rc is None:
                row[name] = "timeout"
            elif errs:
                row[name] = int(errs.group(1))
            elif hazards:
                # racecheck ends with its own summary line, not "ERROR SUMMARY".
                row[name] = int(hazards.group(1))
            else:
                # No summary line: count the reports themselves rather than guess.
                reports = len(REPORTED.findall(out))
                row[name] = reports if reports else f"no summary (rc {rc})"
            row[f"{name}_tail"] = out[-800:]
            lines = [l for l in out.splitlines() if "SUMMARY" not in l]
            first = next((l for l in lines if "Error" in l or "Race" in l or "hazard" in l.lower()), "")
            row[f"{name}_first"] = first.strip()[:300]
            row[f"{name}_s"] = round(secs, 1)
        return row

    # One probe run printed whole, so a change in compute-sanitizer's output format is visible.
    probe = next((exe for exe, _ in built if exe), None)
    if probe:
        rc, out, _ = run([sanitizer, "--tool", "racecheck", probe, "64"], 120)
        print(f"sanitize.py: probe `{os.path.basename(probe)}` under racecheck, rc {rc}:\n{out[-1500:]}", flush=True)

    start = time.time()
    with cf.ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(check_one, zip(cases, built)))
    print(f"sanitize.py: {len(rows)} runs in {time.time() - start:.0f} s", flush=True)
    with open(os.path.join(out_dir, "sanitize.json"), "w") as fh:
        json.dump(rows, fh, indent=1)
    print("| CUDA original | mutant | run | racecheck | synccheck |")
    print("|---|---|---|---:|---:|")
    for r in rows:
        print(f"| {r['cuda']} | {r['mutant']} {r['what'][:60]} | {r.get('run', 'BUILD FAILED')} | {r.get('racecheck', '-')} | {r.get('synccheck', '-')} |")


if __name__ == "__main__":
    main()
