// swift-tools-version: 6.0
// libFuzzer harness for the predicate format parser: run with scripts/fuzz-predicates.sh (it builds
// with -sanitize=fuzzer,address). Not part of the core products.
import PackageDescription

let package = Package(
    name: "SkerryFuzz",
    dependencies: [.package(name: "Skerry", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzPredicates",
            dependencies: [.product(name: "SkerryCore", package: "Skerry")],
            // The entry point is defined below, for libFuzzer's driver, not by top-level code.
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    ],
    swiftLanguageModes: [.v6]
)
