// swift-tools-version:5.9
// mcpaxle's MCP client for Apple platforms: the Swift sources uniffi-bindgen generated
// (Sources/McpaxleFFI, committed and drift-checked by `make test-kotlin`) and a hand-written layer
// over them (Sources/Mcpaxle: subscriptions as an AsyncSequence), over the Rust library as an
// XCFramework that build-xcframework.sh builds on macOS (the release workflow). Not built or
// tested on the Linux machine of `make test`.
import PackageDescription

let package = Package(
    name: "Mcpaxle",
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .library(name: "Mcpaxle", targets: ["Mcpaxle", "McpaxleFFI"]),
        .library(name: "McpaxleFFI", targets: ["McpaxleFFI"]),
    ],
    targets: [
        // The C interface of libmcpaxle_uniffi (include/mcpaxle_uniffiFFI.h and its module map),
        // with the static libraries of every Apple target.
        .binaryTarget(name: "mcpaxle_uniffiFFI", path: "build/mcpaxle_uniffiFFI.xcframework"),
        .target(name: "McpaxleFFI", dependencies: ["mcpaxle_uniffiFFI"], path: "Sources/McpaxleFFI"),
        .target(name: "Mcpaxle", dependencies: ["McpaxleFFI"], path: "Sources/Mcpaxle"),
    ]
)
