//! `host`: list and run the chapter's examples on a CUDA GPU or the CPU SIMT emulator.

use anyhow::{Context, Result, bail};
use host::examples::{self, RunParams};
use host::report::{table_header, table_row};
use host::run::{RunRequest, open, run_one, select, sizes};
use std::io::Write;
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  host list
  host run [<example>...|all] [--n N] [--seed S] [--device auto|gpu|emu] [--json] [-v]
                            [--schedule-seed S] [--schedules K] [--reps R] [--max-n N]

  <example>...       the examples to run (`host list` names them); none, or `all`: every example
  --n N              run at this size only (default: each example's test sizes)
  --seed S           seed of the random inputs (default 42)
  --device D         auto (GPU if present, else the emulator), gpu, emu (default auto)
  -v, --verbose      print every check and every race report under its row
  --json             one JSON object per example run on stdout instead of the table
  --schedule-seed S  emulator: seed of the thread scheduler (default 1)
  --schedules K      emulator: run each case under K schedules (seeds S..S+K-1)
  --max-n N          skip test sizes above N
  --reps R           GPU: timed launches per measurement, median reported (default 20; 0 = no timing)
";

fn parse(args: &[String]) -> Result<RunRequest> {
    let mut req = RunRequest { examples: vec![], ..RunRequest::default() };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().with_context(|| format!("{name} needs a value"));
        match a.as_str() {
            "--n" => {
                let v = val("--n")?;
                req.n = Some(v.parse().with_context(|| format!("--n: `{v}` is not a size"))?);
            }
            "--seed" => {
                let v = val("--seed")?;
                req.seed = v.parse().with_context(|| format!("--seed: `{v}` is not a number"))?;
            }
            "--device" => req.device = val("--device")?.parse()?,
            "--json" => req.json = true,
            "-v" | "--verbose" => req.verbose = true,
            "--schedule-seed" => {
                let v = val("--schedule-seed")?;
                req.schedule_seed = v.parse().with_context(|| format!("--schedule-seed: `{v}` is not a number"))?;
            }
            "--schedules" => {
                let v = val("--schedules")?;
                req.schedules = v.parse().with_context(|| format!("--schedules: `{v}` is not a count"))?;
                if req.schedules == 0 {
                    bail!("--schedules must be at least 1");
                }
            }
            "--max-n" => {
                let v = val("--max-n")?;
                req.max_n = Some(v.parse().with_context(|| format!("--max-n: `{v}` is not a size"))?);
            }
            "--reps" => {
                let v = val("--reps")?;
                req.reps = v.parse().with_context(|| format!("--reps: `{v}` is not a count"))?;
            }
            s if s.starts_with("--") => bail!("unknown option `{s}`\n{USAGE}"),
            s => req.examples.push(s.to_string()),
        }
    }
    if req.examples.is_empty() {
        req.examples.push("all".into());
    }
    Ok(req)
}

fn run(req: RunRequest) -> Result<bool> {
    let selected = select(&req.examples)?;
    let mut all_pass = true;
    let mut header_done = false;
    for k in 0..req.schedules {
        let sched_seed = req.schedule_seed + k as u64;
        let (dev, note) = open(&req, sched_seed)?;
        if k == 0 {
            if let Some(note) = note {
                eprintln!("{note}");
            }
            eprintln!("device: {}", dev.name());
        }
        if dev.is_gpu() && k > 0 {
            break; // schedules apply to the emulator only
        }
        if !dev.is_gpu() && req.schedules > 1 {
            eprintln!("schedule seed {sched_seed}");
        }
        for ex in &selected {
            let ns = sizes(ex, &req, &dev);
            let Some(&largest) = ns.iter().max() else { continue };
            for &n in &ns {
                let reps = if n == largest { req.reps } else { 0 };
                let started = std::time::Instant::now();
                let r = run_one(&dev, ex, &RunParams { n, seed: req.seed, reps });
                all_pass &= r.pass;
                if req.json {
                    println!("{}", r.to_json());
                } else {
                    if !header_done {
                        println!("{}", table_header());
                        header_done = true;
                    }
                    println!("{}", table_row(&r));
                    for s in &r.show {
                        println!("    {s}");
                    }
                    if !r.pass || req.verbose {
                        for d in r.details.iter().filter(|d| req.verbose || !d.starts_with("ok:")) {
                            println!("    {d}");
                        }
                    }
                    // The first race report of a row, always: races are the point of the emulator.
                    let shown = if req.verbose { r.race_reports.len() } else { 1 };
                    for rr in r.race_reports.iter().take(shown) {
                        for line in rr.lines() {
                            println!("    {line}");
                        }
                    }
                }
                let secs = started.elapsed().as_secs_f64();
                if secs > 5.0 {
                    eprintln!("  ({} n={n} took {secs:.1} s)", ex.name);
                }
                std::io::stdout().flush().ok();
            }
        }
    }
    Ok(all_pass)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("list") => {
            println!("{:>2}  {:<22} {:<34} what it shows", "#", "example", "chapter section");
            for e in examples::ALL {
                let row = e.row.map_or("-".to_string(), |r| r.to_string());
                println!("{row:>2}  {:<22} {:<34} {}", e.name, e.section, e.about);
            }
            Ok(true)
        }
        Some("run") => parse(&args[1..]).and_then(run),
        Some("-h" | "--help" | "help") | None => {
            print!("{USAGE}");
            Ok(true)
        }
        Some(other) => Err(anyhow::anyhow!("unknown command `{other}`\n{USAGE}")),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("FAILED: at least one example did not pass");
            ExitCode::from(1)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
