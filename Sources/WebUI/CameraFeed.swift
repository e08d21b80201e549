// SPDX-License-Identifier: Apache-2.0
// The camera view's latest picture, published by the encoder and read by the page's routes.

public import GateCore
import Synchronization

/// A body the detector saw in a camera view's picture, camera pixels.
public struct CameraBody: Sendable, Hashable, Codable {
    public var left: Int, top: Int, right: Int, bottom: Int
    /// `person` (could be timed), `small` (shorter than the crossing height) or `vehicle`.
    public var kind: String
    public init(left: Int, top: Int, right: Int, bottom: Int, kind: String) {
        self.left = left
        self.top = top
        self.right = right
        self.bottom = bottom
        self.kind = kind
    }
}

/// One encoded picture of the camera view.
public struct CameraPicture: Sendable, Hashable {
    public var jpeg: [UInt8]
    /// The picture's size, and the camera frame's it was reduced from, pixels.
    public var width: Int
    public var height: Int
    public var frameWidth: Int
    public var frameHeight: Int
    /// The detector's gate line in the camera frame, input pixels.
    public var gateX: Double
    /// The frame's driver sequence number and timestamp (CLOCK_MONOTONIC).
    public var sequence: UInt64
    public var time: MonotonicInstant
    /// What the detector saw in the picture's frame.
    public var bodies: [CameraBody]
    public init(jpeg: [UInt8], width: Int, height: Int, frameWidth: Int, frameHeight: Int, gateX: Double, sequence: UInt64,
                time: MonotonicInstant, bodies: [CameraBody] = []) {
        self.bodies = bodies
        self.jpeg = jpeg
        self.width = width
        self.height = height
        self.frameWidth = frameWidth
        self.frameHeight = frameHeight
        self.gateX = gateX
        self.sequence = sequence
        self.time = time
    }
}

/// Between the camera view's encoder (which publishes) and the page's routes (which ask
/// for pictures and read the latest). Until a gate connects a camera, there is no view.
public final class CameraFeed: Sendable {
    private let latest = Mutex<CameraPicture?>(nil)
    private let watcher = Mutex<(@Sendable () -> Void)?>(nil)

    public init() {}

    /// The gate's camera view: `watch` is called whenever a viewer asks for a picture.
    public func connect(watch: @escaping @Sendable () -> Void) {
        watcher.withLock { $0 = watch }
    }

    /// Whether a camera view is connected.
    public var connected: Bool { watcher.withLock { $0 != nil } }

    /// A viewer asks for pictures (they keep coming for a while after).
    public func watch() {
        let w = watcher.withLock { $0 }
        w?()
    }

    /// Encoder: the newest picture.
    public func publish(_ picture: CameraPicture) {
        latest.withLock { $0 = picture }
    }

    /// The newest picture, if any.
    public var picture: CameraPicture? { latest.withLock { $0 } }
}
