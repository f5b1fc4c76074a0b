//! Results of example runs: a table for people, one JSON object per line for tools.

use gpu_host::Findings;
use serde::Serialize;

/// One run of one example at one size.
#[derive(Clone, Debug)]
pub struct ExampleResult {
    pub example: String,
    /// `gpu` or `emu`.
    pub device: String,
    pub n: usize,
    pub seed: u64,
    pub pass: bool,
    /// Why the example did not run at this size on this device (`--n` beyond what it can run there):
    /// a SKIP row, neither a pass nor a failure.
    pub skipped: Option<String>,
    /// Kernel time (median of timed launches), GPU only.
    pub time_ms: Option<f64>,
    /// Bytes that must move / time, GPU only.
    pub gbps: Option<f64>,
    /// What was checked, and every mismatch or finding (first few).
    pub details: Vec<String>,
    /// Lines the example prints like its seed (e.g. the first 10 bins).
    pub show: Vec<String>,
    /// Emulator findings: racy addresses and deadlock reports.
    pub races: usize,
    pub deadlocks: usize,
    pub race_reports: Vec<String>,
    /// Optimised tiers run next to the chapter's kernel: each checked, and timed on a GPU.
    pub tiers: Vec<Tier>,
}

/// One optimised tier of an example (e.g. `reduce_fast_f32` next to the chapter's `reduce_sum`): its
/// median time and bytes moved per second, GPU only.
#[derive(Clone, Debug, Serialize)]
pub struct Tier {
    pub name: String,
    pub time_ms: f64,
    pub gbps: f64,
}

impl ExampleResult {
    pub fn new(example: &str, device: &str, n: usize, seed: u64) -> Self {
        ExampleResult {
            example: example.to_string(),
            device: device.to_string(),
            n,
            seed,
            pass: true,
            skipped: None,
            time_ms: None,
            gbps: None,
            details: vec![],
            show: vec![],
            races: 0,
            deadlocks: 0,
            race_reports: vec![],
            tiers: vec![],
        }
    }

    /// A row for an example that cannot run at this size on this device, saying why.
    pub fn skip(example: &str, device: &str, n: usize, seed: u64, reason: impl Into<String>) -> Self {
        ExampleResult { skipped: Some(reason.into()), ..ExampleResult::new(example, device, n, seed) }
    }

    /// `PASS`, `FAIL` or `SKIP`.
    pub fn verdict(&self) -> &'static str {
        match (&self.skipped, self.pass) {
            (Some(_), _) => "SKIP",
            (None, true) => "PASS",
            (None, false) => "FAIL",
        }
    }

    /// Records a check; a failed one makes the run FAIL.
    pub fn check(&mut self, ok: bool, what: impl Into<String>) {
        if !ok {
            self.pass = false;
        }
        let w = what.into();
        self.details.push(if ok { format!("ok: {w}") } else { format!("FAIL: {w}") });
    }

    /// Folds the emulator's findings in. Races in an example that must be race-free fail it, and so
    /// do reads of uninitialised shared memory in any example.
    pub fn absorb(&mut self, f: Findings, races_expected: bool) {
        self.races += f.racy_addresses;
        self.deadlocks += f.deadlocks.len();
        self.race_reports.extend(f.races.iter().map(|r| r.to_string()));
        if !races_expected && f.racy_addresses > 0 {
            self.check(false, format!("race detector: {} racy address(es)", f.racy_addresses));
        }
        if f.uninit_elements > 0 {
            self.check(
                false,
                format!(
                    "uninitialised shared memory: {} element(s) read before the block wrote them",
                    f.uninit_elements
                ),
            );
            self.details.extend(f.uninit_reads.iter().take(4).map(|u| u.to_string()));
        }
        // Each report says what it is ("deadlock in kernel …", "livelock in kernel …", "warning in …").
        self.details.extend(f.deadlocks);
        self.details.extend(f.warnings);
    }

    /// The run as one line of JSON (written with serde_json: always valid, a NaN or infinite number is
    /// `null`), with the scheduler seed of an emulator run.
    pub fn to_json(&self, schedule_seed: Option<u64>) -> String {
        let row = JsonRow {
            example: &self.example,
            device: &self.device,
            n: self.n,
            seed: self.seed,
            schedule_seed,
            result: self.verdict(),
            skipped: self.skipped.as_deref(),
            time_ms: self.time_ms,
            gbps: self.gbps,
            races: self.races,
            deadlocks: self.deadlocks,
            details: &self.details,
            show: &self.show,
            race_reports: &self.race_reports,
            tiers: &self.tiers,
        };
        serde_json::to_string(&row).expect("a row of strings and numbers always serialises")
    }
}

