//! A drop-in for `find_cuda_helper` 0.2, the crate `cust_raw`'s build script calls to find the
//! `libcuda.so` that a program using `cust` links against.
//!
//! The original stops the build with a bare "Could not find a cuda installation" when
//! `CUDA_LIBRARY_PATH` is unset and no CUDA toolkit is installed. This one searches the same
//! places, emits the same cargo directives when it finds the library, and otherwise stops with a
//! message that says what to set and how to get a `libcuda.so` (a link to the NVIDIA driver, or one
//! unpacked from Debian's `libcuda1` package on a machine without a GPU). Nothing else changes.
//!
//! Use it by patching crates.io in the workspace root's `Cargo.toml` (a patch applies only there):
//!
//! ```toml
//! [patch.crates-io]
//! find_cuda_helper = { path = "path/to/gpu-sync/find-cuda-helper" }
//! ```
//!
//! [`search`] holds the search itself; `xtask` uses it too.
#![warn(missing_docs)]

pub mod search;

use std::env;
use std::path::{Path, PathBuf};

use search::LinkLibrary;

/// What `cust_raw`'s build script calls: prints the link directives for `libcuda.so`, or stops
/// the build with a message saying what to do.
pub fn include_cuda() {
    if env::var_os("DOCS_RS").is_some() || cfg!(doc) {
        return;
    }
    let target_dir = search::build_script_target_dir().unwrap_or_else(|| PathBuf::from("target"));
    match search::check_link_library(&target_dir, &fetch_script()) {
        LinkLibrary::Missing(text) => {
            eprintln!("error: {text}");
            std::process::exit(1);
        }
        LinkLibrary::Doubtful(text) => {
            for line in text.lines() {
                println!("cargo:warning={line}");
            }
        }
        LinkLibrary::Found(_) => {}
    }
    for var in ["CUDA_LIBRARY_PATH", "CUDA_ROOT", "CUDA_PATH", "CUDA_TOOLKIT_ROOT_DIR"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    for dir in find_cuda_lib_dirs() {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dylib=cuda");
}

/// The helper script that unpacks `libcuda.so` from Debian's `libcuda1` package.
fn fetch_script() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../gpu-host/scripts/fetch-libcuda.sh");
    script.canonicalize().unwrap_or(script)
}

/// The directories searched for `libcuda.so`, in the original's order: each directory of
/// `CUDA_LIBRARY_PATH`, then `/opt/cuda`, `/usr/local/cuda` and `/usr/local/cuda-*`; for each, its
/// `lib64` (and `lib64/stubs`) when that exists, and `targets/x86_64-linux/lib` (and `lib/stubs`)
/// when that toolkit layout has `include/cuda.h`.
pub fn find_cuda_lib_dirs() -> Vec<PathBuf> {
    search::Search::from_env().link_dirs()
}

/// The directories of `CUDA_LIBRARY_PATH` (`:`-separated), or none.
pub fn read_env() -> Vec<PathBuf> {
    env::var_os("CUDA_LIBRARY_PATH").map(|p| env::split_paths(&p).collect()).unwrap_or_default()
}

/// A CUDA toolkit root (a directory with `include/cuda.h`): `CUDA_PATH`, `CUDA_ROOT`,
/// `CUDA_TOOLKIT_ROOT_DIR`, then `/usr/local/cuda` and `/opt/cuda`.
pub fn find_cuda_root() -> Option<PathBuf> {
    let from_env =
        ["CUDA_PATH", "CUDA_ROOT", "CUDA_TOOLKIT_ROOT_DIR"].into_iter().filter_map(env::var_os).map(PathBuf::from);
    from_env
        .chain(["/usr/local/cuda", "/opt/cuda"].into_iter().map(PathBuf::from))
        .find(|p| p.join("include").join("cuda.h").is_file())
}
