// swift-tools-version: 6.1
// An example service: a library catalogue as an HTTP JSON API (Hummingbird 2) over Skerry.
// A nested package, so that Skerry itself depends on none of this.
import PackageDescription

let package = Package(
    name: "LibraryService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Skerry", path: "../..", traits: ["Logging", "ServiceLifecycle"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        .executableTarget(
            name: "LibraryService",
            dependencies: [
                .product(name: "Skerry", package: "Skerry"),
                .product(name: "SkerryCore", package: "Skerry"),
                .product(name: "SkerryLogging", package: "Skerry"),
                .product(name: "SkerryPostgres", package: "Skerry"),
                .product(name: "SkerryServiceLifecycle", package: "Skerry"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
