// SPDX-License-Identifier: Apache-2.0
// Packets of another codec (a camera's Motion JPEG) decoded and encoded again as H.264
// into an MP4, so a clip of an MJPEG ring plays in any browser.

import CFFmpeg
public import GateCore

/// Takes packets as `MP4Writer` does, in the source's codec, and writes them as H.264
/// (libx264, or the board's encoder) at the same size into an MP4 whose zero is `origin`; pictures before
/// `origin` are decoded (a keyframe's followers need them) and not written. Used from one
/// thread.
public final class TranscodingMP4Writer {
    public let path: String
    public let origin: MonotonicInstant
    private let decoder: VideoDecoder
    private let encoder: H264Encoder
    private let writer: MP4Writer
    private var graph: FilterGraph?
    private var sequence: UInt64 = 0
    /// Capture times of the packets sent, by the microsecond stamp the decoder carries.
    private var times: [Int64: MonotonicInstant] = [:]
    /// Pictures written.
    public private(set) var pictures = 0

    public init(path: String, source: CodecParameters, origin: MonotonicInstant, fps: Double,
                encoder kind: H264EncoderKind = .x264) throws(FFmpegError) {
        self.path = path
        self.origin = origin
        decoder = try VideoDecoder(source)
        // Even sizes: 4:2:0 chroma and the encoder want them.
        let (w, h) = (source.width / 2 * 2, source.height / 2 * 2)
        encoder = try H264Encoder(VideoEncoderSettings(width: w, height: h, fps: fps,
                                                       bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: w, height: h, fps: fps),
                                                       encoder: kind))
        writer = try MP4Writer(path: path, parameters: try encoder.parameters(), origin: origin, fps: fps)
    }

    /// Decodes one packet captured at `time` and writes its picture when it is at or after
    /// the origin.
    public func write(_ bytes: UnsafeRawBufferPointer, time: MonotonicInstant, keyframe: Bool) throws {
        times[time.nanoseconds / 1000] = time
        try decoder.decode(bytes, pts: time.nanoseconds / 1000, keyframe: keyframe) { picture in
            guard let t = times.removeValue(forKey: picture.pts), t >= origin else { return }
            if graph == nil {
                // Luma values kept as they are (a JPEG's full range is not squeezed into
                // 16–235), as the H.264 ring keeps a camera's grey frames.
                graph = try FilterGraph(input: picture.frame, filters: [
                    ("scale", [("w", "\(encoder.settings.width)"), ("h", "\(encoder.settings.height)"),
                               ("in_range", "full"), ("out_range", "full")]),
                    ("format", [("pix_fmts", "yuv420p")]),
                ], purpose: "re-encoding \(path)")
            }
            try graph!.push(picture.frame)
            try graph!.drain { out throws(FFmpegError) in
                try encode(out, time: t)
            }
        }
    }

    private func encode(_ picture: UnsafePointer<AVFrame>, time: MonotonicInstant) throws(FFmpegError) {
        var failure: FFmpegError?
        try encoder.encode(picture: picture, time: time, sequence: sequence) { p in
            do throws(FFmpegError) { try writer.write(p.bytes, time: p.time, keyframe: p.keyframe) } catch { failure = failure ?? error }
        }
        sequence += 1
        pictures += 1
        if let failure { throw failure }
    }

    /// Writes what the coders still hold and the MP4's index.
    public func finish() throws(FFmpegError) {
        var failure: FFmpegError?
        try encoder.finish { p in
            do throws(FFmpegError) { try writer.write(p.bytes, time: p.time, keyframe: p.keyframe) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
        try writer.finish()
    }
}
