// SPDX-License-Identifier: Apache-2.0
// Cumulative frame accounting of a camera, kept across unplug and reopen.

/// Counters a camera adapter keeps from its creation, across reopen; the daemon reads
/// them for its statistics line and status page. Frames lost while the device was gone
/// are not counted (nothing numbers them).
public struct CameraStats: Sendable, Hashable {
    /// Frames handed out by `nextFrame`.
    public var frames: UInt64 = 0
    /// Frames the driver numbered but never delivered (gaps in its sequence numbers),
    /// including those before the first frame after STREAMON.
    public var dropped: UInt64 = 0
    /// Frames delivered by the driver but skipped: flagged as errored, shorter than a
    /// frame, or MJPEG that did not decode.
    public var corrupt: UInt64 = 0
    /// Frames whose buffer was not stamped on CLOCK_MONOTONIC; their timestamp is the
    /// dequeue time instead.
    public var nonMonotonic: UInt64 = 0
    /// Successful opens (the first one included).
    public var opens: UInt64 = 0
    /// Times the device went away while open (ENODEV, EIO, ENXIO).
    public var disconnects: UInt64 = 0

    public init() {}
}
