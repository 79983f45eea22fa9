//! The first server a process builds raises glibc's thresholds (`server/memory.rs`): a 1 MiB
//! block, mapped on its own before (glibc's default threshold is 128 KiB), comes from the heap
//! after, so large request bodies stop being mapped, faulted in and unmapped on every call.
//! One test in its own process: the thresholds are the process's.

#![cfg(all(target_os = "linux", target_env = "gnu"))]

use mcpaxle::server::Server;

/// How many blocks glibc has mapped on their own after allocating (and holding) `size` bytes.
fn mapped_blocks_with(size: usize) -> usize {
    let block = vec![1u8; size];
    // SAFETY: mallinfo2 only reads the allocator's counters.
    let mapped = unsafe { libc::mallinfo2() }.hblks;
    drop(std::hint::black_box(block));
    mapped
}

#[test]
fn building_a_server_stops_large_blocks_being_mapped_one_by_one() {
    let none = mapped_blocks_with(16);
    assert_eq!(mapped_blocks_with(1 << 20), none + 1, "before: a 1 MiB block is mapped on its own");
    let _server = Server::builder("allocator-test", "1").build();
    assert_eq!(mapped_blocks_with(1 << 20), none, "after: a 1 MiB block comes from the heap");
}
