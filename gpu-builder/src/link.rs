//! The PTX "linker": what rustc runs to turn the kernel crate's LLVM bitcode into one `.ptx` file.
//!
//! For `nvptx64-nvidia-cuda` rustc emits LLVM bitcode for every codegen unit and calls its linker as
//!
//! ```text
//! LINKER --export-symbol k1 --export-symbol k2 ... crate.rcgu.o ... libcore-*.rlib
//!        libcompiler_builtins-*.rlib [-L DIR ...] --target nvptx64-nvidia-cuda --target-cpu sm_90
//!        [--target-feature=+ptx70] -o out.ptx -O3
//! ```
//!
//! (or with `@response-file` when the line is long; rustc adds a PTX ISA version feature for older
//! GPUs such as sm_70). The pipeline:
//! 1. collect the bitcode: crate objects as given, `.rlib` members whose content is bitcode
//!    (`lib.rmeta` and other metadata members are skipped);
//! 2. `llvm-link` all of it into one module. Everything is linked, not `--only-needed`: that flag
//!    works file by file in order, so a member needed only by a later member would be left out;
//! 3. `opt -passes=internalize,globaldce,default<On>` with the exported symbols as the only public
//!    API — the kernels, and the globals that `gpu-std`'s `kernel!` exports next to each of them
//!    (`__gpu_std_signature_<kernel>`, the definition's signature, which `gpu-host` checks before a
//!    launch) — so everything unreachable from them is dropped before optimisation;
//! 4. `llc -mtriple=nvptx64-nvidia-cuda -mcpu=<target-cpu> [-mattr=<features>]` writes the PTX to the
//!    `-o` path, which is then checked to declare every exported symbol.
//!
//! Rustc runs the linker given with `-Clinker`, and a build dependency cannot ship an executable,
//! so the builder names the program that called it: the build script binary (or a command-line
//! tool), found with `std::env::current_exe()`. The child build's environment carries
//! [`LINKER_ENV`] set to that path; rustc passes its environment on to the linker, so when the
//! program starts again as the linker, [`crate::link_if_invoked`] (which [`crate::PtxBuilder::build`]
//! calls first) sees the variable naming its own executable, links, and exits with the link's status.
//! Another program that merely inherits the variable (a build script of a kernel dependency) names a
//! different executable and is left alone.
//!
//! Intermediate files go to a work directory next to the log ([`LOG_ENV`]), and every run writes its
//! command line and the tool invocations to that log.

use std::env;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::ar;
use crate::process::{describe, status_text};
use crate::ptx_text::{apply_launch_bounds, declares, undefined_functions};

/// If rustc started this process as the PTX linker of a kernel build, links and exits the process
/// with the link's status; otherwise returns at once.
///
/// [`PtxBuilder::build`](crate::PtxBuilder::build) calls this first, so a build script that starts
/// with `build()` needs nothing else. A program that calls `build()` later, or only on some paths (a
/// command-line tool), must call this as the first statement of `main`: the builder makes rustc run
/// the calling executable as the linker (see the
/// [crate documentation](crate#linker-mode-build-must-come-first)).
pub fn link_if_invoked() {
    if invoked() {
        std::process::exit(main());
    }
}

/// Set in the child build's environment to the path of the executable that rustc runs as the
/// linker; that executable is in linker mode when it finds its own path here.
pub(crate) const LINKER_ENV: &str = "GPU_BUILDER_LINKER";
/// Directory of `llvm-link`, `opt` and `llc` of the kernel toolchain.
pub(crate) const LLVM_BIN_ENV: &str = "GPU_BUILDER_LLVM_BIN";
/// The log file of the link; its work directory is the log's path without the extension.
pub(crate) const LOG_ENV: &str = "GPU_BUILDER_LINK_LOG";
/// The option that carries the linker's identity (see [`LINK_ID`]) on the linker command line.
pub(crate) const LINK_ID_ARG: &str = "--gpu-builder-link-id";

