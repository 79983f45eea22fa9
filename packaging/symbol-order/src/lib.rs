//! For the build scripts of the Python, Node and C bindings: the functions a server runs, laid
//! out together when the library is linked (`packaging/symbol_order.py` says why and writes the
//! list, `packaging/check_symbol_order.py` checks the built libraries).
//!
//! The release build scripts ask for it by setting `MCPAXLE_SYMBOL_ORDER` to the list's path
//! (`packaging/symbol-order-env.sh`: only where the linker is lld); any other build links as
//! it would without.

/// Prints the cargo instructions of a build script: the list passed to the cdylib's linker
/// (lld's `--symbol-ordering-file`, quiet about the functions it names that this library
/// lacks: the list serves three libraries) when `MCPAXLE_SYMBOL_ORDER` names it, and a relink
/// when the variable or the list changes.
pub fn link() {
    println!("cargo:rerun-if-env-changed=MCPAXLE_SYMBOL_ORDER");
    if let Some(path) = std::env::var_os("MCPAXLE_SYMBOL_ORDER") {
        let path = path.to_string_lossy();
        println!("cargo:rerun-if-changed={path}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--symbol-ordering-file={path}");
        println!("cargo:rustc-cdylib-link-arg=-Wl,--no-warn-symbol-ordering");
    }
}
