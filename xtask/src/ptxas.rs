//! `check-ptx`: assembles a kernel crate's PTX module with NVIDIA's `ptxas` (no GPU needed) and reports each
//! kernel's resources: registers, spill stores/loads, stack frame, static shared memory, barriers.
//!
//! `ptxas` comes from the `nvidia-cuda-nvcc-cu12` wheel on PyPI, unpacked into the project-local
//! `.tools/ptxas/bin/` on first use; `$PTXAS` overrides that location.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::build_ptx::{ptx_path, validate_arch};
use crate::util::{
    Context, EXIT_SKIPPED, Error, Result, display_path, find_in_path, run_capture, secs, set_executable,
};
use crate::workspace::KernelCrate;
use gpu_builder::ptx_text::entries as ptx_entries;

/// The wheel that carries `ptxas` for Linux (x86_64 and aarch64 builds exist).
pub const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc-cu12";
pub const PTXAS_WHEEL_VERSION: &str = "12.9.86";
const PTXAS_IN_WHEEL: &str = "nvidia/cuda_nvcc/bin/ptxas";

/// Resources `ptxas -v` reports for one function.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FunctionResources {
    pub name: String,
    /// An `.entry` (kernel), as opposed to a `.func` compiled on its own.
    pub is_entry: bool,
    pub registers: Option<u32>,
    pub barriers: Option<u32>,
    pub stack_frame_bytes: u64,
    pub spill_store_bytes: u64,
    pub spill_load_bytes: u64,
    /// Statically declared `.shared` bytes (dynamic shared memory is sized at launch).
    pub static_smem_bytes: u64,
    pub cumulative_stack_bytes: Option<u64>,
}

impl FunctionResources {
    pub fn spills(&self) -> bool {
        self.spill_store_bytes > 0 || self.spill_load_bytes > 0
    }
}

/// Everything `ptxas -v` said: per-function resources, errors and warnings.
#[derive(Debug, Default, PartialEq)]
pub struct PtxasReport {
    pub functions: Vec<FunctionResources>,
    pub errors: Vec<String>,
    pub warnings: Vec<String>,
}

impl PtxasReport {
    pub fn kernels(&self) -> impl Iterator<Item = &FunctionResources> {
        self.functions.iter().filter(|f| f.is_entry)
    }

    fn function_mut(&mut self, name: &str) -> &mut FunctionResources {
        let index = match self.functions.iter().position(|f| f.name == name) {
            Some(i) => i,
            None => {
                self.functions.push(FunctionResources { name: name.to_string(), ..Default::default() });
                self.functions.len() - 1
            }
        };
        &mut self.functions[index]
    }
}

/// Parses the combined output of `ptxas -v`.
///
/// Recognised lines (`ptxas` 12.x):
/// - `ptxas info    : Compiling entry function 'NAME' for 'sm_90'`
/// - `ptxas info    : Function properties for NAME` followed by
///   `    N bytes stack frame, N bytes spill stores, N bytes spill loads`
/// - `ptxas info    : Used N registers, used N barriers, N bytes smem, N bytes cmem[0], ...`
///   (items appear only when non-zero or relevant for the architecture)
/// - `ptxas FILE, line N; error   : ...`, `ptxas fatal   : ...`, `... warning : ...`
pub fn parse_ptxas_verbose(output: &str) -> PtxasReport {
    let mut report = PtxasReport::default();
    // Function that the next `Used ...` line describes.
    let mut compiling: Option<String> = None;
    // Function that the next `... bytes stack frame ...` line describes.
    let mut properties_of: Option<String> = None;

    for raw in output.lines() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(kind) = diagnostic_kind(line) {
            match kind {
                Diagnostic::Error => report.errors.push(line.to_string()),
                Diagnostic::Warning => report.warnings.push(line.to_string()),
            }
            continue;
        }
        let info = line.strip_prefix("ptxas info").map(|rest| rest.trim_start().trim_start_matches(':').trim());
        if let Some(info) = info {
            if let Some(rest) = info.strip_prefix("Compiling entry function") {
                if let Some(name) = quoted(rest) {
                    report.function_mut(&name).is_entry = true;
                    compiling = Some(name);
                }
            } else if let Some(rest) = info.strip_prefix("Compiling function") {
                if let Some(name) = quoted(rest) {
                    report.function_mut(&name);
                    compiling = Some(name);
                }
            } else if let Some(rest) = info.strip_prefix("Function properties for") {
                let name = rest.trim().to_string();
                report.function_mut(&name);
                properties_of = Some(name);
            } else if info.starts_with("Used ")
                && let Some(name) = compiling.clone()
            {
                apply_usage(report.function_mut(&name), info);
            }
            continue;
        }
        if line.contains("bytes stack frame")
            && let Some(name) = properties_of.clone()
        {
            let f = report.function_mut(&name);
            for item in line.split(',') {
                let n = leading_number(item);
                if item.contains("stack frame") {
                    f.stack_frame_bytes = n;
                } else if item.contains("spill stores") {
                    f.spill_store_bytes = n;
                } else if item.contains("spill loads") {
                    f.spill_load_bytes = n;
                }
            }
        }
    }
    report
}

