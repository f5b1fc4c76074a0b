//! Running child processes: one-line command descriptions and captured output. [`describe`] and
//! [`status_text`] are public for tools that run builds and report on them (xtask uses them).

use std::ffi::OsStr;
use std::process::{Command, ExitStatus, Stdio};

use crate::error::BuildError;

/// One line describing a command (program and arguments, shell-quoted where needed), for error
/// messages and logs.
pub fn describe(cmd: &Command) -> String {
    let mut text = cmd.get_program().to_string_lossy().into_owned();
    for arg in cmd.get_args() {
        text.push(' ');
        text.push_str(&shell_quote(arg));
    }
    text
}

/// `arg` as a POSIX shell reads it back: unchanged when it holds only safe characters, else in
/// single quotes.
pub fn shell_quote(arg: &OsStr) -> String {
    let s = arg.to_string_lossy();
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain { s.into_owned() } else { format!("'{}'", s.replace('\'', r"'\''")) }
}

/// `exit code N`, `killed by signal N`.
pub fn status_text(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return format!("killed by signal {sig}");
        }
    }
    "abnormal termination".to_string()
}

/// A finished command's status and output.
pub(crate) struct Captured {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Captured {
    /// The command failed: a [`BuildError::Command`] naming it.
    pub(crate) fn error(&self, cmd: &Command) -> BuildError {
        BuildError::Command {
            command: describe(cmd),
            status: status_text(self.status),
            stderr: self.stderr.trim().to_string(),
        }
    }
}

pub(crate) fn spawn_error(cmd: &Command, source: std::io::Error) -> BuildError {
    BuildError::Spawn { command: describe(cmd), source }
}

/// Runs a command with stdin closed, capturing stdout and stderr; the exit status is left to the
/// caller.
pub(crate) fn run_capture(cmd: &mut Command) -> Result<Captured, BuildError> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| spawn_error(cmd, e))?;
    Ok(Captured {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_quote(OsStr::new("-Ctarget-cpu=sm_90")), "-Ctarget-cpu=sm_90");
        assert_eq!(shell_quote(OsStr::new("a b")), "'a b'");
        assert_eq!(shell_quote(OsStr::new("it's")), r"'it'\''s'");
        assert_eq!(shell_quote(OsStr::new("")), "''");
    }
}
