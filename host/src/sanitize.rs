//! `host sanitize`: runs examples on the GPU under NVIDIA's compute-sanitizer — memcheck, racecheck,
//! synccheck and initcheck — one process per example and tool, and prints one table: example × tool →
//! clean, or the number of findings. A finding is expected only in a kernel that keeps a chapter bug on
//! purpose (an example's [`kept_bugs`](crate::examples::Example::kept_bugs), in its own file); any
//! other finding, or a run that fails, makes the command fail.

use crate::examples::{ALL, Example};
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The compute-sanitizer tools, in table order.
pub const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];

/// The outcome of one example under one tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    Clean,
    /// Findings, all in kernels that keep a bug on purpose.
    Expected(usize),
    /// Findings elsewhere (the first offending report line kept).
    Unexpected(usize, String),
    /// The run itself failed (the example failed, or the sanitizer could not run it).
    RunFailed(String),
}

impl Cell {
    fn ok(&self) -> bool {
        matches!(self, Cell::Clean | Cell::Expected(_))
    }
    fn text(&self) -> String {
        match self {
            Cell::Clean => "clean".into(),
            Cell::Expected(n) => format!("{n} expected"),
            Cell::Unexpected(n, _) => format!("{n} UNEXPECTED"),
            Cell::RunFailed(_) => "RUN FAILED".into(),
        }
    }
}

/// `compute-sanitizer`: `$COMPUTE_SANITIZER`, else on `PATH`, else under the usual CUDA install dirs.
pub fn find_sanitizer() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("COMPUTE_SANITIZER").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("compute-sanitizer"));
    let installed = ["/usr/local/cuda/bin", "/usr/local/cuda/compute-sanitizer", "/opt/cuda/bin"]
        .iter()
        .map(|d| Path::new(d).join("compute-sanitizer"));
    on_path.chain(installed).find(|p| p.is_file()).with_context(|| {
        "compute-sanitizer not found (it comes with the CUDA toolkit; put it on PATH or set \
         COMPUTE_SANITIZER=<path>). The examples themselves need only the driver: `host run all --device gpu`"
            .to_string()
    })
}

/// Counts the findings in one sanitizer report and checks them against the kernels allowed to have
/// them (those that keep a bug on purpose for this tool).
pub fn judge(report: &str, allowed: &[&str]) -> Cell {
    // memcheck, synccheck, initcheck: "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: N hazards
    // displayed (E errors, W warnings)".
    let count = report
        .lines()
        .filter_map(|l| {
            let l = l.trim_start_matches('=').trim();
            let rest = l.strip_prefix("ERROR SUMMARY:").or_else(|| l.strip_prefix("RACECHECK SUMMARY:"))?;
            rest.split_whitespace().next()?.parse::<usize>().ok()
        })
        .max();
    let Some(count) = count else {
        return Cell::RunFailed("no sanitizer summary in the output".into());
    };
    if count == 0 {
        return Cell::Clean;
    }
    // Every finding block starts with "========= Error:" / "========= Warning:" / "Race reported"; the
    // kernel it happened in is named in the block. Each block must name an allowed kernel.
    let mut blocks: Vec<String> = Vec::new();
    for line in report.lines() {
        let l = line.trim_start_matches('=').trim();
        if l.starts_with("Error:") || l.starts_with("Warning:") || l.starts_with("Invalid") {
            blocks.push(l.to_string());
        } else if let Some(b) = blocks.last_mut()
            && !l.is_empty()
            && !l.contains("SUMMARY")
        {
            b.push(' ');
            b.push_str(l);
        }
    }
    match blocks.iter().find(|b| !allowed.iter().any(|k| b.contains(k))) {
        None if !blocks.is_empty() => Cell::Expected(count),
        None => Cell::Unexpected(count, "findings reported without details".into()),
        Some(b) => Cell::Unexpected(count, b.chars().take(300).collect()),
    }
}

/// Runs every example of `examples` under every tool of `tools`, prints the table, and fails if any
/// cell is unexpected or failed.
pub fn sanitize(examples: &[&'static Example], tools: &[&str], max_n: usize) -> Result<()> {
    let sanitizer = find_sanitizer()?;
    let me = std::env::current_exe().context("cannot find the host executable")?;
    println!(
        "sanitize: {} ({} examples x {} tools, sizes up to {max_n})",
        sanitizer.display(),
        examples.len(),
        tools.len()
    );
    let mut rows = Vec::new();
    for ex in examples {
        let mut cells = Vec::new();
        for &tool in tools {
            let out = Command::new(&sanitizer)
                .args(["--tool", tool, "--print-limit", "64"])
                .arg(&me)
                .args(["run", ex.name, "--device", "gpu", "--reps", "0", "--max-n"])
                .arg(max_n.to_string())
                .output()
                .with_context(|| format!("cannot run {}", sanitizer.display()))?;
            let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let allowed: Vec<&str> =
                ex.kept_bugs.iter().filter(|b| b.tools.contains(&tool)).map(|b| b.kernel).collect();
            let cell = match judge(&text, &allowed) {
                Cell::Clean | Cell::Expected(_) if !out.status.success() => {
                    Cell::RunFailed(format!("the example failed under {tool} ({})", out.status))
                }
                c => c,
            };
            eprintln!("  {} under {tool}: {}", ex.name, cell.text());
            cells.push(cell);
        }
        rows.push((ex.name, cells));
    }
    print!("{:<22}", "example");
    for t in tools {
        print!(" {t:>14}");
    }
    println!();
    let mut bad = Vec::new();
    for (name, cells) in &rows {
        print!("{name:<22}");
        for (t, c) in tools.iter().zip(cells) {
            print!(" {:>14}", c.text());
            match c {
                Cell::Unexpected(_, why) | Cell::RunFailed(why) => bad.push(format!("{name} under {t}: {why}")),
                _ => {}
            }
        }
        println!();
    }
    let expected: Vec<String> = ALL
        .iter()
        .flat_map(|e| e.kept_bugs.iter().map(move |b| format!("{} ({}: {})", b.kernel, e.name, b.tools.join(", "))))
        .collect();
    println!("expected findings only in the kernels that keep a chapter bug: {}", expected.join("; "));
    if rows.iter().all(|(_, cells)| cells.iter().all(Cell::ok)) {
        println!("sanitize: no unexpected finding");
        Ok(())
    } else {
        bail!("sanitize: {} unexpected finding(s) or failed run(s):\n  {}", bad.len(), bad.join("\n  "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_reports_are_clean() {
        assert_eq!(judge("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n", &[]), Cell::Clean);
        assert_eq!(
            judge("========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n", &[]),
            Cell::Clean
        );
    }

    #[test]
    fn findings_in_kept_bugs_are_expected_and_others_are_not() {
        let report = "========= Error: Race reported between Write access at block_reduce_demo_no_barrier+0x80\n\
                      =========     and Read access at block_reduce_demo_no_barrier+0x120 [4 hazards]\n\
                      ========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n";
        assert_eq!(judge(report, &["block_reduce_demo_no_barrier"]), Cell::Expected(1));
        assert!(matches!(judge(report, &["reduce_sum"]), Cell::Unexpected(1, _)));
        assert!(matches!(judge(report, &[]), Cell::Unexpected(1, _)));
    }

    #[test]
    fn a_report_without_summary_is_a_failed_run() {
        assert!(matches!(judge("error: launch failed\n", &[]), Cell::RunFailed(_)));
    }
}
