//! The `SIGSEGV`/`SIGBUS` handler that turns a fault on an emulated thread's guard page into a
//! return to the scheduler.

use super::{IN_EMULATOR, KERNEL, OVERFLOWED, RUNNING, SOFT_LIMIT};
use corosensei::trap::TrapHandlerRegs;
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

#[cfg(target_arch = "x86_64")]
unsafe fn stack_pointer(ctx: *mut libc::ucontext_t) -> usize {
    // SAFETY: the kernel's context of the interrupted thread.
    unsafe { (*ctx).uc_mcontext.gregs[libc::REG_RSP as usize] as usize }
}

#[cfg(target_arch = "x86_64")]
unsafe fn redirect(ctx: *mut libc::ucontext_t, regs: TrapHandlerRegs) {
    let TrapHandlerRegs { rip, rsp, rbp, rdi, rsi } = regs;
    // SAFETY: as in `stack_pointer`; the registers corosensei asks for.
    let g = unsafe { &mut (*ctx).uc_mcontext.gregs };
    g[libc::REG_RIP as usize] = rip as i64;
    g[libc::REG_RSP as usize] = rsp as i64;
    g[libc::REG_RBP as usize] = rbp as i64;
    g[libc::REG_RDI as usize] = rdi as i64;
    g[libc::REG_RSI as usize] = rsi as i64;
}

#[cfg(target_arch = "aarch64")]
unsafe fn stack_pointer(ctx: *mut libc::ucontext_t) -> usize {
    // SAFETY: the kernel's context of the interrupted thread.
    unsafe { (*ctx).uc_mcontext.sp as usize }
}

#[cfg(target_arch = "aarch64")]
unsafe fn redirect(ctx: *mut libc::ucontext_t, regs: TrapHandlerRegs) {
    let TrapHandlerRegs { pc, sp, x0, x1, x29, lr } = regs;
    // SAFETY: as in `stack_pointer`; the registers corosensei asks for.
    let m = unsafe { &mut (*ctx).uc_mcontext };
    m.pc = pc;
    m.sp = sp;
    m.regs[0] = x0;
    m.regs[1] = x1;
    m.regs[29] = x29;
    m.regs[30] = lr;
}

extern "C" fn on_fault(sig: c_int, info: *mut siginfo_t, ctx: *mut c_void) {
    // SAFETY: the kernel passes a valid siginfo and context to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let ctx = ctx as *mut libc::ucontext_t;
    if let Some((guard, who)) = RUNNING.with(|r| r.get())
        && addr >= guard.guard_lo
        && addr < guard.guard_hi
    {
        // SAFETY: as above.
        let sp = unsafe { stack_pointer(ctx) };
        if IN_EMULATOR.with(|d| d.get()) == 0 && guard.trap.stack_ptr_in_bounds(sp) {
            // SAFETY: the fault happened on the running coroutine's stack (checked), in kernel
            // code, which writes memory only through the emulator and holds no locks; the context
            // is updated exactly as corosensei asks.
            unsafe {
                let regs = guard.trap.setup_trap_handler(|| OVERFLOWED.with(|o| o.set(true)));
                redirect(ctx, regs);
            }
            RUNNING.with(|r| r.set(None));
            SOFT_LIMIT.with(|s| s.set(0));
            return;
        }
        unrecoverable(who);
    }
    // SAFETY: forwarding the signal as it arrived.
    unsafe { forward(sig, info, ctx as *mut c_void) }
}

/// Writes, without allocating, which kernel and thread overflowed where it cannot be recovered.
fn unrecoverable(who: [u32; 6]) {
    struct Line {
        buf: [u8; 512],
        len: usize,
    }
    impl std::fmt::Write for Line {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let n = s.len().min(self.buf.len() - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
            self.len += n;
            Ok(())
        }
    }
    let (ptr, len) = KERNEL.with(|k| k.get());
    let kernel = if ptr.is_null() {
        ""
    } else {
        // SAFETY: the running launch's kernel name, alive until the launch finishes.
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(ptr, len)) }
    };
    let mut line = Line { buf: [0; 512], len: 0 };
    let _ = std::fmt::write(
        &mut line,
        format_args!(
            "gpu-std emulator: stack overflow in kernel `{kernel}`, block ({},{},{}) thread ({},{},{}), inside \
             the emulator's own code, where it cannot be recovered: raise emu::Options::stack_bytes\n",
            who[0], who[1], who[2], who[3], who[4], who[5]
        ),
    );
    // SAFETY: writing a buffer to stderr.
    unsafe { libc::write(2, line.buf.as_ptr() as *const c_void, line.len) };
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
