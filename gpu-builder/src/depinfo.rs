//! Cargo's dep-info files (`<artifact>.d`, make syntax): the files an artifact was built from.
//!
//! Cargo writes one next to each uplifted artifact, listing the source files of the crate and of
//! every path dependency (registry dependencies are left out: they never change in place). The
//! builder turns those files into `cargo:rerun-if-changed` lines.

use std::path::{Path, PathBuf};

/// Every prerequisite of every rule in a dep-info file, in order of first appearance. Relative
/// paths are joined to `base`. Escaped spaces (`\ `), escaped `#` and `$$` are unescaped; comment
/// lines (`# env-dep:...`) are skipped.
pub(crate) fn prerequisites(text: &str, base: &Path) -> Vec<PathBuf> {
    // Join continuation lines first.
    let mut joined = String::with_capacity(text.len());
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with('#') {
            continue;
        }
        let mut line = line.to_string();
        while ends_with_continuation(&line) {
            line.pop();
            line.push(' ');
            match lines.next() {
                Some(next) => line.push_str(next),
                None => break,
            }
        }
        joined.push_str(&line);
        joined.push('\n');
    }

    let mut out: Vec<PathBuf> = Vec::new();
    for line in joined.lines() {
        let words = split_words(line);
        let Some(colon) = words.iter().position(|w| w.ends_with(':') && !w.ends_with("\\:")) else { continue };
        for word in &words[colon + 1..] {
            let path = Path::new(word);
            let path = if path.is_absolute() { path.to_path_buf() } else { base.join(path) };
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// A line ending in an odd number of backslashes continues on the next line.
fn ends_with_continuation(line: &str) -> bool {
    line.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// Splits a rule line into words at unescaped whitespace, unescaping `\ `, `\#`, `\:` and `$$`.
/// The word holding the rule's colon keeps it as its last character.
fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if matches!(chars.peek(), Some(' ' | '#' | '\\')) => word.push(chars.next().unwrap_or(' ')),
            '$' if chars.peek() == Some(&'$') => {
                chars.next();
                word.push('$');
            }
            ':' if matches!(chars.peek(), None | Some(' ' | '\t')) => {
                word.push(':');
                words.push(std::mem::take(&mut word));
            }
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_sources_of_a_cargo_dep_info_file() {
        let text = "/t/nvptx64-nvidia-cuda/release/user_kernels.ptx: /w/kernels/src/lib.rs \
                    /w/gpu-std/src/lib.rs /w/gpu-std/src/warp.rs\n";
        assert_eq!(
            prerequisites(text, Path::new("/base")),
            ["/w/kernels/src/lib.rs", "/w/gpu-std/src/lib.rs", "/w/gpu-std/src/warp.rs"].map(PathBuf::from)
        );
    }

    #[test]
    fn handles_continuations_escapes_phony_rules_and_comments() {
        let text = "out.ptx: src/lib.rs \\\n  /a\\ dir/x.rs /c/d$$.rs\n\nsrc/lib.rs:\n/a\\ dir/x.rs:\n\
                    # env-dep:CARGO_PKG_NAME=k\n";
        assert_eq!(
            prerequisites(text, Path::new("/k")),
            ["/k/src/lib.rs", "/a dir/x.rs", "/c/d$.rs"].map(PathBuf::from)
        );
    }

    #[test]
    fn windows_drive_colons_are_not_rule_separators() {
        let text = "C:\\t\\k.ptx: C:\\w\\src\\lib.rs\n";
        assert_eq!(prerequisites(text, Path::new("/k")).len(), 1);
    }
}
