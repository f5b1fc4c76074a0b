//! Docs that cannot drift: every command shown in the Markdown docs runs, every output they show is
//! compared with a run, and every source location and relative link they name exists.
//!
//! The docs are `README.md`, every `*.md` under `docs/`, and `bench/README.md`; a new file there is
//! checked without any change here. The crates' and the template's READMEs have their source
//! locations and links checked too (their commands run from their own directories, in their tests). In them:
//!
//! - A ```` ```sh ```` block is a list of commands (`#` starts a comment, a trailing `\` continues the
//!   line): each is run from the repository root and must exit 0.
//! - A ```` ```console ```` block is commands (`$ ` lines), each followed by the output it prints
//!   (stdout and stderr together). The command must exit 0 and its output must match: a line `…`
//!   stands for any number of lines.
//! - Any other block preceded by `<!-- output-of: COMMAND -->` is output of COMMAND: its lines must
//!   appear, in order and together (`…` again stands for any lines), in what COMMAND prints.
//! - `<!-- gpu-only: REASON -->` before a block: its commands need an NVIDIA GPU; the test prints
//!   `skipped (GPU-only)` with the reason for each, and does not run them.
//! - `<!-- not-run: REASON -->` before a block: for `cargo xtask test` only, which runs this test (CI
//!   runs it); printed as `not run` with the reason. Any other command under it fails the test.
//! - An untagged block (no language, or `text`) whose lines look like commands (`$ `, `cargo `) fails
//!   the test: it must say what it is.
//!
//! Before comparing, times (`0.25 s`, `12 ms`, `1.5µs`) and hexadecimal addresses are normalised, and
//! the host's note about a slow example (`  (spinlock n=4097 took 7.7 s)`) is dropped; nothing else.
//!
//! Commands run as shown, with two exceptions that run the same program without rebuilding it:
//! `cargo xtask run ARGS` is `host run ARGS` (what it runs after building the PTX, which the emulator
//! does not need; xtask's own tests check that mapping), and `cargo run -p host -- ARGS` is `host ARGS`;
//! `host` is the binary of this package. When this package is built with `cuda`, `--device auto` may
//! pick a GPU: outputs of commands without `--device emu` are then not compared (said visibly).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Longest a single documented command may take.
const COMMAND_LIMIT: Duration = Duration::from_secs(600);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("workspace root").to_path_buf()
}

/// The documentation files, relative to the root, in a fixed order.
fn doc_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![PathBuf::from("README.md"), PathBuf::from("bench/README.md")];
    let mut dirs = vec![PathBuf::from("docs")];
    let mut found = Vec::new();
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&d)) else { continue };
        for e in entries.flatten() {
            let rel = d.join(e.file_name());
            if e.path().is_dir() {
                dirs.push(rel);
            } else if rel.extension().is_some_and(|x| x == "md") {
                found.push(rel);
            }
        }
    }
    found.sort();
    files.extend(found);
    files.retain(|f| root.join(f).is_file());
    files
}

/// What a fenced block is for.
#[derive(Debug, Clone, PartialEq)]
enum Mark {
    None,
    GpuOnly(String),
    NotRun(String),
    OutputOf(String),
}

/// The only commands a `not-run` block may hold: the ones that run this test.
const NOT_RUN_ALLOWED: &[&str] = &["cargo xtask test"];

/// A fenced block: where it starts (1-based line of the fence), its info string, its lines, its mark.
#[derive(Debug)]
struct Block {
    file: PathBuf,
    line: usize,
    info: String,
    body: Vec<String>,
    mark: Mark,
}

impl Block {
    fn at(&self) -> String {
        format!("{}:{}", self.file.display(), self.line)
    }
}

fn parse_mark(comment: &str) -> Option<Mark> {
    let c = comment.trim().strip_prefix("<!--")?.strip_suffix("-->")?.trim();
    if let Some(r) = c.strip_prefix("gpu-only:") {
        return Some(Mark::GpuOnly(r.trim().to_string()));
    }
    if let Some(r) = c.strip_prefix("not-run:") {
        return Some(Mark::NotRun(r.trim().to_string()));
    }
    if let Some(r) = c.strip_prefix("output-of:") {
        return Some(Mark::OutputOf(r.trim().to_string()));
    }
    None
}

fn blocks(file: &Path, text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut mark = Mark::None;
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            let indent = line.len() - t.len();
            let mut body = Vec::new();
            for (_, l) in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                body.push(l.get(indent..).unwrap_or(l.trim_start()).to_string());
            }
            out.push(Block { file: file.to_path_buf(), line: i + 1, info: info.trim().to_string(), body, mark });
            mark = Mark::None;
        } else if let Some(m) = parse_mark(t) {
            mark = m;
        } else if !t.is_empty() {
            mark = Mark::None;
        }
    }
    out
}

