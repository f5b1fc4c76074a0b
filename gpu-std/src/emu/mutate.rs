//! Mutation testing: which of a kernel's barriers, fences, atomics and strong accesses does a test
//! show to be needed?
//!
//! [`mutation_test`] runs a test (a closure that launches, and checks the result) once per schedule
//! seed with every synchronisation site recorded, then once more per *mutant*: the same test with one
//! site removed or weakened everywhere it runs (a barrier or fence skipped, a fence's scope narrowed, a
//! read-modify-write made a plain load and store, a volatile access made plain, an acquire or release
//! made relaxed), on each seed until one shows the change. A mutant is *caught* when the launch reports
//! a race, an ordering hazard or an error (deadlock, livelock, panic, time limit) it did not report
//! before, or the test finds a wrong result. A mutant no seed catches had *no effect seen*: the site
//! may be redundant — or the test's inputs and seeds do not exercise it. That is a hint, not a proof.

use super::config::{Mutation, MutationKind, Options};
use super::report::{Outcome, SyncSite};
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

/// The error a test of [`mutation_test`] may end with.
pub type TestError = Box<dyn std::error::Error>;

/// What one run of a test gives [`mutation_test`]: the outcomes of its launches, and whether its result
/// was right.
#[derive(Debug)]
pub struct Trial {
    /// The outcome of every launch the run made.
    pub outcomes: Vec<Outcome>,
    /// `Ok(())` when the run computed the right result (against a CPU reference), else what was
    /// wrong (one line).
    pub check: Result<(), String>,
}

impl Trial {
    /// A run of one launch, its result right or not.
    pub fn one(outcome: Outcome, correct: bool) -> Trial {
        Trial::checked(vec![outcome], if correct { Ok(()) } else { Err("wrong result".into()) })
    }
    /// A run of any number of launches, with what its check found.
    pub fn checked(outcomes: Vec<Outcome>, check: Result<(), String>) -> Trial {
        Trial { outcomes, check }
    }
    fn races(&self) -> usize {
        self.outcomes.iter().map(|o| o.racy_addresses).sum()
    }
    fn hazards(&self) -> usize {
        self.outcomes.iter().map(|o| o.hazard_addresses).sum()
    }
}

/// How a mutant was caught.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Caught {
    /// The race detector reported a race (the first report's headline).
    Race(String),
    /// An ordering hazard was reported (see [`Outcome::hazards`]).
    Hazard(String),
    /// The launch ended in an error: a deadlock, a livelock, a panic, the time limit.
    Error(String),
    /// The test found a wrong result, with no report of the emulator's: what its check said.
    WrongResult(String),
}

/// The verdict on one mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A seed showed the mutant: the site is needed.
    Needed {
        /// The first seed that showed it.
        seed: u64,
        /// What showed it.
        how: Caught,
    },
    /// No seed showed a difference: the site may be redundant (no proof).
    NoEffectSeen,
}

/// One mutant and its verdict.
#[derive(Clone, Debug)]
pub struct MutantResult {
    /// The site.
    pub site: SyncSite,
    /// What was done to it.
    pub mutation: MutationKind,
    /// What the seeds showed.
    pub verdict: Verdict,
}

/// What [`mutation_test`] found: every mutant of every site the clean runs executed.
#[derive(Clone, Debug)]
pub struct MutationReport {
    /// The seeds tried.
    pub seeds: Vec<u64>,
    /// One entry per mutant, in source order of the sites.
    pub mutants: Vec<MutantResult>,
}

impl MutationReport {
    /// The mutants caught (their sites are needed).
    pub fn caught(&self) -> usize {
        self.mutants.iter().filter(|m| m.verdict != Verdict::NoEffectSeen).count()
    }
    /// The mutants with no effect seen.
    pub fn no_effect(&self) -> impl Iterator<Item = &MutantResult> {
        self.mutants.iter().filter(|m| m.verdict == Verdict::NoEffectSeen)
    }
    /// The distinct sites.
    pub fn sites(&self) -> usize {
        let mut s: Vec<_> =
            self.mutants.iter().map(|m| (m.site.file, m.site.line, m.site.column, m.site.kind)).collect();
        s.dedup();
        s.len()
    }
}

impl fmt::Display for MutationReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} sites, {} mutants: {} caught, {} with no effect seen (seeds {:?})",
            self.sites(),
            self.mutants.len(),
            self.caught(),
            self.mutants.len() - self.caught(),
            self.seeds
        )?;
        for m in &self.mutants {
            let verdict = match &m.verdict {
                Verdict::Needed { seed, how } => {
                    let how = match how {
                        Caught::Race(r) => format!("race: {r}"),
                        Caught::Hazard(r) => format!("ordering hazard: {r}"),
                        Caught::Error(e) => e.clone(),
                        Caught::WrongResult(why) => format!("its check failed: {why}"),
                    };
                    let how = how.lines().next().unwrap_or("").to_string();
                    format!("needed (seed {seed}): {how}")
                }
                Verdict::NoEffectSeen => "no effect seen: possibly redundant (not a proof)".to_string(),
            };
            writeln!(f, "  {} {}: {verdict}", m.site, m.mutation.describe())?;
        }
        Ok(())
    }
}

