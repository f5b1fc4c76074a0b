//! File-system steps with the builder's errors: absolute paths, directories, and writes that leave a
//! file untouched when it already holds the bytes (so its time stamp, which cargo watches, stays).
//! It may import the error type only.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::BuildError;

pub(crate) fn absolute(path: &Path) -> Result<PathBuf, BuildError> {
    std::path::absolute(path).map_err(|e| BuildError::io(format!("cannot make {} absolute", path.display()), e))
}

pub(crate) fn create_dir_all(dir: &Path) -> Result<(), BuildError> {
    fs::create_dir_all(dir).map_err(|e| BuildError::io(format!("cannot create directory {}", dir.display()), e))
}

/// Copies `from` to `to` unless `to` already holds the same bytes (so its time stamp stays).
pub(crate) fn copy_if_changed(from: &Path, to: &Path) -> Result<(), BuildError> {
    let bytes = fs::read(from).map_err(|e| BuildError::io(format!("cannot read {}", from.display()), e))?;
    write_if_changed(to, &bytes)
}

/// Writes `bytes` to `to` (through a temporary sibling and a rename, so readers never see half a
/// file) unless it already holds them.
pub(crate) fn write_if_changed(to: &Path, bytes: &[u8]) -> Result<(), BuildError> {
    if fs::read(to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    if let Some(parent) = to.parent() {
        create_dir_all(parent)?;
    }
    let mut tmp = to.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    fs::write(&tmp, bytes).map_err(|e| BuildError::io(format!("cannot write {}", tmp.display()), e))?;
    fs::rename(&tmp, to).map_err(|e| BuildError::io(format!("cannot move {} to {}", tmp.display(), to.display()), e))
}
