//! Links the addon the way Node expects (napi-build sets the platform's linker flags); and, in
//! scripts/build.sh's release build, with the layout of packaging/symbol-order.txt.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    napi_build::setup();
    mcpaxle_symbol_order::link();
}
