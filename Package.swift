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
            dependencies: ["GateCore", "Detector"],
            swiftSettings: strictSettings
        ),
        // Board and gate configuration files (TOML) decoded into typed values.
        .target(
            name: "GateConfig",
            dependencies: ["GateCore", "Detector", "Engine", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: strictSettings
        ),
        // Simulation and replay: clip readers/writers, synthetic scenes, replay runner.
        .target(
            name: "GateSim",
            dependencies: ["GateCore", "Detector", "Engine"],
            swiftSettings: strictSettings
        ),
        // C libraries behind the Linux adapters, one system-library target each.
        .systemLibrary(name: "CV4L2", pkgConfig: "libv4l2", providers: [.apt(["libv4l-dev"])]),
        .systemLibrary(name: "CGPIOD", pkgConfig: "libgpiod", providers: [.apt(["libgpiod-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CBlueZ", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CJPEG", pkgConfig: "libjpeg", providers: [.apt(["libjpeg62-turbo-dev"])]),
        // epoll, eventfd and timerfd for the event loop.
        .target(name: "CLinuxSys"),
        // MJPEG to luma with libjpeg-turbo; C, because libjpeg reports errors by longjmp.
        .target(name: "CMJPEG", dependencies: ["CJPEG"]),
        // Real adapters over kernel interfaces: V4L2 camera, GPIO lines, ALSA sound.
        .target(
            name: "LinuxHardware",
            dependencies: [
                "GateCore", "CV4L2", "CGPIOD", "CALSA", "CMJPEG", "CLinuxSys",
                .product(name: "SystemPackage", package: "swift-system"),
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
            dependencies: ["GateCore", "Detector", "Engine", "GateSim"],
            swiftSettings: strictSettings
        ),
        .testTarget(name: "CoreTests", dependencies: ["GateCore"], swiftSettings: strictSettings),
        .testTarget(name: "EngineTests", dependencies: ["GateCore", "Detector", "Engine", "GateSim", "CMallocCounter"], swiftSettings: strictSettings),
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
                "GateCore", "GateSim", "Detector", "LinuxHardware", "CV4L2", "CGPIOD", "CALSA", "CMJPEG", "CMallocCounter",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "BoardsTests",
            dependencies: ["GateCore", "GateConfig", "Engine", "Detector"],
            swiftSettings: strictSettings
        ),
    ]
)
