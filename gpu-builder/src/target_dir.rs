//! Where the kernel build writes: its own target directory, found from a build script's `OUT_DIR`
//! (never the outer build's, whose lock cargo holds), and tagged as a cache directory. It may not
//! import the builder.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::BuildError;

/// The directory, below the outer target directory, of the kernel build in a build script.
pub(crate) const TARGET_SUBDIR: &str = "gpu-builder";

/// The kernel build's target directory for a build script whose output directory is `out_dir`:
/// `gpu-builder` in the outer target (or build) directory, which is the nearest ancestor holding
/// cargo's `CACHEDIR.TAG`, else the directory above `<profile>/build/`.
pub(crate) fn target_dir_from_out_dir(out_dir: &Path) -> Option<PathBuf> {
    let tagged = out_dir.ancestors().skip(1).find(|d| d.join("CACHEDIR.TAG").is_file());
    let above_build = || {
        let build = out_dir.ancestors().find(|d| d.file_name().is_some_and(|n| n == "build"))?;
        build.parent()?.parent()
    };
    tagged.or_else(above_build).map(|dir| dir.join(TARGET_SUBDIR))
}

/// Refuses a target directory that holds the running build script's `OUT_DIR`: the outer build's.
pub(crate) fn check_target_dir(target_dir: &Path, out_dir: Option<&Path>) -> Result<(), BuildError> {
    match out_dir {
        Some(out) if out.starts_with(target_dir) => Err(BuildError::TargetDirInUse(target_dir.to_path_buf())),
        _ => Ok(()),
    }
}

/// Cargo tags the target directories it creates with `CACHEDIR.TAG` (and `cargo clean` refuses to
/// work without it); this one is created before cargo first runs.
pub(crate) fn mark_cache_dir(dir: &Path) -> Result<(), BuildError> {
    let tag = dir.join("CACHEDIR.TAG");
    if tag.exists() {
        return Ok(());
    }
    let text = "Signature: 8a477f597d28d172789f06886806bc55\n\
                # This file is a cache directory tag created by gpu-builder.\n\
                # For information about cache directory tags see https://bford.info/cachedir/\n";
    fs::write(&tag, text).map_err(|e| BuildError::io(format!("cannot write {}", tag.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn target_dir_is_beside_the_outer_profile_directory() {
        // Without a CACHEDIR.TAG on the way up: the directory above `<profile>/build`.
        let classic = Path::new("/nonexistent/w/target/debug/build/app-0123abcd/out");
        assert_eq!(target_dir_from_out_dir(classic).unwrap(), Path::new("/nonexistent/w/target/gpu-builder"));
        let cross = Path::new("/nonexistent/w/target/x86_64-unknown-linux-gnu/release/build/app-1/out");
        assert_eq!(
            target_dir_from_out_dir(cross).unwrap(),
            Path::new("/nonexistent/w/target/x86_64-unknown-linux-gnu/gpu-builder")
        );
        assert_eq!(target_dir_from_out_dir(Path::new("/nonexistent/out")), None);
    }

    #[test]
    fn the_outer_target_dir_is_refused() {
        let out = Path::new("/w/target/debug/build/app-1/out");
        let err = check_target_dir(Path::new("/w/target"), Some(out)).unwrap_err();
        assert!(err.to_string().contains("cannot use /w/target"), "{err}");
        assert!(check_target_dir(Path::new("/w/target/gpu-builder"), Some(out)).is_ok());
        assert!(check_target_dir(Path::new("/w/target"), None).is_ok());
    }

    #[test]
    fn target_dir_follows_cargos_cache_tag() {
        // Newer cargo layouts (`build/<pkg>/<hash>/out`) and separate build directories: the tag wins.
        let base = std::env::temp_dir().join(format!("gpu-builder-out-{}", std::process::id()));
        let out = base.join("target/debug/build/app/0123abcd/out");
        fs::create_dir_all(&out).unwrap();
        fs::write(base.join("target/CACHEDIR.TAG"), "Signature: 8a477f597d28d172789f06886806bc55\n").unwrap();
        assert_eq!(target_dir_from_out_dir(&out).unwrap(), base.join("target/gpu-builder"));
        fs::remove_dir_all(&base).unwrap();
    }
}
