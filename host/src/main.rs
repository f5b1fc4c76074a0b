//! `host`: list and run the chapter's examples on a CUDA GPU or the CPU SIMT emulator.

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use gpu_host::DeviceChoice;
use host::examples::{self, RunParams};
use host::report::{table_header, table_row, tier_rows, totals_line};
use host::run::{RunRequest, SeedTally, open, run_one, select, sizes};
use std::io::Write;
use std::process::ExitCode;

/// Runs the synchronisation chapter's examples on a CUDA GPU or on the CPU SIMT emulator, and checks
/// every output against a CPU reference.
#[derive(Parser, Debug)]
#[command(name = "host", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// List the examples, with the chapter section each comes from.
    List,
    /// Run examples at their test sizes (or one `--n`) and print a PASS/FAIL row per run.
    Run(RunArgs),
    /// Run examples on the GPU under compute-sanitizer (memcheck, racecheck, synccheck, initcheck) and
    /// print example x tool -> clean / N findings; fails on any finding outside the kernels that keep a
    /// chapter bug on purpose.
    Sanitize(SanitizeArgs),
}

#[derive(Args, Debug)]
struct SanitizeArgs {
    /// Examples to check (default: all).
    #[arg(value_parser = example_names())]
    examples: Vec<String>,
    /// Tools to run (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = host::sanitize::TOOLS.map(String::from),
          value_parser = clap::builder::PossibleValuesParser::new(host::sanitize::TOOLS))]
    tools: Vec<String>,
    /// Skip test sizes above N (the sanitizers slow kernels down a lot).
    #[arg(long, default_value_t = 65_536, value_name = "N")]
    max_n: usize,
}

