//! Checks over the built PTX: every instruction a primitive's documentation names is really emitted,
//! and kernel parameters have the layout the host passes.

use std::collections::BTreeSet;
use tests::{ptx_text, root};

/// Backticked tokens after `PTX:` in the doc comments of `gpu-std/src` (to the end of the doc
/// paragraph), with the file that names them.
fn documented_ptx() -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("gpu-std/src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).expect("read source");
            let mut in_ptx = false;
            for line in text.lines() {
                let l = line.trim_start();
                let doc = l.strip_prefix("///").or_else(|| l.strip_prefix("//!"));
                let Some(doc) = doc else {
                    in_ptx = false;
                    continue;
                };
                let doc = match doc.find("PTX:") {
                    Some(k) => {
                        in_ptx = true;
                        &doc[k + 4..]
                    }
                    None if in_ptx => doc,
                    None => continue,
                };
                if doc.trim().is_empty() {
                    in_ptx = false;
                    continue;
                }
                for (k, tok) in doc.split('`').enumerate() {
                    if k % 2 == 1 && !tok.is_empty() {
                        out.push((tok.to_string(), p.strip_prefix(root()).unwrap_or(&p).display().to_string()));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn every_documented_instruction_is_emitted() {
    let ptx = ptx_text();
    let flat: String = ptx.split_whitespace().collect::<Vec<_>>().join(" ");
    let docs = documented_ptx();
    assert!(docs.len() > 60, "expected the primitives to document their PTX, found {} tokens", docs.len());
    let missing: BTreeSet<String> = docs
        .iter()
        .filter(|(tok, _)| !flat.contains(&tok.split_whitespace().collect::<Vec<_>>().join(" ")))
        .map(|(tok, file)| format!("{tok} ({file})"))
        .collect();
    assert!(
        missing.is_empty(),
        "documented PTX not found in target/ptx/gpu_kernels.ptx:\n  {}",
        missing.into_iter().collect::<Vec<_>>().join("\n  ")
    );
    println!("{} documented PTX instructions, all present", docs.len());
}

#[test]
fn scopes_are_not_confused() {
    // A `.sys` fence where `.cta` was meant (or the reverse) would pass every functional test and be
    // wrong: check that each scope of fence and atomic is emitted distinctly.
    let ptx = ptx_text();
    for needle in [
        "fence.sc.cta;",
        "fence.sc.gpu;",
        "fence.sc.sys;",
        "atom.relaxed.cta.",
        "atom.relaxed.gpu.",
        "atom.relaxed.sys.",
    ] {
        assert!(ptx.contains(needle), "{needle} missing");
    }
}

#[test]
fn view_parameters_are_16_byte_aggregates() {
    // Global<T>/GlobalMut<T> are #[repr(C)] {ptr, len}: the host passes 16 bytes per view.
    let ptx = ptx_text();
    let entry = ptx.find(".entry reduce_sum(").expect("reduce_sum entry");
    let params = &ptx[entry..ptx[entry..].find(')').map(|e| entry + e).expect("param list end")];
    assert!(params.contains(".param .align 8 .b8 reduce_sum_param_0[16]"), "{params}");
    assert!(params.contains(".param .align 8 .b8 reduce_sum_param_1[16]"), "{params}");
}

#[test]
fn every_kernel_is_an_entry() {
    let ptx = ptx_text();
    for k in [
        "warp_reduce",
        "reduce_sum",
        "histogram_privatised",
        "prim_shfl",
        "prim_shfl_table",
        "prim_vote",
        "prim_barrier",
        "prim_atomic_u32",
        "prim_atomic_f64",
        "prim_message",
        "prim_grid_sync",
        "prim_tile",
    ] {
        assert!(ptx.contains(&format!(".entry {k}(")), "no .entry {k}");
    }
}
