//! PTX modules: where a GPU device gets its kernels from, and what the module says about each kernel
//! (its `.entry` parameter list and the signature `kernel!` wrote next to it), checked against the
//! kernel's host type before every launch.
//!
//! See [`Ptx`] for what loading a module means and what the launches check.

use gpu_std::{Kernel, KernelArgs};
use std::borrow::Cow;
use std::path::PathBuf;

/// A PTX module: a file read when the device opens, or text embedded in the program.
///
/// A module is code: loading one makes its kernels launchable on a GPU that shares memory with this
/// process. So making one is `unsafe` (the contract, in [`Ptx::text`]: the kernels a launch can reach
/// are what `gpu-builder` compiled from `kernel!` definitions): nothing in a text proves what it was
/// compiled from, and safe code can write any text.
///
/// ```compile_fail,E0133
/// let ptx = gpu_host::Ptx::text("any", ".version 8.5\n.target sm_90\n.address_size 64\n"); // error: call to unsafe function
/// # let _ = ptx;
/// ```
/// ```compile_fail,E0451
/// // Nor can a module be made from another's parts: a `Ptx` is opaque.
/// fn forge(trusted: gpu_host::Ptx) -> gpu_host::Ptx {
///     gpu_host::Ptx { ..trusted } // error: field `source` of struct `Ptx` is private
/// }
/// ```
/// ```
/// // SAFETY: a module without kernels; in a program, the text gpu-builder built from a kernel crate.
/// let ptx = unsafe { gpu_host::Ptx::text("kernels", ".version 8.5\n.target sm_90\n.address_size 64\n") };
/// assert_eq!(ptx.describe(), "the embedded PTX module `kernels`");
/// ```
///
/// What is checked (by [`PtxEntries::check`], before every GPU launch), so that a module built from
/// other definitions is an error and not a launch of code compiled for other parameters: the module
/// declares one `.entry` of the kernel's name, with the count and sizes of parameters the launch
/// passes, and one signature global for it ([`gpu_std::signature`]) whose text is the kernel's
/// signature on the host — the same module path, kernel name and parameter types. That catches a
/// stale module, a kernel of the same name from another crate or module, and a definition whose types
/// differ between the host and the GPU. It cannot catch a text made to match: the signatures are
/// plain bytes that anyone can write next to any code, which is why making a `Ptx` is `unsafe`.
///
/// The text is read as the driver reads it: comments (`//`, `/* */`) and strings are skipped, so
/// that a declaration in a comment is not taken for the real one, and a module that uses what this
/// reader does not follow (preprocessor lines, a backslash at a line's end, a NUL byte) is refused.
/// Modules that `gpu-builder` writes use none of it.
#[derive(Clone, Debug)]
pub struct Ptx {
    source: Source,
}

#[derive(Clone, Debug)]
enum Source {
    File(PathBuf),
    Text { name: String, text: Cow<'static, str> },
}

impl Ptx {
    /// The module in the file at `path`.
    ///
    /// # Safety
    /// As [`Ptx::text`], for the file's content when a device opens it (a device reads the file
    /// once, and checks and loads what it read).
    pub unsafe fn file(path: impl Into<PathBuf>) -> Ptx {
        Ptx { source: Source::File(path.into()) }
    }

    /// The module `text`, called `name` in messages
    /// (`Ptx::text("my_kernels", include_str!(env!("MY_KERNELS_PTX")))`).
    ///
    /// # Safety
    /// Loading a module makes its kernels launchable, and a launched kernel runs on a GPU that shares
    /// memory with this process. Every `.entry` of `text` that holds a kernel signature (a global
    /// `__gpu_std_signature_<name>`, see [`gpu_std::signature`]) must be the code that `gpu-builder`
    /// compiled from a `kernel!` definition with that signature. A module that `gpu-builder` built
    /// from gpu-std kernel crates is one (the text of the file a build script's
    /// `PtxBuilder::build` wrote, whatever version of which crate); so is a module whose kernels hold
    /// no signature, since every launch refuses them.
    ///
    /// Under that contract every launch is sound: it runs only an entry whose module path, name and
    /// parameter types are the launched kernel's ([`PtxEntries::check`]), so a stale module, or one
    /// of another crate, is an error. What cannot be checked is the contract itself: a signature is
    /// bytes that any text can hold next to any code.
    pub unsafe fn text(name: impl Into<String>, text: impl Into<Cow<'static, str>>) -> Ptx {
        Ptx { source: Source::Text { name: name.into(), text: text.into() } }
    }

