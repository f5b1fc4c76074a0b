//! `host run`: runs examples at their test sizes (or one `--n`) and collects results.

use crate::examples::{self, Example, RunParams, Skip};
use crate::report::ExampleResult;
use anyhow::{Result, bail};
use gpu_host::{Device, DeviceChoice};
use gpu_std::emu;

/// What `host run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunRequest {
    pub examples: Vec<String>,
    pub n: Option<usize>,
    pub seed: u64,
    pub device: DeviceChoice,
    pub json: bool,
    pub verbose: bool,
    pub schedule_seed: u64,
    pub schedules: u32,
    pub reps: usize,
    /// Skip test sizes above this.
    pub max_n: Option<usize>,
}

impl Default for RunRequest {
    fn default() -> Self {
        RunRequest {
            examples: vec!["all".into()],
            n: None,
            seed: 42,
            device: DeviceChoice::Auto,
            json: false,
            verbose: false,
            schedule_seed: 1,
            schedules: 1,
            reps: 20,
            max_n: None,
        }
    }
}

/// Resolves example names (`all` expands); unknown names are an error listing the known ones.
pub fn select(names: &[String]) -> Result<Vec<&'static Example>> {
    let mut out = Vec::new();
    for n in names {
        if n == "all" {
            out.extend(examples::ALL.iter());
        } else if let Some(e) = examples::find(n) {
            out.push(e);
        } else {
            let known: Vec<&str> = examples::ALL.iter().map(|e| e.name).collect();
            bail!("unknown example `{n}`; known: {}, all", known.join(", "));
        }
    }
    if out.is_empty() {
        bail!("no example named; try `host list`");
    }
    Ok(out)
}

/// Runs one example at one size. A launch error (CUDA error, emulator deadlock, kernel panic) is a
/// FAIL row carrying the error, not an abort of the whole run; a size the example cannot run on this
/// device ([`Skip`]) is a SKIP row carrying the reason.
pub fn run_one(dev: &Device, ex: &Example, p: &RunParams) -> ExampleResult {
    match (ex.run)(dev, p) {
        Ok(r) => r,
        Err(e) if e.is::<Skip>() => {
            let _ = dev.take_findings();
            ExampleResult::skip(ex.name, dev.kind(), p.n, p.seed, e.to_string())
        }
        Err(e) => {
            let mut r = ExampleResult::new(ex.name, dev.kind(), p.n, p.seed);
            let f = dev.take_findings();
            r.absorb(f, false);
            r.check(false, format!("error: {e:#}"));
            r
        }
    }
}

/// Opens the device for a request (emulator options from the request).
pub fn open(req: &RunRequest, schedule_seed: u64) -> Result<(Device, Option<String>)> {
    let opts = emu::Options { schedule_seed, ..emu::Options::default() };
    crate::open::open(req.device, opts)
}

/// The sizes an example runs at for this request and device.
pub fn sizes(ex: &Example, req: &RunRequest, dev: &Device) -> Vec<usize> {
    let all = match req.n {
        Some(n) => return vec![n],
        None if dev.profile().full_scale() => ex.gpu_sizes,
        None => ex.emu_sizes,
    };
    all.iter().copied().filter(|&n| req.max_n.is_none_or(|m| n <= m)).collect()
}

/// Which schedule seeds reported each race, over a run of several seeds: a race is named by its first
/// line with the element index (and, in shared memory, the block) left out (`data race in kernel `k` on
/// global `bins`[…]`), so that one bug found at different elements on different seeds counts once; the
/// pairs of source locations its reports named are listed with it.
#[derive(Debug, Default)]
pub struct SeedTally {
    seeds: Vec<u64>,
    races: Vec<Tallied>,
}

/// One race of a [`SeedTally`]: (example, n, race name), the seeds that reported it, and the pairs of
/// source locations its reports named.
type Tallied = ((String, usize, String), Vec<u64>, Vec<String>);

/// The name of a race report for [`SeedTally`], and the source locations of its two accesses.
fn race_key(report: &str) -> (String, String) {
    let mut lines = report.lines();
    let head = lines.next().unwrap_or_default();
    // A shared-memory race names its block: the same bug in another block is the same race.
    let head = head.split(" of block ").next().unwrap_or(head);
    let mut name = String::new();
    let mut in_index = false;
    for c in head.chars() {
        match c {
            '[' => {
                in_index = true;
                name.push_str("[…");
            }
            ']' => {
                in_index = false;
                name.push(']');
            }
            c if in_index && c.is_ascii_digit() => {}
            c => name.push(c),
        }
    }
    // `  first:  write by … at file:line:col (after …)`: the site is between " at " and " (".
    let mut sites: Vec<&str> = lines
        .take(2)
        .filter_map(|l| l.rsplit_once(" (after ").map(|(a, _)| a))
        .filter_map(|a| a.rsplit_once(" at ").map(|(_, site)| site))
        .collect();
    sites.sort();
    (name, sites.join(" and "))
}

