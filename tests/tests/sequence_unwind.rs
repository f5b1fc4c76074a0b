//! `Device::sequence` on the GPU, where its launches are queued and waited for once: a panic inside
//! the closure after queuing launches must not free their buffers while they still run, and a
//! buffer's own copies inside the closure come after the launches queued before them. Without a GPU
//! each test prints "skipped: no CUDA device". (The emulator half is gpu-host's
//! `tests/soundness.rs`: there every launch runs at once.) On an H100 with driver 580 the code before
//! the fix failed only the timed wait: that driver's `cuMemFree` waits for the kernels that use the
//! memory, and it ordered the legacy-stream copies after them (docs/soundness.md); the other tests
//! keep what no driver documents.

use gpu_host::{Buffer, Device, Launch, Sequence};
use gpu_kernels::divergence::conditional_add_unguarded;
use std::panic::{AssertUnwindSafe, catch_unwind};
use tests::gpu_or_skip;

/// Elements of each buffer (256 MiB of `f32`): one launch over it takes a few hundred µs on an
/// H100, so that `LAUNCHES` of them are still running long after the panic.
const N: usize = 1 << 26;
const BLOCK: u32 = 256;
const LAUNCHES: usize = 400;

/// `N` zeros on `dev`, named `name`.
fn zeros<'d>(dev: &'d Device, name: &str) -> Buffer<'d, f32> {
    dev.filled(name, N, 0.0f32).expect("alloc")
}

/// Queues `count` launches that each write `out[i] = a[i] + 1` over every element.
fn queue<'s>(s: &Sequence<'s>, count: usize, a: &'s Buffer<'_, f32>, out: &'s Buffer<'_, f32>) -> gpu_host::Result<()> {
    let cfg = Launch::linear((N as u32) / BLOCK, BLOCK, 0);
    for _ in 0..count {
        s.launch::<conditional_add_unguarded>(cfg, (a.view(), out.view_mut()))?;
    }
    Ok(())
}

#[test]
fn a_panic_after_queuing_launches_frees_their_buffers_only_after_they_ended() {
    let Some(dev) = gpu_or_skip("a_panic_after_queuing_launches_frees_their_buffers_only_after_they_ended") else {
        return;
    };
    let started = std::time::Instant::now();
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let (a, out) = (zeros(&dev, "a"), zeros(&dev, "out"));
        let _ = dev.sequence(|s| {
            // Each launch writes out[i] = a[i] + 1 = 1.0 over every element.
            queue(s, LAUNCHES, &a, &out)?;
            std::hint::black_box(None::<()>).expect("a panic after queuing the launches");
            Ok(())
        });
        // `a` and `out` are freed here, as the panic unwinds.
    }));
    let unwound = started.elapsed();
    assert!(caught.is_err(), "the panic reaches the caller");
    // Memory allocated now may be what `a` and `out` were: a kernel still running would write 1.0
    // into it.
    let fresh: Vec<_> = (0..2).map(|k| dev.filled(&format!("fresh{k}"), N, 7.0f32).expect("alloc")).collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    dev.sequence(|_| Ok(())).expect("the device still works");
    for (k, b) in fresh.iter().enumerate() {
        let got = b.read().expect("read");
        let overwritten = got.iter().filter(|&&v| v != 7.0).count();
        assert_eq!(overwritten, 0, "fresh buffer {k}: {overwritten} of {N} elements written after the catch");
    }
    eprintln!("{LAUNCHES} launches over {N} elements queued, panic caught after {:.1} ms", unwound.as_secs_f64() * 1e3);
}

#[test]
fn a_panic_after_queuing_launches_waits_for_them_before_it_leaves_the_sequence() {
    let Some(dev) = gpu_or_skip("a_panic_after_queuing_launches_waits_for_them_before_it_leaves_the_sequence") else {
        return;
    };
    // The buffers outlive the catch: nothing is freed by the unwinding, so only the sequence's own
    // wait can stop the caller from going on while the kernels run.
    let (a, out) = (zeros(&dev, "a"), zeros(&dev, "out"));
    // How long the launches run, waited for on the normal path.
    let started = std::time::Instant::now();
    dev.sequence(|s| queue(s, LAUNCHES, &a, &out)).expect("sequence");
    let run = started.elapsed();
    let panicked_at = std::cell::Cell::new(None);
    let caught = catch_unwind(AssertUnwindSafe(|| {
        let _ = dev.sequence(|s| {
            queue(s, LAUNCHES, &a, &out)?;
            panicked_at.set(Some(std::time::Instant::now()));
            std::hint::black_box(None::<()>).expect("a panic after queuing the launches");
            Ok(())
        });
    }));
    let unwound = panicked_at.get().expect("the panic was reached").elapsed();
    assert!(caught.is_err(), "the panic reaches the caller");
    eprintln!(
        "{LAUNCHES} launches: {:.1} ms waited for on the normal path, {:.1} ms from the panic to the catch",
        run.as_secs_f64() * 1e3,
        unwound.as_secs_f64() * 1e3
    );
    // Queuing takes a few µs a launch; the kernels take far longer. A sequence that did not wait on
    // the way out would return within the queuing time.
    assert!(
        unwound >= run / 4,
        "the panic left the sequence after {unwound:?}, while its launches run for {run:?}: it did not wait for them"
    );
}

#[test]
fn a_zeroing_inside_a_sequence_comes_after_the_launches_queued_before_it() {
    let Some(dev) = gpu_or_skip("a_zeroing_inside_a_sequence_comes_after_the_launches_queued_before_it") else {
        return;
    };
    let (a, out) = (zeros(&dev, "a"), zeros(&dev, "out"));
    dev.sequence(|s| {
        // out[i] = a[i] + 1 = 1.0
        queue(s, LAUNCHES / 4, &a, &out)?;
        // Not `s.zero`: the buffer's own zeroing, which must come after the launches queued before it.
        out.zero()
    })
    .expect("sequence");
    let left = out.read().expect("read").iter().filter(|&&v| v != 0.0).count();
    assert_eq!(left, 0, "{left} of {N} elements were written by a launch queued before the zeroing, after it");
}

#[test]
fn a_buffer_read_inside_a_sequence_comes_after_the_launches_queued_before_it() {
    let Some(dev) = gpu_or_skip("a_buffer_read_inside_a_sequence_comes_after_the_launches_queued_before_it") else {
        return;
    };
    let (a, busy, probe) = (zeros(&dev, "a"), zeros(&dev, "busy"), zeros(&dev, "probe"));
    let (seen, written) = dev
        .sequence(|s| {
            queue(s, LAUNCHES / 4, &a, &busy)?;
            // Queued behind the busy launches: probe[i] = a[i] + 1 = 1.0.
            queue(s, 1, &a, &probe)?;
            let seen = probe.read()?;
            // A write now comes after every launch queued before it too: no launch sees it.
            a.write(&vec![5.0f32; N])?;
            Ok((seen, probe.read()?))
        })
        .expect("sequence");
    let early = seen.iter().filter(|&&v| v != 1.0).count();
    assert_eq!(early, 0, "{early} of {N} elements were read before the launch queued before the read wrote them");
    assert!(written.iter().all(|&v| v == 1.0));
    assert!(a.read().expect("read a").iter().all(|&v| v == 5.0));
}