    /// Names the module in messages: `the PTX module at PATH`, or ``the embedded PTX module `NAME` ``.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::File(p) => format!("the PTX module at {}", p.display()),
            Source::Text { name, .. } => format!("the embedded PTX module `{name}`"),
        }
    }

    /// The module's text (reads the file).
    pub fn load(&self) -> std::io::Result<Cow<'_, str>> {
        match &self.source {
            Source::File(p) => std::fs::read_to_string(p).map(Cow::Owned),
            Source::Text { text, .. } => Ok(Cow::Borrowed(text)),
        }
    }
}

/// What a PTX module declares for its kernels: every `.entry` with its parameter sizes, and every
/// kernel signature global ([`gpu_std::signature`]), read from the module's text with comments and
/// strings skipped.
#[derive(Clone, Debug, Default)]
pub struct PtxEntries {
    entries: Vec<Entry>,
    signatures: Vec<SignatureGlobal>,
}

/// A kernel's name and its parameters' sizes (`None` for one that cannot be read).
type Entry = (String, Vec<Option<usize>>);
/// A top-level global: its name and bytes (`None` if its initializer is not a list of bytes).
type SignatureGlobal = (String, Option<Vec<u8>>);

impl PtxEntries {
    /// Reads every top-level `.entry NAME(.param ..., ...)` and every `.global` whose name starts with
    /// [`gpu_std::signature::GLOBAL_PREFIX`] of `ptx`. `Err` with the reason (and line) for a text this
    /// reader cannot read as the driver would: an unterminated comment or string, a NUL byte, a
    /// preprocessor line (`#define`, `#if`, ...), a backslash at the end of a line, or a backslash
    /// outside a string.
    pub fn parse(ptx: &str) -> Result<PtxEntries, String> {
        let tokens = tokens(ptx)?;
        let mut out = PtxEntries::default();
        let (mut braces, mut parens) = (0usize, 0usize);
        let mut i = 0;
        while i < tokens.len() {
            let t = tokens[i].text;
            let top = braces == 0 && parens == 0;
            match t {
                ".entry" if top => {
                    let (entry, next) = entry(&tokens, i + 1)?;
                    out.entries.push(entry);
                    i = next;
                    continue;
                }
                ".global" | ".const" if top => {
                    let (global, next) = global(&tokens, i + 1);
                    if let Some((name, bytes)) = global
                        && let Some(kernel) = name.strip_prefix(gpu_std::signature::GLOBAL_PREFIX)
                    {
                        out.signatures.push((kernel.to_string(), bytes));
                    }
                    i = next;
                    continue;
                }
                "{" => braces += 1,
                "}" => {
                    braces =
                        braces.checked_sub(1).ok_or_else(|| format!("line {}: `}}` without `{{`", tokens[i].line))?;
                }
                "(" => parens += 1,
                ")" => {
                    parens =
                        parens.checked_sub(1).ok_or_else(|| format!("line {}: `)` without `(`", tokens[i].line))?;
                }
                _ => {}
            }
            i += 1;
        }
        Ok(out)
    }

