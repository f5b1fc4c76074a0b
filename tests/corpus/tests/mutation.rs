//! Mutation testing over the corpus: every barrier, fence, atomic and strong access each entry
//! executes, removed or weakened in turn, on schedule seeds 1..=5. Every mutant must be caught (a
//! race, an ordering hazard, a failed launch or a wrong result) or be listed in the entry's
//! `redundant` with its argument; a listed mutant that is caught, or not there, fails too.

use corpus_kernels::{Entry, all};
use gpu_host::{EmuOptions, mutation_test};
use gpu_std::emu::{Caught, MutationReport, Verdict};

fn report(e: &Entry) -> MutationReport {
    mutation_test(&EmuOptions::default(), 1..=5, |dev| Ok((e.check)(dev, e.mutate_size)?.is_ok()))
        .unwrap_or_else(|err| panic!("{}: {err}", e.name))
}

/// What is wrong with `e`'s report against its `redundant` list.
fn problems(e: &Entry, r: &MutationReport) -> Vec<String> {
    let mut bad = Vec::new();
    let listed = |line: u32, what: &str| e.redundant.iter().any(|x| x.line == line && x.mutation == what);
    for m in r.no_effect() {
        if !listed(m.site.line, m.mutation.describe()) {
            bad.push(format!("{}: {} {}: no effect seen, not argued redundant", e.name, m.site, m.mutation.describe()));
        }
    }
    for x in e.redundant {
        let found = r.mutants.iter().find(|m| m.site.line == x.line && m.mutation.describe() == x.mutation);
        match found {
            None => bad.push(format!("{}: redundant line {} `{}` is not a mutant", e.name, x.line, x.mutation)),
            Some(m) if m.verdict != Verdict::NoEffectSeen => bad.push(format!(
                "{}: line {} `{}` argued redundant but caught: {:?}",
                e.name, x.line, x.mutation, m.verdict
            )),
            Some(_) => {}
        }
    }
    bad
}

#[test]
fn every_mutant_of_the_corpus_is_caught_or_argued_redundant() {
    let mut bad = Vec::new();
    let mut rows = Vec::new();
    let mut table =
        vec!["| kernel | sites | mutants | caught | redundant |".to_string(), "|---|---:|---:|---:|---:|".into()];
    for e in all() {
        let start = std::time::Instant::now();
        let r = report(&e);
        println!("{} ({:.2?}): {r}", e.name, start.elapsed());
        assert!(r.sites() > 0, "{}: no synchronisation site recorded", e.name);
        table.push(format!(
            "| {} | {} | {} | {} | {} |",
            e.name,
            r.sites(),
            r.mutants.len(),
            r.caught(),
            r.mutants.len() - r.caught()
        ));
        bad.extend(problems(&e, &r));
        rows.extend(json_rows(&e, &r));
    }
    println!("{}", table.join("\n"));
    if let Some(path) = std::env::var_os("CORPUS_MUTATION_JSON") {
        std::fs::write(&path, serde_json::to_string_pretty(&rows).expect("rows serialise")).expect("write the JSON");
        println!("mutants written to {}", path.to_string_lossy());
    }
    assert!(bad.is_empty(), "{} problems:\n{}", bad.len(), bad.join("\n"));
}

/// Every mutant of `r` as a JSON object (for `CORPUS_MUTATION_JSON=<file>`, which
/// `cuda/table.py` joins with compute-sanitizer's verdicts on the CUDA originals).
fn json_rows(e: &Entry, r: &MutationReport) -> Vec<serde_json::Value> {
    r.mutants
        .iter()
        .map(|m| {
            let (verdict, seed, how) = match &m.verdict {
                Verdict::Needed { seed, how } => {
                    let (class, text) = match how {
                        Caught::Race(t) => ("race", t),
                        Caught::Hazard(t) => ("ordering hazard", t),
                        Caught::Error(t) => ("error", t),
                        Caught::WrongResult(t) => ("wrong result", t),
                    };
                    ("needed", Some(*seed), Some(format!("{class}: {}", text.lines().next().unwrap_or_default())))
                }
                Verdict::NoEffectSeen => ("no effect seen", None, None),
            };
            let redundant = e.redundant.iter().find(|x| x.line == m.site.line && x.mutation == m.mutation.describe());
            serde_json::json!({
                "entry": e.name,
                "source": e.source,
                "file": m.site.file,
                "line": m.site.line,
                "site": m.site.to_string(),
                "mutation": m.mutation.describe(),
                "verdict": verdict,
                "seed": seed,
                "how": how,
                "redundant": redundant.map(|x| x.why),
            })
        })
        .collect()
}