/// The commands of a `sh` block: comments and empty lines dropped, `\` continuations joined.
fn sh_commands(body: &[String]) -> Vec<String> {
    let mut cmds = Vec::new();
    let mut cur = String::new();
    for l in body {
        let l = l.trim();
        if cur.is_empty() && (l.is_empty() || l.starts_with('#')) {
            continue;
        }
        if let Some(head) = l.strip_suffix('\\') {
            cur.push_str(head.trim_end());
            cur.push(' ');
        } else {
            cur.push_str(l);
            cmds.push(std::mem::take(&mut cur));
        }
    }
    cmds
}

/// The commands of a `console` block, each with the output shown under it.
fn console_commands(body: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for l in body {
        if let Some(cmd) = l.strip_prefix("$ ") {
            out.push((cmd.trim().to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(l.clone());
        }
    }
    out
}

/// The shell command actually run for a documented one (see the module docs), and whether its output
/// is the emulator's whatever the build.
fn translate(cmd: &str) -> (String, bool) {
    let host = env!("CARGO_BIN_EXE_host");
    let emu_only = !cfg!(feature = "cuda") || cmd.contains("--device emu");
    for (prefix, with) in [
        ("cargo xtask run", format!("{host} run")),
        ("cargo run --release -p host --", host.to_string()),
        ("cargo run -p host --", host.to_string()),
        ("host ", format!("{host} ")),
    ] {
        if let Some(rest) = cmd.strip_prefix(prefix)
            && (rest.is_empty() || rest.starts_with(' ') || prefix.ends_with(' '))
        {
            let sep = if prefix.ends_with(' ') { " " } else { "" };
            return (format!("{with}{sep}{rest}"), emu_only);
        }
    }
    (cmd.to_string(), emu_only)
}

/// Runs `cmd` with `sh -c` in the root; returns its exit success and stdout+stderr interleaved.
fn run(root: &Path, cmd: &str) -> (bool, String, Duration) {
    let started = Instant::now();
    let log =
        std::env::temp_dir().join(format!("doc-check-{}-{}.log", std::process::id(), started.elapsed().as_nanos()));
    let file = std::fs::File::create(&log).expect("log file");
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec 2>&1; {cmd}"))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(file)
        .spawn()
        .expect("sh runs");
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break Some(s);
        }
        if started.elapsed() > COMMAND_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let _ = std::fs::remove_file(&log);
    let text = match status {
        Some(_) => text,
        None => format!("{text}\n(killed after {COMMAND_LIMIT:?})"),
    };
    (status.is_some_and(|s| s.success()), text, started.elapsed())
}

/// A line with times and addresses replaced, trailing spaces dropped.
fn normalise(line: &str) -> String {
    let c: Vec<char> = line.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < c.len() {
        let boundary = i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '_' || c[i - 1] == '.');
        // 0x... addresses
        if boundary && c[i] == '0' && c.get(i + 1) == Some(&'x') {
            let mut j = i + 2;
            while j < c.len() && c[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 2 {
                out.push_str("<addr>");
                i = j;
                continue;
            }
        }
        // a number followed by a unit of time
        if boundary && c[i].is_ascii_digit() {
            let mut j = i;
            while j < c.len() && (c[j].is_ascii_digit() || c[j] == '.') {
                j += 1;
            }
            let mut k = j;
            if c.get(k) == Some(&' ') {
                k += 1;
            }
            let unit = ["ms", "µs", "us", "ns", "s"].iter().find_map(|unit| {
                let u: Vec<char> = unit.chars().collect();
                let end = k + u.len();
                let after_ok = c.get(end).is_none_or(|ch| !(ch.is_alphanumeric() || *ch == '-'));
                (c.get(k..end) == Some(&u[..]) && after_ok).then_some(end)
            });
            match unit {
                Some(end) => {
                    out.push_str("<time>");
                    i = end;
                }
                None => {
                    out.extend(&c[i..j]);
                    i = j;
                }
            }
            continue;
        }
        out.push(c[i]);
        i += 1;
    }
    out.trim_end().to_string()
}

/// Output lines as compared: normalised, without the host's notes about slow examples.
fn comparable(text: &str) -> Vec<String> {
    text.lines().map(normalise).filter(|l| !(l.trim_start().starts_with('(') && l.ends_with(" took <time>)"))).collect()
}

/// Whether `pat` (with `…` lines matching any run of lines) matches all of `lines`.
fn glob(pat: &[String], lines: &[String]) -> bool {
    match pat.split_first() {
        None => lines.is_empty(),
        Some((p, rest)) if p.trim() == "…" => (0..=lines.len()).any(|k| glob(rest, &lines[k..])),
        Some((p, rest)) => lines.first().is_some_and(|l| l == p) && glob(rest, &lines[1..]),
    }
}

/// Checks that the shown lines match the output (all of it, or a part when `part`).
fn compare(shown: &[String], output: &str, part: bool) -> Result<(), String> {
    let mut pat: Vec<String> = shown.iter().map(|l| normalise(l)).collect();
    while pat.last().is_some_and(|l| l.is_empty()) {
        pat.pop();
    }
    if part {
        pat.insert(0, "…".into());
        pat.push("…".into());
    }
    let lines = comparable(output);
    if glob(&pat, &lines) {
        return Ok(());
    }
    // Say where it stops matching: the first shown line not found.
    let missing = pat.iter().find(|p| p.trim() != "…" && !lines.contains(p)).cloned().unwrap_or_default();
    Err(format!(
        "the output shown differs from the run's\n  first shown line not in the output: {missing:?}\n  the run printed:\n{}",
        lines.iter().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
    ))
}

fn looks_like_command(l: &str) -> bool {
    let l = l.trim_start();
    l.starts_with("$ ") || l.starts_with("cargo ")
}

#[test]
fn every_documented_command_runs_and_every_shown_output_matches_a_run() {
    let root = root();
    let mut failures = Vec::new();
    let (mut ran, mut compared, mut skipped) = (0, 0, 0);
    for file in doc_files(&root) {
        let text = std::fs::read_to_string(root.join(&file)).expect("read doc");
        for b in blocks(&file, &text) {
            if let Mark::GpuOnly(why) | Mark::NotRun(why) = &b.mark {
                let cmds: Vec<String> = match b.info.as_str() {
                    "console" => console_commands(&b.body).into_iter().map(|c| c.0).collect(),
                    _ => sh_commands(&b.body),
                };
                for c in cmds {
                    if matches!(b.mark, Mark::GpuOnly(_)) {
                        println!("skipped (GPU-only): {} `{c}`: {why}", b.at());
                    } else if NOT_RUN_ALLOWED.iter().any(|a| c.split('#').next().unwrap_or("").trim() == *a) {
                        println!("not run: {} `{c}`: {why}", b.at());
                    } else {
                        failures.push(format!("{}: `{c}` is marked not-run; only {NOT_RUN_ALLOWED:?} may be", b.at()));
                        continue;
                    }
                    skipped += 1;
                }
                continue;
            }
            let cases: Vec<(String, Option<Vec<String>>, bool)> = match (b.info.as_str(), &b.mark) {
                ("sh", _) => sh_commands(&b.body).into_iter().map(|c| (c, None, false)).collect(),
                ("console", _) => console_commands(&b.body).into_iter().map(|(c, o)| (c, Some(o), false)).collect(),
                (_, Mark::OutputOf(cmd)) => vec![(cmd.clone(), Some(b.body.clone()), true)],
                ("" | "text", _) if b.body.iter().any(|l| looks_like_command(l)) => {
                    failures.push(format!(
                        "{}: commands in an untagged block: use ```sh or ```console (or mark it <!-- gpu-only: why -->)",
                        b.at()
                    ));
                    continue;
                }
                _ => continue,
            };
            for (cmd, shown, part) in cases {
                let (actual, emu_output) = translate(&cmd);
                let (ok, output, took) = run(&root, &actual);
                ran += 1;
                println!("ran {} `{cmd}` in {:.1} s: {}", b.at(), took.as_secs_f64(), if ok { "ok" } else { "FAILED" });
                if !ok {
                    failures.push(format!("{}: `{cmd}` failed (run as `{actual}`):\n{output}", b.at()));
                    continue;
                }
                let Some(shown) = shown else { continue };
                if shown.iter().all(|l| l.trim().is_empty()) {
                    continue;
                }
                if !emu_output {
                    println!("  output not compared: this build can run on a GPU, and the doc shows the emulator's");
                    continue;
                }
                compared += 1;
                if let Err(e) = compare(&shown, &output, part) {
                    failures.push(format!("{}: `{cmd}`: {e}", b.at()));
                }
            }
        }
    }
    println!(
        "docs: {ran} command(s) run, {compared} output(s) compared, {skipped} GPU-only or not-run command(s) skipped"
    );
    assert!(ran > 0, "no command found in the docs");
    assert!(failures.is_empty(), "{} problem(s):\n\n{}", failures.len(), failures.join("\n\n"));
}

/// Every `path/to/file.rs:LINE` or `file.rs:LINE:COL` the docs name is a line (and column) of a file
/// that exists; every relative link points at a file or directory that exists.
#[test]
fn every_source_location_and_relative_link_in_the_docs_exists() {
    let root = root();
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in doc_files(&root).into_iter().chain(crate_readmes(&root)) {
        let text = std::fs::read_to_string(root.join(&file)).expect("read doc");
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", file.display(), n + 1);
            for (path, l, col) in source_locations(line) {
                checked += 1;
                let Ok(src) = std::fs::read_to_string(root.join(&path)) else {
                    failures.push(format!("{at}: `{path}` does not exist"));
                    continue;
                };
                match src.lines().nth(l.wrapping_sub(1)) {
                    None => failures.push(format!("{at}: `{path}` has no line {l}")),
                    Some(s) if col.is_some_and(|c| c > s.chars().count()) => {
                        failures.push(format!("{at}: line {l} of `{path}` has no column {}", col.unwrap_or(0)))
                    }
                    Some(_) => {}
                }
            }
            for target in links(line) {
                checked += 1;
                let base = root.join(&file).parent().expect("dir").to_path_buf();
                if !base.join(&target).exists() {
                    failures.push(format!("{at}: link to `{target}`, which does not exist"));
                }
            }
        }
    }
    println!("docs: {checked} source location(s) and link(s) checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The READMEs of the crates and the template (`*/README.md`, `templates/*/README.md`): their
/// source locations and links are checked; their commands run elsewhere (the crates' doc tests, the
/// template's own test, `tests/tests/template.rs`), from their own directories.
fn crate_readmes(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in [Path::new(""), Path::new("templates")] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for e in entries.flatten() {
            let rel = dir.join(e.file_name()).join("README.md");
            if e.path().is_dir()
                && e.file_name() != "target"
                && root.join(&rel).is_file()
                && rel != Path::new("bench/README.md")
            {
                found.push(rel);
            }
        }
    }
    found.sort();
    assert!(found.len() >= 4, "the crates' READMEs: {found:?}");
    found
}

/// `(path, line, column)` of every `something.rs:LINE[:COL]` in `line` with a `/` in its path.
fn source_locations(line: &str) -> Vec<(String, usize, Option<usize>)> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(k) = rest.find(".rs:") {
        let start = rest[..k].rfind(|c: char| !(c.is_alphanumeric() || "/_-.".contains(c))).map_or(0, |s| s + 1);
        let path = &rest[start..k + 3];
        let after = &rest[k + 4..];
        let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
        let mut col = None;
        if let Some(c) = after[digits.len()..].strip_prefix(':') {
            let d: String = c.chars().take_while(char::is_ascii_digit).collect();
            col = d.parse().ok();
        }
        if path.contains('/') && !digits.is_empty() {
            out.push((path.to_string(), digits.parse().expect("digits"), col));
        }
        rest = after;
    }
    out
}

