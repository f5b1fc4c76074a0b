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

/// `ship-ptx`: builds every kernel crate that ships its module (for `arch` = the default) and copies
/// the module to its `shipped-ptx` path.
pub fn ship_ptx(root: &Path, krates: &[KernelCrate]) -> Result<()> {
    let shipping: Vec<&KernelCrate> = krates.iter().filter(|k| k.shipped.is_some()).collect();
    if shipping.is_empty() {
        return Err(Error::new("ship-ptx: no kernel crate sets `shipped-ptx` under [package.metadata.xtask]"));
    }
    for k in shipping {
        let built = build_ptx(root, k, DEFAULT_ARCH)?;
        let dest = k.shipped.as_ref().expect("filtered above");
        std::fs::copy(&built, dest)
            .map_err(|e| Error::new(format!("ship-ptx: cannot copy {} to {}: {e}", built.display(), dest.display())))?;
        println!("ship-ptx: {} is the module of {}", display_path(root, dest), k.package);
    }
    Ok(())
}

/// The `shipped PTX` check of `cargo xtask test`: the module `build-ptx` just built for `krate` (default
/// architecture) is byte for byte its shipped copy.
pub fn check_shipped(root: &Path, krate: &KernelCrate) -> Result<()> {
    let Some(shipped) = &krate.shipped else { return Ok(()) };
    let built = ptx_path(root, &krate.crate_name, DEFAULT_ARCH);
    let read = |p: &Path| std::fs::read(p).map_err(|e| Error::new(format!("cannot read {}: {e}", p.display())));
    let (a, b) = (read(&built)?, read(shipped)?);
    if a != b {
        let line = a.split(|&c| c == b'\n').zip(b.split(|&c| c == b'\n')).position(|(x, y)| x != y);
        return Err(Error::new(format!(
            "{} is not the module that {}'s source builds to ({}; {} bytes against {}): run `cargo xtask ship-ptx`",
            display_path(root, shipped),
            krate.package,
            line.map_or("one is a prefix of the other".to_string(), |l| format!("first difference on line {}", l + 1)),
            b.len(),
            a.len()
        )));
    }
    println!("{} is current ({} bytes)", display_path(root, shipped), a.len());
    Ok(())
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