    /// The names of the module's kernels, in module order.
    pub fn kernels(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// The parameter sizes of kernel `name` (`None` for a parameter whose size cannot be read), or
    /// `None` if the module has no such entry (the first, if it declares two).
    pub fn of(&self, name: &str) -> Option<&[Option<usize>]> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, s)| s.as_slice())
    }

    /// The signature the module holds for kernel `name`: `None` without one, `Some(Err(..))` for one
    /// that is not readable text.
    pub fn signature(&self, name: &str) -> Option<Result<&str, String>> {
        let (_, bytes) = self.signatures.iter().find(|(n, _)| n == name)?;
        Some(match bytes {
            Some(b) => std::str::from_utf8(b).map_err(|e| format!("not UTF-8 ({e})")),
            None => Err("its initializer is not a list of bytes".into()),
        })
    }

    /// `Err` with a message naming the kernel unless the module declares kernel `name` once, with
    /// exactly the parameter sizes `args` (what the launch passes), and holds one signature for it,
    /// equal to `signature` (the host kernel's, [`gpu_std::signature::of`]). `module` names the module
    /// in messages.
    pub fn check(&self, name: &str, args: &[usize], signature: &str, module: &str) -> Result<(), String> {
        let count = self.entries.iter().filter(|(n, _)| n == name).count();
        let Some(params) = self.of(name) else {
            return Err(format!("kernel `{name}` is not in {module}"));
        };
        if count > 1 {
            return Err(format!(
                "{module} declares `.entry {name}` {count} times: it is not a module the driver loads"
            ));
        }
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
        let global = format!("{}{name}", gpu_std::signature::GLOBAL_PREFIX);
        let held = self.signatures.iter().filter(|(n, _)| n == name).count();
        match self.signature(name) {
            None => Err(format!(
                "kernel `{name}` in {module} has no signature (no global `{global}`), so nothing says which \
                 definition its `.entry` was compiled from; the launch is of `{signature}`. Modules built by \
                 gpu-builder from gpu-std kernels have one: rebuild the module"
            )),
            Some(_) if held > 1 => Err(format!("{module} declares the global `{global}` {held} times")),
            Some(Err(why)) => {
                Err(format!("kernel `{name}` in {module}: the global `{global}` is not a signature: {why}"))
            }
            Some(Ok(held)) if held != signature => Err(format!(
                "kernel `{name}` in {module} was compiled from another definition: the module's `.entry {name}` is \
                 `{held}`, but the launch is of `{signature}`. The module was built from another version of the \
                 kernel, from another crate or module, or from a definition whose types differ on the GPU: rebuild \
                 it from the kernel crate that defines this kernel"
            )),
            Some(Ok(_)) => Ok(()),
        }
    }
}

impl PtxEntries {
    /// Whether the module declares an `.entry` named `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.entries.iter().any(|(n, _)| n == name)
    }

    /// [`PtxEntries::check`] for kernel `K`: the parameter sizes of its `Args`, and its signature
    /// ([`gpu_std::signature::of`]).
    pub fn check_kernel<K: Kernel>(&self, module: &str) -> Result<(), String> {
        self.check(K::NAME, &<K::Args<'static> as KernelArgs>::sizes(), &gpu_std::signature::of::<K>(), module)
    }
}

/// One token of PTX text, and the line it starts on.
#[derive(Clone, Copy, Debug)]
struct Token<'a> {
    text: &'a str,
    line: usize,
}

/// The tokens of `ptx`: words (directives, names, numbers: runs of letters, digits, `_`, `$`, `%`, `.`)
/// and single punctuation characters, with whitespace, comments and strings left out.
fn tokens(ptx: &str) -> Result<Vec<Token<'_>>, String> {
    let b = ptx.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.');
    // A backslash at a line's end joins two lines for a C-like preprocessor (before comments are
    // found): refused anywhere, comments included, rather than guessed at.
    if let Some(at) = b.windows(2).position(|w| w == b"\\\n").or_else(|| b.windows(3).position(|w| w == b"\\\r\n")) {
        let line = 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
        return Err(format!("line {line}: a backslash at the end of a line"));
    }
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' => {
                line += 1;
                i += 1;
                continue;
            }
            0 => return Err(format!("line {line}: a NUL byte")),
            b'\\' => return Err(format!("line {line}: a backslash outside a string")),
            // PTX has no other use for `#`: it starts a preprocessor line (`#define`, `#if`, ...).
            b'#' => return Err(format!("line {line}: a preprocessor line (`#...`)")),
            _ if c.is_ascii_whitespace() => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |e| i + e);
            if b[i..end].contains(&0) {
                return Err(format!("line {line}: a NUL byte"));
            }
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let Some(len) = b[i + 2..].windows(2).position(|w| w == b"*/") else {
                return Err(format!("line {line}: a comment `/*` that does not end"));
            };
            let body = &b[i..i + 2 + len + 2];
            if body.contains(&0) {
                return Err(format!("line {line}: a NUL byte"));
            }
            line += body.iter().filter(|&&c| c == b'\n').count();
            i += body.len();
        } else if c == b'"' {
            let mut k = i + 1;
            loop {
                match b.get(k) {
                    None | Some(b'\n') => return Err(format!("line {line}: a string that does not end")),
                    Some(0) => return Err(format!("line {line}: a NUL byte")),
                    Some(b'\\') if b.get(k + 1).is_some_and(|&c| c != b'\n' && c != 0) => k += 2,
                    Some(b'\\') => return Err(format!("line {line}: a string that does not end")),
                    Some(b'"') => break,
                    Some(_) => k += 1,
                }
            }
            i = k + 1;
        } else if word(c) {
            let start = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            out.push(Token { text: &ptx[start..i], line });
        } else {
            let len = ptx[i..].chars().next().map_or(1, char::len_utf8);
            out.push(Token { text: &ptx[i..i + len], line });
            i += len;
        }
    }
    Ok(out)
}

