//! Gives the shared library its SONAME, so that programs (and CMake's imported target) link it
//! as `libmcpaxle.so` rather than by its build path.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libmcpaxle.so");
    }
}