impl SeedTally {
    /// Counts the races `r` reported under schedule seed `seed`.
    pub fn add(&mut self, seed: u64, r: &ExampleResult) {
        if !self.seeds.contains(&seed) {
            self.seeds.push(seed);
        }
        for report in &r.race_reports {
            let (name, sites) = race_key(report);
            let key = (r.example.clone(), r.n, name);
            let i = match self.races.iter().position(|(k, _, _)| *k == key) {
                Some(i) => i,
                None => {
                    self.races.push((key, vec![], vec![]));
                    self.races.len() - 1
                }
            };
            let (_, seeds, pairs) = &mut self.races[i];
            if seeds.last() != Some(&seed) {
                seeds.push(seed);
            }
            if !sites.is_empty() && !pairs.contains(&sites) {
                pairs.push(sites);
            }
        }
    }

    /// The summary: one line per race, with how many of the seeds reported it (empty without races).
    pub fn lines(&self) -> Vec<String> {
        if self.races.is_empty() || self.seeds.len() < 2 {
            return vec![];
        }
        let (lo, hi) = (self.seeds.iter().min().unwrap(), self.seeds.iter().max().unwrap());
        let total = self.seeds.len();
        let mut out = vec![format!("races by schedule seed ({total} seeds, {lo}..={hi}):")];
        let mut races: Vec<_> = self.races.iter().collect();
        // By example (in the order run) and size; each race in the order first seen.
        let order = |ex: &str| self.races.iter().position(|((e, _, _), _, _)| e == ex);
        races.sort_by_key(|((ex, n, _), _, _)| (order(ex), *n));
        for ((ex, n, race), seeds, pairs) in races {
            let which = if seeds.len() == total {
                "every seed".to_string()
            } else {
                format!("seeds {}", seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "))
            };
            let at = if pairs.is_empty() { String::new() } else { format!(" (accesses at {})", pairs.join("; ")) };
            out.push(format!("  {ex} n={n}: {} of {total} seeds ({which}): {race}{at}", seeds.len()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(example: &str, reports: &[&str]) -> ExampleResult {
        let mut r = ExampleResult::new(example, "emu", 10, 42);
        r.race_reports = reports.iter().map(|s| s.to_string()).collect();
        r
    }

    const A: &str = "data race in kernel `k` on global `bins`[3]\n  first:  write          by block 0 thread 1 at \
                     a.rs:5:9 (after 0 block barrier(s), 0 grid barrier(s))\n  second: read           by block 1 \
                     thread 0 at a.rs:4:9 (after 0 block barrier(s), 0 grid barrier(s))\n  why";
    const B: &str = "data race in kernel `k` on global `bins`[7]\n  first:  read           by block 1 thread 2 at \
                     a.rs:4:9 (after 0 block barrier(s), 0 grid barrier(s))\n  second: write          by block 0 \
                     thread 3 at a.rs:5:9 (after 0 block barrier(s), 0 grid barrier(s))\n  why";
    const C: &str = "data race in kernel `k` on global `out`[0]\n  first:  write          by block 0 thread 1 at \
                     a.rs:9:9 (after 0 block barrier(s), 0 grid barrier(s))\n  second: write          by block 1 \
                     thread 0 at a.rs:9:9 (after 0 block barrier(s), 0 grid barrier(s))\n  why";

    #[test]
    fn a_race_at_different_elements_counts_once_per_seed() {
        let mut t = SeedTally::default();
        t.add(1, &result("x", &[A, B]));
        t.add(2, &result("x", &[B, C]));
        t.add(3, &result("x", &[]));
        let lines = t.lines();
        assert_eq!(lines[0], "races by schedule seed (3 seeds, 1..=3):");
        assert_eq!(
            lines[1],
            "  x n=10: 2 of 3 seeds (seeds 1, 2): data race in kernel `k` on global `bins`[…] (accesses at a.rs:4:9 and a.rs:5:9)"
        );
        assert_eq!(
            lines[2],
            "  x n=10: 1 of 3 seeds (seeds 2): data race in kernel `k` on global `out`[…] (accesses at a.rs:9:9 and a.rs:9:9)"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn one_seed_or_no_race_prints_nothing() {
        let mut t = SeedTally::default();
        t.add(1, &result("x", &[A]));
        assert!(t.lines().is_empty());
        t.add(2, &result("x", &[]));
        assert_eq!(t.lines().len(), 2);
    }
}
