//! Finding a `libcuda.so` to link a host with CUDA support against, and saying how to get one.
//!
//! `cust` (the CUDA driver API bindings `gpu-host`'s `cuda` feature uses) links against
//! `libcuda.so`. Its build script looks for it in the directories of `CUDA_LIBRARY_PATH` (each
//! `<dir>/lib64`), then in a CUDA toolkit under `/opt/cuda`, `/usr/local/cuda` or
//! `/usr/local/cuda-*`. [`check_link_library`] does that search and, where it finds nothing, writes
//! the message that says what to set and how to get the library.
//!
//! At run time a program built this way loads the NVIDIA driver's own `libcuda.so.1`; the
//! `libcuda.so` found here is only linked against, so one unpacked from a package on a machine
//! without a GPU serves as well.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Directories searched for the driver's `libcuda.so.1` when `ldconfig` does not list it.
const DRIVER_DIRS: [&str; 5] = [
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib64",
    "/usr/local/nvidia/lib64",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/wsl/lib",
];

/// Toolkit roots `cust`'s build script searches when `CUDA_LIBRARY_PATH` is unset.
const TOOLKIT_ROOTS: [&str; 2] = ["/opt/cuda", "/usr/local/cuda"];

/// The NVIDIA driver library (`libcuda.so.1`) of this machine, if the driver is installed.
pub fn find_driver() -> Option<PathBuf> {
    from_ldconfig().or_else(|| DRIVER_DIRS.iter().map(|d| Path::new(d).join("libcuda.so.1")).find(|p| p.exists()))
}

fn from_ldconfig() -> Option<PathBuf> {
    let ldconfig = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())?;
    let out = Command::new(ldconfig).arg("-p").output().ok()?;
    parse_ldconfig(&String::from_utf8_lossy(&out.stdout), env::consts::ARCH).filter(|p| p.exists())
}

/// The `libcuda.so.1` entry of `ldconfig -p` output, preferring the one for `arch`.
pub fn parse_ldconfig(listing: &str, arch: &str) -> Option<PathBuf> {
    let abi_tag = match arch {
        "x86_64" => "x86-64",
        "aarch64" => "AArch64",
        other => other,
    };
    let entries: Vec<(&str, PathBuf)> = listing
        .lines()
        .filter_map(|line| {
            let (lhs, path) = line.split_once("=>")?;
            let name = lhs.split_whitespace().next()?;
            (name == "libcuda.so.1").then(|| (lhs, PathBuf::from(path.trim())))
        })
        .collect();
    entries.iter().find(|(lhs, _)| lhs.contains(abi_tag)).or_else(|| entries.first()).map(|(_, p)| p.clone())
}

/// Makes `<dir>/lib64/libcuda.so` a link to `driver` (the driver's `libcuda.so.1`), so that `dir`
/// serves as `CUDA_LIBRARY_PATH`. Returns `dir`.
pub fn link_dir_to_driver(dir: &Path, driver: &Path) -> std::io::Result<PathBuf> {
    let lib64 = dir.join("lib64");
    fs::create_dir_all(&lib64)?;
    let link = lib64.join("libcuda.so");
    if fs::read_link(&link).is_ok_and(|t| t == driver) {
        return Ok(dir.to_path_buf());
    }
    if fs::symlink_metadata(&link).is_ok() {
        fs::remove_file(&link)?;
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(driver, &link)?;
    #[cfg(not(unix))]
    fs::copy(driver, &link)?;
    Ok(dir.to_path_buf())
}

/// What [`check_link_library`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum LinkLibrary {
    /// A `libcuda.so` in a directory `cust`'s build searches: the link will work.
    Found(PathBuf),
    /// `cust`'s build finds a directory, but none of them holds `libcuda.so`: the link works only
    /// if the linker finds the library elsewhere (its default search path). The text says what to do.
    Doubtful(String),
    /// `cust`'s build will stop ("Could not find a cuda installation"). The text says what to set
    /// and how to get a `libcuda.so`.
    Missing(String),
}

