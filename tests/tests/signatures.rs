//! The kernel signatures in the built PTX modules (`cargo xtask build-ptx` of every kernel crate): every
//! `.entry` holds the signature `kernel!` wrote for it, the host's kernel types have the same one, and
//! a host type that names another definition's `.entry` (`tests/mismatch-kernels`) is refused by the
//! check every GPU launch makes — here without a GPU, on the modules themselves.

use gpu_host::PtxEntries;
use gpu_std::Kernel;
use gpu_std::signature::{self, PREFIX};
use tests::root;

/// The built module of kernel crate `crate_name`, read.
fn module(crate_name: &str) -> PtxEntries {
    let path = root().join("target/ptx").join(format!("{crate_name}.ptx"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}): run `cargo xtask build-ptx -p <its package>` first", path.display())
    });
    PtxEntries::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_entry_of_every_built_module_holds_its_signature() {
    for krate in ["gpu_kernels", "user_kernels", "gpu_std_probes", "mismatch_kernels"] {
        let m = module(krate);
        let mut n = 0;
        for name in m.kernels() {
            let held = m.signature(name).unwrap_or_else(|| panic!("{krate}: `.entry {name}` has no signature"));
            let held = held.unwrap_or_else(|e| panic!("{krate}: `{name}`: {e}"));
            let path_and_name = held.strip_prefix(PREFIX).unwrap_or_else(|| panic!("{krate}: `{name}`: {held}"));
            assert!(path_and_name.starts_with(&format!("{krate}::")), "{krate}: `{name}`: {held}");
            assert!(path_and_name.contains(&format!("::{name}(")), "{krate}: `{name}`: {held}");
            n += 1;
        }
        assert!(n > 0, "{krate}: no kernels");
        println!("{krate}: {n} kernels, each with its signature");
    }
}

/// `Ok` when kernel `K`'s host type matches its entry in `m`.
fn check<K: Kernel>(m: &PtxEntries) -> Result<(), String> {
    m.check_kernel::<K>("the module")
}

#[test]
fn host_kernel_types_match_the_entries_they_launch() {
    let user = module("user_kernels");
    check::<user_kernels::saxpy>(&user).unwrap();
    check::<user_kernels::block_sum>(&user).unwrap();
    assert_eq!(
        signature::of::<user_kernels::block_sum>(),
        "gpu-std kernel 1: user_kernels::block_sum(Global<u32>, Output<u32, PerBlock>)"
    );
    let chapter = module("gpu_kernels");
    check::<gpu_kernels::warp_reduce::warp_reduce>(&chapter).unwrap();
    check::<gpu_kernels::stencil::stencil_tile>(&chapter).unwrap();
    check::<gpu_kernels::reduce_sum::reduce_sum>(&chapter).unwrap();
    let algos = module("gpu_algos_kernels");
    check::<gpu_algos_kernels::reduce::reduce_sum_f32>(&algos).unwrap();
    check::<gpu_algos_kernels::scan::scan_inclusive_u32>(&algos).unwrap();
    check::<gpu_algos_kernels::histogram::small::histogram_bytes_small>(&algos).unwrap();
    check::<gpu_kernels::atomic_add_f64::atomic_add_double_cas>(&chapter).unwrap();
    check::<gpu_kernels::system_scope::sys_atomics>(&chapter).unwrap();
    let mismatch = module("mismatch_kernels");
    check::<mismatch_kernels::wide::fill_wide>(&mismatch).unwrap();
    check::<mismatch_kernels::scalars::scalars_only>(&mismatch).unwrap();
    assert_eq!(
        signature::of::<mismatch_kernels::scalars::scalars_only>(),
        "gpu-std kernel 1: mismatch_kernels::scalars::scalars_only(u32, f64)"
    );
    // A kernel of one crate is not in another's module, even where a kernel of the same name is.
    let e = check::<user_kernels::saxpy>(&chapter).unwrap_err();
    assert!(e.contains("kernel `saxpy` is not in the module"), "{e}");
}