/// The JSON form of one run (field order as written).
#[derive(Serialize)]
struct JsonRow<'a> {
    example: &'a str,
    device: &'a str,
    n: usize,
    seed: u64,
    /// Emulator runs only: the scheduler seed that replays this interleaving.
    #[serde(skip_serializing_if = "Option::is_none")]
    schedule_seed: Option<u64>,
    result: &'a str,
    /// SKIP rows only: why the example did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<&'a str>,
    time_ms: Option<f64>,
    gbps: Option<f64>,
    races: usize,
    deadlocks: usize,
    details: &'a [String],
    show: &'a [String],
    race_reports: &'a [String],
    tiers: &'a [Tier],
}

/// The table header.
pub fn table_header() -> String {
    format!(
        "{:<22} {:<4} {:>9} {:>6} {:<6} {:>10} {:>9} {:>6}",
        "example", "dev", "n", "seed", "result", "time", "GB/s", "races"
    )
}

/// One table row.
pub fn table_row(r: &ExampleResult) -> String {
    let time = r.time_ms.map(|t| format!("{:.4} ms", t)).unwrap_or_else(|| "-".into());
    let gbps = r.gbps.map(|g| format!("{g:.1}")).unwrap_or_else(|| "-".into());
    let races = if r.device == "emu" { r.races.to_string() } else { "-".into() };
    format!(
        "{:<22} {:<4} {:>9} {:>6} {:<6} {:>10} {:>9} {:>6}",
        r.example,
        r.device,
        r.n,
        r.seed,
        r.verdict(),
        time,
        gbps,
        races
    )
}

/// The lines under a row for its optimised tiers: name, time, GB/s.
pub fn tier_rows(r: &ExampleResult) -> Vec<String> {
    r.tiers
        .iter()
        .map(|t| format!("    tier {:<40} {:>10} {:>9.1}", t.name, format!("{:.4} ms", t.time_ms), t.gbps))
        .collect()
}

/// The closing line of `host run`: how many rows passed, failed and were skipped, e.g.
/// `run: 37 passed, 0 failed` or `run: 18 passed, 0 failed, 1 skipped`.
pub fn totals_line(passed: usize, failed: usize, skipped: usize) -> String {
    if skipped == 0 {
        format!("run: {passed} passed, {failed} failed")
    } else {
        format!("run: {passed} passed, {failed} failed, {skipped} skipped")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals() {
        assert_eq!(totals_line(37, 2, 0), "run: 37 passed, 2 failed");
        assert_eq!(totals_line(18, 0, 1), "run: 18 passed, 0 failed, 1 skipped");
    }
    #[test]
    fn a_skip_is_its_own_verdict_with_its_reason() {
        let r = ExampleResult::skip("grid_sync", "emu", 5000, 42, "too big");
        assert_eq!(r.verdict(), "SKIP");
        assert!(table_row(&r).contains(" SKIP "), "{}", table_row(&r));
        let v: serde_json::Value = serde_json::from_str(&r.to_json(Some(1))).expect("valid JSON");
        assert_eq!((v["result"].as_str(), v["skipped"].as_str()), (Some("SKIP"), Some("too big")));
    }
    #[test]
    fn json_escapes_and_fields() {
        let mut r = ExampleResult::new("x\"y", "emu", 7, 3);
        r.check(false, "a\nb");
        let j = r.to_json(Some(5));
        assert!(
            j.starts_with(
                "{\"example\":\"x\\\"y\",\"device\":\"emu\",\"n\":7,\"seed\":3,\"schedule_seed\":5,\"result\":\"FAIL\""
            ),
            "{j}"
        );
        assert!(j.contains("\"details\":[\"FAIL: a\\nb\"]"), "{j}");
        assert!(j.contains("\"time_ms\":null"));
        let v: serde_json::Value = serde_json::from_str(&j).expect("valid JSON");
        assert_eq!(v["schedule_seed"], 5);
    }

    #[test]
    fn json_has_no_bare_nan() {
        let mut r = ExampleResult::new("x", "gpu", 1, 1);
        r.time_ms = Some(f64::NAN);
        r.gbps = Some(f64::INFINITY);
        let j = r.to_json(None);
        let v: serde_json::Value = serde_json::from_str(&j).expect("valid JSON");
        assert!(v["time_ms"].is_null() && v["gbps"].is_null(), "{j}");
        assert!(v.get("schedule_seed").is_none(), "{j}");
    }
}
