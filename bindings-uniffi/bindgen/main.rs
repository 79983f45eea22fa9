//! uniffi's generator, pinned with the library: `make test-kotlin` runs it to regenerate the
//! committed Kotlin and Swift sources and fails on a difference.

fn main() {
    uniffi::uniffi_bindgen_main()
}
