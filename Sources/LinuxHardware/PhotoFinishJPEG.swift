// SPDX-License-Identifier: Apache-2.0
// JPEG encoding of photo-finish pictures and thumbnails (8-bit luma) with libjpeg-turbo.

import CMJPEG

/// Why a luma image could not be encoded or decoded.
public struct PhotoFinishJPEGError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
}

/// Grayscale JPEG for photo-finish images. Off the loop thread only: it allocates.
public enum PhotoFinishJPEG {
    /// Default quality. Why: 85 keeps the torso edges and the scale's 1-pixel ticks crisp
    /// at a third of the size of 95, and a phone over the gate's Wi-Fi loads it at once.
    public static let defaultQuality = 85

    /// Encodes `luma` (`width`×`height`, rows packed) as a one-component baseline JPEG.
    public static func encode(luma: [UInt8], width: Int, height: Int,
                              quality: Int = defaultQuality) throws(PhotoFinishJPEGError) -> [UInt8] {
        guard width > 0, height > 0, width <= 65_500, height <= 65_500 else {
            throw PhotoFinishJPEGError(description: "image size \(width)x\(height) is outside 1...65500")
        }
        guard luma.count >= width * height else {
            throw PhotoFinishJPEGError(description: "\(luma.count) bytes of luma for a \(width)x\(height) image")
        }
        guard (1...100).contains(quality) else {
            throw PhotoFinishJPEGError(description: "JPEG quality \(quality) is outside 1...100")
        }
        // Why: a grayscale JPEG is almost always smaller than its pixels; noise at quality
        // 100 can exceed them, so the buffer doubles on "too small" (-3).
        var capacity = width * height + 4096
        for _ in 0..<4 {
            var out = [UInt8](repeating: 0, count: capacity)
            var length = 0
            let r = luma.withUnsafeBufferPointer { src in
                out.withUnsafeMutableBufferPointer { dst in
                    sprintgate_luma_to_jpeg(src.baseAddress, Int32(width), Int32(height), Int32(width), Int32(quality), 0,
                                            dst.baseAddress, dst.count, &length)
                }
            }
            switch r {
            case 0:
                out.removeSubrange(length...)
                return out
            case -3:
                capacity *= 2
            default:
                throw PhotoFinishJPEGError(description: "the JPEG encoder failed (\(r)) on a \(width)x\(height) image")
            }
        }
        throw PhotoFinishJPEGError(description: "the JPEG of a \(width)x\(height) image does not fit in \(capacity) bytes")
    }

    /// Decodes a JPEG of known size to packed luma; nil when it is corrupt or another size.
    public static func decode(_ jpeg: [UInt8], width: Int, height: Int) -> [UInt8]? {
        guard width > 0, height > 0, !jpeg.isEmpty else { return nil }
        var out = [UInt8](repeating: 0, count: width * height)
        let r = jpeg.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                sprintgate_mjpeg_to_luma(src.baseAddress, src.count, dst.baseAddress, Int32(width), Int32(height), Int32(width))
            }
        }
        return r == 0 ? out : nil
    }
}