/// A hash of the link code, passed on the linker command line through `-Clink-arg` so that cargo
/// links the kernel crate again when the linker changes (and only then).
pub(crate) const LINK_ID: u64 = {
    let sources: [&[u8]; 3] = [include_bytes!("link.rs"), include_bytes!("ar.rs"), include_bytes!("ptx_text.rs")];
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut s = 0;
    while s < sources.len() {
        let bytes = sources[s];
        let mut i = 0;
        while i < bytes.len() {
            hash ^= bytes[i] as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
            i += 1;
        }
        s += 1;
    }
    hash
};

type Result<T> = std::result::Result<T, String>;

/// True when rustc started this process as the PTX linker: [`LINKER_ENV`] names this executable.
pub(crate) fn invoked() -> bool {
    match (env::var_os(LINKER_ENV), env::current_exe()) {
        (Some(named), Ok(me)) => names_executable(Path::new(&named), &me),
        _ => false,
    }
}

/// Whether `named` is the executable `me` (the same path, or the same file once links are resolved).
fn names_executable(named: &Path, me: &Path) -> bool {
    named == me || matches!((fs::canonicalize(named), fs::canonicalize(me)), (Ok(a), Ok(b)) if a == b)
}

/// Linker mode: links, writes the log, and returns the process exit code.
pub(crate) fn main() -> i32 {
    let argv: Vec<String> = env::args().skip(1).collect();
    let log_path =
        env::var_os(LOG_ENV).map(PathBuf::from).unwrap_or_else(|| env::temp_dir().join("gpu-builder-link.log"));
    let work_dir = log_path.with_extension("");
    let mut log = Log { path: log_path.clone(), text: String::new() };
    log.line(format!("argv: {}", quote_all(&argv)));
    let result = link(&argv, &work_dir, &mut log);
    if let Err(e) = &result {
        log.line(format!("FAILED: {e}"));
    } else {
        log.line("ok");
    }
    log.flush();
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("ptx link: {e}");
            eprintln!("ptx link: command line and tool invocations: {}", log_path.display());
            1
        }
    }
}

struct Log {
    path: PathBuf,
    text: String,
}

impl Log {
    fn line(&mut self, line: impl AsRef<str>) {
        let _ = writeln!(self.text, "{}", line.as_ref());
    }

    fn flush(&self) {
        // The log is a debugging aid; failing to write it must not fail the link.
        let _ = fs::write(&self.path, &self.text);
    }
}

fn quote_all(args: &[String]) -> String {
    args.iter()
        .map(|a| if a.is_empty() || a.contains([' ', '\'', '"']) { format!("{a:?}") } else { a.clone() })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The parts of rustc's linker command line that the pipeline uses.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct LinkArgs {
    pub(crate) exports: Vec<String>,
    pub(crate) inputs: Vec<PathBuf>,
    pub(crate) target: Option<String>,
    pub(crate) target_cpu: Option<String>,
    /// LLVM target features, e.g. `+ptx70` (rustc adds a PTX ISA version for older GPUs).
    pub(crate) target_features: Vec<String>,
    pub(crate) output: Option<PathBuf>,
    /// `0`..`3`, `s` or `z`.
    pub(crate) opt_level: String,
}

/// Expands `@file` response files: one argument per line, `\` escaping a following character.
fn expand_response_files(argv: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for arg in argv {
        match arg.strip_prefix('@') {
            Some(file) if !file.is_empty() => {
                let text = fs::read_to_string(file).context(|| format!("cannot read response file {file}"))?;
                out.extend(text.lines().map(unescape_response_line));
            }
            _ => out.push(arg.clone()),
        }
    }
    Ok(out)
}

