//! In the wheel's release build (packaging/python/build.sh), the extension is linked with the
//! layout of packaging/symbol-order.txt (packaging/python/zig-cc.sh, its linker, applies it).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    mcpaxle_symbol_order::link();
}
