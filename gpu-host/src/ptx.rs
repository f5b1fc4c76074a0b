//! PTX modules: where a GPU device gets its kernels from, and the kernels' parameter lists as the
//! module declares them (checked against the argument tuple before every launch).

use std::borrow::Cow;
use std::path::PathBuf;

/// A PTX module: a file read when the device opens, or text embedded in the program
/// (`Ptx::text("my_kernels", include_str!(env!("MY_KERNELS_PTX")))`).
#[derive(Clone, Debug)]
pub enum Ptx {
    /// A `.ptx` file.
    File(PathBuf),
    /// PTX text and a name for messages.
    Text {
        /// What messages call the module.
        name: String,
        /// The PTX.
        text: Cow<'static, str>,
    },
}

impl Ptx {
    /// The module in the file at `path`.
    pub fn file(path: impl Into<PathBuf>) -> Ptx {
        Ptx::File(path.into())
    }

    /// The module `text`, called `name` in messages.
    pub fn text(name: impl Into<String>, text: impl Into<Cow<'static, str>>) -> Ptx {
        Ptx::Text { name: name.into(), text: text.into() }
    }

    /// Names the module in messages: `the PTX module at PATH`, or ``the embedded PTX module `NAME` ``.
    pub fn describe(&self) -> String {
        match self {
            Ptx::File(p) => format!("the PTX module at {}", p.display()),
            Ptx::Text { name, .. } => format!("the embedded PTX module `{name}`"),
        }
    }

    /// The module's text (reads the file).
    pub fn load(&self) -> std::io::Result<Cow<'_, str>> {
        match self {
            Ptx::File(p) => std::fs::read_to_string(p).map(Cow::Owned),
            Ptx::Text { text, .. } => Ok(Cow::Borrowed(text)),
        }
    }
}

/// The parameter sizes of every `.entry` of a PTX module, as its text declares them.
#[derive(Clone, Debug, Default)]
pub struct PtxParams {
    entries: Vec<(String, Vec<Option<usize>>)>,
}

impl PtxParams {
    /// Reads every `.entry NAME(.param ..., ...)` of `ptx`.
    pub fn parse(ptx: &str) -> PtxParams {
        let mut entries = Vec::new();
        let mut rest = ptx;
        while let Some(at) = rest.find(".entry") {
            rest = &rest[at + ".entry".len()..];
            let Some(open) = rest.find('(') else { break };
            let name = rest[..open].trim().to_string();
            let Some(close) = rest[open..].find(')') else { break };
            let list = &rest[open + 1..open + close];
            let sizes = list.split(',').filter(|p| p.contains(".param")).map(param_size).collect();
            entries.push((name, sizes));
            rest = &rest[open + close..];
        }
        PtxParams { entries }
    }

    /// The parameter sizes of kernel `name` (`None` for a parameter whose size cannot be read), or
    /// `None` if the module has no such entry.
    pub fn of(&self, name: &str) -> Option<&[Option<usize>]> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, s)| s.as_slice())
    }

    /// `Err` with a message naming the kernel unless the module declares `name` with exactly the
    /// parameter sizes `args` (what the launch passes).
    pub fn check(&self, name: &str, args: &[usize], module: &str) -> Result<(), String> {
        let Some(params) = self.of(name) else {
            return Err(format!("kernel `{name}` is not in {module}"));
        };
        let declared: Vec<String> = params.iter().map(|s| s.map_or("?".into(), |s| s.to_string())).collect();
        if params.len() != args.len() || params.iter().zip(args).any(|(p, a)| *p != Some(*a)) {
            return Err(format!(
                "kernel `{name}` in {module} takes {} parameters of [{}] bytes, but the launch passes {} of {:?} \
                 bytes: the module was built from another version of the kernel (rebuild it)",
                params.len(),
                declared.join(", "),
                args.len(),
                args
            ));
        }
        Ok(())
    }
}

/// Bytes of one `.param` declaration: `.param .u32 k_param_0`, `.param .align 8 .b8 k_param_1[16]`.
fn param_size(decl: &str) -> Option<usize> {
    let words: Vec<&str> = decl.split_whitespace().collect();
    let ty = words.iter().rev().find(|w| type_bytes(w).is_some())?;
    let elem = type_bytes(ty)?;
    let name = words.last()?;
    match name.split_once('[') {
        Some((_, count)) => count.trim_end_matches(']').parse::<usize>().ok().map(|c| c * elem),
        None => Some(elem),
    }
}

fn type_bytes(ty: &str) -> Option<usize> {
    let ty = ty.strip_prefix('.')?;
    let bits: usize = ty.get(1..)?.parse().ok()?;
    matches!(ty.as_bytes()[0], b'u' | b's' | b'b' | b'f').then_some(bits / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODULE: &str = "
.visible .entry saxpy(
\t.param .f32 saxpy_param_0,
\t.param .align 8 .b8 saxpy_param_1[16],
\t.param .align 8 .b8 saxpy_param_2[16]
)
{ ret; }
.visible .entry nothing()
{ ret; }
.visible .entry flags(.param .u64 flags_param_0, .param .u8 flags_param_1) { ret; }
";

    #[test]
    fn entries_and_parameter_sizes_are_read_from_the_module() {
        let p = PtxParams::parse(MODULE);
        assert_eq!(p.of("saxpy"), Some(&[Some(4), Some(16), Some(16)][..]));
        assert_eq!(p.of("nothing"), Some(&[][..]));
        assert_eq!(p.of("flags"), Some(&[Some(8), Some(1)][..]));
        assert_eq!(p.of("missing"), None);
    }

    #[test]
    fn a_launch_must_match_the_declared_parameters() {
        let p = PtxParams::parse(MODULE);
        assert!(p.check("saxpy", &[4, 16, 16], "m").is_ok());
        let short = p.check("saxpy", &[4], "m").unwrap_err();
        assert!(short.contains("kernel `saxpy`") && short.contains("takes 3 parameters"), "{short}");
        assert!(p.check("saxpy", &[8, 16, 16], "m").is_err());
        assert!(p.check("missing", &[], "m").unwrap_err().contains("not in m"));
    }
}
