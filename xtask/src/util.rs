//! Shared plumbing: the error type, workspace paths, running child processes, timing.

use std::env;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

pub use gpu_builder::process::{describe, status_text};

/// Exit code for a failed task.
pub const EXIT_FAILURE: i32 = 1;
/// Exit code for a command line that could not be understood.
pub const EXIT_USAGE: i32 = 2;
/// Exit code for `check-ptx` when `ptxas` could not be obtained (and `--allow-skip` was not given).
pub const EXIT_SKIPPED: i32 = 3;

/// A task failure: a message for the user and the process exit code.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    pub code: i32,
}

impl Error {
    pub fn new(message: impl Into<String>) -> Self {
        Error { message: message.into(), code: EXIT_FAILURE }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Error { message: message.into(), code: EXIT_USAGE }
    }

    pub fn with_code(message: impl Into<String>, code: i32) -> Self {
        Error { message: message.into(), code }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Adds "what was being done" to an I/O (or any displayable) error.
pub trait Context<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: fmt::Display> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|e| Error::new(format!("{}: {e}", what())))
    }
}

/// The workspace root: the parent of this crate's manifest directory.
///
/// `cargo run` sets `CARGO_MANIFEST_DIR` at run time; the compile-time value is the fallback when the
/// binary is started directly.
pub fn workspace_root() -> PathBuf {
    let manifest_dir = env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.join("Cargo.toml").is_file() && dir.ends_with("xtask"))
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir.parent().map(Path::to_path_buf).unwrap_or(manifest_dir)
}

/// The `cargo` to use for nested builds: the one that started this process, if any.
pub fn cargo_command() -> Command {
    Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// One line describing a command, for error messages and logs.
fn spawn_error(cmd: &Command, e: io::Error) -> Error {
    let program = cmd.get_program().to_string_lossy().into_owned();
    if e.kind() == io::ErrorKind::NotFound {
        Error::new(format!("`{program}` was not found (needed to run: {})", describe(cmd)))
    } else {
        Error::new(format!("could not start `{}`: {e}", describe(cmd)))
    }
}

/// Runs a command with inherited stdio; a non-zero exit is an error naming the command.
pub fn run_inherit(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().map_err(|e| spawn_error(cmd, e))?;
    if status.success() {
        Ok(())
    } else {
        Err(Error::new(format!("`{}` failed ({})", describe(cmd), status_text(status))))
    }
}

/// Captured result of a finished command.
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Captured {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    pub fn status_text(&self) -> String {
        status_text(self.status)
    }
}

/// Runs a command capturing stdout and stderr; the exit status is left to the caller.
pub fn run_capture(cmd: &mut Command) -> Result<Captured> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| spawn_error(cmd, e))?;
    Ok(Captured {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Runs a command with stdout captured (stderr inherited, so progress and diagnostics stay visible).
/// Returns stdout; a non-zero exit is an error naming the command.
pub fn run_stdout(cmd: &mut Command) -> Result<String> {
    let out = cmd.stdin(Stdio::null()).stderr(Stdio::inherit()).output().map_err(|e| spawn_error(cmd, e))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(Error::new(format!("`{}` failed ({})", describe(cmd), status_text(out.status))))
    }
}

/// Seconds, e.g. `12.3 s`, or `0.04 s` below one second.
pub fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 { format!("{s:.2} s") } else { format!("{s:.1} s") }
}

/// A path shown relative to the workspace root when it lies inside it.
pub fn display_path(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).context(|| format!("cannot create directory {}", dir.display()))
}

pub fn copy_file(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        create_dir_all(parent)?;
    }
    fs::copy(from, to).map(|_| ()).context(|| format!("cannot copy {} to {}", from.display(), to.display()))
}

/// Writes a file through a temporary sibling and a rename, so readers never see half a file and a
/// running executable at `to` is replaced rather than overwritten.
pub fn replace_file(to: &Path, contents: &[u8], executable: bool) -> Result<()> {
    let tmp = to.with_extension("tmp");
    fs::write(&tmp, contents).context(|| format!("cannot write {}", tmp.display()))?;
    if executable {
        set_executable(&tmp)?;
    }
    fs::rename(&tmp, to).context(|| format!("cannot move {} to {}", tmp.display(), to.display()))
}

pub fn set_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perms = fs::metadata(path).context(|| format!("cannot read metadata of {}", path.display()))?.permissions();
    perms.set_mode(perms.mode() | 0o755);
    fs::set_permissions(path, perms).context(|| format!("cannot chmod {}", path.display()))
}

/// Finds a file in `PATH`.
pub fn find_in_path(name: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_have_one_decimal() {
        assert_eq!(secs(Duration::from_millis(12_345)), "12.3 s");
        assert_eq!(secs(Duration::from_millis(42)), "0.04 s");
    }
}
