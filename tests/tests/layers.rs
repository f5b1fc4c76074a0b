//! The workspace's layers, read from its source.
//!
//! Two rules, for every crate of the workspace:
//! - **between crates**, every path dependency (normal, build and dev) points down the crate
//!   layers of [`CRATE_LAYERS`]: nothing of a library names the chapter, the runner or xtask;
//! - **inside a crate**, no circle of files: every path a file of `src/` names in code
//!   (`crate::…`, `$crate::…`, `super::…`, `self::…` and its own `mod` children, comments and
//!   `#[cfg(test)]` modules left out) is resolved to the file that defines it (following `use`
//!   re-exports), and the arrows between files form no cycle.
//!
//! gpu-std has floors, checked here too: the vocabulary (scopes, spaces, accesses, sites, `Dim3`,
//! ...), then the backend (the PTX layer, or the emulator below its launch API), then the views
//! and primitives, then the kernels (`Kernel`, signatures, launch arguments), then the emulator's
//! launch API, then the crate root. The emulator (`gpu-std/src/emu`) has its own floors inside:
//! settings and reports, then the memory model, then the execution engine, then the primitives,
//! then the launch API.
//!
//! A new circle makes `cargo xtask test` fail with the files of the circle and the names that close
//! it; break it by moving what both sides need into a file below both.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates bottom up; a crate may depend (by path) only on crates of a lower layer.
const CRATE_LAYERS: &[(&str, u32)] = &[
    ("find-cuda-helper", 0),
    ("tests/stateful-macro", 0),
    ("gpu-std", 1),
    ("gpu-builder", 1),
    ("gpu-host", 2),
    ("gpu-kernels", 2),
    ("gpu-algos-kernels", 2),
    ("tests/user-kernels", 2),
    ("tests/probes", 2),
    ("tests/mismatch-kernels", 2),
    ("tests/corpus", 3),
    ("gpu-algos", 3),
    ("host", 4),
    ("tests", 5),
    ("xtask", 6),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// The workspace's members, as the root `Cargo.toml` lists them.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("the root Cargo.toml");
    let line = manifest.lines().find(|l| l.trim_start().starts_with("members")).expect("a members line");
    line.split('"').skip(1).step_by(2).map(String::from).collect()
}

/// One crate's source: its files (relative to `src/`) and the arrows between them.
struct Crate {
    src: PathBuf,
    /// file → (file it names → the first path that names it)
    arrows: BTreeMap<String, BTreeMap<String, String>>,
}