enum Diagnostic {
    Error,
    Warning,
}

fn diagnostic_kind(line: &str) -> Option<Diagnostic> {
    if !line.starts_with("ptxas") {
        return None;
    }
    // The severity word comes before the first ':' ("ptxas fatal   :", "ptxas x.ptx, line 6; error   :").
    let head = line.split(':').next().unwrap_or("");
    let word = head.rsplit([' ', ';']).find(|w| !w.is_empty()).unwrap_or("");
    match word {
        "error" | "fatal" => Some(Diagnostic::Error),
        "warning" => Some(Diagnostic::Warning),
        _ => None,
    }
}

fn apply_usage(f: &mut FunctionResources, info: &str) {
    for item in info.split(',') {
        let item = item.trim();
        if let Some(rest) = item.strip_prefix("Used ") {
            if rest.ends_with("registers") {
                f.registers = Some(leading_number(rest) as u32);
            }
        } else if let Some(rest) = item.strip_prefix("used ") {
            if rest.ends_with("barriers") {
                f.barriers = Some(leading_number(rest) as u32);
            }
        } else if item.ends_with("bytes smem") {
            // Older ptxas prints `A+B bytes smem` (static + reserved); count both.
            f.static_smem_bytes = item.split_whitespace().next().unwrap_or("0").split('+').map(leading_number).sum();
        } else if item.ends_with("bytes cumulative stack size") {
            f.cumulative_stack_bytes = Some(leading_number(item));
        }
    }
}

fn leading_number(text: &str) -> u64 {
    let text = text.trim_start();
    let digits: String = text.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(0)
}

fn quoted(text: &str) -> Option<String> {
    let start = text.find('\'')? + 1;
    let len = text[start..].find('\'')?;
    Some(text[start..start + len].to_string())
}