/// Relative link targets (`](path)` and `](path#anchor)`) in `line`.
fn links(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(k) = rest.find("](") {
        let after = &rest[k + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split('#').next().unwrap_or("").trim();
        if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
            out.push(target.to_string());
        }
        rest = &after[end..];
    }
    out
}

#[test]
fn the_checker_itself() {
    assert_eq!(normalise("took 0.25 s and 12 ms, at 0x7ffd12, 1.5µs"), "took <time> and <time>, at <addr>, <time>");
    assert_eq!(normalise("n = 4097 threads: 63 s-curves"), "n = 4097 threads: 63 s-curves");
    assert_eq!(normalise("block 0 thread 5 at src/x.rs:20:28"), "block 0 thread 5 at src/x.rs:20:28");
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert!(glob(&s(&["a", "…", "d"]), &s(&["a", "b", "c", "d"])));
    assert!(!glob(&s(&["a", "…", "d"]), &s(&["a", "b", "c"])));
    assert!(compare(&s(&["b", "c"]), "a\nb\nc\nd\n", true).is_ok());
    assert!(compare(&s(&["b", "d"]), "a\nb\nc\nd\n", true).is_err());
    assert!(compare(&s(&["a", "b"]), "a\nb\n  (x n=1 took 5.1 s)\n", false).is_ok());
    assert_eq!(sh_commands(&s(&["# c", "cargo a \\", "  --b  # x", "", "cargo c"])), ["cargo a --b  # x", "cargo c"]);
    assert_eq!(translate("cargo xtask run --n 7").0, format!("{} run --n 7", env!("CARGO_BIN_EXE_host")));
    assert_eq!(translate("cargo xtask runner").0, "cargo xtask runner");
    assert_eq!(
        source_locations("at gpu-kernels/src/a.rs:20:28 (x) and b.rs:3"),
        [("gpu-kernels/src/a.rs".to_string(), 20, Some(28))]
    );
    assert_eq!(links("see [a](docs/a.md#x) and [b](https://x.y)"), ["docs/a.md"]);
    let md = "<!-- gpu-only: needs a GPU -->\n```sh\nnvcc x\n```\ntext\n```\n$ host run\n```\n";
    let b = blocks(Path::new("x.md"), md);
    assert_eq!(b.len(), 2);
    assert_eq!(b[0].mark, Mark::GpuOnly("needs a GPU".into()));
    assert_eq!((b[1].line, b[1].mark.clone()), (6, Mark::None));
}
