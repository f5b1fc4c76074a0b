//! Which device to open ([`DeviceChoice`]), as a command line names it.
//!
//! Imports `error` only.

use crate::error::{Error, Result};

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
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Ok(match s {
            "auto" => DeviceChoice::Auto,
            "gpu" => DeviceChoice::Gpu,
            "emu" => DeviceChoice::Emu,
            _ => return Err(Error::UnknownDevice(s.to_string())),
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
