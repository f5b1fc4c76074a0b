//! `build-ptx`: builds a kernel crate of this workspace to PTX with `gpu-builder` and writes
//! `target/ptx/<crate_name>.ptx`.
//!
//! The kernel build uses its own target directory (`target/nvptx`), because its flags differ from
//! the host build's. The link step is this program itself: `gpu-builder` passes the running
//! executable to rustc as the linker, and `main` hands over to `gpu_builder::link_if_invoked` first.

use std::path::{Path, PathBuf};
use std::time::Instant;

pub use gpu_builder::DEFAULT_ARCH;
use gpu_builder::PtxBuilder;

use crate::util::{Error, Result, display_path, secs};
use crate::workspace::KernelCrate;

/// `target/nvptx`: cargo target directory of the kernel build.
pub fn nvptx_target_dir(root: &Path) -> PathBuf {
    root.join("target").join("nvptx")
}

/// Where `build-ptx` puts the module of the crate named `crate_name` for `arch`:
/// `target/ptx/<crate_name>.ptx` for the default architecture, `target/ptx/<crate_name>.<arch>.ptx`
/// for the others.
pub fn ptx_path(root: &Path, crate_name: &str, arch: &str) -> PathBuf {
    let name = if arch == DEFAULT_ARCH { format!("{crate_name}.ptx") } else { format!("{crate_name}.{arch}.ptx") };
    root.join("target").join("ptx").join(name)
}

/// Accepts PTX ISA target names such as `sm_70`, `sm_90`, `sm_90a`, `sm_100f`; anything else is a
/// usage error.
pub fn validate_arch(arch: &str) -> Result<()> {
    gpu_builder::validate_arch(arch).map_err(|e| Error::usage(e.to_string()))
}

/// Builds the PTX module of `krate` for `arch`, prints one summary line, and returns the path of the
/// module.
pub fn build_ptx(root: &Path, krate: &KernelCrate, arch: &str) -> Result<PathBuf> {
    let start = Instant::now();
    validate_arch(arch)?;
    let dest = ptx_path(root, &krate.crate_name, arch);
    let module = PtxBuilder::new(&krate.dir)
        .arch(arch)
        .target_dir(nvptx_target_dir(root))
        .copy_to(&dest)
        .cargo_directives(false)
        .build()
        .map_err(|e| Error::new(format!("build-ptx: {} for {arch}: {e}", krate.package)))?;
    let kernels = module.entries();
    println!(
        "build-ptx: {} ({arch}, {} .entry kernel{}{}) in {}",
        display_path(root, module.path()),
        kernels.len(),
        if kernels.len() == 1 { "" } else { "s" },
        kernel_list(kernels),
        secs(start.elapsed())
    );
    if kernels.is_empty() {
        eprintln!("build-ptx: warning: the module has no .entry kernels");
    }
    Ok(dest)
}

fn kernel_list(kernels: &[String]) -> String {
    const SHOWN: usize = 6;
    if kernels.is_empty() {
        return String::new();
    }
    let mut text = kernels.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if kernels.len() > SHOWN {
        text.push_str(&format!(", ... {} more", kernels.len() - SHOWN));
    }
    format!(": {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architecture_names_are_usage_errors() {
        assert!(validate_arch("sm_80").is_ok());
        let err = validate_arch("90").unwrap_err();
        assert_eq!(err.code, crate::util::EXIT_USAGE);
        assert!(!err.message.contains('\n'), "one line: {}", err.message);
    }

    #[test]
    fn default_arch_gets_the_plain_name() {
        let root = Path::new("/w");
        assert_eq!(ptx_path(root, "gpu_kernels", "sm_90"), Path::new("/w/target/ptx/gpu_kernels.ptx"));
        assert_eq!(ptx_path(root, "gpu_kernels", "sm_80"), Path::new("/w/target/ptx/gpu_kernels.sm_80.ptx"));
        assert_eq!(ptx_path(root, "user_kernels", "sm_90"), Path::new("/w/target/ptx/user_kernels.ptx"));
    }

    #[test]
    fn long_kernel_lists_are_cut() {
        let names: Vec<String> = (0..8).map(|i| format!("k{i}")).collect();
        assert_eq!(kernel_list(&names[..2]), ": k0, k1");
        assert_eq!(kernel_list(&names), ": k0, k1, k2, k3, k4, k5, ... 2 more");
        assert_eq!(kernel_list(&[]), "");
    }
}
