//! Reading a PTX module's text: its kernels, its target, the symbols it declares.

use crate::error::BuildError;

/// Accepts PTX ISA target names: `sm_` and two or three digits, optionally followed by `a` or `f`
/// (`sm_70`, `sm_80`, `sm_90`, `sm_90a`, `sm_100f`).
pub fn validate_arch(arch: &str) -> Result<(), BuildError> {
    let ok = arch.strip_prefix("sm_").is_some_and(|rest| {
        let digits = rest.trim_end_matches(['a', 'f']);
        (2..=3).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) && rest.len() - digits.len() <= 1
    });
    if ok { Ok(()) } else { Err(BuildError::InvalidArch(arch.to_string())) }
}

/// Names of the `.entry` functions (kernels) of a PTX module, in order.
pub fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            words.by_ref().find(|w| *w == ".entry")?;
            let name = words.next()?.split('(').next()?.to_string();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The architecture of the module's `.target` directive, e.g. `sm_90`.
pub fn target(ptx: &str) -> Option<String> {
    ptx.lines().find_map(|line| {
        let rest = line.trim_start().strip_prefix(".target")?;
        rest.split([',', ' ', '\t']).find(|w| !w.is_empty()).map(str::to_string)
    })
}

/// Names of the functions a PTX module declares `.extern .func` (used but not defined).
pub fn undefined_functions(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|line| {
            let mut rest = line.strip_prefix(".extern")?.trim_start().strip_prefix(".func")?.trim_start();
            if rest.starts_with('(') {
                // Skip the return value parameter list.
                rest = rest[rest.find(')')? + 1..].trim_start();
            }
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || "_$.".contains(*c)).collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// Whether a top-level PTX directive line (an `.entry`, `.func` or variable declaration) names
/// `symbol`.
pub fn declares(ptx: &str, symbol: &str) -> bool {
    ptx.lines()
        .filter(|line| line.starts_with('.'))
        .any(|line| line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '$')).any(|w| w == symbol))
}

/// The comment `gpu_std::launch_bounds::marker` puts at the start of a kernel with launch bounds.
const LAUNCH_BOUNDS_MARKER: &str = "// gpu-std launch-bounds ";

