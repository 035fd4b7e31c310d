// swift-tools-version:6.1
// libFuzzer targets for coursepack's parsers of untrusted input. Built by `make fuzz` with
// `-sanitize=fuzzer,address -parse-as-library`, which a normal build must not get.
import PackageDescription

let package = Package(
    name: "coursepack-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "coursepack", path: "..")],
    targets: [
        .target(name: "FuzzDriver"),
        .executableTarget(name: "FuzzOLX", dependencies: ["FuzzDriver", .product(name: "CourseExport", package: "coursepack")]),
        .executableTarget(name: "FuzzLinks", dependencies: ["FuzzDriver", .product(name: "LinkRewriter", package: "coursepack")]),
        .executableTarget(name: "FuzzTarGz", dependencies: ["FuzzDriver", .product(name: "CourseExport", package: "coursepack")]),
        .executableTarget(name: "FuzzZip", dependencies: ["FuzzDriver", .product(name: "ZipArchive", package: "coursepack")]),
        .executableTarget(name: "FuzzManifest", dependencies: ["FuzzDriver", .product(name: "SyncClient", package: "coursepack")]),
        .executableTarget(name: "FuzzOutbox", dependencies: ["FuzzDriver", .product(name: "SyncClient", package: "coursepack")]),
    ]
)
