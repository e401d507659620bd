// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "mediasync",
    products: [
        // The library: `MediaSync`, its one front door, over the mirror (`MediaSyncMirror` and the modules below
        // it) and the mirror's Jellyfin face for `mediasync serve` (`MediaSyncServe`, which reads the mirror through
        // `MediaSyncMirror` only).
        .library(
            name: "MediaSync",
            targets: [
                "MediaSyncJSON", "MediaSyncCore", "MediaSyncHTTP", "MediaSyncFeeds", "MediaSyncServer",
                "MediaSyncMirror", "MediaSyncServe", "MediaSync",
            ]),
        .executable(name: "mediasync", targets: ["mediasync"]),
        // A test and demo tool, not part of the library's API.
        .executable(name: "mediasync-test-server", targets: ["mediasync-test-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CLibXML2",
            pkgConfig: "libxml-2.0",
            providers: [.apt(["libxml2-dev"])]
        ),
        .target(
            name: "MediaSyncHTTP",
            dependencies: ["CCurl", .product(name: "Crypto", package: "swift-crypto")]),
        .target(name: "MediaSyncFeeds", dependencies: ["CLibXML2"]),
        // JSON's parser, value and writers: the library reads and writes with them, the test server answers with them.
        .target(name: "MediaSyncJSON"),
        .target(name: "MediaSyncCore", dependencies: ["MediaSyncJSON"]),
        .target(name: "MediaSyncServer", dependencies: ["MediaSyncJSON", "MediaSyncCore", "MediaSyncHTTP"]),
        // The mirror: sync, selections, podcasts, storage, export, play state.
        .target(
            name: "MediaSyncMirror",
            dependencies: [
                "MediaSyncJSON", "MediaSyncCore", "MediaSyncHTTP", "MediaSyncFeeds", "MediaSyncServer",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        // `mediasync serve`: the mirror answered as a Jellyfin server (docs/serve.md).
        .target(
            name: "MediaSyncServe",
            dependencies: [
                "MediaSyncMirror", "MediaSyncJSON", "MediaSyncCore", "MediaSyncHTTP",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]),
        // The front door: what a program using the library imports (the mirror and serve, re-exported).
        .target(name: "MediaSync", dependencies: ["MediaSyncMirror", "MediaSyncServe"]),
        .target(name: "MediaSyncTestServer", dependencies: ["MediaSyncJSON", "MediaSyncCore"]),
        .executableTarget(
            name: "mediasync",
            dependencies: [
                "MediaSync",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "mediasync-test-server",
            dependencies: ["MediaSyncTestServer"]
        ),
        // The feed parsers' fuzz target: a replayer in a normal build, a libFuzzer target when built by
        // Scripts/fuzz-feeds.sh (-sanitize=fuzzer,address -DMEDIASYNC_LIBFUZZER).
        .executableTarget(name: "mediasync-fuzz-feeds", dependencies: ["MediaSyncFeeds"], path: "Fuzz/FeedFuzzer"),
        // The planner's micro-benchmark (Scripts/bench-sync.sh runs it in a release build).
        .executableTarget(name: "mediasync-bench-planner", dependencies: ["MediaSyncCore"]),
        .target(name: "MediaSyncTestSupport", path: "Tests/MediaSyncTestSupport"),
        .testTarget(
            name: "MediaSyncHTTPTests", dependencies: ["MediaSyncHTTP", "MediaSyncTestServer", "MediaSyncTestSupport"]),
        .testTarget(
            name: "MediaSyncFeedsTests", dependencies: ["MediaSyncFeeds", "MediaSyncCore", "MediaSyncTestSupport"]),
        .testTarget(
            name: "MediaSyncCoreTests", dependencies: ["MediaSyncJSON", "MediaSyncCore", "MediaSyncTestSupport"]),
        .testTarget(name: "MediaSyncJSONTests", dependencies: ["MediaSyncJSON", "MediaSyncTestSupport"]),
        .testTarget(
            name: "MediaSyncServerTests",
            dependencies: ["MediaSyncServer", "MediaSyncJSON", "MediaSyncCore", "MediaSyncHTTP", "MediaSyncTestServer"]),
        .testTarget(
            name: "MediaSyncTests",
            dependencies: [
                "MediaSync", "MediaSyncMirror", "MediaSyncJSON", "MediaSyncTestServer", "MediaSyncTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
        .testTarget(
            name: "MediaSyncTestServerTests", dependencies: ["MediaSyncTestServer", "MediaSyncJSON", "MediaSyncCore"]),
        .testTarget(
            name: "MediaSyncServeTests",
            dependencies: [
                "mediasync", "MediaSyncServe", "MediaSync", "MediaSyncMirror", "MediaSyncJSON", "MediaSyncCore",
                "MediaSyncServer",
                "MediaSyncHTTP", "MediaSyncTestServer", "MediaSyncTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Python"]),
        .testTarget(
            name: "mediasyncCLITests",
            dependencies: [
                "mediasync", "mediasync-test-server", "MediaSync", "MediaSyncTestServer", "MediaSyncTestSupport",
            ]),
    ]
)
