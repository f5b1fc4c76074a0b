#!/usr/bin/env python3
"""Joins the emulator's mutation verdicts on the corpus (CORPUS_MUTATION_JSON=emu.json cargo test -p
corpus-kernels --test mutation) with compute-sanitizer's on the CUDA originals (sanitize.py's
sanitize.json) and prints the side-by-side tables in Markdown:

    python3 tests/corpus/cuda/table.py emu.json sanitize.json > docs/corpus.md

A CUDA original's mutant names its Rust counterpart (`— Rust: <file>.rs line <L> <mutation>`); the two are
joined by file name, line and mutation.
"""
import json
import os
import re
import sys


def verdict_text(e):
    if e is None:
        return "no Rust mutant"
    if e["verdict"] == "needed":
        return f"{e['how'].split(':')[0]} (seed {e['seed']})"
    return "no effect seen" + (" (redundant)" if e.get("redundant") else "")


def san(v):
    return "-" if v is None else ("timeout" if v == "timeout" else (str(v) if isinstance(v, int) else "?"))


def entry_table(emu, sz, by_site):
    """Per corpus entry: source, sites, mutants, caught, argued redundant, and how many of its CUDA
    original's mutants racecheck or synccheck flagged (of how many the CUDA original has)."""
    flagged, cuda_mutants = {}, {}
    for r in sz:
        if not r["mutant"]:
            continue
        mut = re.sub(r"\s*\(.*\)\s*$", "", r.get("rust_mutation") or "")
        hit = any(isinstance(r.get(t), int) and r[t] > 0 for t in ("racecheck", "synccheck"))
        # A site in a module two entries share (two kernels of one file) counts for both.
        for e in by_site.get((r.get("rust_file"), r.get("rust_line"), mut), []):
            cuda_mutants[e["entry"]] = cuda_mutants.get(e["entry"], 0) + 1
            flagged[e["entry"]] = flagged.get(e["entry"], 0) + hit
    rows, order = {}, []
    for e in emu:
        if e["entry"] not in rows:
            order.append(e["entry"])
            rows[e["entry"]] = {"source": e.get("source", ""), "sites": set(), "mutants": 0, "caught": 0, "redundant": 0}
        row = rows[e["entry"]]
        row["sites"].add(e["site"])
        row["mutants"] += 1
        row["caught"] += e["verdict"] == "needed"
        row["redundant"] += bool(e.get("redundant"))
    out = ["| kernel | source | sites | mutants | caught | redundant | racecheck/synccheck flagged (of the CUDA original's) |",
           "|---|---|---:|---:|---:|---:|---:|"]
    for name in order:
        r = rows[name]
        src = " ".join(r["source"].split()).split(" ", 1)
        where = f"`{src[1]}`" if len(src) > 1 else ""
        cuda = f"{flagged.get(name, 0)} of {cuda_mutants[name]}" if name in cuda_mutants else "-"
        out.append(f"| {name} | {where} | {len(r['sites'])} | {r['mutants']} | {r['caught']} | {r['redundant']} | {cuda} |")
    return out


def main():
    emu = json.load(open(sys.argv[1]))
    sz = json.load(open(sys.argv[2]))
    by_site = {(os.path.basename(e["file"]), e["line"], e["mutation"]): e for e in emu}
    out = []
    out.append("| CUDA original | mutant | Rust site | emulator | racecheck | synccheck | CUDA run |")
    out.append("|---|---|---|---|---:|---:|---|")
    sanitizer_only, both, emu_only, originals_flagged = [], 0, [], []
    for r in sz:
        mut = re.sub(r"\s*\(.*\)\s*$", "", r.get("rust_mutation") or "")
        e = by_site.get((r.get("rust_file"), r.get("rust_line"), mut)) if r["mutant"] else None
        rc, sc = r.get("racecheck"), r.get("synccheck")
        flagged = any(isinstance(v, int) and v > 0 for v in (rc, sc))
        if r["mutant"] == 0:
            site, ev = "-", "clean"
            if flagged:
                originals_flagged.append(r["cuda"])
        else:
            site = f"{r.get('rust_file')}:{r.get('rust_line')} {mut}"
            ev = verdict_text(e)
            caught = e is not None and e["verdict"] == "needed"
            if flagged and not caught:
                sanitizer_only.append(f"{r['cuda']} mutant {r['mutant']} ({r['what']})")
            elif flagged and caught:
                both += 1
            elif caught and e["how"].startswith("race") and "global" in e["how"]:
                emu_only.append(f"{r['cuda']} mutant {r['mutant']}")
        what = f"{r['mutant']}: {r['what']}" if r["mutant"] else "0: original"
        out.append(f"| {r['cuda']} | {what} | {site} | {ev} | {san(rc)} | {san(sc)} | {r.get('run', 'build failed')} |")
    mutants = sum(1 for r in sz if r["mutant"])
    print(f"{len({r['cuda'] for r in sz})} CUDA originals, {mutants} mutants.")
    print(f"- flagged by racecheck or synccheck and caught by the emulator: {both}")
    print(f"- flagged by racecheck or synccheck, not caught by the emulator: {len(sanitizer_only)}" + "".join(f"\n  - {s}" for s in sanitizer_only))
    print(f"- caught by the emulator as a race on global memory (which racecheck does not check), not flagged: {len(emu_only)}")
    print(f"- originals flagged by a sanitizer: {len(originals_flagged)}" + "".join(f"\n  - {s}" for s in originals_flagged))
    print()
    every = {}
    for e in emu:
        every.setdefault((os.path.basename(e["file"]), e["line"], e["mutation"]), []).append(e)
    print("\n".join(entry_table(emu, sz, every)))
    print()
    print("\n".join(out))


if __name__ == "__main__":
    main()
