// SPDX-License-Identifier: Apache-2.0
// What the appliance needs of a camera, and the camera of a board without one.

public import Detector
public import GateCore
public import LinuxHardware

/// A camera as the appliance keeps it: its mode once open, the rate it is asked for, and
/// its signal watch. `V4L2FrameSource` is the real one.
public protocol ApplianceCamera: FrameSource, ~Copyable {
    /// What it was asked for; the frame rate changes with the page and the SoC's heat.
    var request: CameraRequest { get set }
    /// The mode it streams, once open.
    var mode: CameraMode? { get }
    /// When it last delivered a frame (or started waiting for the first).
    var lastFrameAt: MonotonicInstant? { get }
    /// Frames delivered since it was made.
    var framesDelivered: UInt64 { get }
    /// The exposure it reports, when it says.
    var exposure: Span? { get }
    /// The whole frame rates it offers, slowest first (the page's menu); empty when unknown.
    var offeredRates: [Int] { get }
    /// Marks the camera silent when no frame came for longer than its frame period allows.
    mutating func checkSignal(now: MonotonicInstant)
}

extension V4L2FrameSource: ApplianceCamera {
    public var framesDelivered: UInt64 { stats.frames }
}

/// The camera port of a board without `[camera]` (a car timer, a ski logger, a rowing hub):
/// never open, never a frame. The gate loop still runs for the GPIO lines and the sound
/// the other areas use; its state is `closed`, so the ready LED stays off.
public struct NoCamera: ApplianceCamera {
    /// The frame size the loop's idle detector is made for (it never sees a frame).
    public static let width = 160
    public static let height = 120

    public var request = CameraRequest(width: NoCamera.width, height: NoCamera.height, fps: 30)
    public var state: DeviceState { .closed }
    public var fileDescriptor: Int32 { -1 }
    public var mode: CameraMode? { nil }
    public var lastFrameAt: MonotonicInstant? { nil }
    public var framesDelivered: UInt64 { 0 }
    public var exposure: Span? { nil }
    public var offeredRates: [Int] { [] }

    public init() {}

    public mutating func open() throws(DeviceError) {
        throw DeviceError(operation: "open", errno: 0, path: "camera", detail: "this board has no [camera]")
    }
    public mutating func nextFrame() -> FrameLease? { nil }
    public mutating func release(_ lease: FrameLease) {}
    public mutating func close() {}
    public mutating func checkSignal(now: MonotonicInstant) {}

    /// The detector the loop holds; at this size it costs a few kilobytes.
    public static func detector(_ config: DetectorConfig) -> PhotoFinishDetector {
        PhotoFinishDetector(config: config, inputWidth: width, inputHeight: height)
    }
}
