//! Memory the app freed, given back to the system once a burst of work is over, and the
//! allocator's arenas held to two.
//!
//! glibc's allocator keeps what a program frees in its arenas (one per thread that allocated,
//! up to eight per core) for the next allocation, and gives it back to the system only from the
//! top of an arena. After a burst (the views read ahead, a turn with its tool results, a large
//! message) an idle app would go on holding megabytes it no longer uses: 2.2 MiB of the app's
//! memory at rest after start-up, measured (BENCHMARKS.md). `malloc_trim` hands every free page
//! of every arena back. Elsewhere (macOS, Windows, musl) this does nothing.

/// Caps glibc's allocator at two arenas. By default a thread that allocates while another holds
/// an arena gets one of its own (up to eight per core), and each keeps its own free and partly
/// used pages: the app's threads (Tokio's, WebKit's on the UI side, the log writer) held 3–4 MiB
/// more at rest that way (BENCHMARKS.md). Called first thing in `main`, before any thread starts.
pub fn limit_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt takes no pointers; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Gives the allocator's free pages back to the system now (a few milliseconds for a large
/// heap). Returns whether any memory was given back.
pub fn give_back_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes no pointers and may be called from any thread at any time.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// [`give_back_freed_memory`] on one of `runtime`'s blocking threads, so no task waits for it.
pub(crate) fn give_back_freed_memory_soon(runtime: &tokio::runtime::Handle) {
    runtime.spawn_blocking(give_back_freed_memory);
}
