//! The PTX modules a GPU has loaded, and the entry of each kernel in them ([`Modules`]): a module is
//! read and checked before the driver sees it, loaded once per text, and a kernel's entry is the
//! first whose parameters and signature are the kernel's ([`PtxEntries::check_kernel`]).
//!
//! Imports the PTX reader (`crate::ptx_module`), `error` and the driver calls (`driver`); nothing of the
//! device layer.

use super::driver::{self, CUfunction};
use crate::error::{Error, Result, fail};
use crate::ptx_module::{Ptx, PtxEntries};
use cust::module::Module;
use gpu_std::Kernel;
use std::cell::RefCell;

/// A loaded PTX module and what it declares.
struct Loaded {
    module: Module,
    /// The module, for messages ([`Ptx::describe`]).
    describe: String,
    /// Every kernel's parameter sizes and signature, as the module declares them.
    entries: PtxEntries,
    /// A hash of the module's text: a module is loaded once per device.
    hash: u64,
}

impl Loaded {
    /// Reads `ptx`, checks what it declares and has the driver load it (the context must be current).
    fn load(ptx: &Ptx) -> Result<Loaded> {
        let text = read(ptx)?;
        // Read before the driver sees it: a text this reader refuses (a NUL byte, preprocessor lines)
        // is never loaded.
        let entries =
            PtxEntries::parse(&text).map_err(|e| Error::Module(format!("cannot read {}: {e}", ptx.describe())))?;
        let module = Module::from_ptx(&text, &[])
            .map_err(|e| Error::Module(format!("the driver rejected {} (cuModuleLoadData): {e}", ptx.describe())))?;
        Ok(Loaded { module, describe: ptx.describe(), entries, hash: text_hash(&text) })
    }
}

/// The text of `ptx`, or an error naming it.
fn read(ptx: &Ptx) -> Result<std::borrow::Cow<'_, str>> {
    ptx.load().map_err(|e| Error::Module(format!("cannot read {}: {e}", ptx.describe())))
}

/// A hash of a module's text, to tell whether it is loaded already.
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The modules a GPU loaded, in the order it did (the one the device opened with first), and the
/// entries found so far.
pub(crate) struct Modules {
    loaded: RefCell<Vec<Loaded>>,
    /// The entry found for each kernel type (by `type_name`): modules are only ever added, after the
    /// ones searched first, so a kernel's entry never changes once found. With it, the most dynamic
    /// shared memory it has been allowed so far (so that the attribute is set once, not per launch).
    functions: RefCell<Vec<(&'static str, CUfunction, usize)>>,
}

impl Modules {
    /// The first module, `ptx`, loaded (the context must be current).
    pub(crate) fn first(ptx: &Ptx) -> Result<Modules> {
        Ok(Modules { loaded: RefCell::new(vec![Loaded::load(ptx)?]), functions: RefCell::default() })
    }

    /// Whether a module of `ptx`'s text is loaded already (reads the text).
    pub(crate) fn has(&self, ptx: &Ptx) -> Result<bool> {
        let text = read(ptx)?;
        let hash = text_hash(&text);
        Ok(self.loaded.borrow().iter().any(|m| m.hash == hash))
    }

    /// Loads `ptx` after the modules loaded already (the context must be current).
    pub(crate) fn add(&self, ptx: &Ptx) -> Result<()> {
        let loaded = Loaded::load(ptx)?;
        self.loaded.borrow_mut().push(loaded);
        Ok(())
    }

    /// The module entry of kernel `K`, allowed `shared` bytes of dynamic shared memory: the first
    /// loaded module whose `.entry` of `K`'s name has `K`'s parameters and signature
    /// ([`PtxEntries::check_kernel`]). A module built from another definition of the kernel would run
    /// code compiled for other parameters (another element type of the same size, or another count of
    /// them: the argument array read out of bounds); `Ptx`'s contract makes each module
    /// gpu-builder's, whose entries are what their signatures say. When no module has it, the error
    /// of the first module that declares an entry of that name (else of the first module). The
    /// context must be current.
    pub(crate) fn function<K: Kernel>(&self, shared: usize) -> Result<CUfunction> {
        let key = std::any::type_name::<K>();
        let mut functions = self.functions.borrow_mut();
        let at = match functions.iter().position(|(k, _, _)| *k == key) {
            Some(at) => at,
            None => {
                functions.push((key, self.find_function::<K>()?, 48 * 1024));
                functions.len() - 1
            }
        };
        let (_, f, allowed) = &mut functions[at];
        if shared > *allowed {
            // Above 48 KiB a kernel must opt in, else its launch fails and its occupancy is 0.
            // SAFETY: `f` is a function of a module this device loaded and keeps.
            unsafe { driver::allow_dynamic_shared(*f, shared) }
                .map_err(|e| e.context(format!("`{}` cannot take {shared} bytes of shared memory", K::NAME)))?;
            *allowed = shared;
        }
        Ok(*f)
    }

    /// The entry of the first loaded module whose declaration matches `K` (its name, parameters and
    /// signature).
    fn find_function<K: Kernel>(&self) -> Result<CUfunction> {
        let modules = self.loaded.borrow();
        let mut first_err: Option<String> = None;
        let mut named_err: Option<String> = None;
        for m in modules.iter() {
            match m.entries.check_kernel::<K>(&m.describe) {
                Ok(()) => {
                    let f = m.module.get_function(K::NAME).map_err(|e| {
                        Error::Module(format!(
                            "kernel `{}` is not in {} (rebuild the module from the kernel crate): {e}",
                            K::NAME,
                            m.describe
                        ))
                    })?;
                    return Ok(f.to_raw());
                }
                Err(e) => {
                    if named_err.is_none() && m.entries.declares(K::NAME) {
                        named_err = Some(e.clone());
                    }
                    first_err.get_or_insert(e);
                }
            }
        }
        let e = named_err.or(first_err).unwrap_or_else(|| format!("kernel `{}`: no module is loaded", K::NAME));
        if modules.len() > 1 {
            fail!(Module, "{e} (none of the {} loaded modules has it)", modules.len());
        }
        fail!(Module, "{e}")
    }
}