fn unescape_response_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next() {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn parse_args(argv: &[String]) -> Result<LinkArgs> {
    let argv = expand_response_files(argv)?;
    let mut args = LinkArgs { opt_level: "3".into(), ..LinkArgs::default() };
    let mut it = argv.iter();
    while let Some(arg) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or_else(|| format!("`{flag}` is missing its value"));
        match arg.as_str() {
            "--export-symbol" => args.exports.push(value(arg)?),
            "-o" => args.output = Some(PathBuf::from(value(arg)?)),
            "--target" => args.target = Some(value(arg)?),
            "--target-cpu" => args.target_cpu = Some(value(arg)?),
            "--target-feature" => args.target_features.push(value(arg)?),
            "-L" => {
                value(arg)?;
            }
            "--debug" => {}
            // Only there to make cargo link again when the link code changes.
            LINK_ID_ARG => {
                value(arg)?;
            }
            a if a.starts_with(LINK_ID_ARG) && a[LINK_ID_ARG.len()..].starts_with('=') => {}
            a if a.starts_with("--export-symbol=") => args.exports.push(a["--export-symbol=".len()..].into()),
            a if a.starts_with("--target-cpu=") => args.target_cpu = Some(a["--target-cpu=".len()..].into()),
            a if a.starts_with("--target-feature=") => {
                args.target_features.push(a["--target-feature=".len()..].into());
            }
            a if a.starts_with("--target=") => args.target = Some(a["--target=".len()..].into()),
            a if a.starts_with("-L") => {}
            a if a.starts_with("-O") && matches!(&a[2..], "0" | "1" | "2" | "3" | "s" | "z") => {
                args.opt_level = a[2..].to_string();
            }
            a if a.starts_with('-') && a.len() > 1 => {
                return Err(format!("unsupported linker argument `{a}`"));
            }
            a => args.inputs.push(PathBuf::from(a)),
        }
    }
    if args.output.is_none() {
        return Err(String::from("no output file (`-o`) given"));
    }
    if let Some(target) = &args.target
        && !target.starts_with("nvptx64-")
    {
        return Err(format!("this linker only produces PTX, not `{target}`"));
    }
    Ok(args)
}

/// Raw bitcode (`BC 0xC0DE`) or the bitcode wrapper header (`0x0B17C0DE`, little endian).
pub(crate) fn is_bitcode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"BC\xc0\xde") || bytes.starts_with(&[0xde, 0xc0, 0x17, 0x0b])
}

fn link(argv: &[String], work_dir: &Path, log: &mut Log) -> Result<()> {
    let args = parse_args(argv)?;
    let output = args.output.as_deref().unwrap_or(Path::new("out.ptx"));
    if fs::metadata(work_dir).is_ok() {
        fs::remove_dir_all(work_dir).context(|| format!("cannot clear {}", work_dir.display()))?;
    }
    fs::create_dir_all(work_dir).context(|| format!("cannot create {}", work_dir.display()))?;

    let (objects, members) = collect_bitcode(&args.inputs, work_dir, log)?;
    if objects.is_empty() {
        return Err(String::from("no LLVM bitcode object among the inputs (nothing to link)"));
    }

    let bin = llvm_bin_dir()?;
    let linked = work_dir.join("linked.bc");
    let optimized = work_dir.join("optimized.bc");

    let mut llvm_link = Command::new(bin.join("llvm-link"));
    llvm_link.args(&objects).args(&members).arg("-o").arg(&linked);
    run_tool(&mut llvm_link, log)?;

    // Target CPU and features for both opt (cost model) and llc (code generation).
    let mut target_args = Vec::new();
    if let Some(cpu) = &args.target_cpu {
        target_args.push(format!("-mcpu={cpu}"));
    }
    let features: Vec<&str> =
        args.target_features.iter().flat_map(|f| f.split(',')).filter(|f| !f.is_empty()).collect();
    if !features.is_empty() {
        target_args.push(format!("-mattr={}", features.join(",")));
    }

    let mut opt = Command::new(bin.join("opt"));
    opt.arg(format!("-passes=internalize,globaldce,default<O{}>", args.opt_level))
        .arg(format!("-internalize-public-api-list={}", args.exports.join(",")))
        .args(&target_args)
        .arg(&linked)
        .arg("-o")
        .arg(&optimized);
    run_tool(&mut opt, log)?;

    let llc_level = match args.opt_level.as_str() {
        "0" | "1" | "2" | "3" => args.opt_level.as_str(),
        _ => "2",
    };
    let mut llc = Command::new(bin.join("llc"));
    llc.arg(format!("-O{llc_level}")).arg("-mtriple=nvptx64-nvidia-cuda").args(&target_args);
    llc.arg(&optimized).arg("-o").arg(output);
    run_tool(&mut llc, log)?;

    let ptx = fs::read_to_string(output).context(|| format!("cannot read the PTX written to {}", output.display()))?;
    let ptx = apply_launch_bounds(&ptx).and_then(|ptx| {
        fs::write(output, &ptx).context(|| format!("cannot write {}", output.display()))?;
        Ok(ptx)
    });
    if let Err(e) = ptx.and_then(|ptx| check_linked_ptx(&ptx, &args.exports)) {
        // Leave no unusable module behind at the output path.
        let _ = fs::remove_file(output);
        return Err(e);
    }
    log.line(format!("wrote {} ({} exports)", output.display(), args.exports.len()));
    Ok(())
}