#[test]
fn a_definition_whose_types_differ_on_the_gpu_is_refused() {
    // `fill(x: GlobalMut<Elem>)` with `Elem` a `u64` on the GPU and a `u8` on the host: the same name
    // and the same parameter sizes, so only the signature tells the two apart.
    let m = module("mismatch_kernels");
    assert_eq!(m.of("fill"), Some(&[Some(16)][..]), "one 16-byte view, as the host passes");
    let e = check::<mismatch_kernels::fill>(&m).unwrap_err();
    println!("{e}");
    assert!(
        e.contains("kernel `fill` in the module was compiled from another definition")
            && e.contains("`gpu-std kernel 1: mismatch_kernels::fill(GlobalMut<u64>)`")
            && e.contains("the launch is of `gpu-std kernel 1: mismatch_kernels::fill(GlobalMut<u8>)`"),
        "{e}"
    );
}

#[test]
fn a_host_only_definition_with_another_kernels_name_is_refused() {
    // `narrow::fill_wide(GlobalMut<u8>)` exists on the host only; the module's `.entry fill_wide` is
    // `wide::fill_wide(GlobalMut<u64>)`.
    let m = module("mismatch_kernels");
    assert_eq!(<mismatch_kernels::narrow::fill_wide as Kernel>::NAME, "fill_wide");
    let e = check::<mismatch_kernels::narrow::fill_wide>(&m).unwrap_err();
    assert!(
        e.contains("mismatch_kernels::wide::fill_wide(GlobalMut<u64>)")
            && e.contains("mismatch_kernels::narrow::fill_wide(GlobalMut<u8>)"),
        "{e}"
    );
}

#[test]
fn a_shadowed_stringify_does_not_rename_a_kernel() {
    // `shadowed::fill_shadowed` is defined where `stringify!` says "fill_wide" for anything.
    type K = mismatch_kernels::shadowed::fill_shadowed;
    assert_eq!((K::NAME, K::PARAMS), ("fill_shadowed", &["x"][..]));
    let m = module("mismatch_kernels");
    check::<K>(&m).unwrap();
    assert_eq!(
        m.signature("fill_shadowed"),
        Some(Ok("gpu-std kernel 1: mismatch_kernels::shadowed::fill_shadowed(GlobalMut<u8>)"))
    );
}

#[test]
fn a_parameter_type_that_expands_differently_is_one_type_in_the_entry_and_its_signature() {
    // `widening::fill_widening`'s element type is `u8` the first time it is expanded, `u64` after.
    type K = mismatch_kernels::widening::fill_widening;
    let m = module("mismatch_kernels");
    check::<K>(&m).unwrap();
    assert_eq!(
        m.signature("fill_widening"),
        Some(Ok("gpu-std kernel 1: mismatch_kernels::widening::fill_widening(GlobalMut<u8>)"))
    );
    // The `.entry`'s body stores bytes, as the signature says: one expansion for all of them.
    let ptx = std::fs::read_to_string(tests::root().join("target/ptx/mismatch_kernels.ptx")).expect("built PTX");
    let start = ptx.find(".entry fill_widening(").expect("the entry");
    let body = &ptx[start..start + ptx[start..].find("\n}").expect("its end")];
    assert!(body.contains("st.global.b8") && !body.contains("st.global.b64"), "{body}");
}

#[test]
fn declarations_in_comments_are_not_taken_for_the_module_s() {
    // A one-`u32` `saxpy` and a signature for it, in comments above the real ones (what
    // `tests/tests/gpu_open.rs` also launches on a GPU): the real three-parameter entry is read.
    let path = root().join("target/ptx/user_kernels.ptx");
    let real = std::fs::read_to_string(&path).expect("the built module");
    let at = real.find(".visible .entry").expect("an entry");
    let text = format!(
        "{}// .visible .entry saxpy(.param .u32 saxpy_param_0)\n/* .visible .global .align 1 .b8 \
         __gpu_std_signature_saxpy[1] = {{0}};\n.visible .entry saxpy(.param .u32 p) {{ ret; }} */\n{}",
        &real[..at],
        &real[at..]
    );
    let m = PtxEntries::parse(&text).unwrap();
    assert_eq!(m.of("saxpy"), Some(&[Some(4), Some(16), Some(16)][..]));
    check::<user_kernels::saxpy>(&m).unwrap();
    assert_eq!(m.kernels().count(), 2);
}
