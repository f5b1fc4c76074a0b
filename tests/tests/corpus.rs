//! The corpus of ported kernels (`tests/corpus`) on the GPU, from the PTX module
//! `target/ptx/corpus_kernels.ptx`: every entry at its GPU sizes, exact against its CPU reference.
//! (The emulator runs and the mutation tests are the corpus crate's own tests.)

use tests::gpu_with_crate_or_skip;

#[test]
fn every_corpus_entry_on_gpu() {
    let Some(dev) = gpu_with_crate_or_skip("corpus on GPU", "corpus_kernels") else { return };
    let mut bad = Vec::new();
    for e in corpus_kernels::all() {
        for &n in e.gpu_sizes {
            match (e.check)(&dev, n) {
                Ok(Ok(())) => println!("{} n={n} on {}: PASS", e.name, dev.kind()),
                Ok(Err(why)) => bad.push(format!("{} n={n}: wrong result: {why}", e.name)),
                Err(err) => bad.push(format!("{} n={n}: {err:#}", e.name)),
            }
        }
    }
    assert!(bad.is_empty(), "{} failures on the GPU:\n{}", bad.len(), bad.join("\n"));
}