/// The linked module must define every exported symbol and call nothing undefined.
fn check_linked_ptx(ptx: &str, exports: &[String]) -> Result<()> {
    let missing: Vec<&str> = exports.iter().map(String::as_str).filter(|name| !declares(ptx, name)).collect();
    if !missing.is_empty() {
        return Err(format!("exported symbol(s) missing from the PTX after linking: {}", missing.join(", ")));
    }
    let undefined: Vec<String> = undefined_functions(ptx)
        .into_iter()
        .filter(|name| !DRIVER_PROVIDED_FUNCTIONS.contains(&name.as_str()))
        .collect();
    if !undefined.is_empty() {
        return Err(format!(
            "undefined symbol(s): {} (declared, but defined neither in the crate nor in core or \
             compiler_builtins)",
            undefined.join(", ")
        ));
    }
    Ok(())
}

/// Splits the inputs into crate objects and bitcode members extracted from archives (written under
/// `work_dir`).
fn collect_bitcode(inputs: &[PathBuf], work_dir: &Path, log: &mut Log) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    let mut objects = Vec::new();
    let mut members = Vec::new();
    for (index, input) in inputs.iter().enumerate() {
        let bytes = fs::read(input).context(|| format!("cannot read linker input {}", input.display()))?;
        if is_bitcode(&bytes) {
            objects.push(input.clone());
        } else if ar::is_archive(&bytes) {
            let stem = input.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let dir = work_dir.join(format!("{index:02}-{stem}"));
            fs::create_dir_all(&dir).context(|| format!("cannot create {}", dir.display()))?;
            let list = ar::members(&bytes).map_err(|e| format!("{}: {e}", input.display()))?;
            let mut taken = 0;
            let mut skipped = Vec::new();
            for (i, member) in list.iter().enumerate() {
                if is_bitcode(member.data) {
                    let safe: String = member
                        .name
                        .chars()
                        .map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' })
                        .collect();
                    let path = dir.join(format!("{i:04}-{safe}"));
                    fs::write(&path, member.data).context(|| format!("cannot write {}", path.display()))?;
                    members.push(path);
                    taken += 1;
                } else {
                    skipped.push(member.name.as_str());
                }
            }
            log.line(format!("archive {}: {taken} bitcode members, skipped [{}]", input.display(), skipped.join(", ")));
        } else {
            return Err(format!("linker input {} is neither LLVM bitcode nor an ar archive", input.display()));
        }
    }
    Ok((objects, members))
}

fn llvm_bin_dir() -> Result<PathBuf> {
    env::var_os(LLVM_BIN_ENV)
        .map(PathBuf::from)
        .ok_or_else(|| format!("{LLVM_BIN_ENV} is not set (the builder sets it for the kernel build)"))
}

fn run_tool(cmd: &mut Command, log: &mut Log) -> Result<()> {
    log.line(format!("run: {}", describe(cmd)));
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("could not start `{}`: {e}", describe(cmd)))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stderr = stderr.trim();
    if !stderr.is_empty() {
        log.line(format!("  stderr: {stderr}"));
    }
    if out.status.success() {
        Ok(())
    } else {
        let tool = Path::new(cmd.get_program()).file_name().unwrap_or(cmd.get_program()).to_string_lossy().into_owned();
        Err(format!("`{tool}` failed ({}):\n{stderr}", status_text(out.status)))
    }
}

