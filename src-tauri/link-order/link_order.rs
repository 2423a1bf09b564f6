// Included by the build scripts of `porthole` and `porthole-demo-server` (README.md here).

/// Links release builds for x86-64 Linux with `bin`'s code laid out in the order of
/// `link-order/<bin>.txt`: the functions the program runs from its start to rest first, so the
/// pages of its file it maps at rest are mostly ones it uses. Functions the list does not name
/// (new ones, or ones renamed) are laid out after them as before; other builds are not changed.
/// `PORTHOLE_LINK_ORDER=off` links without the list (to measure it); `PORTHOLE_LINK_MAP=<dir>`
/// writes lld's map of the link to `<dir>/<bin>.map` (`link-order/generate` reads it).
fn link_order(bin: &str, dir: &std::path::Path) {
    let env = |name: &str| {
        println!("cargo:rerun-if-env-changed={name}");
        std::env::var(name).unwrap_or_default()
    };
    let map = env("PORTHOLE_LINK_MAP");
    if !map.is_empty() {
        println!("cargo:rustc-link-arg-bins=-Wl,-Map={map}/{bin}.map");
    }
    let order = dir.join(format!("{bin}.txt"));
    println!("cargo:rerun-if-changed={}", order.display());
    // The flag is lld's, which Rust links x86-64 Linux programs with.
    let lld = std::env::var("TARGET").is_ok_and(|t| t == "x86_64-unknown-linux-gnu");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    if release && lld && order.is_file() && env("PORTHOLE_LINK_ORDER") != "off" {
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}", order.display());
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