/// Where a CUDA link search looks.
pub struct Search {
    /// `CUDA_LIBRARY_PATH`, if set and not empty.
    library_path: Option<String>,
    /// The toolkit roots searched after it (`/opt/cuda`, `/usr/local/cuda`, `/usr/local/cuda-*`).
    toolkit_roots: Vec<PathBuf>,
}

impl Search {
    /// The search `cust`'s build script makes on this machine, with this environment.
    pub fn from_env() -> Search {
        let library_path = env::var("CUDA_LIBRARY_PATH").ok().filter(|p| !p.is_empty());
        let mut toolkit_roots: Vec<PathBuf> = TOOLKIT_ROOTS.iter().map(PathBuf::from).collect();
        if let Ok(entries) = fs::read_dir("/usr/local") {
            let mut versioned: Vec<PathBuf> = entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("cuda-")))
                .collect();
            versioned.sort();
            toolkit_roots.extend(versioned);
        }
        Search { library_path, toolkit_roots }
    }

    /// The directories passed to the linker, in the search's order.
    pub fn link_dirs(&self) -> Vec<PathBuf> {
        let mut bases: Vec<PathBuf> =
            self.library_path.as_ref().map(|p| env::split_paths(p).collect()).unwrap_or_default();
        bases.extend(self.toolkit_roots.iter().cloned());
        let mut dirs = Vec::new();
        for base in bases {
            let lib64 = base.join("lib64");
            if lib64.is_dir() {
                dirs.push(lib64.clone());
                dirs.push(lib64.join("stubs"));
            }
            let targets = base.join("targets/x86_64-linux");
            if targets.join("include/cuda.h").is_file() {
                dirs.push(targets.join("lib"));
                dirs.push(targets.join("lib/stubs"));
            }
        }
        dirs
    }
}

/// Looks for a `libcuda.so` to link against the way `cust`'s build does, on this machine. `target_dir` is the calling build's target directory (where the
/// suggested commands put a link or an unpacked library); `fetch_script` is the path of
/// `fetch-libcuda.sh` to suggest when the machine has no driver.
pub fn check_link_library(target_dir: &Path, fetch_script: &Path) -> LinkLibrary {
    classify(&Search::from_env(), find_driver().as_deref(), target_dir, fetch_script)
}

fn classify(search: &Search, driver: Option<&Path>, target_dir: &Path, fetch_script: &Path) -> LinkLibrary {
    let dirs = search.link_dirs();
    if let Some(lib) = dirs.iter().map(|d| d.join("libcuda.so")).find(|l| l.exists()) {
        return LinkLibrary::Found(lib);
    }
    let what = match &search.library_path {
        Some(p) => format!("CUDA_LIBRARY_PATH={p} has no lib64/libcuda.so"),
        None => "CUDA_LIBRARY_PATH is not set and there is no CUDA toolkit under /opt/cuda or /usr/local/cuda".into(),
    };
    let message = format!(
        "a build with CUDA support (the `cust` crate; gpu-host's `cuda` feature) links against libcuda.so, and {what}.\n\
         Set CUDA_LIBRARY_PATH to a directory DIR that holds DIR/lib64/libcuda.so, then build again.\n{}\
         No CUDA toolkit is needed. At run time the program loads the NVIDIA driver's libcuda.so.1 of the \
         machine it runs on; the library found here is only linked against.",
        how_to_get(driver, target_dir, fetch_script)
    );
    if dirs.is_empty() { LinkLibrary::Missing(message) } else { LinkLibrary::Doubtful(message) }
}

/// The commands that make a `CUDA_LIBRARY_PATH` directory on this machine.
fn how_to_get(driver: Option<&Path>, target_dir: &Path, fetch_script: &Path) -> String {
    match driver {
        Some(driver) => {
            let dir = target_dir.join("cuda-link");
            format!(
                "This machine has the NVIDIA driver ({}); link to it:\n    \
                 mkdir -p {dir}/lib64 && ln -sf {} {dir}/lib64/libcuda.so\n    \
                 export CUDA_LIBRARY_PATH={dir}\n",
                driver.display(),
                driver.display(),
                dir = dir.display()
            )
        }
        None => format!(
            "This machine has no NVIDIA driver. To build here for a GPU machine, unpack libcuda.so from \
             Debian's non-free `libcuda1` package (nothing is installed; needs Debian's apt-get and dpkg):\n    \
             export CUDA_LIBRARY_PATH=$(bash {} {})\n",
            fetch_script.display(),
            target_dir.join("libcuda").display()
        ),
    }
}