/// The entry whose name is at `at` (after `.entry`): its name and parameter sizes, and the index of the
/// token after its parameter list.
fn entry(tokens: &[Token<'_>], at: usize) -> Result<(Entry, usize), String> {
    let line = tokens.get(at.saturating_sub(1)).map_or(0, |t| t.line);
    let name =
        tokens.get(at).filter(|t| is_name(t.text)).ok_or_else(|| format!("line {line}: `.entry` without a name"))?;
    if tokens.get(at + 1).is_none_or(|t| t.text != "(") {
        return Ok(((name.text.to_string(), Vec::new()), at + 1));
    }
    let mut params = Vec::new();
    let mut decl: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    let mut k = at + 2;
    loop {
        let Some(t) = tokens.get(k) else {
            return Err(format!("line {line}: the parameter list of `.entry {}` does not end", name.text));
        };
        match t.text {
            "(" => depth += 1,
            ")" if depth == 0 => break,
            ")" => depth -= 1,
            "," if depth == 0 => {
                params.push(param_size(&decl));
                decl.clear();
                k += 1;
                continue;
            }
            _ => {}
        }
        decl.push(t.text);
        k += 1;
    }
    if !decl.is_empty() {
        params.push(param_size(&decl));
    }
    Ok(((name.text.to_string(), params), k + 1))
}

/// A top-level variable declaration after `.global` / `.const` at `at`: its name and, if its
/// initializer is a list of bytes (`.b8 name[N] = {1, 2, ...}`), those bytes; and the index of the
/// token after its `;`.
fn global(tokens: &[Token<'_>], at: usize) -> (Option<SignatureGlobal>, usize) {
    let end = tokens[at..].iter().position(|t| t.text == ";").map_or(tokens.len(), |e| at + e);
    let decl: Vec<&str> = tokens[at..end].iter().map(|t| t.text).collect();
    let name_at = decl.iter().position(|t| matches!(*t, "[" | "=")).unwrap_or(decl.len());
    let Some(name) = name_at.checked_sub(1).map(|k| decl[k]).filter(|n| is_name(n)) else {
        return (None, end + 1);
    };
    let bytes = (|| {
        let rest = &decl[name_at..];
        let (count, rest) = match rest {
            ["[", n, "]", rest @ ..] => (Some(number(n)?), rest),
            ["[", "]", rest @ ..] => (None, rest),
            _ => (None, rest),
        };
        let ["=", "{", list @ .., "}"] = rest else { return None };
        if !decl[..name_at].contains(&".b8") && !decl[..name_at].contains(&".u8") {
            return None;
        }
        let mut bytes = Vec::new();
        for (k, t) in list.iter().enumerate() {
            if k % 2 == 1 {
                if *t != "," {
                    return None;
                }
                continue;
            }
            bytes.push(u8::try_from(number(t)?).ok()?);
        }
        (count.is_none_or(|c| c == bytes.len() as u64)).then_some(bytes)
    })();
    (Some((name.to_string(), bytes)), end + 1)
}

/// A PTX name: a letter, `_`, `$` or `%` first, then letters, digits, `_` and `$`.
fn is_name(t: &str) -> bool {
    let mut chars = t.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || matches!(c, '_' | '$' | '%'))
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '$'))
}

