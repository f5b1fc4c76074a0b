//! The emulator's layers, read from its source: every path a file of `src/emu` names in code
//! (`crate::emu::…` and `super::…`, comments left out) is resolved to the file that defines it, and
//! the arrows between files are checked against the layers, bottom up:
//!
//! 0. `config.rs`, `report/` — settings and reports, read by all;
//! 1. `model/` — the memory model;
//! 2. `engine/` — the execution engine;
//! 3. `prims/` — the primitives;
//! 4. `mod.rs`, `buffer.rs`, `mutate.rs` — the public launch API (and mutation testing on top of it).
//!
//! No file may name a file of a higher layer (so the model names nothing of the engine or the
//! primitives), and no circle of files that name each other may span two layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn emu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/emu")
}

/// Every `.rs` file below `dir`, relative to the emulator's folder.
fn files(dir: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).expect("the emulator's source folder") {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p.strip_prefix(emu_dir()).unwrap().to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The layer of a file (see the module docs).
fn layer(file: &str) -> u32 {
    match file.split('/').next().unwrap() {
        "config.rs" | "report" => 0,
        "model" => 1,
        "engine" => 2,
        "prims" => 3,
        "mod.rs" | "buffer.rs" | "mutate.rs" => 4,
        other => {
            panic!("`src/emu/{file}` is in no layer (`{other}`): add it to this test's map and to docs/emulator.md")
        }
    }
}

/// The module path of a file (`model/clock.rs` → `["model", "clock"]`; `model/mod.rs` → `["model"]`).
fn module_of(file: &str) -> Vec<String> {
    let mut parts: Vec<String> = file.trim_end_matches(".rs").split('/').map(String::from).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The file that defines the longest prefix of `path` (segments below `emu`) that is a module.
fn file_of(path: &[String]) -> Option<String> {
    let mut best = None;
    for k in 0..=path.len() {
        let dir = emu_dir().join(path[..k].join("/"));
        let cand = if k == 0 {
            Some("mod.rs".to_string())
        } else if dir.with_extension("rs").is_file() {
            Some(format!("{}.rs", path[..k].join("/")))
        } else if dir.join("mod.rs").is_file() {
            Some(format!("{}/mod.rs", path[..k].join("/")))
        } else {
            None
        };
        match cand {
            Some(c) => best = Some(c),
            None => break,
        }
    }
    best
}

/// The code of a file without comments (line comments, doc comments, and `#[cfg(test)]` modules
/// are kept out of the reading: a test module may name what it tests).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut in_tests = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("#[cfg(test)]") {
            in_tests = true;
        }
        if in_tests {
            continue;
        }
        let line = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Paths (below `emu`) a file names: `crate::emu::a::b` and `super::…` (resolved from the file's
/// module), with one level of `{a, b}` groups expanded.
fn named_paths(file: &str, text: &str) -> Vec<Vec<String>> {
    let module = module_of(file);
    let code = code(text);
    let bytes = code.as_bytes();
    // Modules this file declares (`mod clock;`): `clock::…` is a path below the file's module.
    let children: Vec<String> = code
        .lines()
        .filter_map(|l| l.trim().trim_start_matches("pub(crate) ").trim_start_matches("pub ").strip_prefix("mod "))
        .filter_map(|l| l.strip_suffix(';'))
        .map(|l| l.trim().to_string())
        .collect();
    let mut out = Vec::new();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !ident(bytes[i - 1]);
        let rest = &bytes[i..];
        let (mut base, skip) = if starts_word && rest.starts_with(b"crate::emu::") {
            (Vec::new(), "crate::emu::".len())
        } else if starts_word && rest.starts_with(b"super::") {
            let mut m = module.clone();
            let mut k = 0;
            while bytes[i + k..].starts_with(b"super::") {
                if m.is_empty() {
                    // Above the emulator: not its business.
                    m = vec!["<outside>".into()];
                } else {
                    m.pop();
                }
                k += "super::".len();
            }
            (m, k)
        } else if let Some(c) = children.iter().find(|c| starts_word && rest.starts_with(format!("{c}::").as_bytes())) {
            let mut m = module.clone();
            m.push(c.clone());
            (m, c.len() + 2)
        } else {
            i += 1;
            continue;
        };
        i += skip;
        if base.first().is_some_and(|s| s == "<outside>") {
            continue;
        }
        // Segments until something that is not `ident::`; a `{a, b}` group names each of its paths.
        loop {
            if bytes.get(i) == Some(&b'{') {
                let end = bytes[i..].iter().position(|&c| c == b'}').map_or(bytes.len(), |e| i + e);
                for name in code[i + 1..end].split(',') {
                    let mut p = base.clone();
                    p.extend(
                        name.split("::")
                            .map(|s| s.trim().to_string())
                            .filter(|s| !s.is_empty() && s != "self" && s != "*"),
                    );
                    out.push(p);
                }
                out.push(base.clone());
                i = end;
                break;
            }
            let start = i;
            while i < bytes.len() && ident(bytes[i]) {
                i += 1;
            }
            if i > start {
                base.push(code[start..i].to_string());
            }
            if bytes[i..].starts_with(b"::") {
                i += 2;
                continue;
            }
            out.push(base.clone());
            break;
        }
    }
    out
}

/// The arrows between files: `from` names something `to` defines.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut all = Vec::new();
    files(&emu_dir(), &mut all);
    all.sort();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in &all {
        let text = std::fs::read_to_string(emu_dir().join(f)).expect("a source file");
        let to = g.entry(f.clone()).or_default();
        for p in named_paths(f, &text) {
            if let Some(t) = file_of(&p)
                && &t != f
            {
                to.insert(t);
            }
        }
    }
    g
}

