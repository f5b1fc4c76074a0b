//! Checks over the built PTX: every instruction a primitive's documentation names is emitted in the
//! code of a kernel that uses that primitive (its probe), and kernel parameters have the layout the
//! host passes.

use std::collections::{BTreeMap, BTreeSet};
use tests::{algos_ptx_text, ptx_text, root};

/// A primitive of `gpu-std` whose documentation names the PTX it emits.
struct Documented {
    /// `<type or module>_<function>`: its probe kernel is `probe_<key>`.
    key: String,
    /// The backticked instructions after `PTX:` in its doc comment.
    tokens: Vec<String>,
    file: String,
}

/// `AtomicRef` -> `atomic_ref`.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The self type of an `impl` line: `impl<T: X, S> AtomicRef<T, S, Sp> {` -> `AtomicRef`.
fn impl_type(line: &str) -> Option<String> {
    let mut rest = line.strip_prefix("impl")?;
    if rest.starts_with('<') {
        let mut depth = 0;
        let end = rest.char_indices().find_map(|(i, c)| {
            match c {
                '<' => depth += 1,
                '>' => depth -= 1,
                _ => {}
            }
            (depth == 0).then_some(i + 1)
        })?;
        rest = &rest[end..];
    }
    let rest = rest.rsplit(" for ").next()?.trim_start();
    let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// The function an item line declares (`pub const unsafe fn name(`), if any.
fn fn_name(line: &str) -> Option<String> {
    let k = line.find("fn ")?;
    let head = &line[..k];
    if !head.split_whitespace().all(|w| ["pub", "pub(crate)", "const", "unsafe", "extern"].contains(&w)) {
        return None;
    }
    let name: String = line[k + 3..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// Every function of `gpu-std/src` (the emulator aside) whose doc comment has a `PTX:` paragraph.
fn documented_primitives() -> Vec<Documented> {
    let mut out = Vec::new();
    let mut stack = vec![root().join("gpu-std/src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "emu") {
                    stack.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let stem = p.file_stem().and_then(|s| s.to_str()).expect("file stem").to_string();
            let file = p.strip_prefix(root()).unwrap_or(&p).display().to_string();
            let text = std::fs::read_to_string(&p).expect("read source");
            let (mut owner, mut doc): (Option<String>, Vec<String>) = (None, Vec::new());
            for line in text.lines() {
                if line.starts_with("impl") {
                    owner = impl_type(line);
                } else if line == "}" {
                    owner = None;
                }
                let l = line.trim_start();
                if let Some(d) = l.strip_prefix("///") {
                    doc.push(d.trim().to_string());
                    continue;
                }
                if l.starts_with("#[") {
                    continue;
                }
                if let Some(name) = fn_name(l) {
                    let tokens = ptx_tokens(&doc);
                    if !tokens.is_empty() {
                        let prefix = owner.as_deref().map(snake).unwrap_or_else(|| stem.clone());
                        out.push(Documented { key: format!("{prefix}_{name}"), tokens, file: file.clone() });
                    }
                }
                doc.clear();
            }
        }
    }
    out
}

/// Backticked tokens after `PTX:` in a doc comment, to the end of that paragraph.
fn ptx_tokens(doc: &[String]) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut in_ptx = false;
    for line in doc {
        let text = match line.find("PTX:") {
            Some(k) => {
                in_ptx = true;
                &line[k + 4..]
            }
            None if in_ptx && !line.is_empty() => line.as_str(),
            None => {
                in_ptx = false;
                continue;
            }
        };
        tokens.extend(text.split('`').skip(1).step_by(2).filter(|t| !t.is_empty()).map(str::to_string));
    }
    tokens
}

/// The code of each `.entry` of a PTX module, by name.
fn entries(ptx: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (s, _) in ptx.match_indices(".entry ") {
        let name: String = ptx[s + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        // The body ends at the first closing brace in column 0.
        let end = ptx[s..].find("\n}").map(|e| s + e + 2).unwrap_or(ptx.len());
        out.insert(name, ptx[s..end].split_whitespace().collect::<Vec<_>>().join(" "));
    }
    out
}

fn probes_ptx() -> String {
    let path = root().join("target/ptx/gpu_std_probes.ptx");
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}): run `cargo xtask build-ptx -p gpu-std-probes` first", path.display())
    })
}

