//! `host run EX --mutate`: mutation testing of the examples on the emulator. Every barrier, fence,
//! atomic and strong access an example's clean runs execute is removed or weakened in turn, and the
//! example's own checks (its CPU references, and whether each variant must be race-free) judge each
//! mutant on the schedule seeds. See `gpu_std::emu::mutation_test` for the verdicts.

use crate::examples::{Example, RunParams};
use crate::run::run_one;
use gpu_host::Device;
use gpu_std::emu::{self, Caught, MutationReport, Outcome, Trial, Verdict};
use serde::Serialize;

/// The size `--mutate` runs an example at when no `--n` is given: the largest of its emulator test
/// sizes (4097 for most: several blocks, the last one partial, so that what blocks share is exercised).
pub fn default_size(ex: &Example) -> usize {
    ex.emu_sizes.iter().copied().max().unwrap_or(1)
}

/// Mutation-tests `ex` at size `n` with input seed `seed` on the schedule seeds `seeds`. Errs when a
/// clean run does not pass (naming the seed and the failed check).
pub fn mutate(ex: &Example, n: usize, seed: u64, seeds: Vec<u64>) -> Result<MutationReport, String> {
    emu::mutation_test(&emu::Options::default(), seeds, |opts| {
        let dev = Device::emulator(opts.clone());
        let r = run_one(&dev, ex, &RunParams { n, seed, reps: 0 });
        if let Some(why) = &r.skipped {
            return Err(format!("{} cannot run at n={n} on the emulator: {why}", ex.name).into());
        }
        // The example's checks decide: its CPU references, and which of its kernels must be race-free
        // (a race in a kernel that races on purpose is expected, and is not a change).
        // The race detector's verdict first when it failed the run: it says more about synchronisation.
        let check = if r.pass {
            Ok(())
        } else {
            let fails = || r.details.iter().filter(|d| d.starts_with("FAIL"));
            let first = fails().find(|d| d.contains("race detector")).or_else(|| fails().next());
            Err(first.cloned().unwrap_or_else(|| "FAIL".into()))
        };
        Ok(Trial::checked(vec![Outcome { sites: dev.take_sites(), ..Outcome::default() }], check))
    })
}

/// One mutant as a line of JSON.
#[derive(Serialize)]
struct JsonMutant<'a> {
    example: &'a str,
    n: usize,
    file: &'a str,
    line: u32,
    column: u32,
    site: String,
    executed: u64,
    mutation: &'a str,
    verdict: &'static str,
    seed: Option<u64>,
    how: Option<String>,
}

/// The mutants of `report` as one JSON object per line.
pub fn json_lines(example: &str, n: usize, report: &MutationReport) -> Vec<String> {
    report
        .mutants
        .iter()
        .map(|m| {
            let (verdict, seed, how) = match &m.verdict {
                Verdict::Needed { seed, how } => ("needed", Some(*seed), Some(caught_text(how))),
                Verdict::NoEffectSeen => ("no effect seen", None, None),
            };
            let row = JsonMutant {
                example,
                n,
                file: m.site.file,
                line: m.site.line,
                column: m.site.column,
                site: m.site.to_string(),
                executed: m.site.count,
                mutation: m.mutation.describe(),
                verdict,
                seed,
                how,
            };
            serde_json::to_string(&row).expect("a mutant row serialises")
        })
        .collect()
}

fn caught_text(how: &Caught) -> String {
    match how {
        Caught::Race(r) | Caught::Hazard(r) | Caught::Error(r) | Caught::WrongResult(r) => {
            r.lines().next().unwrap_or_default().to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stencils_barriers_are_both_needed_and_each_mutant_is_a_json_line() {
        let ex = crate::examples::find("stencil").expect("the stencil example");
        let report = mutate(ex, 257, 42, vec![1, 2]).expect("the clean runs pass");
        assert_eq!((report.sites(), report.caught()), (2, 2), "{report}");
        for m in &report.mutants {
            assert!(m.site.file.ends_with("stencil.rs"), "{}", m.site);
        }
        let lines = json_lines("stencil", 257, &report);
        assert_eq!(lines.len(), 2);
        for l in &lines {
            let v: serde_json::Value = serde_json::from_str(l).expect("valid JSON");
            assert_eq!((v["example"].as_str(), v["verdict"].as_str()), (Some("stencil"), Some("needed")), "{l}");
            assert!(v["how"].as_str().is_some_and(|h| h.contains("race")), "{l}");
        }
    }

    #[test]
    fn the_default_size_is_the_largest_emulator_size() {
        let ex = crate::examples::find("stencil").expect("the stencil example");
        assert_eq!(default_size(ex), 4097);
    }
}
