//! What the driver reports about a GPU's memory shared with the host ([`SystemAttributes`]) and with
//! another GPU ([`PeerAttributes`]): the facts that decide which host↔GPU and GPU↔GPU protocols are
//! legal.
//!
//! A leaf: types only, importing nothing of the crate (the CUDA backend fills them in).

/// What a GPU promises about memory shared with the host (device attributes), which decides which
/// host↔GPU protocols are legal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SystemAttributes {
    /// `CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY`: kernels can address mapped page-locked host memory.
    pub can_map_host_memory: bool,
    /// `CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING`: host and device share one virtual address space.
    pub unified_addressing: bool,
    /// `CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED`: the link to the host supports native atomics,
    /// so the GPU's system-scope read-modify-writes are atomic with the host's on the same word.
    pub host_native_atomics: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS`: kernels can access pageable (malloc'd) host memory.
    pub pageable_memory_access: bool,
    /// `CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES`: and through the host's page
    /// tables.
    pub pageable_uses_host_page_tables: bool,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`: managed memory may be accessed by the host while
    /// a kernel runs.
    pub concurrent_managed_access: bool,
}

/// What the driver reports about one GPU's kernels reaching another GPU's memory
/// ([`Device::peer_attributes`](crate::Device::peer_attributes)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeerAttributes {
    /// `cuDeviceCanAccessPeer`: peer access from this GPU to the other can be enabled.
    pub can_access_peer: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED`: peer access over the link is supported.
    pub access_supported: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED`: atomics on the peer's memory are native over
    /// the link, so the two GPUs' system-scope atomics on one word are atomic with each other.
    pub native_atomics: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK`: the link's relative performance (lower is better).
    pub performance_rank: i32,
}
