// swift-tools-version:6.1
import PackageDescription

let package = Package(
    name: "coursepack",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "coursepack", targets: ["coursepack"]),
        .executable(name: "coursepack-sync", targets: ["coursepack-sync"]),
        .executable(name: "coursepack-device", targets: ["coursepack-device"]),
        .library(name: "Manifest", targets: ["Manifest"]),
        .library(name: "ZipArchive", targets: ["ZipArchive"]),
        .library(name: "Packager", targets: ["Packager"]),
        .library(name: "SyncClient", targets: ["SyncClient"]),
        .library(name: "CourseExport", targets: ["CourseExport"]),
        .library(name: "LinkRewriter", targets: ["LinkRewriter"]),
        .library(name: "AWSSigV4", targets: ["AWSSigV4"]),
        .library(name: "StoragePublisher", targets: ["StoragePublisher"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.14.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .target(name: "ZlibStream", dependencies: ["CZlib"]),
        .target(name: "FileSystem", dependencies: ["Diagnostics", "CFileCalls", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "ZipArchive", dependencies: ["Diagnostics", "ZlibStream", "FileSystem"]),
        .target(name: "ParallelMap"),
        .target(name: "SafeText"),
        .target(name: "Diagnostics"),
        .target(name: "CourseExport", dependencies: ["Diagnostics", "ZlibStream", "ParallelMap", "FileSystem", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "LinkRewriter", dependencies: ["Diagnostics"]),
        .target(name: "CourseSearch", dependencies: ["LinkRewriter", "Manifest", "FileSystem"]),
        .target(
            name: "OfflineSearch",
            dependencies: ["Diagnostics", "CourseSearch", "ClientTarget", "SyncClient", "Manifest", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "BlockRenderer",
            dependencies: ["Diagnostics", "CourseExport", "LinkRewriter", "FileSystem", .product(name: "Mustache", package: "swift-mustache")]
        ),
        .target(name: "Manifest", dependencies: ["Diagnostics", "FileSystem", "ParallelMap"]),
        .target(name: "CFileCalls"),
        .target(
            name: "SyncClient",
            dependencies: ["Diagnostics", "Manifest", "ZipArchive", "ZlibStream", "FileSystem", "SafeText", "ParallelMap", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "IncrementalBuild", dependencies: ["Diagnostics", "FileSystem", "ParallelMap", "ZlibStream", .product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "Packager",
            dependencies: [
                "Diagnostics", "CourseExport", "LinkRewriter", "BlockRenderer", "ZipArchive", "Manifest", "ParallelMap", "FileSystem", "IncrementalBuild",
                "CourseSearch", "CZlib", "ZlibStream", "SafeText",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CourseServer",
            dependencies: [
                "Diagnostics", "ClientTarget", "SyncClient", "SafeText", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "ClientTarget", dependencies: ["Diagnostics", "SyncClient", "Manifest", "ZipArchive", "FileSystem", "CourseSearch", "SafeText"]),
        .target(name: "AWSSigV4", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        .target(
            name: "StoragePublisher",
            dependencies: ["Diagnostics", "AWSSigV4", "Manifest", "FileSystem", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .target(name: "CommandLineSupport", dependencies: ["SafeText", "Diagnostics", .product(name: "ArgumentParser", package: "swift-argument-parser")]),
        .executableTarget(
            name: "coursepack",
            dependencies: [
                "Packager", "CourseExport", "Manifest", "CommandLineSupport", "Diagnostics",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coursepack-sync",
            dependencies: [
                "Diagnostics", "SyncClient", "ClientTarget", "Manifest", "CommandLineSupport", "StoragePublisher", "SafeText",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coursepack-device",
            dependencies: [
                "ClientTarget", "CourseServer", "OfflineSearch", "CommandLineSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coursepack-bench",
            dependencies: ["ZipArchive", "ZlibStream", "FileSystem", "LinkRewriter", "IncrementalCheck", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .target(name: "IncrementalCheck", dependencies: ["Packager", "BlockRenderer", "IncrementalBuild", "TestSupport"], path: "Tests/IncrementalCheck"),
        .testTarget(name: "ZipArchiveTests", dependencies: ["ZipArchive", "ZlibStream", "FileSystem", "TestSupport", .product(name: "Crypto", package: "swift-crypto")]),
        .testTarget(name: "CourseExportTests", dependencies: ["CourseExport", "TestSupport"]),
        .testTarget(name: "LinkRewriterTests", dependencies: ["LinkRewriter"]),
        .testTarget(name: "IncrementalBuildTests", dependencies: ["IncrementalBuild", "FileSystem", "ParallelMap", "TestSupport"]),
        .testTarget(name: "ManifestTests", dependencies: ["Manifest", "TestSupport"]),
        .testTarget(
            name: "PackagerTests", dependencies: ["Packager", "Manifest", "ZipArchive", "CourseExport", "BlockRenderer", "Diagnostics", "TestSupport", "IncrementalCheck", "IncrementalBuild"],
            exclude: ["Snapshots"]
        ),
        .testTarget(name: "ClientLibraryTests", dependencies: ["ClientTarget", "SyncClient", "Manifest", "coursepack", "TestSupport"]),
        .testTarget(name: "SyncClientTests", dependencies: ["SyncClient", "Manifest", "ZipArchive", "ZlibStream", "FileSystem", "SafeText", "TestSupport"]),
        .testTarget(name: "AWSSigV4Tests", dependencies: ["AWSSigV4"]),
        .testTarget(name: "StoragePublisherTests", dependencies: ["StoragePublisher", "AWSSigV4", "Manifest", "coursepack", "coursepack-sync", "coursepack-device", "TestSupport"]),
        .testTarget(
            name: "SearchTests",
            dependencies: [
                "CourseSearch", "OfflineSearch", "Packager", "BlockRenderer", "Manifest", "ZipArchive", "ClientTarget", "SyncClient", "TestSupport", "coursepack",
                "coursepack-sync", "coursepack-device", "IncrementalBuild",
            ]
        ),
        .testTarget(name: "DiagnosticsTests", dependencies: ["Diagnostics"]),
        .testTarget(name: "CLITests", dependencies: ["coursepack", "coursepack-sync", "coursepack-device", "Manifest", "TestSupport"], exclude: ["Golden"]),
    ]
)
