//! Builds `../kernels` to PTX (rustc's NVPTX backend, the toolchain named in
//! `kernels/rust-toolchain.toml`) and sets `KERNELS_PTX` to the module's path for `include_str!`.
fn main() {
    if let Err(e) = gpu_builder::PtxBuilder::new("../kernels").arch("sm_90").build() {
        eprintln!("{e}");
        std::process::exit(1);
    }
}
