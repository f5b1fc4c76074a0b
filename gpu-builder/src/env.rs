//! The environment: which variables the builder reads (each one becomes a
//! `cargo:rerun-if-env-changed` line in a build script) and which the child cargo must not inherit.
//!
//! A build script runs with the outer build's configuration in its environment: `RUSTC` (which beats
//! `cargo +toolchain`), wrappers such as clippy-driver, `RUSTFLAGS`, the outer target directory,
//! `RUSTUP_TOOLCHAIN` (which outranks `rust-toolchain.toml`), and one variable per cfg, feature and
//! package field of the outer crate. None of that describes the kernel build, so the child gets none
//! of it.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::OsString;
use std::process::Command;

/// Variables removed from the child cargo's environment, by exact name.
const REMOVED: &[&str] = &[
    "RUSTC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "RUSTDOC",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "CARGO",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_ENCODED_RUSTDOCFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_RUSTC_CURRENT_DIR",
    "RUSTUP_TOOLCHAIN",
    "RUSTUP_TOOLCHAIN_SOURCE",
    "OUT_DIR",
    "TARGET",
    "HOST",
    "NUM_JOBS",
    "OPT_LEVEL",
    "DEBUG",
    "PROFILE",
    "CLIPPY_ARGS",
    "CLIPPY_CONF_DIR",
];

/// Variables removed from the child cargo's environment, by prefix: the outer crate's cfgs,
/// features, package fields and link metadata of its dependencies, the outer `build.*`,
/// `target.*` (which holds `CARGO_TARGET_DIR`) and `profile.*` configuration, cargo internals, and
/// the builder's own linker-mode variables (set afresh for each child).
const REMOVED_PREFIXES: &[&str] = &[
    "CARGO_CFG_",
    "CARGO_FEATURE_",
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "CARGO_BUILD_",
    "CARGO_TARGET_",
    "CARGO_PROFILE_",
    "DEP_",
    "__CARGO",
    "GPU_BUILDER_",
];

/// Exceptions to the prefixes: user settings that hold for the kernel build as well.
const KEPT: &[&str] = &["CARGO_BUILD_JOBS"];

/// Whether the child cargo must not inherit the variable `name`.
pub(crate) fn removed_from_child(name: &str) -> bool {
    !KEPT.contains(&name) && (REMOVED.contains(&name) || REMOVED_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// Removes every variable of `vars` that the child must not inherit from `cmd`'s environment and
/// returns their names, sorted.
pub(crate) fn clean_child_env<I>(cmd: &mut Command, vars: I) -> Vec<String>
where
    I: IntoIterator<Item = OsString>,
{
    let mut removed: Vec<String> =
        vars.into_iter().filter_map(|name| name.into_string().ok()).filter(|name| removed_from_child(name)).collect();
    removed.sort();
    removed.dedup();
    for name in &removed {
        cmd.env_remove(name);
    }
    removed
}

/// Variables a build script gets from cargo: reading them needs no `rerun-if-env-changed`.
const SET_BY_CARGO: &[&str] = &["OUT_DIR", "TARGET", "HOST"];

/// Reads environment variables and remembers which ones it read.
#[derive(Default, Debug)]
pub(crate) struct EnvReader {
    read: RefCell<BTreeSet<String>>,
}

impl EnvReader {
    /// The value of `name`, recorded as read.
    pub(crate) fn var_os(&self, name: &str) -> Option<OsString> {
        if !SET_BY_CARGO.contains(&name) {
            self.read.borrow_mut().insert(name.to_string());
        }
        std::env::var_os(name)
    }

    /// The value of `name` when it is set and not empty.
    pub(crate) fn non_empty(&self, name: &str) -> Option<OsString> {
        self.var_os(name).filter(|v| !v.is_empty())
    }

    /// Every variable read so far (other than those cargo sets for build scripts), sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        self.read.borrow().iter().cloned().collect()
    }
}

/// The name of the variable through which a host crate finds a module: `USER_KERNELS_PTX` for the
/// crate `user_kernels`.
pub(crate) fn ptx_env_name(crate_name: &str) -> String {
    let upper: String =
        crate_name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_uppercase() } else { '_' }).collect();
    format!("{upper}_PTX")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outer_build_configuration_is_removed() {
        for name in [
            "RUSTC",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "RUSTFLAGS",
            "CARGO_ENCODED_RUSTFLAGS",
            "CARGO",
            "RUSTUP_TOOLCHAIN",
            "CARGO_TARGET_DIR",
            "CARGO_BUILD_TARGET",
            "CARGO_BUILD_BUILD_DIR",
            "CARGO_CFG_TARGET_OS",
            "CARGO_FEATURE_CUDA",
            "CARGO_PKG_NAME",
            "CARGO_MANIFEST_DIR",
            "CARGO_MANIFEST_LINKS",
            "CARGO_PROFILE_RELEASE_LTO",
            "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
            "DEP_Z_INCLUDE",
            "OUT_DIR",
            "TARGET",
            "GPU_BUILDER_LINKER",
        ] {
            assert!(removed_from_child(name), "{name} must be removed");
        }
    }

    #[test]
    fn user_and_toolchain_settings_are_kept() {
        for name in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "RUSTUP_HOME",
            "CARGO_MAKEFLAGS",
            "CARGO_NET_OFFLINE",
            "CARGO_TERM_COLOR",
            "CARGO_REGISTRIES_CRATES_IO_PROTOCOL",
            "RUST_BACKTRACE",
            "CARGO_FEATURES_X",
            "CARGO_BUILD_JOBS",
        ] {
            assert!(!removed_from_child(name), "{name} must be kept");
        }
    }

    #[test]
    fn cleaning_reports_what_it_removed() {
        let mut cmd = Command::new("cargo");
        let vars = ["PATH", "RUSTC", "CARGO_FEATURE_B", "CARGO_FEATURE_A", "RUSTC"].map(OsString::from);
        let removed = clean_child_env(&mut cmd, vars);
        assert_eq!(removed, ["CARGO_FEATURE_A", "CARGO_FEATURE_B", "RUSTC"]);
        let envs: Vec<_> = cmd.get_envs().map(|(k, v)| (k.to_string_lossy().into_owned(), v.is_none())).collect();
        assert_eq!(
            envs,
            [("CARGO_FEATURE_A".to_string(), true), ("CARGO_FEATURE_B".to_string(), true), ("RUSTC".to_string(), true)]
        );
    }

    #[test]
    fn reads_are_recorded_except_cargo_build_script_variables() {
        let env = EnvReader::default();
        env.var_os("GPU_BUILDER_TEST_SURELY_UNSET");
        env.var_os("OUT_DIR");
        env.non_empty("CARGO_HOME");
        assert_eq!(env.names(), ["CARGO_HOME", "GPU_BUILDER_TEST_SURELY_UNSET"]);
    }

    #[test]
    fn ptx_variable_names() {
        assert_eq!(ptx_env_name("user_kernels"), "USER_KERNELS_PTX");
        assert_eq!(ptx_env_name("my_kernels2"), "MY_KERNELS2_PTX");
    }
}