#[test]
fn every_primitive_emits_its_documented_ptx_in_its_probe() {
    let docs = documented_primitives();
    assert!(docs.len() >= 50, "expected the primitives to document their PTX, found {}", docs.len());
    let probes = entries(&probes_ptx());
    let mut problems = BTreeSet::new();
    for d in &docs {
        let probe = format!("probe_{}", d.key);
        let Some(code) = probes.get(&probe) else {
            problems.insert(format!("no probe kernel `{probe}` for `{}` ({})", d.key, d.file));
            continue;
        };
        for tok in &d.tokens {
            let tok = tok.split_whitespace().collect::<Vec<_>>().join(" ");
            if !code.contains(&tok) {
                problems.insert(format!("`{tok}`, documented by `{}` ({}), is not in `{probe}`", d.key, d.file));
            }
        }
    }
    for name in probes.keys() {
        if !docs.iter().any(|d| format!("probe_{}", d.key) == *name) {
            problems.insert(format!("probe `{name}` probes no documented primitive"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.into_iter().collect::<Vec<_>>().join("\n"));
    let tokens: usize = docs.iter().map(|d| d.tokens.len()).sum();
    println!("{} primitives, {tokens} documented instructions, each found in its own probe kernel", docs.len());
}

#[test]
fn the_probe_check_sees_a_missing_instruction() {
    // The check above must be able to fail: a token that no probe emits is reported.
    let probes = entries(&probes_ptx());
    let code = probes.get("probe_warp_shfl_down").expect("probe_warp_shfl_down");
    assert!(code.contains("shfl.sync.down.b32"));
    assert!(!code.contains("shfl.sync.up.b32"), "a probe must contain its own primitive only");
}

#[test]
fn doc_parsing() {
    assert_eq!(impl_type("impl<T: Atomic, S: Scope, Sp: Space> AtomicRef<T, S, Sp> {").as_deref(), Some("AtomicRef"));
    assert_eq!(impl_type("impl<const N: u32> Tile<N> {").as_deref(), Some("Tile"));
    assert_eq!(impl_type("impl<T: Pod> KernelParam for Global<T> {").as_deref(), Some("Global"));
    assert_eq!(snake("AtomicRef"), "atomic_ref");
    assert_eq!(
        fn_name("pub const unsafe fn from_raw_parts(ptr: *const T) -> Self {").as_deref(),
        Some("from_raw_parts")
    );
    assert_eq!(fn_name("let f = |x| x;"), None);
    let doc: Vec<String> =
        ["`atomicAdd`. PTX: `atom.a`,", "`atom.b`.", "", "Not `this`."].iter().map(|s| s.to_string()).collect();
    assert_eq!(ptx_tokens(&doc), ["atom.a", "atom.b"]);
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
fn system_scope_kernels_use_system_scope() {
    // Example 19's protocol with the host is correct only at system scope: its kernels must emit the
    // `.sys` forms (and the racy variants the `.gpu` ones they are named for).
    let kernels = entries(&ptx_text());
    let has = |k: &str, needles: &[&str]| {
        let body = kernels.get(k).unwrap_or_else(|| panic!("no .entry {k}"));
        for n in needles {
            assert!(body.contains(n), "{k}: `{n}` missing");
        }
    };
    has(
        "gpu_to_host",
        &["fence.sc.sys;", "st.volatile.global.b32", "st.release.sys.global.u32", "ld.acquire.sys.global.u32"],
    );
    has("gpu_to_host", &["fence.sc.gpu;", "st.release.gpu.global.u32"]);
    has(
        "host_to_gpu",
        &["ld.acquire.sys.global.u32", "ld.volatile.global.b32", "fence.sc.sys;", "ld.acquire.gpu.global.u32"],
    );
    has("ping_pong", &["ld.volatile.global.b32", "fence.sc.sys;", "st.volatile.global.b32"]);
    let atomics = &kernels["sys_atomics"];
    assert!(
        atomics.contains("red.relaxed.sys.global.add.u32") || atomics.contains("atom.relaxed.sys.global.add.u32"),
        "{atomics}"
    );
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
        "stencil_tile",
        "stencil_halo",
        "stencil_no_barrier",
        "atomic_add_double_cas",
        "atomic_add_double_native",
        "histogram_global",
        "branch_by_thread",
        "branch_by_block",
        "conditional_add",
        "conditional_add_unguarded",
        "sum_atomic",
        "sum_tree",
        "running_max_i32",
        "running_min_i32",
        "countdown_sub_i32",
        "running_max_f32_bits",
        "running_max_f32_cas",
        "atomic_tour_i32",
        "atomic_tour_u32",
        "atomic_tour_u64",
        "atomic_tour_f32",
        "atomic_tour_f64",
        "sync_variants",
        "gpu_to_host",
        "host_to_gpu",
        "ping_pong",
        "bump",
        "sys_atomics",
    ] {
        assert!(ptx.contains(&format!(".entry {k}(")), "no .entry {k}");
    }
}

#[test]
fn float_kernels_checked_bit_exactly_round_every_operation() {
    // `divergence` and `stencil` compare the GPU's floats with the CPU's (bit for bit, or within the
    // rounding of each operation): every multiply and add must be its own correctly rounded
    // instruction (`mul.rn`, `add.rn`, which ptxas may not fuse), never an FMA the CPU does not do.
    let kernels = entries(&ptx_text());
    for k in ["branch_by_thread", "branch_by_block", "stencil_tile", "stencil_halo", "conditional_add"] {
        let body = kernels.get(k).unwrap_or_else(|| panic!("no .entry {k}"));
        assert!(!body.contains("fma."), "{k}: an FMA the CPU reference does not perform");
        for op in ["add.f32", "sub.f32", "mul.f32"] {
            assert!(
                !body.split(' ').any(|t| t == op),
                "{k}: `{op}` may be contracted by ptxas; the reference assumes `.rn`"
            );
        }
    }
    let branch = &kernels["branch_by_thread"];
    assert!(branch.contains("mul.rn.f32") && branch.contains("add.rn.f32"), "branch_by_thread: no rounded mul/add");
}

/// The lines of the `.entry` named `name`.
fn entry_lines<'a>(ptx: &'a str, name: &str) -> Vec<&'a str> {
    let start = ptx.find(&format!(".entry {name}(")).unwrap_or_else(|| panic!("no .entry {name}"));
    let body = &ptx[start..];
    let end = body.find("\n}").map(|e| e + 2).unwrap_or(body.len());
    body[..end].lines().collect()
}

#[test]
fn view_accesses_are_inline_assembly() {
    // A race on a view (kept on purpose in the chapter's racy kernels) must not be undefined behaviour:
    // every global or shared load and store a view makes is an instruction of inline assembly, which the
    // compiler cannot reason about, never a load or store the compiler emitted itself.
    let ptx = probes_ptx();
    for probe in [
        "probe_memory_get",
        "probe_memory_get_volatile",
        "probe_memory_set",
        "probe_memory_set_volatile",
        "probe_slot_get",
        "probe_slot_set",
        "probe_atomic_ref_fetch_add",
    ] {
        let (mut in_asm, mut inside, mut outside) = (false, 0, Vec::new());
        for line in entry_lines(&ptx, probe) {
            let l = line.trim();
            if l.contains("begin inline asm") {
                in_asm = true;
            } else if l.contains("end inline asm") {
                in_asm = false;
            } else if ["ld.", "st.", "atom.", "red."].iter().any(|p| l.starts_with(p))
                && [".global", ".shared"].iter().any(|s| l.contains(s))
            {
                if in_asm {
                    inside += 1;
                } else {
                    outside.push(l.to_string());
                }
            }
        }
        assert!(inside > 0, "{probe}: no memory access found");
        assert!(outside.is_empty(), "{probe}: accesses emitted by the compiler, not inline assembly: {outside:?}");
    }
}

#[test]
fn full_mask_checks_compile_away() {
    // The safe collectives check that the calling lane is in the mask; with FULL_MASK that check must
    // cost nothing, with a run-time mask it must be there, and the unchecked forms never check.
    let probes = entries(&probes_ptx());
    let checks = |p: &str| probes.get(p).unwrap_or_else(|| panic!("no {p}")).contains("trap_not_in_mask");
    for full in ["probe_warp_shfl_down", "probe_warp_shfl_idx_width", "probe_warp_any", "probe_warp_all"] {
        assert!(!checks(full), "{full}: a FULL_MASK collective calls the mask check");
    }
    for runtime in ["probe_warp_ballot", "probe_warp_sync_warp"] {
        assert!(checks(runtime), "{runtime}: a run-time mask is not checked");
    }
    for unchecked in ["probe_warp_ballot_unchecked", "probe_warp_sync_warp_unchecked", "probe_warp_shfl_unchecked"] {
        assert!(!checks(unchecked), "{unchecked}: an unchecked collective checks");
    }
}

#[test]
fn the_scan_keeps_its_tile_in_registers() {
    // Every chunk of the scan is loaded with its own 16-byte load, all into registers: a per-thread
    // array that the compiler indexes at run time lives in local memory (`.local`, `ld.local`), and
    // each load then waits for the one before. The single pass streams (`Vectors::get_streaming`,
    // `VectorsMut::set_streaming`: `.cs`); reduce-then-scan reads its input twice, through the
    // read-only cache.
    let ptx = algos_ptx_text();
    let chunks = gpu_algos_kernels::scan::ITEMS / 4;
    let count = |lines: &[&str], what: &str| lines.iter().filter(|l| l.contains(what)).count();
    for kernel in ["scan_inclusive_u32", "scan_inclusive_f32", "scan_exclusive_i32", "scan_inclusive_in_place_u32"] {
        let lines = entry_lines(&ptx, kernel);
        let local: Vec<&str> = lines.iter().copied().filter(|l| l.contains(".local")).collect();
        assert!(local.is_empty(), "{kernel}: local memory: {local:?}");
        let loads = count(&lines, "ld.global.cs.v4.b32");
        assert!(loads >= chunks, "{kernel}: {loads} streaming 16-byte loads, fewer than its {chunks} chunks");
        let stores = count(&lines, "st.global.cs.v4.b32");
        assert!(stores >= chunks, "{kernel}: {stores} streaming 16-byte stores, fewer than its {chunks} chunks");
        // The look-back's sleeps (`gpu_std::fence::nanosleep`).
        assert!(count(&lines, "nanosleep.u32") >= 2, "{kernel}: no sleep before and between polls");
    }
    for kernel in ["scan_reduce_u32", "scan_downsweep_u32"] {
        let lines = entry_lines(&ptx, kernel);
        let loads = count(&lines, "ld.global.nc.v4.b32");
        assert!(loads >= chunks, "{kernel}: {loads} read-only 16-byte loads, fewer than its {chunks} chunks");
        assert_eq!(count(&lines, ".cs."), 0, "{kernel}: streaming accesses in a kernel whose input is read twice");
    }
}

#[test]
fn float_minima_and_maxima_take_the_nan_propagating_instruction() {
    // `element::Min` / `Max` for f32 are IEEE 754-2019 `minimum` / `maximum` on nvptx: one
    // `min.NaN.f32` / `max.NaN.f32` per step (NaN if either input is), and no comparison chain.
    let ptx = algos_ptx_text();
    for (kernel, op) in [
        ("reduce_min_f32", "min.NaN.f32"),
        ("reduce_small_min_f32", "min.NaN.f32"),
        ("reduce_max_f32", "max.NaN.f32"),
        ("reduce_small_max_f32", "max.NaN.f32"),
    ] {
        let lines = entry_lines(&ptx, kernel);
        let n = lines.iter().filter(|l| l.contains(op)).count();
        assert!(n >= 8, "{kernel}: {n} `{op}`");
        assert!(!lines.iter().any(|l| l.contains("setp.nan.f32")), "{kernel}: a NaN test beside `{op}`");
    }
}

#[test]
fn the_fast_sums_keep_four_loads_together_under_their_launch_bounds() {
    // `#[launch_bounds(512, 3)]` (`reduce_small`: `(512, 1)`) reaches each fast sum's `.entry` as
    // directives before its body, and a tile's four loads follow one bounds check
    // (`Vectors::get_strided`; `reduce_small`: clamped indices): four 16-byte loads with no branch
    // between them.
    let ptx = algos_ptx_text();
    for (kernel, load, min_blocks) in [
        ("reduce_sum_f32", "ld.global.v4.b32", 3),
        ("reduce_sum_f64", "ld.global.v2.b64", 3),
        ("reduce_sum_i32", "ld.global.v4.b32", 3),
        ("reduce_min_u64", "ld.global.v2.b64", 3),
        ("reduce_max_f32", "ld.global.v4.b32", 3),
        ("reduce_small_sum_f32", "ld.global.v4.b32", 1),
        ("reduce_small_sum_f64", "ld.global.v2.b64", 1),
        ("reduce_small_sum_i32", "ld.global.v4.b32", 1),
    ] {
        let lines = entry_lines(&ptx, kernel);
        let header: Vec<&str> = lines.iter().copied().take_while(|l| !l.starts_with('{')).collect();
        assert!(header.contains(&".maxntid 512, 1, 1"), "{kernel}: no .maxntid before the body: {header:?}");
        let min = format!(".minnctapersm {min_blocks}");
        assert!(header.contains(&min.as_str()), "{kernel}: no {min} before the body: {header:?}");
        // The instructions (comments and labels aside) around the first load.
        let code: Vec<&str> = lines
            .iter()
            .map(|l| l.trim())
            .filter(|l| !l.is_empty() && !l.starts_with("//") && !l.ends_with(':'))
            .collect();
        let first = code.iter().position(|l| l.contains(load)).unwrap_or_else(|| panic!("{kernel}: no {load}"));
        let last =
            first + code[first..].iter().enumerate().filter(|(_, l)| l.contains(load)).nth(3).map_or(0, |(k, _)| k);
        let window = &code[first..=last.max(first)];
        assert!(last > first && window.len() <= 24, "{kernel}: four loads not within 24 instructions: {window:?}");
        assert!(!window.iter().any(|l| l.contains("bra")), "{kernel}: a branch between the loads: {window:?}");
    }
}
