//! The workspace's packages, from `cargo metadata`, and which of them are kernel crates.
//!
//! A kernel crate is a workspace member whose `Cargo.toml` says
//!
//! ```toml
//! [package.metadata.xtask]
//! build-ptx = true
//! ```
//!
//! `build-ptx` and `check-ptx` take one with `-p`; `test` and `bundle` build every one.

use std::path::{Path, PathBuf};

use crate::util::{Error, Result, cargo_command, describe, run_capture};
use gpu_builder::json::{self, Value};

/// The kernel crate `build-ptx` builds without `-p`.
pub const DEFAULT_KERNEL_PACKAGE: &str = "gpu-kernels";

/// A package that `build-ptx` compiles to one PTX module.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelCrate {
    /// The package name, e.g. `user-kernels`.
    pub package: String,
    /// The library's crate name, e.g. `user_kernels`: the module is `target/ptx/<crate_name>.ptx`.
    pub crate_name: String,
    /// The package's directory (where its `Cargo.toml` is).
    pub dir: PathBuf,
    /// Where a copy of its module is kept in the source tree, for a library that ships it
    /// (`[package.metadata.xtask] shipped-ptx = "PATH"`, relative to the package's directory):
    /// `cargo xtask ship-ptx` writes it, `cargo xtask test` checks it is current.
    pub shipped: Option<PathBuf>,
}

impl KernelCrate {
    /// The environment variable through which the host and the tests find the module:
    /// `GPU_KERNELS_PTX` for `gpu_kernels`.
    pub fn ptx_env(&self) -> String {
        format!("{}_PTX", self.crate_name.to_ascii_uppercase())
    }
}

#[derive(Debug, PartialEq)]
struct Member {
    name: String,
    /// The name of the library target, if the package has one.
    lib: Option<String>,
    /// `[package.metadata.xtask] build-ptx = true`.
    builds_ptx: bool,
    /// The directory of its `Cargo.toml`.
    dir: PathBuf,
    /// `[package.metadata.xtask] shipped-ptx`, joined to `dir`.
    shipped: Option<PathBuf>,
}

/// The members of the workspace.
#[derive(Debug, PartialEq)]
pub struct Workspace {
    members: Vec<Member>,
}

impl Workspace {
    /// Asks cargo for the workspace's members (`cargo metadata --no-deps`: no dependency resolution,
    /// no network).
    pub fn load(root: &Path) -> Result<Workspace> {
        let mut cmd = cargo_command();
        cmd.current_dir(root).args(["metadata", "--no-deps", "--format-version", "1"]);
        let out = run_capture(&mut cmd)?;
        if !out.success() {
            return Err(Error::new(format!(
                "`{}` failed ({}): {}",
                describe(&cmd),
                out.status_text(),
                out.stderr.trim()
            )));
        }
        Workspace::parse(&out.stdout).map_err(|e| Error::new(format!("cannot read `{}` output: {e}", describe(&cmd))))
    }

    fn parse(metadata: &str) -> std::result::Result<Workspace, String> {
        let doc = json::parse(metadata)?;
        let packages = doc.get("packages").ok_or("no `packages`")?.as_array();
        let members = packages
            .iter()
            .map(|p| {
                let name = p.get("name").and_then(Value::as_str).ok_or("a package without a name")?.to_string();
                let lib = p
                    .get("targets")
                    .map(Value::as_array)
                    .unwrap_or_default()
                    .iter()
                    .find(|t| t.strings("kind").iter().any(|k| matches!(*k, "lib" | "rlib" | "cdylib")))
                    .and_then(|t| t.get("name").and_then(Value::as_str))
                    .map(str::to_string);
                let builds_ptx = p.at(&["metadata", "xtask", "build-ptx"]).and_then(Value::as_bool) == Some(true);
                let manifest =
                    p.get("manifest_path").and_then(Value::as_str).ok_or("a package without a manifest_path")?;
                let dir = Path::new(manifest).parent().map(Path::to_path_buf).unwrap_or_default();
                let shipped = p.at(&["metadata", "xtask", "shipped-ptx"]).and_then(Value::as_str).map(|s| dir.join(s));
                Ok(Member { name, lib, builds_ptx, dir, shipped })
            })
            .collect::<std::result::Result<Vec<_>, String>>()?;
        Ok(Workspace { members })
    }

    /// Every kernel crate, in the order of the workspace's `members`.
    pub fn kernel_crates(&self) -> Vec<KernelCrate> {
        self.members
            .iter()
            .filter(|m| m.builds_ptx)
            .filter_map(|m| {
                Some(KernelCrate {
                    package: m.name.clone(),
                    crate_name: m.lib.clone()?,
                    dir: m.dir.clone(),
                    shipped: m.shipped.clone(),
                })
            })
            .collect()
    }