/// Runs `test` with `opts` on each of `seeds` (the clean runs, which must pass with no race), then
/// once per mutant of every synchronisation site they executed, on the seeds in order until one shows
/// the mutant (see the module docs). `test` launches with the options it is given (fresh inputs each
/// time) and says whether the result is right; a panic in it counts as a wrong result. Each mutant runs
/// with a time limit of 50 times the slowest clean run (at least 2 s, at most `opts.time_limit`).
///
/// `test` may fail with any error (`?` on an [`EmuError`](super::EmuError) of a launch converts it);
/// a mutant whose run fails is caught by that error.
///
/// Errs when a clean run fails, is wrong or reports a race, naming the seed.
pub fn mutation_test(
    opts: &Options,
    seeds: impl IntoIterator<Item = u64>,
    mut test: impl FnMut(&Options) -> Result<Trial, TestError>,
) -> Result<MutationReport, String> {
    let seeds: Vec<u64> = seeds.into_iter().collect();
    if seeds.is_empty() {
        return Err("mutation_test: no seeds given".into());
    }
    let mut sites: Vec<SyncSite> = Vec::new();
    let mut baseline = Vec::new();
    let mut slowest = Duration::ZERO;
    for &seed in &seeds {
        let clean = Options { schedule_seed: seed, record_sites: true, mutation: None, ..opts.clone() };
        let start = Instant::now();
        let trial = match run(&mut test, &clean) {
            Ok(t) => t,
            Err(e) => return Err(format!("mutation_test: the clean run of seed {seed} failed: {e}")),
        };
        slowest = slowest.max(start.elapsed());
        if let Err(why) = &trial.check {
            return Err(format!("mutation_test: the clean run of seed {seed} computed a wrong result: {why}"));
        }
        if trial.races() > 0 {
            let first = trial.outcomes.iter().flat_map(|o| &o.races).next().map(|r| r.to_string()).unwrap_or_default();
            return Err(format!("mutation_test: the clean run of seed {seed} has races: {first}"));
        }
        for s in trial.outcomes.iter().flat_map(|o| &o.sites) {
            match sites.iter_mut().find(|t| (t.file, t.line, t.column, t.kind) == (s.file, s.line, s.column, s.kind)) {
                Some(t) => t.count += s.count,
                None => sites.push(*s),
            }
        }
        baseline.push(trial.hazards());
    }
    sites.sort_by_key(|s| (s.file, s.line, s.column, s.kind));
    let limit = (slowest * 50).max(Duration::from_secs(2)).min(opts.time_limit);
    let mut mutants = Vec::new();
    for site in &sites {
        for mutation in site.mutations().collect::<Vec<Mutation>>() {
            let mut verdict = Verdict::NoEffectSeen;
            for (k, &seed) in seeds.iter().enumerate() {
                let o = Options {
                    schedule_seed: seed,
                    record_sites: false,
                    mutation: Some(mutation),
                    time_limit: limit,
                    ..opts.clone()
                };
                if let Some(how) = judge(run(&mut test, &o), baseline[k]) {
                    verdict = Verdict::Needed { seed, how };
                    break;
                }
            }
            mutants.push(MutantResult { site: *site, mutation: mutation.kind, verdict });
        }
    }
    Ok(MutationReport { seeds, mutants })
}

/// One run of the test; a panic of the test's own code is an error.
fn run(test: &mut impl FnMut(&Options) -> Result<Trial, TestError>, opts: &Options) -> Result<Trial, String> {
    match catch_unwind(AssertUnwindSafe(|| test(opts))) {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(e.to_string()),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Err(format!("the test panicked: {msg}"))
        }
    }
}

/// What shows a mutant, if anything, against the clean run's hazard count.
fn judge(result: Result<Trial, String>, hazards_before: usize) -> Option<Caught> {
    let trial = match result {
        Err(e) => return Some(Caught::Error(e)),
        Ok(t) => t,
    };
    if let Some(r) = trial.outcomes.iter().flat_map(|o| &o.races).next() {
        return Some(Caught::Race(r.to_string()));
    }
    if trial.races() > 0 {
        return Some(Caught::Race("races counted, none reported in full".into()));
    }
    if trial.hazards() > hazards_before {
        let first = trial.outcomes.iter().flat_map(|o| &o.hazards).next().map(|r| r.to_string()).unwrap_or_default();
        return Some(Caught::Hazard(first));
    }
    if let Err(why) = trial.check {
        return Some(Caught::WrongResult(why));
    }
    None
}
