// SPDX-License-Identifier: Apache-2.0
// Camera frames as FFmpeg sees them: pixel formats and plane pointers.

import CFFmpeg
public import GateCore

/// A camera frame's planes as FFmpeg takes them: the luma plane (packed data for YUYV)
/// with 4:2:0 chroma following it, as `FrameView` and `FrameTap` hold frames.
extension FrameView {
    /// FFmpeg's name for the layout, or nil for one the video path does not take.
    var avFormat: AVPixelFormat? {
        switch format {
        case .gray8: return AV_PIX_FMT_GRAY8
        case .yuyv: return AV_PIX_FMT_YUYV422
        case .nv12: return AV_PIX_FMT_NV12
        case .yu12: return AV_PIX_FMT_YUV420P
        default: return nil
        }
    }

    /// Plane pointers and strides for `sws_scale`.
    func planes() -> ([UnsafePointer<UInt8>?], [Int32]) {
        let p = base.assumingMemoryBound(to: UInt8.self)
        let luma = bytesPerRow * height
        switch format {
        case .nv12:
            return ([p, p + luma, nil, nil], [Int32(bytesPerRow), Int32(bytesPerRow), 0, 0])
        case .yu12:
            let c = (bytesPerRow + 1) / 2, ch = (height + 1) / 2
            return ([p, p + luma, p + luma + c * ch, nil], [Int32(bytesPerRow), Int32(c), Int32(c), 0])
        default:
            return ([p, nil, nil, nil], [Int32(bytesPerRow), 0, 0, 0])
        }
    }
}

/// Plane access on an `AVFrame`.
extension UnsafeMutablePointer where Pointee == AVFrame {
    func plane(_ i: Int) -> UnsafeMutablePointer<UInt8>? {
        withUnsafeBytes(of: pointee.data) { $0.load(fromByteOffset: i * MemoryLayout<UnsafeMutablePointer<UInt8>?>.stride, as: UnsafeMutablePointer<UInt8>?.self) }
    }

    func stride(_ i: Int) -> Int {
        Int(withUnsafeBytes(of: pointee.linesize) { $0.load(fromByteOffset: i * MemoryLayout<Int32>.stride, as: Int32.self) })
    }

    /// The frame's plane pointers and strides as `sws_scale` takes them.
    func planeArrays() -> ([UnsafeMutablePointer<UInt8>?], [Int32]) {
        ((0..<4).map { plane($0) }, (0..<4).map { Int32(stride($0)) })
    }
}
