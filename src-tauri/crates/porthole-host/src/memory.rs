//! Memory the app freed, given back to the system once a burst of work is over.
//!
//! glibc's allocator keeps what a program frees in its arenas (one per thread that allocated,
//! up to eight per core) for the next allocation, and gives it back to the system only from the
//! top of an arena. After a burst (the views read ahead, a turn with its tool results, a large
//! message) an idle app would go on holding megabytes it no longer uses: 2.2 MiB of the app's
//! memory at rest after start-up, measured (BENCHMARKS.md). `malloc_trim` hands every free page
//! of every arena back. Elsewhere (macOS, Windows, musl) this does nothing.

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
