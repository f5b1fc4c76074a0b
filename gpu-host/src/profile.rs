//! What a device can do and how much work suits it ([`Profile`]): the questions a program asks of a
//! [`Device`](crate::Device) before it chooses sizes, schedules, timings and checks. Each field names
//! a need, not a backend: a caller asks "can this be timed?", never "is this a GPU?".
//!
//! Owns the profile's types only; imports nothing of the crate (the backends fill it in).

/// How much work a device runs in the time a test or a chapter run has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Hardware speed: inputs of millions of elements, grids of every SM, polls counted in millions.
    Full,
    /// Every thread is run on the host CPU, one at a time: inputs, grids, repetitions and polls are
    /// kept small (a grid of at most 32 blocks; a kernel's waits bounded below the emulator's livelock
    /// limit, so that a wait that cannot end is reported by the side that waits).
    Small,
}

/// What a device can do and how much work suits it ([`Device::profile`](crate::Device::profile)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Profile {
    /// Whether launches can be timed (device events): [`Device::time`](crate::Device::time) and
    /// [`Device::time_calls`](crate::Device::time_calls) return `Some`, and a kernel's own clock
    /// readings mean something.
    pub can_time: bool,
    /// How much work to give it.
    pub scale: Scale,
    /// Blocks that run side by side: the GPU's streaming multiprocessors, or the emulator's
    /// `max_resident_blocks` (the same number as [`Device::sm_count`](crate::Device::sm_count)).
    pub sms: u32,
    /// The seed that chooses the interleaving of the threads, where a seed does: another seed may
    /// show another interleaving (and another result of a racy or order-dependent kernel). `None`
    /// where the hardware chooses (each run may differ, and no run can be asked for again).
    pub schedule_seed: Option<u64>,
    /// Whether launches are checked: data races, ordering hazards and uninitialised shared reads are
    /// reported ([`Device::take_findings`](crate::Device::take_findings)), and a divergent barrier, a
    /// deadlock or a livelock is an error of the launch instead of a hang. Where `false` a bug fails
    /// silently, or never ends: a kernel kept broken on purpose must not be run there.
    pub detectors: bool,
}

impl Profile {
    /// Whether the device runs work at hardware speed ([`Scale::Full`]).
    pub fn full_scale(&self) -> bool {
        self.scale == Scale::Full
    }

    /// `full` at [`Scale::Full`], else `small`: the size of a piece of work for this device.
    pub fn pick<T>(&self, full: T, small: T) -> T {
        match self.scale {
            Scale::Full => full,
            Scale::Small => small,
        }
    }
}
