// swift-tools-version:6.1
// SPDX-License-Identifier: Apache-2.0
// SprintGate: a headless photo-finish timing gate for single-board computers.

import PackageDescription

let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

// Modules whose tests reach internal API (`@testable import`) are compiled for testing in
// every configuration, because `scripts/test` runs the tests on an optimised build.
let testableSettings: [SwiftSetting] = strictSettings + [.unsafeFlags(["-enable-testing"])]

let package = Package(
    name: "sprintgate",
    products: [
        .executable(name: "sprintgate", targets: ["sprintgate"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        // Named for the web tests' own loopback client; Hummingbird builds on both already.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        // Pure core: value types, time domains, frame views, errors. No Foundation.
        .target(
            name: "GateCore",
            dependencies: [.product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Photo-finish detector: pure, allocation-free per frame. No Foundation.
        .target(
            name: "Detector",
            dependencies: ["GateCore"],
            swiftSettings: strictSettings
        ),
        // The timing policy: start types, laps, feedback; a state machine over ports' events.
        .target(
            name: "Engine",
            dependencies: ["GateCore", "Detector", "PhotoFinish", "VideoDelay"],
            swiftSettings: strictSettings
        ),
        // Board and gate configuration files (TOML) decoded into typed values.
        .target(
            name: "GateConfig",
            dependencies: ["GateCore", "Detector", "Engine", "Archery", "VideoDelay", "GATT", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strictSettings
        ),
        // Clock synchronisation: sample filter, regression of offset and drift, peer model. No Foundation.
        .target(
            name: "ClockSync",
            dependencies: ["GateCore"],
            swiftSettings: strictSettings
        ),
        // The peer protocol on the wire: message set, compact binary codec, NTP timestamps. No Foundation.
        .target(
            name: "PeerWire",
            dependencies: ["GateCore"],
            swiftSettings: strictSettings
        ),
        // Datagram authentication from the pairing code, with replay protection.
        .target(
            name: "PeerAuth",
            dependencies: ["PeerWire", "CPeerMAC"],
            swiftSettings: strictSettings
        ),
        // Multi-gate races: session state machine, roles, retransmission, discovery, sync per peer.
        .target(
            name: "Race",
            dependencies: ["GateCore", "PeerWire", "PeerAuth", "ClockSync"],
            swiftSettings: strictSettings
        ),
        // Photo-finish images: ring of gate columns and thumbnails, slit-scan composite. No Foundation.
        .target(
            name: "PhotoFinish",
            dependencies: ["GateCore"],
            swiftSettings: strictSettings
        ),
        // Athletics calculators: wind adjustment and equivalent performances. No Foundation.
        .target(
            name: "Calculators",
            swiftSettings: strictSettings
        ),
        // Archery scoring: target faces, the line-cutter rule, score cards. No Foundation.
        .target(
            name: "Archery",
            swiftSettings: strictSettings
        ),
        // GPS timing: receiver fixes and the acceleration timer on the receiver's timeline.
        // No Foundation.
        .target(
            name: "GPSTiming",
            dependencies: ["GateCore"],
            swiftSettings: strictSettings
        ),
        // Ski and snowboard days: runs told from lifts and stops in the day's fixes; GPX
        // files written, and read with libxml2 (through CXMLReader).
        .target(
            name: "SkiRuns",
            dependencies: ["GateCore", "GPSTiming", "CXMLReader"],
            swiftSettings: strictSettings
        ),
        // Bluetooth LE's Attribute Protocol and a GATT client as a state machine. Pure: no
        // Foundation, no I/O.
        .target(
            name: "GATT",
            swiftSettings: strictSettings
        ),
        // Rowing ergometers: the Concept2 PM5's Bluetooth notifications decoded strictly,
        // CSAFE frames to program workouts, one PM5's GATT session. Pure: no Foundation, no I/O.
        .target(
            name: "Rowing",
            dependencies: ["GATT"],
            swiftSettings: strictSettings
        ),
        // gpsd's client: its JSON protocol, the socket, and the thread that keeps the
        // connection and hands fixes on.
        .target(
            name: "GPSD",
            dependencies: ["GPSTiming", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Delayed video: the frame tap, the RAM ring of compressed packets, marks and clip
        // windows, the memory budget. No Foundation.
        .target(
            name: "VideoDelay",
            dependencies: ["GateCore", "Archery"],
            swiftSettings: strictSettings
        ),
        // H.264 encoding, decoding, MP4 files and reading uploads with FFmpeg's libraries.
        .target(
            name: "FFmpegVideo",
            dependencies: ["GateCore", "CFFmpeg"],
            swiftSettings: strictSettings
        ),
        // The video thread: the tap's frames into the ring, the delayed view, clips on disk.
        .target(
            name: "VideoService",
            dependencies: ["GateCore", "Archery", "VideoDelay", "FFmpegVideo", "CLinuxSys", .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Results, athletes and history in SQLite (GRDB, WAL), written on its own thread.
        .target(
            name: "SQLiteStore",
            dependencies: ["GateCore", "Rowing", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: testableSettings
        ),
        // The gate's web page and API: Hummingbird routes and the live WebSocket board.
        .target(
            name: "WebUI",
            dependencies: [
                "GateCore", "SQLiteStore", "Calculators", "VideoDelay", "Archery", "GPSTiming", "SkiRuns", "Rowing",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The page's files, embedded as byte arrays (`PackageResources`).
            resources: [.embedInCode("web/index.html"), .embedInCode("web/app.css"), .embedInCode("web/app.js"),
                        .embedInCode("web/video.js"), .embedInCode("web/archery.js"),
                        .embedInCode("web/gps.js"), .embedInCode("web/ski.js"),
                        .embedInCode("web/rowing.js")],
            swiftSettings: testableSettings
        ),
        // Simulation and replay: clip readers/writers, synthetic scenes, replay runner.
        .target(
            name: "GateSim",
            dependencies: ["GateCore", "Detector", "Engine", "CZlib"],
            swiftSettings: strictSettings
        ),
        // C libraries behind the Linux adapters, one system-library target each.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        .systemLibrary(name: "CFFmpeg", pkgConfig: "libavformat",
                       providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavfilter-dev", "libswscale-dev", "libavutil-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev"])]),
        .systemLibrary(name: "CXML2", pkgConfig: "libxml-2.0", providers: [.apt(["libxml2-dev"])]),
        // libxml2's streaming reader behind a header that names no libxml2 or ICU type, so no
        // Swift module sees the system's ICU beside Foundation's.
        .target(name: "CXMLReader", dependencies: ["CXML2"]),
        // HKDF-SHA256 and HMAC-SHA256 from the system's libcrypto (OpenSSL 3), behind a
        // header of plain C types. Why not swift-crypto: it compiles its own BoringSSL, some
        // 520 C files, which doubled the build from scratch on a Pi for two primitives.
        .target(name: "CPeerMAC", linkerSettings: [.linkedLibrary("crypto")]),
        .systemLibrary(name: "CMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        // MQTT through libmosquitto: a client on its own thread, and the outbox that loses no
        // result while the broker or the Wi-Fi is away.
        .target(
            name: "MQTTLink",
            dependencies: ["CMosquitto", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // The ATT channel over L2CAP sockets and the controller calls, over libbluetooth.
        .target(name: "CBlueZShim", linkerSettings: [.linkedLibrary("bluetooth")]),
        // epoll, eventfd and timerfd for the event loop.
        .target(name: "CLinuxSys"),
        // MJPEG to luma with libjpeg-turbo; C, because libjpeg reports errors by longjmp.
        .target(name: "CMJPEG", dependencies: ["CJPEG"]),
        // Real adapters over kernel interfaces: V4L2 camera, GPIO lines, ALSA sound, a TV
        // through DRM/KMS.
        .target(
            name: "LinuxHardware",
            dependencies: [
                "GateCore", "CV4L2", "CGPIOD", "CALSA", "CMJPEG", "CLinuxSys", "CDRM", "CBlueZShim", "GATT",
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The daemon's services around the gate loop: race link, storage thread, web wiring,
        // photo-finish link, NTP server. The executable parses arguments and wires adapters;
        // tests drive these in-process.
        .target(
            name: "GateDaemon",
            dependencies: [
                "GateCore", "Detector", "Engine", "GateSim", "GateConfig", "LinuxHardware",
                "ClockSync", "PeerWire", "PeerAuth", "Race", "PhotoFinish", "SQLiteStore", "WebUI", "VideoDelay", "VideoService",
                "GPSD", "GPSTiming", "SkiRuns", "MQTTLink", "Rowing", "GATT",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // The composition root: the appliance `sprintgate run` runs, made from its settings:
        // the areas a board enables (`Feature`), the camera kept on the loop, the status
        // file and the watchdog. The executable parses arguments and calls it.
        .target(
            name: "Appliance",
            dependencies: [
                "GateCore", "Detector", "Engine", "GateConfig", "LinuxHardware", "GateDaemon", "GateSim", "Race", "SQLiteStore", "WebUI",
                "VideoDelay", "VideoService", "FFmpegVideo", "GPSD", "GPSTiming", "SkiRuns",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // Per-thread malloc counter used by the allocation checks.
        .target(name: "CMallocCounter"),
        .executableTarget(
            name: "sprintgate",
            dependencies: [
                "GateCore", "Detector", "Engine", "GateSim", "GateConfig", "LinuxHardware",
                "ClockSync", "PeerWire", "PeerAuth", "Race", "PhotoFinish", "Calculators", "SQLiteStore", "WebUI", "GateDaemon", "Appliance",
                "VideoDelay", "FFmpegVideo", "VideoService", "Archery", "GPSD", "GPSTiming", "SkiRuns",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "AllocCheck",
            dependencies: ["GateCore", "Detector", "GateSim", "CMallocCounter"],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "DetectorBench",
            dependencies: ["GateCore", "Detector", "Engine", "GateSim", "PhotoFinish", "LinuxHardware", "VideoDelay", "VideoService",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // The delay mode's throughput and real-time figures (BENCHMARKS.md).
        .executableTarget(
            name: "VideoBench",
            dependencies: ["GateCore", "GateSim", "VideoDelay", "FFmpegVideo", "VideoService", "CMJPEG", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        // Clock sync error against simulated truth: loopback and impaired profiles (BENCHMARKS.md).
        .executableTarget(
            name: "SyncBench",
            dependencies: ["GateCore", "ClockSync"],
            swiftSettings: strictSettings
        ),
        // UDP impairment proxy for multi-gate tests: delay, jitter, loss, duplication, reordering.
        .executableTarget(
            name: "UDPImpair",
            dependencies: ["CLinuxSys", "GateCore"],
            swiftSettings: strictSettings
        ),
        // Writes runs (or ski fixes, or erg strokes) until killed: the results database's power-loss test SIGKILLs it mid-write.
        .executableTarget(
            name: "StoreCrashWriter",
            dependencies: ["GateCore", "SQLiteStore", "Rowing", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "ClockSyncTests", dependencies: ["GateCore", "ClockSync"], exclude: ["Recordings"],
                    swiftSettings: strictSettings),
        .testTarget(name: "PeerWireTests", dependencies: ["GateCore", "PeerWire", "PeerAuth"], swiftSettings: strictSettings),
        .testTarget(name: "RaceTests", dependencies: ["GateCore", "PeerWire", "PeerAuth", "ClockSync", "Race"], swiftSettings: strictSettings),
        .testTarget(
            name: "GateDaemonTests",
            dependencies: ["GateCore", "Engine", "GateSim", "LinuxHardware", "Race", "SQLiteStore", "WebUI", "GateDaemon", "GateConfig",
                           "VideoDelay", "VideoService", "Detector", "Rowing", "Appliance", "GPSD", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "PhotoFinishTests", dependencies: ["GateCore", "PhotoFinish", "CMallocCounter"], swiftSettings: strictSettings),
        .testTarget(name: "ArcheryTests", dependencies: ["Archery"], swiftSettings: strictSettings),
        .testTarget(name: "VideoDelayTests", dependencies: ["GateCore", "VideoDelay", "CMallocCounter"], swiftSettings: strictSettings),
        .testTarget(
            name: "FFmpegVideoTests",
            dependencies: ["GateCore", "Archery", "GateSim", "VideoDelay", "FFmpegVideo", "VideoService", "CMJPEG",
                           .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "CalculatorsTests", dependencies: ["Calculators"], swiftSettings: strictSettings),
        .testTarget(name: "RowingTests", dependencies: ["Rowing", "GATT"], swiftSettings: strictSettings),
        .testTarget(name: "MQTTLinkTests", dependencies: ["MQTTLink", "GateDaemon", "GateConfig", "SQLiteStore", "Rowing", "WebUI",
                                                     .product(name: "Logging", package: "swift-log")],
                    swiftSettings: strictSettings),
        .testTarget(name: "SkiRunsTests", dependencies: ["SkiRuns", "GPSTiming", "GateCore", "GateSim"], swiftSettings: strictSettings),
        .testTarget(name: "GPSTimingTests", dependencies: ["GPSTiming", "GPSD", "GateCore", "GateSim", "GateDaemon", "WebUI", "SQLiteStore", "Engine", "SkiRuns",
                                                     .product(name: "Logging", package: "swift-log")], swiftSettings: strictSettings),
        .testTarget(name: "StoreTests", dependencies: ["GateCore", "SQLiteStore", "Rowing", .product(name: "GRDB", package: "GRDB.swift")],
                    swiftSettings: strictSettings),
        .testTarget(
            name: "WebUITests",
            dependencies: [
                "GateCore", "SQLiteStore", "WebUI", "VideoDelay", "Archery", "GPSTiming", "SkiRuns", "Rowing",
                // The routes are tested over loopback HTTP (LoopbackClient.swift), not with
                // HummingbirdTesting, which links AsyncHTTPClient and NIOSSL's BoringSSL.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "CoreTests", dependencies: ["GateCore"], swiftSettings: strictSettings),
        .testTarget(name: "EngineTests", dependencies: ["GateCore", "Detector", "Engine", "GateSim", "VideoDelay", "CMallocCounter"],
                    swiftSettings: strictSettings),
        .testTarget(
            name: "DetectorTests",
            dependencies: ["GateCore", "Detector", "GateSim", "CMallocCounter"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "ReplayTests",
            dependencies: ["GateCore", "Detector", "GateSim"],
            swiftSettings: strictSettings
        ),
        // Adapters against real kernel drivers; runs inside the qemu rig (scripts/sim-tier)
        // and reports its tests as skipped elsewhere.
        .testTarget(
            name: "LinuxHardwareTests",
            dependencies: [
                "GateCore", "GateSim", "Detector", "LinuxHardware", "CV4L2", "CGPIOD", "CALSA", "CMJPEG", "CMallocCounter", "CLinuxSys",
                "VideoDelay", "FFmpegVideo", "VideoService",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BoardsTests",
            dependencies: ["GateCore", "GateConfig", "Engine", "Detector", "Archery", "VideoDelay"],
            swiftSettings: strictSettings
        ),
    ]
)
