//! The `SIGSEGV`/`SIGBUS` handler that turns a fault on an emulated thread's guard page into a report
//! on stderr and an abort of the process.

use super::guard::{REPORT, REPORT_BYTES, RUNNING};
use libc::{c_int, c_void, siginfo_t};
use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

const SIGNALS: [c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// The actions installed before ours, which faults that are not ours go to.
struct Previous(UnsafeCell<[MaybeUninit<libc::sigaction>; 2]>);
// SAFETY: written once, inside `INSTALL`, before `PREVIOUS_SET` is released; read only after it
// is acquired.
unsafe impl Sync for Previous {}
static PREVIOUS: Previous = Previous(UnsafeCell::new([MaybeUninit::uninit(), MaybeUninit::uninit()]));
static PREVIOUS_SET: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

const ALT_STACK_BYTES: usize = 64 * 1024;

/// An alternate signal stack this module made for an OS thread that had none.
struct AltStack {
    base: *mut c_void,
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: the stack was mapped by `prepare` and installed for this thread; it is disabled
        // before it is unmapped.
        unsafe {
            let off = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            libc::sigaltstack(&off, std::ptr::null_mut());
            libc::munmap(self.base, ALT_STACK_BYTES);
        }
    }
}

thread_local! {
    static ALT_STACK_CHECKED: Cell<bool> = const { Cell::new(false) };
    static ALT_STACK: Cell<Option<AltStack>> = const { Cell::new(None) };
}

pub(super) fn prepare() {
    INSTALL.call_once(|| {
        // SAFETY: plain libc calls on zero-initialised, then filled, `sigaction`s.
        unsafe {
            let previous = &mut *PREVIOUS.0.get();
            for (k, &sig) in SIGNALS.iter().enumerate() {
                let mut old: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, std::ptr::null(), &mut old);
                previous[k] = MaybeUninit::new(old);
            }
            PREVIOUS_SET.store(true, Ordering::Release);
            for &sig in &SIGNALS {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fault as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
    if ALT_STACK_CHECKED.with(|c| c.replace(true)) {
        return;
    }
    // SAFETY: querying, and if there is none installing, this thread's alternate signal stack.
    unsafe {
        let mut current: libc::stack_t = std::mem::zeroed();
        libc::sigaltstack(std::ptr::null(), &mut current);
        if current.ss_flags & libc::SS_DISABLE == 0 {
            return; // the thread has one (Rust gives every thread it starts one)
        }
        let base = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if base == libc::MAP_FAILED {
            return;
        }
        let stack = libc::stack_t { ss_sp: base, ss_flags: 0, ss_size: ALT_STACK_BYTES };
        if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
            libc::munmap(base, ALT_STACK_BYTES);
            return;
        }
        ALT_STACK.with(|a| a.set(Some(AltStack { base })));
    }
}

extern "C" fn on_fault(sig: c_int, info: *mut siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if let Some((guard, who)) = RUNNING.with(|r| r.get())
        && addr >= guard.guard_lo
        && addr < guard.guard_hi
    {
        // Soundness: the thread's frames cannot be unwound from here, and abandoning them without
        // running their destructors would break every guard among them. Report and abort.
        report(who);
        // SAFETY: abort is async-signal-safe and never returns.
        unsafe { libc::abort() }
    }
    // SAFETY: forwarding the signal as it arrived.
    unsafe { forward(sig, info, ctx) }
}

/// Longest decimal `u32`.
const DIGITS: usize = 10;

/// Appends `v` in decimal to `buf` at `*len`.
fn push_u32(buf: &mut [u8], len: &mut usize, v: u32) {
    let mut digits = [0u8; DIGITS];
    let (mut n, mut v) = (0, v);
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for k in (0..n).rev() {
        push(buf, len, &[digits[k]]);
    }
}

/// Appends `bytes` to `buf` at `*len`, as far as they fit.
fn push(buf: &mut [u8], len: &mut usize, bytes: &[u8]) {
    let n = bytes.len().min(buf.len() - *len);
    buf[*len..*len + n].copy_from_slice(&bytes[..n]);
    *len += n;
}

/// Appends an index as reports print it: `x` when `y` and `z` are 0, else `(x,y,z)`.
fn push_index(buf: &mut [u8], len: &mut usize, d: &[u32]) {
    if d[1] == 0 && d[2] == 0 {
        push_u32(buf, len, d[0]);
        return;
    }
    push(buf, len, b"(");
    for (k, &v) in d.iter().enumerate() {
        if k > 0 {
            push(buf, len, b",");
        }
        push_u32(buf, len, v);
    }
    push(buf, len, b")");
}

/// Writes the running launch's report of an overflow onto a guard page by thread `who` (block and
/// thread index) to stderr, with async-signal-safe operations only: no allocation, no lock, no
/// formatting machinery, one `write(2)`.
fn report(who: [u32; 6]) {
    let mut line = [0u8; REPORT_BYTES + 64];
    let mut len = 0;
    REPORT.with(|r| {
        // SAFETY: written by `start_launch` before the launch, never while an emulated thread runs
        // (one does now: this fault is on its stack).
        let r = unsafe { &*r.get() };
        push(&mut line, &mut len, &r.text[..r.head]);
        push(&mut line, &mut len, b"block ");
        push_index(&mut line, &mut len, &who[..3]);
        push(&mut line, &mut len, b" thread ");
        push_index(&mut line, &mut len, &who[3..]);
        push(&mut line, &mut len, &r.text[r.head..r.len]);
    });
    // SAFETY: writing a buffer to stderr.
    unsafe { libc::write(2, line.as_ptr() as *const c_void, len) };
}

/// Passes a fault that is not an emulated thread's stack overflow to the action installed before.
unsafe fn forward(sig: c_int, info: *mut siginfo_t, ctx: *mut c_void) {
    let k = SIGNALS.iter().position(|&s| s == sig).unwrap_or(0);
    let previous = if PREVIOUS_SET.load(Ordering::Acquire) {
        // SAFETY: written before PREVIOUS_SET was released.
        Some(unsafe { (*PREVIOUS.0.get())[k].assume_init() })
    } else {
        None
    };
    match previous {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: an SA_SIGINFO handler, called as the kernel would.
                let handler: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
                    unsafe { std::mem::transmute(p.sa_sigaction) };
                handler(sig, info, ctx)
            } else {
                // SAFETY: a plain handler, called as the kernel would.
                let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(p.sa_sigaction) };
                handler(sig)
            }
        }
        _ => {
            // The default action: returning re-executes the faulting instruction, which then
            // ends the process as it would have without this handler.
            // SAFETY: restoring the default action of a signal.
            unsafe {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &default, std::ptr::null_mut());
            }
        }
    }
}