/// Every `.rs` file below `dir`, relative to `base`.
fn files(base: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            files(base, &p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The module path of a file (`model/clock.rs` → `["model", "clock"]`; `model/mod.rs` →
/// `["model"]`; `lib.rs` → `[]`).
fn module_of(file: &str) -> Vec<String> {
    if file == "lib.rs" || file == "main.rs" {
        return Vec::new();
    }
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The code of a file without comments (string literals are kept: none of ours holds a path),
/// and without the items under `#[cfg(test)]` (a test module may name what it tests): from that
/// attribute to the line where the braces of the item it marks balance again.
fn code(text: &str) -> String {
    let mut out = String::new();
    // Inside a `#[cfg(test)]` item: the depth of its braces, once its first brace is seen.
    let mut in_tests: Option<Option<i32>> = None;
    let mut in_block_comment = false;
    for line in text.lines() {
        let t = line.trim_start();
        if in_tests.is_none() && t.starts_with("#[cfg(test)]") {
            in_tests = Some(None);
        }
        if let Some(depth) = in_tests {
            let bare = line.find("//").map_or(line, |i| &line[..i]);
            let opens = bare.matches('{').count() as i32;
            let closes = bare.matches('}').count() as i32;
            let d = match depth {
                None if opens > 0 => Some(opens - closes),
                None if bare.trim_end().ends_with(';') && !t.starts_with("#[") => Some(0),
                None => None,
                Some(d) => Some(d + opens - closes),
            };
            in_tests = if d.is_some_and(|d| d <= 0) { None } else { Some(d) };
            out.push('\n');
            continue;
        }
        if in_block_comment {
            if let Some(i) = line.find("*/") {
                in_block_comment = false;
                out.push_str(&line[i + 2..]);
            }
            out.push('\n');
            continue;
        }
        let mut line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        if let Some(i) = line.find("/*") {
            if line[i..].find("*/").is_none() {
                in_block_comment = true;
            }
            line = &line[..i];
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Modules a file declares from files (`mod clock;`, `pub(crate) mod clock;`).
fn children(code: &str) -> Vec<String> {
    code.lines()
        .map(str::trim)
        .filter_map(|l| {
            let l = l.strip_prefix("pub(crate) ").or_else(|| l.strip_prefix("pub(super) ")).unwrap_or(l);
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.strip_prefix("mod ")?.strip_suffix(';').map(|m| m.trim().to_string())
        })
        .collect()
}

/// Paths (from the crate root) a file names, each with the text that names it.
fn named_paths(file: &str, text: &str) -> Vec<(Vec<String>, String)> {
    let module = module_of(file);
    let code = code(text);
    let bytes = code.as_bytes();
    let kids = children(&code);
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !ident(bytes[i - 1]);
        let start_of_path = i;
        let rest = &bytes[i..];
        let (mut base, skip) = if !starts_word {
            i += 1;
            continue;
        } else if rest.starts_with(b"crate::") {
            (Vec::new(), "crate::".len())
        } else if rest.starts_with(b"self::") {
            (module.clone(), "self::".len())
        } else if rest.starts_with(b"super::") {
            let mut m = module.clone();
            let mut k = 0;
            while bytes[i + k..].starts_with(b"super::") {
                m.pop();
                k += "super::".len();
            }
            (m, k)
        } else if let Some(c) = kids.iter().find(|c| rest.starts_with(format!("{c}::").as_bytes())) {
            let mut m = module.clone();
            m.push(c.clone());
            (m, c.len() + 2)
        } else {
            i += 1;
            continue;
        };
        i += skip;
        // Segments until something that is not `ident::`; a `{a, b::c}` group names each path.
        loop {
            if bytes.get(i) == Some(&b'{') {
                let mut depth = 0;
                let mut end = i;
                while end < bytes.len() {
                    match bytes[end] {
                        b'{' => depth += 1,
                        b'}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
                let inner = &code[i + 1..end.min(code.len())];
                for name in split_top(inner) {
                    let mut p = base.clone();
                    let name = name.split(" as ").next().unwrap_or("");
                    p.extend(
                        name.split("::")
                            .map(|s| s.trim().trim_matches(|c: char| c == '{' || c == '}').to_string())
                            .filter(|s| !s.is_empty() && s != "self" && s != "*"),
                    );
                    out.push((p, code[start_of_path..(end + 1).min(code.len())].to_string()));
                }
                if split_top(inner).iter().any(|n| n.trim() == "self") {
                    out.push((base.clone(), code[start_of_path..i].to_string()));
                }
                i = end;
                break;
            }
            let seg = i;
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            if i > seg {
                base.push(code[seg..i].to_string());
            }
            if bytes[i..].starts_with(b"::") {
                i += 2;
                continue;
            }
            out.push((base.clone(), code[start_of_path..i].to_string()));
            break;
        }
    }
    out
}

/// The parts of a `{…}` group's inside, split at its top-level commas.
fn split_top(inner: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut from) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[from..k]);
                from = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[from..]);
    parts
}

impl Crate {
    fn read(dir: &Path) -> Crate {
        let src = dir.join("src");
        let mut all = Vec::new();
        files(&src, &src, &mut all);
        all.sort();
        let mut krate = Crate { src, arrows: BTreeMap::new() };
        let texts: BTreeMap<String, String> = all
            .iter()
            .map(|f| (f.clone(), code(&std::fs::read_to_string(krate.src.join(f)).expect("a source file"))))
            .collect();
        for f in &all {
            let text = std::fs::read_to_string(krate.src.join(f)).expect("a source file");
            let mut to = BTreeMap::new();
            for (p, how) in named_paths(f, &text) {
                if let Some(t) = krate.defining_file(&p, &texts, 0)
                    && &t != f
                {
                    to.entry(t).or_insert(how);
                }
            }
            krate.arrows.insert(f.clone(), to);
        }
        krate
    }

    /// The file of the longest prefix of `path` that is a module, and how many segments it took.
    fn module_file(&self, path: &[String]) -> Option<(String, usize)> {
        let mut best = None;
        for k in 0..=path.len() {
            let dir = self.src.join(path[..k].join("/"));
            let cand = if k == 0 {
                ["lib.rs", "main.rs"].into_iter().find(|r| self.src.join(r).is_file()).map(String::from)
            } else if dir.with_extension("rs").is_file() {
                Some(format!("{}.rs", path[..k].join("/")))
            } else if dir.join("mod.rs").is_file() {
                Some(format!("{}/mod.rs", path[..k].join("/")))
            } else {
                None
            };
            match cand {
                Some(c) => best = Some((c, k)),
                None => break,
            }
        }
        best
    }

    /// The file that defines what `path` names: the module file of its longest module prefix, or,
    /// where that file only re-exports the next segment (`pub use a::b::Name;`), the file that
    /// defines it there.
    fn defining_file(&self, path: &[String], texts: &BTreeMap<String, String>, depth: u32) -> Option<String> {
        let (file, k) = self.module_file(path)?;
        let (Some(name), true) = (path.get(k), depth < 8) else { return Some(file) };
        let text = texts.get(&file)?;
        match reexport(&file, text, name) {
            Some(target) => self.defining_file(&target, texts, depth + 1).or(Some(file)),
            None => Some(file),
        }
    }
}

/// Where a file's `use` of `name` points (`pub use clock::Clock;` in `model/mod.rs` gives
/// `["model", "clock", "Clock"]`), if the file brings `name` in by a `use`.
fn reexport(file: &str, code: &str, name: &str) -> Option<Vec<String>> {
    let module = module_of(file);
    let kids = children(code);
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before_ok = at == 0 || !ident(rest.as_bytes()[at - 1]);
        let stmt_end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        let stmt = &rest[at + 4..stmt_end];
        rest = &rest[stmt_end.min(rest.len() - 1) + 1..];
        if !before_ok {
            continue;
        }
        for leaf in leaves(stmt.trim()) {
            let (path, alias) = match leaf.split_once(" as ") {
                Some((p, a)) => (p.trim().to_string(), a.trim().to_string()),
                None => (leaf.clone(), leaf.rsplit("::").next().unwrap_or("").trim().to_string()),
            };
            if alias != name {
                continue;
            }
            let segs: Vec<String> = path.split("::").map(|s| s.trim().to_string()).collect();
            let first = segs.first()?.as_str();
            let mut base = match first {
                "crate" => Vec::new(),
                "self" => module.clone(),
                "super" => {
                    let mut m = module.clone();
                    for s in segs.iter().take_while(|s| *s == "super") {
                        let _ = s;
                        m.pop();
                    }
                    m
                }
                c if kids.iter().any(|k| k == c) => {
                    let mut m = module.clone();
                    m.push(c.to_string());
                    m
                }
                _ => return None,
            };
            let skip = match first {
                "super" => segs.iter().take_while(|s| *s == "super").count(),
                c if kids.iter().any(|k| k == c) => 1,
                _ => 1,
            };
            base.extend(segs.into_iter().skip(skip));
            return Some(base);
        }
    }
    None
}

/// The full paths a `use` tree names (`a::{b, c::{d, e as f}}` → `a::b`, `a::c::d`, `a::c::e as f`).
fn leaves(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    match tree.find('{') {
        None => vec![tree.to_string()],
        Some(open) => {
            let prefix = tree[..open].trim();
            let Some(close) = tree.rfind('}').filter(|&c| c > open) else { return Vec::new() };
            let inner = &tree[open + 1..close];
            split_top(inner)
                .into_iter()
                .flat_map(leaves)
                .filter(|l| !l.is_empty() && l != "self" && l != "*")
                .map(|l| format!("{prefix}{l}"))
                .collect()
        }
    }
}

/// Strongly connected components of more than one file (Tarjan).
fn circles(g: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct S<'a> {
        g: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut S<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in s.g.get(v).into_iter().flat_map(|m| m.keys()) {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut c = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                c.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if c.len() > 1 {
                c.sort();
                s.out.push(c);
            }
        }
    }
    let mut s = S { g, index: BTreeMap::new(), low: BTreeMap::new(), stack: vec![], on: BTreeSet::new(), out: vec![] };
    for v in g.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// A circle told as its arrows, each with the name that draws it.
fn describe(krate: &str, c: &[String], g: &BTreeMap<String, BTreeMap<String, String>>) -> String {
    let mut s = format!("circle of {} files in {krate}/src:", c.len());
    for f in c {
        for (t, how) in &g[f] {
            if c.contains(t) {
                s.push_str(&format!("\n  {f} -> {t}  ({})", how.split_whitespace().collect::<Vec<_>>().join(" ")));
            }
        }
    }
    s
}

#[test]
fn every_member_has_a_crate_layer() {
    let known: BTreeSet<&str> = CRATE_LAYERS.iter().map(|(c, _)| *c).collect();
    for m in members() {
        assert!(known.contains(m.as_str()), "workspace member `{m}` has no layer in tests/tests/layers.rs");
    }
}

#[test]
fn no_crate_depends_on_a_crate_above_it() {
    let layer: BTreeMap<&str, u32> = CRATE_LAYERS.iter().copied().collect();
    let mut up = Vec::new();
    let mut seen = 0;
    for m in members() {
        let dir = root().join(&m);
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a member's Cargo.toml");
        for line in manifest.lines() {
            let Some(at) = line.find("path = \"") else { continue };
            let rel = &line[at + 8..];
            let rel = &rel[..rel.find('"').unwrap()];
            let target = dir.join(rel).canonicalize().expect("a path dependency exists");
            let Ok(t) = target.strip_prefix(root().canonicalize().unwrap()) else { continue };
            let t = t.to_string_lossy().replace('\\', "/");
            let Some(&lt) = layer.get(t.as_str()) else { continue };
            seen += 1;
            if lt >= layer[m.as_str()] {
                up.push(format!("{m} (layer {}) depends on {t} (layer {lt})", layer[m.as_str()]));
            }
        }
    }
    println!("{seen} path dependencies between members, {} not downward", up.len());
    assert!(seen > 20, "the reading found only {seen} path dependencies");
    assert!(up.is_empty(), "dependencies that do not point down the crate layers:\n{}", up.join("\n"));
}

#[test]
fn no_circle_of_files_in_any_crate() {
    let mut found = Vec::new();
    let mut total = (0, 0);
    for m in members() {
        let krate = Crate::read(&root().join(&m));
        total.0 += krate.arrows.len();
        total.1 += krate.arrows.values().map(BTreeMap::len).sum::<usize>();
        for c in circles(&krate.arrows) {
            found.push(describe(&m, &c, &krate.arrows));
        }
    }
    println!("{} files, {} arrows between files of one crate, {} circles", total.0, total.1, found.len());
    assert!(total.1 > 300, "the reading found only {} arrows", total.1);
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The emulator's floor of a file of `src/emu` (see the module docs).
fn emu_layer(file: &str) -> u32 {
    match file.split('/').nth(1).unwrap_or("mod.rs") {
        "config.rs" | "report" => 0,
        "model" => 1,
        "engine" => 2,
        "prims" => 3,
        "mod.rs" | "buffer.rs" | "mutate.rs" => 4,
        other => panic!(
            "`src/{file}` is in no floor of the emulator (`{other}`): add it to tests/tests/layers.rs and docs/emulator.md"
        ),
    }
}

#[test]
fn no_file_of_the_emulator_names_a_floor_above_its_own() {
    let krate = Crate::read(&root().join("gpu-std"));
    let emu: BTreeMap<&String, &BTreeMap<String, String>> =
        krate.arrows.iter().filter(|(f, _)| f.starts_with("emu/")).collect();
    let mut up = Vec::new();
    for (from, tos) in &emu {
        for (to, how) in tos.iter().filter(|(t, _)| t.starts_with("emu/")) {
            if emu_layer(to) > emu_layer(from) {
                up.push(format!("{from} (floor {}) names {to} (floor {}): {how}", emu_layer(from), emu_layer(to)));
            }
        }
    }
    assert!(up.is_empty(), "arrows up the emulator's floors:\n{}", up.join("\n"));
    // The reading finds what it should: the engine names the model, the primitives the engine.
    assert!(emu[&"emu/engine/launch.rs".to_string()].keys().any(|t| t.starts_with("emu/model/")));
    assert!(emu[&"emu/prims/backend.rs".to_string()].keys().any(|t| t.starts_with("emu/engine/")));
}

/// gpu-std's floor of a file of `src` (see the crate root, `gpu-std/src/lib.rs`): the vocabulary,
/// the backend (the PTX layer on the GPU, the emulator below its launch API on the host), the views
/// and primitives, the kernels, the emulator's launch API, the root.
fn std_floor(file: &str) -> u32 {
    match file.split('/').next().unwrap_or(file) {
        "vocab" | "pod.rs" | "spin.rs" | "__private.rs" => 0,
        "ptx.rs" | "ptx" => 1,
        "emu" if emu_layer(file) < 4 => 1,
        "atomic.rs" | "block.rs" | "fence.rs" | "grid.rs" | "memory.rs" | "memory" | "shared.rs" | "thread.rs"
        | "vector.rs" | "warp.rs" => 2,
        "args.rs" | "kernel.rs" | "kernel_crate.rs" | "launch_bounds.rs" | "params.rs" | "signature.rs" => 3,
        "emu" => 4,
        "lib.rs" => 5,
        other => panic!("`gpu-std/src/{file}` is in no floor of gpu-std (`{other}`): add it to tests/tests/layers.rs"),
    }
}

#[test]
fn no_file_of_gpu_std_names_a_floor_above_its_own() {
    let krate = Crate::read(&root().join("gpu-std"));
    let mut up = Vec::new();
    for (from, tos) in &krate.arrows {
        for (to, how) in tos {
            if std_floor(to) > std_floor(from) {
                up.push(format!("{from} (floor {}) names {to} (floor {}): {how}", std_floor(from), std_floor(to)));
            }
        }
    }
    assert!(up.is_empty(), "arrows up gpu-std's floors:\n{}", up.join("\n"));
    // The reading finds what it should: the PTX layer speaks the vocabulary, the views call the
    // backend, the root names every floor.
    let names = |from: &str, to: &str| krate.arrows[from].keys().any(|t| t.starts_with(to));
    assert!(names("ptx.rs", "vocab/") && names("memory.rs", "ptx.rs") && names("lib.rs", "emu/"));
    // The PTX layer names the vocabulary and its own files only.
    let in_ptx = |f: &str| f == "ptx.rs" || f.starts_with("ptx/");
    let ptx: Vec<String> = (krate.arrows.iter().filter(|(f, _)| in_ptx(f)))
        .flat_map(|(f, tos)| tos.keys().filter(|t| std_floor(t) != 0 && !in_ptx(t)).map(move |t| format!("{f} -> {t}")))
        .collect();
    assert!(ptx.is_empty(), "the PTX layer names more than the vocabulary: {ptx:?}");
}

#[test]
fn the_reading_resolves_super_groups_and_reexports() {
    let p = named_paths("emu/model/clock.rs", "use super::race::Kind;\nuse super::{predict::Edge, topology};\n");
    let want = [
        vec!["emu", "model", "race", "Kind"],
        vec!["emu", "model", "predict", "Edge"],
        vec!["emu", "model", "topology"],
    ];
    for w in want {
        let w: Vec<String> = w.into_iter().map(String::from).collect();
        assert!(p.iter().any(|(q, _)| *q == w), "{w:?} not in {p:?}");
    }
    // Only the item under `#[cfg(test)]` is left out, not the rest of the file.
    let p = named_paths("a.rs", "#[cfg(test)]\nmod tests {\n    use crate::b::X;\n}\nuse crate::c::Y;\n");
    assert_eq!(p.iter().map(|(q, _)| q.join("::")).collect::<Vec<_>>(), ["c::Y"]);
    let p =
        named_paths("emu/model/mod.rs", "mod clock;\nuse clock::Clock; // crate::x\nfn f() { let x = clock::y; }\n");
    assert!(p.iter().all(|(q, _)| q[..3] == ["emu", "model", "clock"]), "{p:?}");
    assert_eq!(
        reexport("memory.rs", "pub use crate::atomic::{Scope, space::{Global as G}};\n", "G"),
        Some(vec!["atomic".into(), "space".into(), "Global".into()])
    );
    assert_eq!(
        reexport("emu/mod.rs", "mod model;\npub use model::Model;\n", "Model"),
        Some(vec!["emu".into(), "model".into(), "Model".into()])
    );
    // A real re-export is followed: gpu-std's root re-exports `Global` from the file that defines it.
    let krate = Crate::read(&root().join("gpu-std"));
    let texts: BTreeMap<String, String> =
        krate.arrows.keys().map(|f| (f.clone(), code(&std::fs::read_to_string(krate.src.join(f)).unwrap()))).collect();
    let at = krate.defining_file(&["Global".to_string()], &texts, 0).expect("a file");
    assert_ne!(at, "lib.rs", "`crate::Global` resolved to the root, not to where it is defined");
}