/// A decimal or `0x` hexadecimal integer.
fn number(t: &str) -> Option<u64> {
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// Bytes of one `.param` declaration's tokens: `.param .u32 k_param_0`,
/// `.param .align 8 .b8 k_param_1 [ 16 ]`, `.param .u64 .ptr .global .align 4 k_param_2`.
fn param_size(decl: &[&str]) -> Option<usize> {
    if decl.first() != Some(&".param") {
        return None;
    }
    let elem = decl.iter().rev().find_map(|w| type_bytes(w))?;
    match decl {
        [.., "[", count, "]"] => number(count).and_then(|c| usize::try_from(c).ok()).and_then(|c| c.checked_mul(elem)),
        [.., name] if is_name(name) => Some(elem),
        _ => None,
    }
}

fn type_bytes(ty: &str) -> Option<usize> {
    let ty = ty.strip_prefix('.')?;
    let bits: usize = ty.get(1..)?.parse().ok()?;
    (matches!(ty.as_bytes()[0], b'u' | b's' | b'b' | b'f') && bits.is_multiple_of(8) && bits > 0).then_some(bits / 8)
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
.visible .entry ptrs(.param .u64 .ptr .global .align 4 ptrs_param_0) { ret; }
";

    /// `text` as the global LLVM writes for a signature of kernel `name`.
    fn signature_global(name: &str, text: &str) -> String {
        let bytes: Vec<String> = text.bytes().map(|b| b.to_string()).collect();
        format!(
            ".visible .global .align 1 .b8 {}{name}[{}] = {{{}}};\n",
            gpu_std::signature::GLOBAL_PREFIX,
            text.len(),
            bytes.join(", ")
        )
    }

    #[test]
    fn entries_and_parameter_sizes_are_read_from_the_module() {
        let p = PtxEntries::parse(MODULE).unwrap();
        assert_eq!(p.of("saxpy"), Some(&[Some(4), Some(16), Some(16)][..]));
        assert_eq!(p.of("nothing"), Some(&[][..]));
        assert_eq!(p.of("flags"), Some(&[Some(8), Some(1)][..]));
        assert_eq!(p.of("ptrs"), Some(&[Some(8)][..]));
        assert_eq!(p.of("missing"), None);
        assert_eq!(p.kernels().collect::<Vec<_>>(), ["saxpy", "nothing", "flags", "ptrs"]);
    }

    #[test]
    fn a_launch_must_match_the_declared_parameters_and_the_signature() {
        let sig = "gpu-std kernel 1: k::saxpy(f32, Global<f32>, GlobalMut<f32>)";
        let p = PtxEntries::parse(&format!("{MODULE}{}", signature_global("saxpy", sig))).unwrap();
        assert_eq!(p.signature("saxpy"), Some(Ok(sig)));
        assert!(p.check("saxpy", &[4, 16, 16], sig, "m").is_ok());
        let short = p.check("saxpy", &[4], sig, "m").unwrap_err();
        assert!(short.contains("kernel `saxpy`") && short.contains("takes 3 parameters"), "{short}");
        assert!(p.check("saxpy", &[8, 16, 16], sig, "m").is_err());
        assert!(p.check("missing", &[], sig, "m").unwrap_err().contains("not in m"));
        // The same sizes, another element type: the signature tells them apart.
        let other = "gpu-std kernel 1: k::saxpy(f32, Global<f32>, GlobalMut<u64>)";
        let e = p.check("saxpy", &[4, 16, 16], other, "m").unwrap_err();
        assert!(e.contains("compiled from another definition") && e.contains(sig) && e.contains(other), "{e}");
        // No signature at all.
        let e = p.check("flags", &[8, 1], "gpu-std kernel 1: k::flags(u64, u8)", "m").unwrap_err();
        assert!(e.contains("has no signature (no global `__gpu_std_signature_flags`)"), "{e}");
    }

    #[test]
    fn declarations_in_comments_and_strings_are_not_read() {
        // A one-`u32` declaration in a comment above the real three-parameter entry: the launch of a
        // one-`u32` kernel must be refused (the driver would read three parameter pointers).
        let sig = "gpu-std kernel 1: k::k(u32)";
        let ptx = format!(
            ".version 8.5\n.target sm_90\n.address_size 64\n.file 1 \"/src/.entry k(.param .u32 x).rs\"\n\
             // .visible .entry k(.param .u32 k_param_0)\n\
             /* .visible .entry k(.param .u32 k_param_0)\n{}*/\n\
             .visible .entry k(\n\t.param .u64 k_param_0, // .param .u32 fake\n\t.param .u64 k_param_1,\n\t.param .u64 k_param_2\n)\n{{\n\tret;\n}}\n",
            signature_global("k", sig)
        );
        let p = PtxEntries::parse(&ptx).unwrap();
        assert_eq!(p.of("k"), Some(&[Some(8), Some(8), Some(8)][..]));
        assert_eq!(p.kernels().count(), 1);
        assert_eq!(p.signature("k"), None, "the commented-out signature is not one");
        let e = p.check("k", &[4], sig, "m").unwrap_err();
        assert!(e.contains("takes 3 parameters of [8, 8, 8] bytes"), "{e}");
        // Declarations inside a body are not top-level ones either.
        let p = PtxEntries::parse(".visible .entry a()\n{\n\t.reg .b32 %r<2>;\n}\n").unwrap();
        assert_eq!(p.kernels().collect::<Vec<_>>(), ["a"]);
    }

    #[test]
    fn what_the_reader_does_not_follow_is_refused() {
        for (text, why) in [
            ("#define k other\n.visible .entry k() {}\n", "preprocessor"),
            ("  #if 0\n.visible .entry k() {}\n#endif\n", "preprocessor"),
            ("// a comment \\\n.visible .entry k() {}\n", "backslash"),
            (".visible .entry k() {}\n\\\n", "backslash"),
            ("/* a comment *\\\n/ .visible .entry k() {} */\n", "backslash"),
            ("/* unterminated\n.visible .entry k() {}\n", "does not end"),
            (".visible .entry k() {} /* */ #define k j\n", "preprocessor"),
            (".file 1 \"unterminated\n", "does not end"),
            (".visible .entry k() {}\0.visible .entry j() {}\n", "NUL"),
            (".visible .entry k() }\n", "without"),
        ] {
            let e = PtxEntries::parse(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_kernel_or_signature_declared_twice_is_refused() {
        let sig = "gpu-std kernel 1: k::k()";
        let twice = format!(".visible .entry k() {{}}\n.visible .entry k() {{}}\n{}", signature_global("k", sig));
        let e = PtxEntries::parse(&twice).unwrap().check("k", &[], sig, "m").unwrap_err();
        assert!(e.contains("declares `.entry k` 2 times"), "{e}");
        let two_sigs = format!(".visible .entry k() {{}}\n{0}{0}", signature_global("k", sig));
        let e = PtxEntries::parse(&two_sigs).unwrap().check("k", &[], sig, "m").unwrap_err();
        assert!(e.contains("declares the global `__gpu_std_signature_k` 2 times"), "{e}");
    }

    #[test]
    fn a_signature_global_must_be_bytes() {
        let ptx = ".visible .entry k() {}\n.visible .global .align 4 .u32 __gpu_std_signature_k = 5;\n\
                   .visible .entry j() {}\n.visible .global .align 1 .b8 __gpu_std_signature_j[3] = {1, 2};\n";
        let p = PtxEntries::parse(ptx).unwrap();
        assert!(p.check("k", &[], "s", "m").unwrap_err().contains("is not a signature"));
        assert!(p.check("j", &[], "s", "m").unwrap_err().contains("is not a signature"));
        let hex = ".visible .entry h() {}\n.visible .global .align 1 .b8 __gpu_std_signature_h[2] = {0x68, 105};\n";
        assert_eq!(PtxEntries::parse(hex).unwrap().signature("h"), Some(Ok("hi")));
    }
}
