// SPDX-License-Identifier: Apache-2.0
// Borrowed views of camera frames and the pixel formats the detector reads.

/// The pixel layouts a frame can arrive in. The detector reads luma only.
public struct PixelFormat: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The V4L2 four-character code, little-endian packed.
    public var rawValue: UInt32
    @inlinable public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Builds a format from its four-character code, e.g. `"GREY"`.
    public init(fourcc: StaticString) {
        precondition(fourcc.utf8CodeUnitCount == 4, "a fourcc has four characters")
        let p = fourcc.utf8Start
        rawValue = UInt32(p[0]) | UInt32(p[1]) << 8 | UInt32(p[2]) << 16 | UInt32(p[3]) << 24
    }

    /// 8-bit luma only. The corresponding C constant is `V4L2_PIX_FMT_GREY`.
    public static let gray8 = PixelFormat(fourcc: "GREY")
    /// Packed 4:2:2, bytes Y0 U Y1 V. The corresponding C constant is `V4L2_PIX_FMT_YUYV`.
    public static let yuyv = PixelFormat(fourcc: "YUYV")
    /// Planar Y then interleaved UV at quarter size. The corresponding C constant is `V4L2_PIX_FMT_NV12`.
    public static let nv12 = PixelFormat(fourcc: "NV12")
    /// Planar Y, U, V at 4:2:0. The corresponding C constant is `V4L2_PIX_FMT_YUV420`.
    public static let yu12 = PixelFormat(fourcc: "YU12")
    /// Motion JPEG: each buffer holds one JPEG image of `bytesused` bytes. The camera
    /// adapter decodes it to luma for the detector and keeps the JPEG beside it
    /// (`FrameView.compressed`). The corresponding C constant is `V4L2_PIX_FMT_MJPEG`.
    public static let mjpeg = PixelFormat(fourcc: "MJPG")

    /// Byte distance between horizontally adjacent luma samples.
    @inlinable public var lumaStep: Int { self == .yuyv ? 2 : 1 }

    /// Bytes one frame of `width`×`height` occupies with tightly packed rows.
    public func frameBytes(width: Int, height: Int) -> Int {
        switch self {
        case .yuyv: return width * height * 2
        case .nv12, .yu12: return width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
        default: return width * height
        }
    }

    public var description: String {
        var s = ""
        for shift in stride(from: 0, to: 32, by: 8) {
            s.unicodeScalars.append(Unicode.Scalar(UInt8((rawValue >> UInt32(shift)) & 0xFF)))
        }
        return s
    }
}

/// A borrowed view of one camera frame. The bytes belong to the frame source and are
/// valid only until the frame is released back to it; nothing may keep the pointer, and
/// the view is not `Sendable`: it stays on the thread that owns the frame.
public struct FrameView {
    /// First byte of the luma plane (for YUYV, of the packed data).
    public let base: UnsafeRawPointer
    public let width: Int
    public let height: Int
    /// Bytes from the start of one row of the luma plane to the next.
    public let bytesPerRow: Int
    public let format: PixelFormat
    /// Driver frame sequence number; gaps mean dropped frames.
    public let sequence: UInt64
    /// The middle of the exposure of the frame's top row, on the local monotonic clock.
    /// Adapters convert driver timestamps (start or end of frame) to this convention.
    public let timestamp: MonotonicInstant
    /// The frame as the camera compressed it (an MJPEG camera's JPEG, in the driver's
    /// buffer), when the planes above were decoded from it; nil for an uncompressed frame.
    public var compressed: UnsafeRawBufferPointer?

    @inlinable
    public init(base: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int, format: PixelFormat,
                sequence: UInt64, timestamp: MonotonicInstant) {
        precondition(width > 0 && height > 0, "frame dimensions must be positive")
        precondition(bytesPerRow >= width * format.lumaStep, "row stride shorter than a row")
        self.base = base
        self.width = width
        self.height = height
        self.bytesPerRow = bytesPerRow
        self.format = format
        self.sequence = sequence
        self.timestamp = timestamp
        compressed = nil
    }
}