/// Strongly connected components of the graph (Tarjan), each a set of files.
fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct S<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
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
        for w in s.g.get(v).into_iter().flatten() {
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

#[test]
fn no_file_names_a_layer_above_its_own() {
    let g = graph();
    let mut up = Vec::new();
    let arrows: usize = g.values().map(BTreeSet::len).sum();
    for (from, tos) in &g {
        for to in tos {
            if layer(to) > layer(from) {
                up.push(format!("{from} (layer {}) names {to} (layer {})", layer(from), layer(to)));
            }
        }
    }
    println!("{} files, {arrows} arrows between them, {} upward", g.len(), up.len());
    assert!(up.is_empty(), "arrows up the layers:\n{}", up.join("\n"));
    // The reading finds what it should: the engine names the model, the primitives the engine.
    assert!(g["engine/launch.rs"].contains("model/mod.rs"), "{:?}", g["engine/launch.rs"]);
    assert!(g["prims/backend.rs"].contains("engine/sched.rs"), "{:?}", g["prims/backend.rs"]);
    assert!(g["model/mod.rs"].contains("model/clock.rs"), "{:?}", g["model/mod.rs"]);
}

#[test]
fn the_model_names_nothing_of_the_engine_or_the_primitives() {
    let g = graph();
    for (from, tos) in g.iter().filter(|(f, _)| f.starts_with("model/")) {
        for to in tos {
            assert!(to.starts_with("model/") || to.starts_with("report/") || to == "config.rs", "{from} names {to}");
        }
    }
}

#[test]
fn no_circle_of_files_spans_two_layers() {
    let g = graph();
    let cs = circles(&g);
    for c in &cs {
        let layers: BTreeSet<u32> = c.iter().map(|f| layer(f)).collect();
        println!("circle of {} files in layer {layers:?}: {}", c.len(), c.join(", "));
        assert_eq!(layers.len(), 1, "a circle spans layers {layers:?}: {}", c.join(", "));
    }
}

#[test]
fn the_reading_resolves_super_and_groups() {
    let p = named_paths("model/clock.rs", "use super::race::Kind;\nuse super::{predict::Edge, topology};\n");
    let files: BTreeSet<String> = p.iter().filter_map(|p| file_of(p)).collect();
    assert!(
        files.contains("model/race.rs") && files.contains("model/predict.rs") && files.contains("model/topology.rs")
    );
    let p = named_paths("model/mod.rs", "mod clock;\nuse clock::Clock;\nfn f() { let x = clock::y; }\n");
    let files: BTreeSet<String> = p.iter().filter_map(|p| file_of(p)).collect();
    assert_eq!(files, BTreeSet::from(["model/clock.rs".to_string()]));
    let p = named_paths("engine/launch.rs", "use crate::emu::model::{Model, Topology}; // crate::emu::prims\n");
    let files: BTreeSet<String> = p.iter().filter_map(|p| file_of(p)).collect();
    assert_eq!(files, BTreeSet::from(["model/mod.rs".to_string()]));
}

#[test]
fn the_emulator_guide_shows_a_tested_trace() {
    let guide = include_str!("../../docs/emulator.md");
    let intro = "A question about the model can be asked without a kernel:\n```rust\n";
    let start = guide.find(intro).expect("docs/emulator.md shows a trace") + intro.len();
    let shown = &guide[start..start + guide[start..].find("```").unwrap()];
    let doc: String = include_str!("../src/emu/model/trace.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| format!("{}\n", l.strip_prefix(' ').unwrap_or(l)))
        .collect();
    assert!(doc.contains(shown), "the trace in docs/emulator.md is not among model/trace.rs's doctests:\n{shown}");
}
