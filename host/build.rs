//! Writes the examples' registry code from its one list: the `pub mod NAME;` lines of
//! `src/examples/mod.rs` between `// registry: every example` and `// end of the registry`. From them
//! it writes `OUT_DIR/examples_registry.rs`, which that file includes: `ALL` (each module's `EXAMPLE`,
//! put in the catalogue's order by `in_catalogue_order`) and the `for_each_example!` macro the tests
//! are generated from. It reads that one file and imports nothing of the crate.

use std::fmt::Write as _;
use std::path::PathBuf;

const REGISTRY: &str = "src/examples/mod.rs";
const BEGIN: &str = "// registry: every example";
const END: &str = "// end of the registry";

fn main() {
    println!("cargo:rerun-if-changed={REGISTRY}");
    let text = std::fs::read_to_string(REGISTRY).unwrap_or_else(|e| panic!("cannot read {REGISTRY}: {e}"));
    let begin = text.find(BEGIN).unwrap_or_else(|| panic!("{REGISTRY}: no `{BEGIN}` line"));
    let end = text[begin..].find(END).unwrap_or_else(|| panic!("{REGISTRY}: no `{END}` line after `{BEGIN}`")) + begin;
    let mut names = Vec::new();
    for line in text[begin..end].lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        let name = line
            .strip_prefix("pub mod ")
            .and_then(|l| l.strip_suffix(';'))
            .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or_else(|| panic!("{REGISTRY}: the registry holds `pub mod NAME;` lines only, not `{line}`"));
        names.push(name);
    }
    assert!(!names.is_empty(), "{REGISTRY}: the registry names no example");

    let mut code = String::from("// Written by host/build.rs from the registry of src/examples/mod.rs.\n\n");
    code += "/// Every example, in the order of the chapter's catalogue (by row, then `primitives`): each\n";
    code += "/// module's `EXAMPLE`, from the registry.\n";
    let _ = writeln!(
        code,
        "pub const ALL: &[Example] = &example::in_catalogue_order([{}]);\n",
        names.iter().map(|n| format!("{n}::EXAMPLE")).collect::<Vec<_>>().join(", ")
    );
    code += "/// Calls the macro `$callback` with the module name of every example, in the registry's order\n";
    code += "/// (`$callback! { atomic_add_f64, atomic_tour, ..., warp_reduce }`), from the registry of\n";
    code += "/// `host/src/examples/mod.rs`: what `tests/tests/examples.rs` makes one test per example from.\n";
    code += "#[macro_export]\nmacro_rules! for_each_example {\n    ($callback:ident) => {\n        $callback! { ";
    code += &names.join(", ");
    code += " }\n    };\n}\n";
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("examples_registry.rs");
    std::fs::write(&out, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
}
