// SPDX-License-Identifier: Apache-2.0
// Camera modes a device offers, what the gate asks for, and the pure choice between them.

public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// The time between two frames as the driver states it: `numerator / denominator` seconds.
public struct FrameInterval: Sendable, Hashable, CustomStringConvertible {
    public var numerator: UInt32
    public var denominator: UInt32

    public init(numerator: UInt32, denominator: UInt32) {
        precondition(numerator > 0 && denominator > 0, "a frame interval is a positive fraction")
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The interval of a whole number of frames per second.
    public init(fps: Int) { self.init(numerator: 1, denominator: UInt32(fps)) }

    /// Frames per second.
    public var fps: Double { Double(denominator) / Double(numerator) }

    public var description: String {
        let f = fps
        return f == f.rounded() ? "\(Int(f)) fps" : "\(Double(Int(f * 100)) / 100) fps"
    }
}

/// One format and size a camera delivers, with the frame rates it offers in it.
public struct CameraMode: Sendable, Hashable, CustomStringConvertible {
    public var format: PixelFormat
    /// Pixels.
    public var width: Int
    public var height: Int
    /// Offered frame intervals, fastest first. `choose(modes:request:)` returns a mode
    /// with exactly one: the chosen rate.
    public var intervals: [FrameInterval]

    public init(format: PixelFormat, width: Int, height: Int, intervals: [FrameInterval]) {
        self.format = format
        self.width = width
        self.height = height
        self.intervals = intervals.sorted { $0.fps > $1.fps }
    }

    /// Offered frame rates in frames per second, fastest first.
    public var fpsList: [Double] { intervals.map(\.fps) }

    public var description: String {
        "\(format) \(width)x\(height) @ " + intervals.map(\.description).joined(separator: ", ")
    }
}

/// What the gate asks of a camera. The adapter picks the nearest mode the device has
/// (see `V4L2FrameSource.choose(modes:request:)`).
public struct CameraRequest: Sendable, Hashable {
    /// Wanted size in pixels.
    public var width: Int
    public var height: Int
    /// Wanted frames per second (default 60); the camera streams its closest (`choose`).
    public var fps: Double
    /// Formats the gate accepts, any order; the preference among them is fixed
    /// (`V4L2FrameSource.formatPreference`).
    public var formats: [PixelFormat]
    /// Manual exposure time in microseconds, or nil to leave the camera's exposure as it is.
    public var exposureMicroseconds: Int?
    /// Subtracted from the driver's frame timestamp to reach the `FrameView` convention
    /// (middle of the top row's exposure). Nil: half the effective exposure, for drivers
    /// that stamp the start of frame reception, which follows the end of the top row's
    /// exposure (uvcvideo). A measured transfer latency can be added here.
    public var timestampOffset: Span?
    /// Driver buffers for mmap streaming. Four keep one frame with the engine, one
    /// being filled and two in reserve for a late loop iteration.
    public var bufferCount: Int

    public init(width: Int = 640, height: Int = 480, fps: Double = 60,
                formats: [PixelFormat] = V4L2FrameSource.formatPreference,
                exposureMicroseconds: Int? = nil, timestampOffset: Span? = nil, bufferCount: Int = 4) {
        precondition(width > 0 && height > 0 && fps > 0, "camera request needs a positive size and rate")
        precondition(bufferCount >= 2, "streaming needs at least two buffers")
        self.width = width
        self.height = height
        self.fps = fps
        self.formats = formats
        self.exposureMicroseconds = exposureMicroseconds
        self.timestampOffset = timestampOffset
        self.bufferCount = bufferCount
    }
}

extension V4L2FrameSource {
    /// Formats the adapter can deliver, best first: luma-only needs no work, packed and
    /// planar YUV are read in place, MJPEG costs a decode per frame.
    public static let formatPreference: [PixelFormat] = [.gray8, .yuyv, .nv12, .yu12, .mjpeg]

    /// Rates within this fraction of the requested one count as exact (59.94 for 60).
    static let fpsTolerance = 0.01

    /// The whole frame rates `choose(modes:request:)` can reach exactly in an accepted
    /// format, at any size, slowest first: what a coach can pick for this camera. Pure.
    public static func offeredRates(modes: [CameraMode], formats: [PixelFormat]) -> [Int] {
        var rates = Set<Int>()
        for mode in modes where formats.contains(mode.format) {
            for interval in mode.intervals where interval.fps.isFinite && interval.fps >= 1 {
                rates.insert(Int(interval.fps.rounded()))
            }
        }
        return rates.sorted()
    }

    /// The mode to stream for `request`, or nil when no mode has an accepted format.
    ///
    /// In order: a rate equal to the request (within 1 %), else the slowest faster rate,
    /// else the fastest slower rate; then the format preference GREY > YUYV > NV12 >
    /// YU12 > MJPG; then the size closest to the request (by the sum of the log ratios of
    /// width and height). The result carries only the chosen interval. Pure.
    public static func choose(modes: [CameraMode], request: CameraRequest) -> CameraMode? {
        struct Key: Comparable {
            var tier: Int, fpsDistance: Double, format: Int, sizeDistance: Double
            static func < (a: Key, b: Key) -> Bool {
                (a.tier, a.fpsDistance, a.format, a.sizeDistance) < (b.tier, b.fpsDistance, b.format, b.sizeDistance)
            }
        }
        var best: (key: Key, mode: CameraMode)?
        for mode in modes {
            guard request.formats.contains(mode.format),
                  let rank = formatPreference.firstIndex(of: mode.format),
                  mode.width > 0, mode.height > 0 else { continue }
            let size = abs(logRatio(mode.width, request.width)) + abs(logRatio(mode.height, request.height))
            for interval in mode.intervals {
                let f = interval.fps
                let tier: Int, distance: Double
                if abs(f - request.fps) <= request.fps * fpsTolerance {
                    (tier, distance) = (0, 0)
                } else if f > request.fps {
                    (tier, distance) = (1, f - request.fps)
                } else {
                    (tier, distance) = (2, request.fps - f)
                }
                let key = Key(tier: tier, fpsDistance: distance, format: rank, sizeDistance: size)
                if best == nil || key < best!.key {
                    best = (key, CameraMode(format: mode.format, width: mode.width, height: mode.height,
                                            intervals: [interval]))
                }
            }
        }
        return best?.mode
    }

    private static func logRatio(_ a: Int, _ b: Int) -> Double {
        Glibc.log(Double(a) / Double(b))
    }
}