/// Turns the launch-bounds comments of each `.entry` into its performance directives: an entry whose
/// body has the comment `// gpu-std launch-bounds MAX MIN` gets `.maxntid MAX, 1, 1` (and, when `MIN`
/// is not 0, `.minnctapersm MIN`) between its parameter list and its body, where the assembler reads
/// them. An entry with two different bounds, or with bounds and directives of its own, is an error.
pub fn apply_launch_bounds(ptx: &str) -> Result<String, String> {
    let lines: Vec<&str> = ptx.lines().collect();
    let mut out = String::with_capacity(ptx.len() + 256);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let is_entry = line.split_whitespace().any(|w| w == ".entry" || w.starts_with(".entry"));
        if !is_entry {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        }
        let name = entries(line).into_iter().next().unwrap_or_default();
        // The entry's lines: its header to the `{` of the body, the body to the `}` at the line start.
        let open = (i..lines.len()).find(|&k| lines[k].trim_start().starts_with('{'));
        let close = open.and_then(|o| (o..lines.len()).find(|&k| lines[k].starts_with('}')));
        let (Some(open), Some(close)) = (open, close) else {
            return Err(format!("PTX entry `{name}`: no body found"));
        };
        let mut bounds: Option<(u32, u32)> = None;
        for body_line in &lines[open..=close] {
            let Some(rest) = body_line.trim_start().strip_prefix(LAUNCH_BOUNDS_MARKER) else { continue };
            let nums: Vec<u32> = rest.split_whitespace().filter_map(|w| w.parse().ok()).collect();
            let [max, min] = nums[..] else {
                return Err(format!("PTX entry `{name}`: malformed launch bounds comment `{}`", body_line.trim()));
            };
            match bounds {
                Some(b) if b != (max, min) => {
                    return Err(format!("PTX entry `{name}`: two launch bounds, {b:?} and {:?}", (max, min)));
                }
                _ => bounds = Some((max, min)),
            }
        }
        let header = &lines[i..open];
        if bounds.is_some() && header.iter().any(|l| l.contains(".maxntid") || l.contains(".minnctapersm")) {
            return Err(format!("PTX entry `{name}`: launch bounds given twice (directives and `#[launch_bounds]`)"));
        }
        for l in header {
            out.push_str(l);
            out.push('\n');
        }
        if let Some((max, min)) = bounds {
            out.push_str(&format!(".maxntid {max}, 1, 1\n"));
            if min > 0 {
                out.push_str(&format!(".minnctapersm {min}\n"));
            }
        }
        for l in &lines[open..=close] {
            out.push_str(l);
            out.push('\n');
        }
        i = close + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "//\n// Generated by LLVM NVPTX Back-End\n//\n\n.version 7.8\n.target sm_90\n.address_size 64\n\n\t// .globl\tprobe\n.visible .entry probe(\n\t.param .align 8 .b8 probe_param_0[16],\n\t.param .u32 probe_param_1\n)\n{\n\tret;\n}\n.entry second (\n)\n{\n}\n";

    #[test]
    fn lists_entries_and_target() {
        assert_eq!(entries(SAMPLE), ["probe", "second"]);
        assert_eq!(target(SAMPLE).as_deref(), Some("sm_90"));
        assert_eq!(target(".target sm_80, debug\n").as_deref(), Some("sm_80"));
        assert_eq!(target("// no target\n"), None);
    }

    #[test]
    fn architecture_names() {
        for ok in ["sm_70", "sm_80", "sm_90", "sm_90a", "sm_100", "sm_100f", "sm_120a"] {
            assert!(validate_arch(ok).is_ok(), "{ok}");
        }
        for bad in ["90", "sm90", "sm_", "sm_9", "sm_90ab", "sm_1000", "compute_90", "sm_9x", "-Cfoo", ""] {
            let err = validate_arch(bad).unwrap_err();
            assert!(err.to_string().starts_with(&format!("`{bad}` is not a GPU architecture name")), "{err}");
        }
    }

    #[test]
    fn finds_undefined_functions() {
        let ptx = ".extern .func  (.param .b32 func_retval0) not_defined_anywhere\n(\n\t.param .b32 p\n)\n;\n\
                   .extern .func __assertfail\n(\n)\n;\n\
                   .extern .shared .align 4 .b8 dyn_smem[];\n\
                   .visible .entry k(\n)\n{\n}\n";
        assert_eq!(undefined_functions(ptx), ["not_defined_anywhere", "__assertfail"]);
    }

    #[test]
    fn finds_declared_symbols_only_in_directives() {
        let ptx = ".version 7.8\n.target sm_90\n\n.visible .entry probe(\n\t.param .u32 probe_param_0\n)\n{\n\tcall helper_x;\n}\n.visible .global .align 4 .u32 COUNTER;\n";
        assert!(declares(ptx, "probe"));
        assert!(declares(ptx, "COUNTER"));
        assert!(!declares(ptx, "probe_param_0"));
        assert!(!declares(ptx, "helper_x"));
        assert!(!declares(ptx, "prob"));
    }

    #[test]
    fn launch_bounds_become_directives() {
        let ptx = ".version 7.8\n.target sm_90\n.visible .entry k(\n\t.param .u32 k_param_0\n)                // @k\n{\n\t// begin inline asm\n\t// gpu-std launch-bounds 512 3\n\t// end inline asm\n\tret;\n}\n.visible .entry plain(\n)\n{\n\tret;\n}\n.visible .entry only_max(\n)\n{\n\t// gpu-std launch-bounds 256 0\n}\n";
        let out = apply_launch_bounds(ptx).unwrap();
        assert!(out.contains(")                // @k\n.maxntid 512, 1, 1\n.minnctapersm 3\n{\n"), "{out}");
        assert!(out.contains(".visible .entry plain(\n)\n{\n"), "{out}");
        assert!(out.contains(".visible .entry only_max(\n)\n.maxntid 256, 1, 1\n{\n"), "{out}");
        assert_eq!(out.matches(".maxntid").count(), 2);
        assert_eq!(entries(&out), ["k", "plain", "only_max"]);
        // A module without bounds comes back line for line.
        assert_eq!(apply_launch_bounds(SAMPLE).unwrap(), SAMPLE);
    }

    #[test]
    fn conflicting_launch_bounds_are_errors() {
        let two = ".entry k(\n)\n{\n// gpu-std launch-bounds 512 3\n// gpu-std launch-bounds 256 3\n}\n";
        assert!(apply_launch_bounds(two).unwrap_err().contains("two launch bounds"));
        let both = ".entry k(\n)\n.maxntid 128, 1, 1\n{\n// gpu-std launch-bounds 512 3\n}\n";
        assert!(apply_launch_bounds(both).unwrap_err().contains("given twice"));
        let bad = ".entry k(\n)\n{\n// gpu-std launch-bounds 512\n}\n";
        assert!(apply_launch_bounds(bad).unwrap_err().contains("malformed"));
    }
}
