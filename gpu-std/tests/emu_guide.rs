//! The emulator's guide (docs/emulator.md) shows a trace that is one of model/trace.rs's doctests.

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