    /// The kernel crate of package `name`; a usage error when there is no such member or it is not a
    /// kernel crate.
    pub fn kernel_crate(&self, name: &str) -> Result<KernelCrate> {
        let kernels = self.kernel_crates();
        let list = kernels.iter().map(|k| k.package.as_str()).collect::<Vec<_>>().join(", ");
        let Some(member) = self.members.iter().find(|m| m.name == name) else {
            return Err(Error::usage(format!(
                "`{name}` is not a package of this workspace (its kernel crates: {list})"
            )));
        };
        if let Some(k) = kernels.into_iter().find(|k| k.package == member.name) {
            return Ok(k);
        }
        let why = if member.builds_ptx {
            "it has no library target"
        } else {
            "its Cargo.toml lacks `[package.metadata.xtask] build-ptx = true`"
        };
        Err(Error::usage(format!("`{name}` is not a kernel crate: {why} (kernel crates: {list})")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::EXIT_USAGE;

    /// The shape of `cargo metadata --no-deps --format-version 1` (trimmed).
    const METADATA: &str = r#"{"packages":[
        {"name":"gpu-std","manifest_path":"/w/gpu-std/Cargo.toml","targets":[{"kind":["rlib"],"name":"gpu_std"}],"metadata":null},
        {"name":"gpu-kernels","manifest_path":"/w/gpu-kernels/Cargo.toml","targets":[{"kind":["rlib"],"name":"gpu_kernels"},{"kind":["test"],"name":"detector"}],
         "metadata":{"xtask":{"build-ptx":true}}},
        {"name":"host","manifest_path":"/w/host/Cargo.toml","targets":[{"kind":["lib"],"name":"host"},{"kind":["bin"],"name":"host"}],"metadata":null},
        {"name":"no-lib","manifest_path":"/w/no-lib/Cargo.toml","targets":[{"kind":["bin"],"name":"no-lib"}],"metadata":{"xtask":{"build-ptx":true}}},
        {"name":"off","manifest_path":"/w/off/Cargo.toml","targets":[{"kind":["lib"],"name":"off"}],"metadata":{"xtask":{"build-ptx":false}}},
        {"name":"user-kernels","manifest_path":"/w/tests/user-kernels/Cargo.toml","targets":[{"kind":["rlib"],"name":"user_kernels"}],
         "metadata":{"xtask":{"build-ptx":true}}}
    ],"workspace_members":[],"version":1}"#;

    fn kc(package: &str, crate_name: &str, dir: &str) -> KernelCrate {
        KernelCrate { package: package.into(), crate_name: crate_name.into(), dir: dir.into(), shipped: None }
    }

    #[test]
    fn kernel_crates_are_the_marked_libraries() {
        let ws = Workspace::parse(METADATA).unwrap();
        assert_eq!(
            ws.kernel_crates(),
            [
                kc("gpu-kernels", "gpu_kernels", "/w/gpu-kernels"),
                kc("user-kernels", "user_kernels", "/w/tests/user-kernels")
            ]
        );
        assert_eq!(
            ws.kernel_crate("user-kernels").unwrap(),
            kc("user-kernels", "user_kernels", "/w/tests/user-kernels")
        );
        assert_eq!(ws.kernel_crate(DEFAULT_KERNEL_PACKAGE).unwrap().ptx_env(), "GPU_KERNELS_PTX");
    }

    #[test]
    fn other_packages_are_usage_errors() {
        let ws = Workspace::parse(METADATA).unwrap();
        for (name, says) in [
            ("nope", "`nope` is not a package of this workspace (its kernel crates: gpu-kernels, user-kernels)"),
            ("host", "`host` is not a kernel crate: its Cargo.toml lacks `[package.metadata.xtask] build-ptx = true`"),
            ("off", "`off` is not a kernel crate: its Cargo.toml lacks"),
            ("no-lib", "`no-lib` is not a kernel crate: it has no library target"),
            ("gpu_kernels", "`gpu_kernels` is not a package of this workspace"),
        ] {
            let err = ws.kernel_crate(name).unwrap_err();
            assert_eq!(err.code, EXIT_USAGE, "{name}");
            assert!(err.message.starts_with(says), "{name}: {}", err.message);
            assert!(!err.message.contains('\n'), "{name}: one line");
        }
    }

    #[test]
    fn bad_metadata_is_an_error() {
        assert!(Workspace::parse("{}").is_err());
        assert!(Workspace::parse(r#"{"packages":[{"targets":[]}]}"#).is_err());
        assert!(Workspace::parse("not json").is_err());
    }
}