/// The target directory of the build that runs the current build script, from its `OUT_DIR`
/// (`<target>/[<triple>/]<profile>/build/<package>-<hash>/out`).
pub fn build_script_target_dir() -> Option<PathBuf> {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR")?);
    let mut dir = out_dir.ancestors().nth(4)?.to_path_buf();
    if let Ok(triple) = env::var("TARGET")
        && dir.file_name().is_some_and(|n| n == triple.as_str())
    {
        dir = dir.parent()?.to_path_buf();
    }
    Some(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LDCONFIG: &str = "\t1234 libs found in cache `/etc/ld.so.cache'\n\
        \tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n\
        \tlibcuda.so.1 (libc6) => /usr/lib/i386-linux-gnu/libcuda.so.1\n\
        \tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n\
        \tlibcuda.so (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so\n";

    #[test]
    fn picks_the_native_libcuda_from_ldconfig() {
        assert_eq!(parse_ldconfig(LDCONFIG, "x86_64"), Some(PathBuf::from("/usr/lib/x86_64-linux-gnu/libcuda.so.1")));
        assert_eq!(parse_ldconfig("\tlibc.so.6 (libc6,x86-64) => /lib/libc.so.6\n", "x86_64"), None);
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = env::temp_dir().join(format!("gpu-builder-libcuda-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn no_library_path_and_no_toolkit_is_missing_with_the_fetch_command() {
        let root = scratch("missing");
        let search = Search { library_path: None, toolkit_roots: vec![root.join("cuda")] };
        let LinkLibrary::Missing(text) =
            classify(&search, None, Path::new("/p/target"), Path::new("/g/fetch-libcuda.sh"))
        else {
            panic!("expected Missing")
        };
        assert!(text.contains("CUDA_LIBRARY_PATH is not set"), "{text}");
        assert!(text.contains("export CUDA_LIBRARY_PATH=$(bash /g/fetch-libcuda.sh /p/target/libcuda)"), "{text}");
        assert!(text.contains("libcuda.so.1 of the machine it runs on"), "{text}");
    }

    #[test]
    fn a_driver_is_offered_as_a_link() {
        let search = Search { library_path: None, toolkit_roots: vec![] };
        let driver = Path::new("/usr/lib/x86_64-linux-gnu/libcuda.so.1");
        let LinkLibrary::Missing(text) = classify(&search, Some(driver), Path::new("/p/target"), Path::new("/f.sh"))
        else {
            panic!("expected Missing")
        };
        assert!(
            text.contains("ln -sf /usr/lib/x86_64-linux-gnu/libcuda.so.1 /p/target/cuda-link/lib64/libcuda.so"),
            "{text}"
        );
        assert!(text.contains("export CUDA_LIBRARY_PATH=/p/target/cuda-link"), "{text}");
    }

    #[test]
    fn a_library_path_with_lib64_but_no_library_is_doubtful_and_one_with_it_is_found() {
        let root = scratch("path");
        fs::create_dir_all(root.join("lib64")).unwrap();
        let path = root.to_str().unwrap().to_string();
        let search = Search { library_path: Some(path), toolkit_roots: vec![] };
        match classify(&search, None, Path::new("/t"), Path::new("/f.sh")) {
            LinkLibrary::Doubtful(text) => assert!(text.contains("has no lib64/libcuda.so"), "{text}"),
            other => panic!("expected Doubtful, got {other:?}"),
        }
        let driver = root.join("libcuda.so.1");
        fs::write(&driver, b"").unwrap();
        link_dir_to_driver(&root, &driver).unwrap();
        assert_eq!(
            classify(&search, None, Path::new("/t"), Path::new("/f.sh")),
            LinkLibrary::Found(root.join("lib64/libcuda.so"))
        );
    }
}
