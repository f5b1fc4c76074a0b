//! Results of example runs: a table for people, one JSON object per line for tools.

use crate::device::Findings;

/// One run of one example at one size.
#[derive(Clone, Debug)]
pub struct ExampleResult {
    pub example: String,
    /// `gpu` or `emu`.
    pub device: String,
    pub n: usize,
    pub seed: u64,
    pub pass: bool,
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
}

impl ExampleResult {
    pub fn new(example: &str, device: &str, n: usize, seed: u64) -> Self {
        ExampleResult {
            example: example.to_string(),
            device: device.to_string(),
            n,
            seed,
            pass: true,
            time_ms: None,
            gbps: None,
            details: vec![],
            show: vec![],
            races: 0,
            deadlocks: 0,
            race_reports: vec![],
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

    /// Folds the emulator's findings in. Races in an example that must be race-free fail it.
    pub fn absorb(&mut self, f: Findings, races_expected: bool) {
        self.races += f.racy_addresses;
        self.deadlocks += f.deadlocks.len();
        self.race_reports.extend(f.races.iter().map(|r| r.to_string()));
        if !races_expected && f.racy_addresses > 0 {
            self.check(false, format!("race detector: {} racy address(es)", f.racy_addresses));
        }
        // Each report says what it is ("deadlock in kernel …", "livelock in kernel …", "warning in …").
        self.details.extend(f.deadlocks);
        self.details.extend(f.warnings);
    }

    pub fn to_json(&self) -> String {
        let num = |v: Option<f64>| v.map(|x| format!("{x:.6}")).unwrap_or_else(|| "null".into());
        let arr = |v: &[String]| format!("[{}]", v.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(","));
        format!(
            "{{\"example\":{},\"device\":{},\"n\":{},\"seed\":{},\"result\":{},\"time_ms\":{},\"gbps\":{},\"races\":{},\"deadlocks\":{},\"details\":{},\"race_reports\":{}}}",
            json_str(&self.example),
            json_str(&self.device),
            self.n,
            self.seed,
            json_str(if self.pass { "PASS" } else { "FAIL" }),
            num(self.time_ms),
            num(self.gbps),
            self.races,
            self.deadlocks,
            arr(&self.details),
            arr(&self.race_reports),
        )
    }
}

/// A JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
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
        if r.pass { "PASS" } else { "FAIL" },
        time,
        gbps,
        races
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn json_escapes_and_fields() {
        let mut r = ExampleResult::new("x\"y", "emu", 7, 3);
        r.check(false, "a\nb");
        let j = r.to_json();
        assert!(
            j.starts_with("{\"example\":\"x\\\"y\",\"device\":\"emu\",\"n\":7,\"seed\":3,\"result\":\"FAIL\""),
            "{j}"
        );
        assert!(j.contains("\"details\":[\"FAIL: a\\nb\"]"), "{j}");
        assert!(j.contains("\"time_ms\":null"));
    }
}
