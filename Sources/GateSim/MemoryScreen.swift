// SPDX-License-Identifier: Apache-2.0
// The TV output's stand-in: a screen in memory that keeps the last picture painted.

public import GateCore
import Synchronization

/// A `PictureScreen` in memory. Each `present` paints into a fresh buffer whose rows are
/// longer than the picture (as a card's pitch can be), then keeps it as the picture shown.
/// `failing` makes the next presents throw, as an unplugged display does.
public final class MemoryScreen: PictureScreen, Sendable {
    public let width: Int
    public let height: Int
    public let name: String
    /// Bytes a row takes: 64 more than the picture's.
    public let pitch: Int
    private struct State {
        var pixels: [UInt8] = []
        var presented = 0
        var failing: DeviceError?
    }
    private let state = Mutex(State())

    public init(width: Int, height: Int, name: String = "memory screen") {
        self.width = width
        self.height = height
        self.name = name
        pitch = width * 4 + 64
    }

    /// Pictures shown so far.
    public var presented: Int { state.withLock { $0.presented } }

    /// While set, `present` throws it.
    public func fail(with error: DeviceError?) { state.withLock { $0.failing = error } }

    public func present(_ draw: (UnsafeMutableRawPointer, Int) throws -> Void) throws {
        if let e = state.withLock({ $0.failing }) { throw e }
        var buffer = [UInt8](repeating: 0, count: pitch * height)
        try buffer.withUnsafeMutableBytes { try draw($0.baseAddress!, pitch) }
        state.withLock {
            $0.pixels = buffer
            $0.presented += 1
        }
    }

    /// The picture shown last, as rows of `pitch` bytes of B, G, R, unused; and how many
    /// had been shown.
    public func shown() -> (pixels: [UInt8], count: Int) { state.withLock { ($0.pixels, $0.presented) } }
}
