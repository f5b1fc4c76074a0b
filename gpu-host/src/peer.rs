//! Two devices together: what one GPU's kernels reaching another's memory would be
//! ([`Device::peer_attributes`]), enabling it ([`Device::enable_peer_access`]), and launching on both
//! at once ([`Device::launch_pair`]).
//!
//! Imports the device (`device`), the backend (`backend`) and the leaves; the device layer does not
//! import it.

use crate::attributes::PeerAttributes;
use crate::backend::Backend;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch::Launch;
use gpu_std::{IntoArgs, Kernel, KernelArgs};

impl Device {
    /// What the driver reports about this GPU's kernels reaching `peer`'s memory
    /// (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`); `None` when either is the emulator. An
    /// error when both are the same GPU.
    pub fn peer_attributes(&self, peer: &Device) -> Result<Option<PeerAttributes>> {
        self.backend.peer_attributes(&peer.backend)
    }

    /// Lets this GPU's kernels access `peer`'s memory (`cuCtxEnablePeerAccess` from this GPU's context
    /// to `peer`'s): from then on a launch on this device accepts views of `peer`'s buffers (and of its
    /// mapped memory), which it refuses before. One direction only: call it on each device for both.
    /// An error, with the driver's answer, when the two are not GPUs that can reach each other (the same
    /// GPU, or `cuDeviceCanAccessPeer` / `CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED` is 0). On two
    /// emulators it does nothing: their memory is host memory, which both reach.
    pub fn enable_peer_access(&self, peer: &Device) -> Result<()> {
        self.backend.enable_peer_access(&peer.backend)?;
        // (Two emulators share the host's memory space: the entry changes nothing there.)
        let mut peers = self.peers.borrow_mut();
        if !peers.contains(&peer.space) {
            peers.push(peer.space);
        }
        Ok(())
    }

    /// Launches `K0` on `d0` and `K1` on `d1` at the same time and waits for both; returns each
    /// kernel's time in ms on GPUs (device events), `None` on the emulator. On GPUs each launch is
    /// queued on its device's stream without waiting, then both are waited for (the second is waited
    /// for even when the first failed while running, and the first even when the second could not be
    /// queued), so the call returns only when neither kernel runs. Each argument tuple is checked as
    /// [`Device::launch`] checks it: views of the device's own memory, or of a peer's it enabled
    /// access to ([`Device::enable_peer_access`]); and the two against each other: an
    /// [`Output`](gpu_std::Output) of one may overlap no view of the other
    /// ([`gpu_std::check_concurrent_views`]). Kernels that wait for each other must bound their
    /// waits: the two grids start at different times, and one may fail to start.
    ///
    /// On two emulators it is one emulated launch of both grids under one scheduler
    /// (`gpu_std::emu::launch_two_devices`): device scope covers one device's threads only, and what
    /// the detectors find goes to `d0`'s findings.
    pub fn launch_pair<'a, 'b, K0: Kernel, K1: Kernel>(
        d0: &Device,
        cfg0: Launch,
        args0: impl IntoArgs<Params = K0::Args<'a>>,
        d1: &Device,
        cfg1: Launch,
        args1: impl IntoArgs<Params = K1::Args<'b>>,
    ) -> Result<(Option<f64>, Option<f64>)> {
        let p0 = d0.checked_args::<K0>(&cfg0, args0)?;
        let p1 = d1.checked_args::<K1>(&cfg1, args1)?;
        // `Arg` is `Copy`: one `output()` can be given to both tuples, which each launch's own check
        // cannot see.
        gpu_std::check_concurrent_views(K0::NAME, K0::PARAMS, &p0.views(), K1::NAME, K1::PARAMS, &p1.views())
            .map_err(Error::Refused)?;
        // SAFETY: the views in `p0` and `p1` point into memory each device may access (checked above:
        // its own, or a peer's with access enabled) and borrow their buffers until this call returns,
        // which waits for both kernels.
        unsafe { Backend::launch_pair::<K0, K1>(&d0.backend, cfg0, p0, &d1.backend, cfg1, p1) }
    }
}
