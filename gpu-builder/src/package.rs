//! The kernel package as `cargo metadata` describes it: its name, its library's crate name, its
//! workspace root. It may import the process runner and the JSON reader, not the builder.

use std::fs;
use std::path::{Path, PathBuf};

use crate::env;
use crate::error::BuildError;
use crate::json::{self, Value};
use crate::process::{describe, run_capture};
use crate::toolchain::Rustup;

/// What `cargo metadata` says about the kernel package.
pub(crate) struct Package {
    pub(crate) name: String,
    /// The library target's crate name.
    pub(crate) lib_name: String,
    pub(crate) workspace_root: PathBuf,
}

impl Package {
    pub(crate) fn load(rustup: &Rustup, toolchain: &str, manifest: &Path) -> Result<Package, BuildError> {
        let mut cmd = rustup.cargo(toolchain);
        cmd.args(["metadata", "--no-deps", "--format-version", "1", "--manifest-path"]).arg(manifest);
        if let Some(dir) = manifest.parent() {
            cmd.current_dir(dir);
        }
        env::clean_child_env(&mut cmd, std::env::vars_os().map(|(k, _)| k));
        let out = run_capture(&mut cmd)?;
        if !out.status.success() {
            if out.stderr.contains("believes it's in a workspace when it's not") {
                return Err(BuildError::NotInWorkspace { manifest: manifest.to_path_buf(), cargo_says: out.stderr });
            }
            return Err(out.error(&cmd));
        }
        Package::parse(&out.stdout, manifest).map_err(|reason| match reason {
            ParseFailure::NotALibrary(reason) => BuildError::NotALibrary { manifest: manifest.to_path_buf(), reason },
            ParseFailure::Bad(why) => BuildError::Command {
                command: describe(&cmd),
                status: format!("unexpected output: {why}"),
                stderr: String::new(),
            },
        })
    }

    fn parse(metadata: &str, manifest: &Path) -> Result<Package, ParseFailure> {
        let doc = json::parse(metadata).map_err(ParseFailure::Bad)?;
        let workspace_root = doc.get("workspace_root").and_then(Value::as_str).map(PathBuf::from);
        let same = |p: &str| {
            let p = Path::new(p);
            p == manifest || fs::canonicalize(p).is_ok_and(|c| c == manifest)
        };
        let package = doc
            .get("packages")
            .map(Value::as_array)
            .unwrap_or_default()
            .iter()
            .find(|p| p.get("manifest_path").and_then(Value::as_str).is_some_and(same))
            .ok_or_else(|| {
                ParseFailure::NotALibrary("it is not a package (a virtual workspace manifest has no library)".into())
            })?;
        let name =
            package.get("name").and_then(Value::as_str).ok_or(ParseFailure::Bad("a package without a name".into()))?;
        let lib_name = package
            .get("targets")
            .map(Value::as_array)
            .unwrap_or_default()
            .iter()
            .find(|t| t.strings("kind").iter().any(|k| matches!(*k, "lib" | "rlib" | "cdylib" | "dylib" | "staticlib")))
            .and_then(|t| t.get("name").and_then(Value::as_str))
            .ok_or_else(|| ParseFailure::NotALibrary(format!("the package `{name}` has no library target")))?;
        Ok(Package {
            name: name.to_string(),
            lib_name: lib_name.replace('-', "_"),
            workspace_root: workspace_root.unwrap_or_else(|| manifest.parent().unwrap_or(manifest).to_path_buf()),
        })
    }
}

#[derive(Debug)]
pub(crate) enum ParseFailure {
    NotALibrary(String),
    Bad(String),
}

#[cfg(test)]
mod tests {
    use super::*;
    const METADATA: &str = r#"{"packages":[
        {"name":"helpers","manifest_path":"/w/helpers/Cargo.toml","targets":[{"kind":["lib"],"name":"helpers"}]},
        {"name":"my-kernels","manifest_path":"/w/kernels/Cargo.toml",
         "targets":[{"kind":["rlib"],"name":"my_kernels"},{"kind":["test"],"name":"emu"}]},
        {"name":"tool","manifest_path":"/w/tool/Cargo.toml","targets":[{"kind":["bin"],"name":"tool"}]}
    ],"workspace_root":"/w","target_directory":"/w/target","version":1}"#;

    #[test]
    fn reads_the_package_from_cargo_metadata() {
        let p = Package::parse(METADATA, Path::new("/w/kernels/Cargo.toml")).unwrap();
        assert_eq!((p.name.as_str(), p.lib_name.as_str()), ("my-kernels", "my_kernels"));
        assert_eq!(p.workspace_root, Path::new("/w"));
        assert!(matches!(Package::parse(METADATA, Path::new("/w/tool/Cargo.toml")), Err(ParseFailure::NotALibrary(_))));
        assert!(matches!(Package::parse(METADATA, Path::new("/w/Cargo.toml")), Err(ParseFailure::NotALibrary(_))));
        assert!(matches!(Package::parse("nope", Path::new("/w/Cargo.toml")), Err(ParseFailure::Bad(_))));
    }
}