/// Adds "what was being done" to an I/O error.
trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| format!("{}: {e}", what()))
    }
}

/// Functions a PTX module may leave external because the CUDA driver supplies them.
const DRIVER_PROVIDED_FUNCTIONS: [&str; 4] = ["vprintf", "__assertfail", "malloc", "free"];

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn parses_the_rustc_command_line() {
        let argv = strings(&[
            "--export-symbol",
            "probe",
            "--export-symbol",
            "reduce_sum",
            "/t/out/gpu_kernels.gpu_kernels.9af6-cgu.0.rcgu.o",
            "/t/build/core/e2f8/out/libcore-e2f8.rlib",
            "/t/build/compiler_builtins/7260/out/libcompiler_builtins-7260.rlib",
            "-L",
            "/t/out/rustcGX2qur/raw-dylibs",
            "--target",
            "nvptx64-nvidia-cuda",
            "--target-cpu",
            "sm_90",
            "--target-feature=+ptx70",
            "-L",
            "/sysroot/lib/rustlib/nvptx64-nvidia-cuda/lib/self-contained",
            "-o",
            "/t/out/gpu_kernels.ptx",
            "-O3",
        ]);
        let args = parse_args(&argv).unwrap();
        assert_eq!(args.exports, ["probe", "reduce_sum"]);
        assert_eq!(args.inputs.len(), 3);
        assert_eq!(args.target.as_deref(), Some("nvptx64-nvidia-cuda"));
        assert_eq!(args.target_cpu.as_deref(), Some("sm_90"));
        assert_eq!(args.target_features, ["+ptx70"]);
        assert_eq!(args.output.as_deref(), Some(Path::new("/t/out/gpu_kernels.ptx")));
        assert_eq!(args.opt_level, "3");
    }

    #[test]
    fn reads_response_files() {
        let dir = env::temp_dir().join(format!("ptx-link-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("args");
        fs::write(&file, "--export-symbol\nk\n/a\\ b/x.rcgu.o\n-o\n/o.ptx\n-O2\n").unwrap();
        let args = parse_args(&[format!("@{}", file.display())]).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(args.exports, ["k"]);
        assert_eq!(args.inputs, [PathBuf::from("/a b/x.rcgu.o")]);
        assert_eq!(args.opt_level, "2");
    }

    #[test]
    fn rejects_what_it_cannot_do() {
        assert!(parse_args(&strings(&["x.o"])).is_err(), "no -o");
        assert!(parse_args(&strings(&["-o"])).is_err(), "-o without value");
        assert!(parse_args(&strings(&["--gc-sections", "-o", "a"])).is_err(), "unknown flag");
        assert!(parse_args(&strings(&["--target", "x86_64-unknown-linux-gnu", "-o", "a"])).is_err());
    }

    #[test]
    fn accepts_its_own_identity_argument() {
        let id = format!("{LINK_ID_ARG}={LINK_ID:x}");
        assert!(parse_args(&strings(&[&id, "-o", "a.ptx"])).is_ok());
        assert!(parse_args(&strings(&[LINK_ID_ARG, "12", "-o", "a.ptx"])).is_ok());
        assert!(parse_args(&strings(&[&format!("{LINK_ID_ARG}x"), "-o", "a.ptx"])).is_err());
    }

    #[test]
    fn linker_mode_only_for_the_named_executable() {
        let me = env::current_exe().unwrap();
        assert!(names_executable(&me, &me));
        assert!(!names_executable(Path::new("/nonexistent/build-script-build"), &me));
        // Named through a symbolic link to the same file.
        let dir = env::temp_dir().join(format!("gpu-builder-link-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let link = dir.join("exe");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&me, &link).unwrap();
            assert!(names_executable(&link, &me));
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn recognises_bitcode() {
        assert!(is_bitcode(b"BC\xc0\xde\x35\x14"));
        assert!(is_bitcode(&[0xde, 0xc0, 0x17, 0x0b, 0, 0]));
        assert!(!is_bitcode(b"rust\0\0\0"));
        assert!(!is_bitcode(b"\x7fELF"));
    }
}
