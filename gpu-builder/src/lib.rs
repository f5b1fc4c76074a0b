//! Builds a Rust GPU kernel crate to one PTX module, from a build script or from a tool.
//!
//! The kernel crate is compiled by rustc's NVPTX backend (`nvptx64-nvidia-cuda`, `-Zbuild-std=core`)
//! with the nightly it pins, and its LLVM bitcode is linked into one `.ptx` file with `llvm-link`,
//! `opt` and `llc` from that toolchain's `llvm-tools` component. Nothing else is needed: no CUDA
//! toolkit, no LLVM install, only rustup. The crate that calls the builder may be on stable; the
//! kernel build runs `cargo +<nightly>` through rustup's proxy.
//!
//! # In a build script
//!
//! ```no_run
//! // build.rs of the host crate
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     // FIRST: in linker mode this call links and exits (see below).
//!     let module = gpu_builder::PtxBuilder::new("../kernels").arch("sm_90").build()?;
//!     // module.path() is OUT_DIR/kernels.ptx; cargo will rerun this script when a kernel source,
//!     // a path dependency's source, Cargo.toml, Cargo.lock or rust-toolchain.toml changes.
//!     let _ = module;
//!     Ok(())
//! }
//! ```
//!
//! and in the host crate:
//!
//! ```ignore
//! static PTX: &str = include_str!(env!("KERNELS_PTX"));
//! // The kernels' names as constants (`KERNELS`, `SAXPY`, ...):
//! include!(concat!(env!("OUT_DIR"), "/kernels_ptx.rs"));
//! ```
//!
//! In a build script (detected by cargo's `OUT_DIR`, `TARGET` and `HOST`; see
//! [`PtxBuilder::cargo_directives`]) [`PtxBuilder::build`] also
//! - copies the module to `OUT_DIR/<crate_name>.ptx`,
//! - prints `cargo:rustc-env=<CRATE_NAME>_PTX=<that path>` (e.g. `KERNELS_PTX` for the crate
//!   `kernels`),
//! - writes `OUT_DIR/<crate_name>_ptx.rs` with `pub const` names of the module's kernels,
//! - prints `cargo:rerun-if-changed` for every source file in the kernel build's dep-info (the
//!   kernel crate's and its path dependencies'), the kernel `Cargo.toml`, its workspace's
//!   `Cargo.toml` and `Cargo.lock`, and the toolchain file, plus `cargo:rerun-if-env-changed` for
//!   every environment variable the builder read, so an unchanged kernel is not rebuilt;
//! - forwards rustc's warnings and errors as `cargo:warning=` lines (cargo shows a build script's
//!   output only when it fails).
//!
//! # Linker mode: `build()` must come first
//!
//! rustc needs a linker for the NVPTX target that joins bitcode, and a build dependency cannot ship
//! an executable. So the builder passes *the executable that called it* (the build script binary,
//! or your tool) to rustc as `-Clinker`, with an environment variable naming that executable. When
//! rustc starts it as the linker, the program runs from the top again: [`PtxBuilder::build`] (and
//! [`link_if_invoked`]) notice linker mode at their very start, link, and exit the process with the
//! link's status.
//!
//! **Therefore `build()` (or [`link_if_invoked`]) must be the first thing `main` does.** Work done
//! before it runs again, once per link, in the linker process. A tool that builds PTX somewhere deep
//! inside calls [`link_if_invoked`] as the first line of `main`.
//!
//! # Where the kernel crate may live
//!
//! Anywhere on disk: inside the caller's workspace as a member, in another workspace, or alone. A
//! crate that is not a member of a workspace but lies in a directory below one must say so, or cargo
//! refuses to build it: give it its own (empty) `[workspace]` table, or list it in the enclosing
//! workspace's `exclude`. The builder reports this case as [`BuildError::NotInWorkspace`].
//! A kernel crate meant for a stable host project is best its own workspace, so that the nightly
//! cargo never resolves the host's workspace and lock file.
//!
//! # Target directory
//!
//! The kernel build has its own target directory, never the outer build's (cargo holds a lock on
//! that one while build scripts run): by default `<outer target dir>/gpu-builder` in a build
//! script, else `<kernel crate>/target/gpu-builder`; see [`PtxBuilder::target_dir`]. The link step
//! writes its command line and tool invocations to `<target dir>/ptx-link/<package>.log`.
#![warn(missing_docs)]

mod ar;
mod build_script;
mod builder;
mod depinfo;
mod env;
mod error;
mod files;
pub mod json;
mod kernel_build;
mod link;
mod module;
mod package;
pub mod process;
pub mod ptx_text;
mod target_dir;
mod toolchain;

pub use builder::{DEFAULT_ARCH, PtxBuilder, TARGET};
pub use error::BuildError;
pub use link::link_if_invoked;
pub use module::PtxModule;
pub use ptx_text::validate_arch;
pub use toolchain::DEFAULT_TOOLCHAIN;