/// The resource table, one row per kernel, sorted by name.
pub fn format_table(report: &PtxasReport) -> String {
    let header = ["kernel", "registers", "spill stores", "spill loads", "stack bytes", "static smem bytes", "barriers"];
    let opt = |v: Option<u32>| v.map_or("?".to_string(), |n| n.to_string());
    let mut kernels: Vec<&FunctionResources> = report.kernels().collect();
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    let rows: Vec<[String; 7]> = kernels
        .into_iter()
        .map(|k| {
            [
                k.name.clone(),
                opt(k.registers),
                k.spill_store_bytes.to_string(),
                k.spill_load_bytes.to_string(),
                k.stack_frame_bytes.to_string(),
                k.static_smem_bytes.to_string(),
                opt(k.barriers),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: &[&str]| {
        let mut line = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            if i == 0 {
                line.push_str(&format!("{cell:<w$}"));
            } else {
                line.push_str(&format!("  {cell:>w$}"));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push_row(&header);
    for row in &rows {
        push_row(&row.each_ref().map(String::as_str));
    }
    out
}

/// Options of `check-ptx`.
pub struct CheckOptions<'a> {
    /// The crate whose module (`target/ptx/<crate_name>[.<arch>].ptx`) is checked.
    pub krate: &'a KernelCrate,
    pub arch: &'a str,
    /// Exit 0 (after saying so) when `ptxas` cannot be obtained.
    pub allow_skip: bool,
}

/// What `check_ptx` did when it did not fail.
#[derive(Debug, PartialEq)]
pub enum CheckOutcome {
    Assembled,
    /// `ptxas` could not be obtained and `--allow-skip` was given.
    Skipped,
}

/// Runs `ptxas -v` on the built module for `opts.arch` and fails on errors or spills.
pub fn check_ptx(root: &Path, opts: &CheckOptions) -> Result<CheckOutcome> {
    let start = Instant::now();
    validate_arch(opts.arch)?;
    let ptx_file = ptx_path(root, &opts.krate.crate_name, opts.arch);
    if !ptx_file.is_file() {
        return Err(Error::new(format!(
            "check-ptx: {} does not exist; run `cargo xtask build-ptx -p {} --arch {}` first",
            display_path(root, &ptx_file),
            opts.krate.package,
            opts.arch
        )));
    }
    let ptxas = match ensure_ptxas(root) {
        Ok(p) => p,
        Err(reason) => {
            println!("check-ptx: SKIPPED — ptxas unavailable: {reason}");
            return if opts.allow_skip {
                Ok(CheckOutcome::Skipped)
            } else {
                Err(Error::with_code(
                    "check-ptx: the PTX was not assembled (pass --allow-skip to accept that)",
                    EXIT_SKIPPED,
                ))
            };
        }
    };

    let mut cmd = Command::new(&ptxas);
    cmd.arg(format!("-arch={}", opts.arch)).arg("-v").arg(&ptx_file).arg("-o").arg("/dev/null");
    let out = run_capture(&mut cmd)?;
    let text = format!("{}{}", out.stderr, out.stdout);
    let report = parse_ptxas_verbose(&text);

    for warning in &report.warnings {
        println!("check-ptx: {warning}");
    }
    let mut problems = Vec::new();
    if !out.success() || !report.errors.is_empty() {
        for error in &report.errors {
            println!("check-ptx: {error}");
        }
        if report.errors.is_empty() {
            println!("{}", text.trim_end());
        }
        problems.push(format!("ptxas failed ({})", out.status_text()));
    } else {
        print!("{}", format_table(&report));
        let ptx = fs::read_to_string(&ptx_file).context(|| format!("cannot read {}", ptx_file.display()))?;
        let mut in_ptx = ptx_entries(&ptx);
        let mut reported: Vec<String> = report.kernels().map(|k| k.name.clone()).collect();
        in_ptx.sort();
        reported.sort();
        if in_ptx != reported {
            problems.push(format!(
                "ptxas reported kernels [{}] but the module declares [{}] (output format not understood?)",
                reported.join(", "),
                in_ptx.join(", ")
            ));
        }
    }
    let spilling: Vec<String> = report
        .functions
        .iter()
        .filter(|f| f.spills())
        .map(|f| format!("{} ({} B stored, {} B loaded)", f.name, f.spill_store_bytes, f.spill_load_bytes))
        .collect();
    if !spilling.is_empty() {
        problems.push(format!("register spills in {}", spilling.join(", ")));
    }

    let kernels = report.kernels().count();
    if problems.is_empty() {
        println!(
            "check-ptx: {} assembles for {}: {kernels} kernel{}, no spills, in {}",
            display_path(root, &ptx_file),
            opts.arch,
            if kernels == 1 { "" } else { "s" },
            secs(start.elapsed())
        );
        Ok(CheckOutcome::Assembled)
    } else {
        Err(Error::new(format!(
            "check-ptx: {} FAILED for {}: {}",
            display_path(root, &ptx_file),
            opts.arch,
            problems.join("; ")
        )))
    }
}

/// `.tools/ptxas/bin/ptxas` in the workspace.
pub fn local_ptxas(root: &Path) -> PathBuf {
    root.join(".tools").join("ptxas").join("bin").join("ptxas")
}

/// Finds `ptxas` (`$PTXAS`, then the project-local copy) or fetches it; `Err` carries the reason it
/// cannot be had.
fn ensure_ptxas(root: &Path) -> std::result::Result<PathBuf, String> {
    if let Some(path) = env::var_os("PTXAS").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() { Ok(path) } else { Err(format!("$PTXAS={} is not a file", path.display())) };
    }
    let local = local_ptxas(root);
    if local.is_file() {
        return Ok(local);
    }
    fetch_ptxas(root, &local)?;
    Ok(local)
}

/// Downloads the `nvidia-cuda-nvcc-cu12` wheel with pip and unpacks only `ptxas` from it.
fn fetch_ptxas(root: &Path, dest: &Path) -> std::result::Result<(), String> {
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| find_in_path(p).is_some())
        .ok_or("neither python3 nor python is on PATH (needed to fetch the ptxas wheel with pip)")?;
    let bin_dir = dest.parent().ok_or("bad ptxas destination")?;
    let download = root.join(".tools").join("ptxas").join(format!("download-{}", std::process::id()));
    fs::create_dir_all(&download).map_err(|e| format!("cannot create {}: {e}", download.display()))?;
    eprintln!(
        "check-ptx: fetching ptxas from the {PTXAS_WHEEL} {PTXAS_WHEEL_VERSION} wheel (about 40 MB) into {}",
        display_path(root, bin_dir)
    );
    let result = (|| {
        let mut pip = Command::new(python);
        pip.args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--disable-pip-version-check"])
            .arg(format!("{PTXAS_WHEEL}=={PTXAS_WHEEL_VERSION}"))
            .arg("-d")
            .arg(&download);
        let out = run_capture(&mut pip).map_err(|e| e.message)?;
        if !out.success() {
            let detail = out.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            return Err(format!("`{python} -m pip download {PTXAS_WHEEL}=={PTXAS_WHEEL_VERSION}` failed: {detail}"));
        }
        let wheel = fs::read_dir(&download)
            .map_err(|e| format!("cannot list {}: {e}", download.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .find(|p| p.extension().is_some_and(|x| x == "whl"))
            .ok_or("pip reported success but no .whl file was downloaded")?;
        fs::create_dir_all(bin_dir).map_err(|e| format!("cannot create {}: {e}", bin_dir.display()))?;
        let partial = dest.with_extension("partial");
        let mut unzip = Command::new(python);
        unzip
            .arg("-c")
            .arg(
                "import sys, zipfile\n\
                 with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[3], 'wb') as out:\n    \
                 out.write(z.read(sys.argv[2]))\n",
            )
            .arg(&wheel)
            .arg(PTXAS_IN_WHEEL)
            .arg(&partial);
        let out = run_capture(&mut unzip).map_err(|e| e.message)?;
        if !out.success() {
            let detail = out.stderr.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
            return Err(format!("cannot unpack {PTXAS_IN_WHEEL} from {}: {detail}", wheel.display()));
        }
        set_executable(&partial).map_err(|e| e.message)?;
        let mut version = Command::new(&partial);
        version.arg("--version");
        match run_capture(&mut version) {
            Ok(out) if out.success() => {}
            Ok(out) => {
                return Err(format!("the unpacked ptxas does not run ({})", out.status_text()));
            }
            Err(e) => return Err(format!("the unpacked ptxas does not run: {}", e.message)),
        }
        fs::rename(&partial, dest).map_err(|e| format!("cannot move ptxas into place: {e}"))
    })();
    let _ = fs::remove_dir_all(&download);
    result?;
    eprintln!("check-ptx: installed {}", display_path(root, dest));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real `ptxas -v` output (CUDA 12.9.86, from the nvidia-cuda-nvcc-cu12 wheel) for the PTX files
    // next to them in fixtures/ptxas/.
    const SAMPLE_SM90: &str = include_str!("../fixtures/ptxas/sample.sm_90.txt");
    const SAMPLE_SM70: &str = include_str!("../fixtures/ptxas/sample.sm_70.txt");
    const SPILL: &str = include_str!("../fixtures/ptxas/spill.sm_90.maxrregcount24.txt");
    const ERROR: &str = include_str!("../fixtures/ptxas/error.sm_90.txt");

    fn kernel<'a>(report: &'a PtxasReport, name: &str) -> &'a FunctionResources {
        report.functions.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no {name}"))
    }

    #[test]
    fn parses_sm90_output() {
        let r = parse_ptxas_verbose(SAMPLE_SM90);
        assert!(r.errors.is_empty() && r.warnings.is_empty());
        assert_eq!(r.kernels().count(), 2);
        assert_eq!(
            kernel(&r, "with_stack"),
            &FunctionResources {
                name: "with_stack".into(),
                is_entry: true,
                registers: Some(14),
                barriers: Some(0),
                stack_frame_bytes: 64,
                spill_store_bytes: 0,
                spill_load_bytes: 0,
                static_smem_bytes: 0,
                cumulative_stack_bytes: Some(64),
            }
        );
        let smem = kernel(&r, "with_smem");
        assert_eq!((smem.registers, smem.barriers, smem.static_smem_bytes), (Some(10), Some(1), 1024));
        assert!(!r.functions.iter().any(FunctionResources::spills));
    }

    #[test]
    fn parses_sm70_output_with_cmem() {
        let r = parse_ptxas_verbose(SAMPLE_SM70);
        let smem = kernel(&r, "with_smem");
        assert_eq!((smem.registers, smem.barriers, smem.static_smem_bytes), (Some(10), Some(1), 1024));
        assert_eq!(kernel(&r, "with_stack").registers, Some(12));
    }

    #[test]
    fn reports_spills_and_device_functions() {
        let r = parse_ptxas_verbose(SPILL);
        let heavy = kernel(&r, "heavy");
        assert!(heavy.is_entry && heavy.spills());
        assert_eq!((heavy.spill_store_bytes, heavy.spill_load_bytes, heavy.stack_frame_bytes), (348, 452, 352));
        assert_eq!(heavy.registers, Some(24));
        let helper = kernel(&r, "helper");
        assert!(!helper.is_entry && !helper.spills());
        assert_eq!(r.kernels().count(), 1);
    }

    #[test]
    fn collects_errors() {
        let r = parse_ptxas_verbose(ERROR);
        assert_eq!(r.errors.len(), 3);
        assert!(r.errors[0].contains("Arguments mismatch for instruction 'bar'"));
        assert!(r.functions.is_empty());
    }

    #[test]
    fn table_has_one_row_per_kernel() {
        let table = format_table(&parse_ptxas_verbose(SAMPLE_SM90));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("kernel"));
        assert!(lines[2].starts_with("with_stack"));
        let row: Vec<&str> = lines[1].split_whitespace().collect();
        assert_eq!(row, ["with_smem", "10", "0", "0", "0", "1024", "1"]);
    }
}
