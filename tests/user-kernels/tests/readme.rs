//! The section "Race-check your own kernel" of `docs/emulator.md` is `src/race_check.md`, which the
//! crate compiles and runs as a doc test: the doc must quote it verbatim, so that what it shows is what
//! is tested.

#[test]
fn the_emulator_doc_quotes_the_tested_race_check_section_verbatim() {
    let doc = include_str!("../../../docs/emulator.md");
    let section = include_str!("../src/race_check.md");
    let heading = "### Race-check your own kernel\n";
    let start = doc.find(heading).expect("docs/emulator.md has the section") + heading.len();
    let body = &doc[start..];
    let end = ["\n## ", "\n### "].iter().filter_map(|h| body.find(h)).min().unwrap_or(body.len());
    assert_eq!(body[..end].trim(), section.trim(), "docs/emulator.md and tests/user-kernels/src/race_check.md differ");
}
