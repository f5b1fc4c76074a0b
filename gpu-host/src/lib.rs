//! `gpu-host`: launch kernels written with [`gpu_std`] on a CUDA GPU (through `cust`, with the `cuda`
//! feature) or on `gpu-std`'s CPU SIMT emulator, which runs the same kernel source and reports data
//! races, divergent barriers and deadlocks.
//!
//! ```
//! # pub struct Kernels; unsafe impl gpu_std::KernelCrate for Kernels {}
//! use gpu_host::{Device, cover};
//! gpu_std::kernel! {
//!     /// `out[i] = 2 * x[i]`, one thread per element.
//!     pub fn double<'a>(x: gpu_std::Global<'a, f32>, out: gpu_std::Output<'a, f32>) {
//!         if let Some(o) = out.mine() { o.set(2.0 * x.get(o.index())); }
//!     }
//! }
//! let dev = Device::emulator(Default::default());
//! let x = dev.upload("x", &[1.0f32, 2.0, 3.0]).unwrap();
//! let mut out = dev.filled("out", 3, 0.0f32).unwrap();
//! dev.launch::<double>(cover(3, 32, 1, 0), (x.view(), out.output())).unwrap();
//! assert_eq!(out.read().unwrap(), [2.0, 4.0, 6.0]);
//! assert!(dev.take_findings().races.is_empty());
//! ```
//!
//! On a GPU the kernels come from a PTX module ([`Ptx`]): a file, or text embedded in the program with
//! `include_str!` (the `gpu-builder` crate builds a kernel crate to PTX from a `build.rs` and sets the
//! variable that names the file). Making one is `unsafe`: a module is code, and its text cannot prove
//! what it was built from (see [`Ptx::text`]).
//!
//! ```no_run
//! use gpu_host::{Device, DeviceChoice, Ptx};
//! static KERNELS: &str = "// include_str!(env!(\"MY_KERNELS_PTX\")) in a real program";
//! // SAFETY: the module the build script built with gpu-builder from the kernel crate.
//! let ptx = unsafe { Ptx::text("my_kernels", KERNELS) };
//! // The GPU when there is one, else the emulator, with a note saying why.
//! let (dev, note) = Device::open(DeviceChoice::Auto, &ptx, Default::default()).unwrap();
//! if let Some(note) = note { eprintln!("{note}"); }
//! println!("running on {}", dev.name());
//! ```
//!
//! # The `cuda` feature
//! Without it the crate runs kernels on the emulator only ([`Device::open`] with
//! [`DeviceChoice::Auto`] says so and falls back). With it, `cust` links the CUDA driver API:
//! - **build time**: `CUDA_LIBRARY_PATH=<dir>` where `<dir>/lib64/libcuda.so` exists. On a machine with
//!   the NVIDIA driver, `<dir>/lib64/libcuda.so` can be a link to the driver's `libcuda.so.1`; on one
//!   without, unpack the `libcuda.so.1` of Debian's non-free `libcuda1` package there (`apt-get
//!   download libcuda1 && dpkg -x libcuda1_*.deb <tmp>`; nothing needs installing). No CUDA toolkit is
//!   needed.
//! - **run time**: the NVIDIA driver's `libcuda.so.1` (the program does not start without it) and a
//!   GPU whose architecture can run the PTX module (PTX built for `sm_90` needs an `sm_90` or newer
//!   GPU).
//!
//! # Soundness
//! Views borrow their buffers ([`Buffer::view`], [`Buffer::view_mut`], [`Buffer::output`]), so a launch
//! can never be given freed memory, an `Output` never shares its elements with another argument, and a
//! buffer cannot outlive its [`Device`] nor be passed to another device's launch. Before a GPU launch,
//! the kernel's `.entry` in the PTX module is checked against the kernel's host type: the count and
//! sizes of its parameters, and the signature `kernel!` wrote next to it (module path, name and
//! parameter types of the definition), so that a module built from another definition — stale, of
//! another crate, or with types that differ on the GPU — is an error, not a launch of code compiled for
//! other parameters ([`PtxEntries::check`]). What the module's text is cannot be checked: making a
//! [`Ptx`] is `unsafe`, with the contract that its kernels are what `gpu-builder` compiled from
//! `kernel!` definitions.
#![warn(missing_docs)]
//!
//! # Layout
//! The crate's files, from the leaves up; each may import the ones listed before it, never one after:
//! - leaves, importing nothing of the crate but `error`: `error` ([`Error`]), `size` (allocation
//!   sizes), `choice` ([`DeviceChoice`]), `profile` ([`Profile`]), `attributes`
//!   ([`SystemAttributes`], [`PeerAttributes`]), `launch` ([`Launch`], [`Timing`]), `findings`
//!   ([`Findings`]), `ptx_module` ([`Ptx`]);
//! - `backend`: the one seam between the device and where kernels run, `backend::cuda` (the `cuda`
//!   feature; its `driver` holds every raw driver call) or `backend::emu`;
//! - `device`: the [`Device`], its checks and its single launches;
//! - what extends a device: `buffer` ([`Buffer`]), `mapped` ([`MappedBuffer`], launches with a host
//!   thread), `peer` (two devices), `sequence` ([`Sequence`]), `mutate` ([`mutation_test`]).

mod attributes;
mod backend;
mod buffer;
mod choice;
mod device;
mod error;
mod findings;
mod launch;
mod mapped;
mod mutate;
mod peer;
mod profile;
mod ptx_module;
mod sequence;
mod size;

pub use attributes::{PeerAttributes, SystemAttributes};
pub use buffer::Buffer;
pub use choice::DeviceChoice;
pub use device::Device;
pub use error::{Error, Result};
pub use findings::Findings;
pub use gpu_std::emu::Options as EmuOptions;
pub use gpu_std::{Arg, IntoArgs};
pub use launch::{Launch, Timing, cover};
pub use mapped::{HostView, MappedBuffer};
pub use mutate::mutation_test;
pub use profile::{Profile, Scale};
pub use ptx_module::{Ptx, PtxEntries};
pub use sequence::Sequence;

/// The README's examples, run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
