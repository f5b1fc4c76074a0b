//! The README's section "Race-check your own kernel" is `src/race_check.md`, which the crate compiles
//! and runs as a doc test: the README must quote it verbatim, so that what it shows is what is tested.

#[test]
fn the_readme_quotes_the_tested_race_check_section_verbatim() {
    let readme = include_str!("../../../README.md");
    let section = include_str!("../src/race_check.md");
    let heading = "### Race-check your own kernel\n";
    let start = readme.find(heading).expect("the README has the section") + heading.len();
    let body = &readme[start..];
    let end = ["\n## ", "\n### "].iter().filter_map(|h| body.find(h)).min().unwrap_or(body.len());
    assert_eq!(body[..end].trim(), section.trim(), "README.md and tests/user-kernels/src/race_check.md differ");
}
