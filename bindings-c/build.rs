//! Gives the shared library its SONAME, so that programs (and CMake's imported target) link it
//! as `libmcpaxle.so` rather than by its build path; and, in build.sh's release build, the
//! layout of packaging/symbol-order.txt.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcpaxle.so");
    }
    mcpaxle_symbol_order::link();
}