#[derive(Args, Debug)]
struct RunArgs {
    /// Examples to run (`host list` names them); none, or `all`, runs every example.
    #[arg(value_parser = example_names())]
    examples: Vec<String>,
    /// Run at this size only (default: each example's test sizes).
    #[arg(long, value_name = "N")]
    n: Option<usize>,
    /// Seed of the random inputs.
    #[arg(long, default_value_t = 42, value_name = "S")]
    seed: u64,
    /// Where to run: the GPU if one is present, else the emulator (`auto`); or `gpu`, or `emu`.
    #[arg(long, value_enum, default_value_t = DeviceArg::Auto, value_name = "D")]
    device: DeviceArg,
    /// One JSON object per run on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Print every check and every race report under its row.
    #[arg(short, long)]
    verbose: bool,
    /// Emulator: seed of the thread scheduler.
    #[arg(long, default_value_t = 1, value_name = "S")]
    schedule_seed: u64,
    /// Emulator: run each case under K schedules (seeds S..S+K-1); default 1, or 5 with `--mutate`.
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    schedules: Option<u32>,
    /// Emulator: mutation testing. Runs each example at one size (`--n`, else its largest emulator
    /// test size) with every barrier, fence, atomic and strong access its clean runs execute removed or
    /// weakened in turn, on K schedule seeds, and says per site whether a mutant was caught (needed)
    /// or had no effect seen (possibly redundant: no proof).
    #[arg(long)]
    mutate: bool,
    /// Skip test sizes above N.
    #[arg(long, value_name = "N")]
    max_n: Option<usize>,
    /// GPU: timed launches per measurement, median reported (0 = no timing).
    #[arg(long, default_value_t = 20, value_name = "R")]
    reps: usize,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DeviceArg {
    Auto,
    Gpu,
    Emu,
}

/// Example names and `all`, so that a misspelt name gets clap's "a similar value exists" suggestion.
fn example_names() -> clap::builder::PossibleValuesParser {
    let mut names: Vec<&'static str> = examples::ALL.iter().map(|e| e.name).collect();
    names.push("all");
    clap::builder::PossibleValuesParser::new(names)
}

impl RunArgs {
    fn into_request(self) -> RunRequest {
        RunRequest {
            examples: if self.examples.is_empty() { vec!["all".into()] } else { self.examples },
            n: self.n,
            seed: self.seed,
            device: match self.device {
                DeviceArg::Auto => DeviceChoice::Auto,
                DeviceArg::Gpu => DeviceChoice::Gpu,
                DeviceArg::Emu => DeviceChoice::Emu,
            },
            json: self.json,
            verbose: self.verbose,
            schedule_seed: self.schedule_seed,
            schedules: self.schedules.unwrap_or(if self.mutate { 5 } else { 1 }),
            reps: self.reps,
            max_n: self.max_n,
        }
    }
}

/// `host run --mutate`: each example's mutation report (or one JSON object per mutant), then a total.
/// Fails when an example's clean run does not pass; mutants with no effect seen do not fail it.
fn run_mutate(req: RunRequest) -> Result<bool> {
    if matches!(req.device, DeviceChoice::Gpu) {
        anyhow::bail!("--mutate runs on the emulator only (drop --device gpu, or use --device emu)");
    }
    let selected = select(&req.examples)?;
    let seeds: Vec<u64> = (0..req.schedules as u64).map(|k| req.schedule_seed + k).collect();
    eprintln!("device: CPU SIMT emulator (mutation testing on schedule seeds {:?})", seeds);
    let (mut sites, mut mutants, mut caught, mut failed) = (0, 0, 0, 0);
    for ex in &selected {
        let n = req.n.unwrap_or_else(|| host::mutate::default_size(ex));
        let started = std::time::Instant::now();
        if !req.json {
            println!("{} n={n}:", ex.name);
        }
        match host::mutate::mutate(ex, n, req.seed, seeds.clone()) {
            Ok(report) => {
                sites += report.sites();
                mutants += report.mutants.len();
                caught += report.caught();
                if req.json {
                    host::mutate::json_lines(ex.name, n, &report).iter().for_each(|l| println!("{l}"));
                } else {
                    print!("{report}");
                }
            }
            Err(e) => {
                failed += 1;
                if req.json {
                    eprintln!("{} n={n}: {e}", ex.name);
                } else {
                    println!("  FAIL: {e}");
                }
            }
        }
        let secs = started.elapsed().as_secs_f64();
        if secs > 5.0 {
            eprintln!("  ({} n={n} took {secs:.1} s)", ex.name);
        }
        std::io::stdout().flush().ok();
    }
    let total = format!(
        "mutate: {} example(s), {sites} sites, {mutants} mutants: {caught} caught, {} with no effect seen; {failed} example(s) without a clean run",
        selected.len(),
        mutants - caught
    );
    if req.json {
        eprintln!("{total}");
    } else {
        println!("{total}");
    }
    Ok(failed == 0)
}

fn run(req: RunRequest) -> Result<bool> {
    let selected = select(&req.examples)?;
    let mut all_pass = true;
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let mut header_done = false;
    let mut tally = SeedTally::default();
    for k in 0..req.schedules {
        let sched_seed = req.schedule_seed + k as u64;
        let (dev, note) = open(&req, sched_seed)?;
        if k == 0 {
            if let Some(note) = note {
                eprintln!("{note}");
            }
            eprintln!("device: {}", dev.name());
            eprintln!(
                "kernels: {}::Kernels makes the kernel crate's promise (unsafe impl gpu_std::KernelCrate): {}",
                host::open::DEFAULT_KERNEL_CRATE,
                gpu_std::kernel_crate::PROMISE
            );
        }
        let schedule = dev.profile().schedule_seed;
        if schedule.is_none() && k > 0 {
            break; // schedules apply where a seed chooses the interleaving
        }
        if schedule.is_some() && req.schedules > 1 {
            eprintln!("schedule seed {sched_seed}");
        }
        for ex in &selected {
            let ns = sizes(ex, &req, &dev);
            let Some(&largest) = ns.iter().max() else { continue };
            for &n in &ns {
                let reps = if n == largest { req.reps } else { 0 };
                let started = std::time::Instant::now();
                let r = run_one(&dev, ex, &RunParams { n, seed: req.seed, reps });
                if schedule.is_some() {
                    tally.add(sched_seed, &r);
                }
                all_pass &= r.pass;
                if r.skipped.is_some() {
                    skipped += 1;
                } else if r.pass {
                    passed += 1;
                } else {
                    failed += 1;
                }
                if req.json {
                    println!("{}", r.to_json(schedule));
                } else {
                    if !header_done {
                        println!("{}", table_header());
                        header_done = true;
                    }
                    println!("{}", table_row(&r));
                    if let Some(why) = &r.skipped {
                        println!("    skipped: {why}");
                    }
                    for t in tier_rows(&r) {
                        println!("{t}");
                    }
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
    // How many seeds reported each race, then the closing total; with --json both go to stderr, so
    // stdout stays one JSON object per line.
    for line in tally.lines().into_iter().chain([totals_line(passed, failed, skipped)]) {
        if req.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    }
    Ok(all_pass)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::List => {
            println!("{:>2}  {:<22} {:<34} what it shows", "#", "example", "chapter section");
            for e in examples::ALL {
                let row = e.row.map_or("-".to_string(), |r| r.to_string());
                println!("{row:>2}  {:<22} {:<34} {}", e.name, e.section, e.about);
            }
            Ok(true)
        }
        Command::Run(args) if args.mutate => run_mutate(args.into_request()),
        Command::Run(args) => run(args.into_request()),
        Command::Sanitize(args) => {
            let names = if args.examples.is_empty() { vec!["all".to_string()] } else { args.examples };
            let tools: Vec<&str> = args.tools.iter().map(String::as_str).collect();
            select(&names).and_then(|ex| host::sanitize::sanitize(&ex, &tools, args.max_n)).map(|()| true)
        }
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
