//! Which device to open ([`DeviceChoice`]), as a command line names it.
//!
//! A leaf: imports nothing of the crate.

use anyhow::{Result, bail};

/// Which device to open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU if a CUDA driver and device are present, else the emulator.
    Auto,
    /// The GPU, or an error.
    Gpu,
    /// The CPU SIMT emulator.
    Emu,
}

impl std::str::FromStr for DeviceChoice {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "auto" => DeviceChoice::Auto,
            "gpu" => DeviceChoice::Gpu,
            "emu" => DeviceChoice::Emu,
            _ => bail!("unknown device `{s}` (expected auto, gpu or emu)"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_choices_parse() {
        assert_eq!("gpu".parse::<DeviceChoice>().unwrap(), DeviceChoice::Gpu);
        assert!("cpu".parse::<DeviceChoice>().unwrap_err().to_string().contains("expected auto, gpu or emu"));
    }
}
