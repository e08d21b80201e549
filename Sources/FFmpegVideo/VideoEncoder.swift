// SPDX-License-Identifier: Apache-2.0
// Camera frames to H.264 with FFmpeg's libavcodec: the board's hardware encoder or libx264.

import CFFmpeg
public import GateCore

/// A compressed frame as an encoder hands it over. `bytes` is valid only inside the
/// callback that receives it.
public struct EncodedPacket {
    public var bytes: UnsafeRawBufferPointer
    /// Capture time of the frame (the `FrameView`'s timestamp).
    public var time: MonotonicInstant
    public var sequence: UInt64
    public var keyframe: Bool
}

/// The H.264 encoders the gate knows, by FFmpeg's names.
public enum H264EncoderKind: String, Sendable, CaseIterable {
    /// The Raspberry Pi 4's hardware encoder through V4L2's memory-to-memory interface.
    case v4l2m2m = "h264_v4l2m2m"
    /// x264 in software: every board, and the Pi 5, which has no H.264 encoder.
    case x264 = "libx264"

    /// Whether this FFmpeg build has the encoder (not whether its device exists).
    public var isBuiltIn: Bool { avcodec_find_encoder_by_name(rawValue) != nil }
}

/// Encoder settings.
public struct VideoEncoderSettings: Hashable, Sendable {
    public var width: Int
    public var height: Int
    public var fps: Double
    /// Target bit rate, bits per second.
    public var bitsPerSecond: Int
    /// Frames from one keyframe to the next. Why at most one second's worth: the delayed
    /// view and a clip's first frame decode from the keyframe before them, so this bounds
    /// the work to show any instant.
    public var keyframeInterval: Int
    public var encoder: H264EncoderKind

    public init(width: Int, height: Int, fps: Double, bitsPerSecond: Int, keyframeInterval: Int? = nil,
                encoder: H264EncoderKind = .x264) {
        self.width = width
        self.height = height
        self.fps = fps
        self.bitsPerSecond = bitsPerSecond
        self.keyframeInterval = max(1, keyframeInterval ?? Int(fps.rounded()))
        self.encoder = encoder
    }

    /// A bit rate that keeps 720p60 sharp for form feedback: 0.14 bits a pixel a frame
    /// (7.7 Mbit/s at 1280×720 and 60 fps, so 20 min take 1.2 GB).
    public static func defaultBitsPerSecond(width: Int, height: Int, fps: Double) -> Int {
        Int(0.14 * Double(width * height) * fps)
    }
}

/// One H.264 encoder. Frames go in with `encode`; packets come out through the callback,
/// in capture order (no B-frames), each with the capture time and sequence of its frame.
/// Used from one thread (the video thread).
public final class H264Encoder {
    public let settings: VideoEncoderSettings
    private var handles: CodecHandles
    private var context: UnsafeMutablePointer<AVCodecContext> { handles.context }
    private var frame: UnsafeMutablePointer<AVFrame> { handles.frame }
    private var packet: UnsafeMutablePointer<AVPacket> { handles.packet }
    private var scaler: OpaquePointer?
    private var scalerSource: (AVPixelFormat, Int, Int)?
    /// Capture sequence and time by presentation time, for the packets the encoder still
    /// holds (its time base is coarser than the capture clock).
    private var pending: [(pts: Int64, sequence: UInt64, time: MonotonicInstant)] = []
    private var origin: Int64?

    /// Microseconds: the time base the gate gives the encoder and the MP4 writer.
    static let timeBase = AVRational(num: 1, den: 1_000_000)

    public init(_ settings: VideoEncoderSettings) throws(FFmpegError) {
        FFmpegLog.quiet
        let name = settings.encoder.rawValue
        guard settings.width > 0, settings.height > 0, settings.width % 2 == 0, settings.height % 2 == 0 else {
            throw FFmpegError("opening the H.264 encoder \(name)", message: "\(settings.width)×\(settings.height) is not an even size")
        }
        guard let codec = avcodec_find_encoder_by_name(name) else {
            throw FFmpegError("opening the H.264 encoder \(name)", message: "this FFmpeg has no such encoder")
        }
        guard let ctx = avcodec_alloc_context3(codec) else { throw FFmpegError("opening \(name)", message: "out of memory") }
        guard let f = av_frame_alloc(), let p = av_packet_alloc() else {
            var c: UnsafeMutablePointer<AVCodecContext>? = ctx
            avcodec_free_context(&c)
            throw FFmpegError("opening \(name)", message: "out of memory")
        }
        handles = CodecHandles(context: ctx, frame: f, packet: p)
        self.settings = settings
        ctx.pointee.width = Int32(settings.width)
        ctx.pointee.height = Int32(settings.height)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        ctx.pointee.time_base = Self.timeBase
        ctx.pointee.framerate = av_d2q(settings.fps, 100_000)
        ctx.pointee.bit_rate = Int64(settings.bitsPerSecond)
        ctx.pointee.gop_size = Int32(settings.keyframeInterval)
        ctx.pointee.max_b_frames = 0
        // SPS and PPS once, in the codec parameters, as MP4 wants them.
        ctx.pointee.flags |= Int32(AV_CODEC_FLAG_GLOBAL_HEADER)
        if settings.encoder == .x264 {
            // Why: "zerolatency" turns off lookahead and frame threading, so a frame's packet
            // comes out of the call that took the frame; "veryfast" encodes 720p at about
            // twice 60 fps on the two x86 cores of the development machine (BENCHMARKS.md;
            // not measured on a Pi, whose own encoder `auto` picks where it has one).
            av_opt_set(ctx.pointee.priv_data, "preset", "veryfast", 0)
            av_opt_set(ctx.pointee.priv_data, "tune", "zerolatency", 0)
            // A keyframe exactly every keyframeInterval frames, not only at scene cuts.
            av_opt_set(ctx.pointee.priv_data, "x264-params", "scenecut=0", 0)
            // x264 picks its threads (sliced, with zerolatency: no frame of delay added).
            ctx.pointee.thread_count = 0
        }
        f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        f.pointee.width = Int32(settings.width)
        f.pointee.height = Int32(settings.height)
        do throws(FFmpegError) {
            try FFmpegError.check(avcodec_open2(ctx, codec, nil), "opening the H.264 encoder \(name)")
            try FFmpegError.check(av_frame_get_buffer(f, 0), "allocating \(name)'s frame")
        } catch {
            handles.free()
            throw error
        }
    }

    deinit {
        handles.free()
        if let scaler { sws_freeContext(scaler) }
    }

    /// Codec parameters (SPS/PPS included) for a decoder or an MP4 writer.
    public func parameters() throws(FFmpegError) -> CodecParameters {
        try CodecParameters(from: context)
    }

    /// Encodes one frame; `output` receives every packet that becomes ready.
    public func encode(_ raw: FrameView, output: (EncodedPacket) -> Void) throws(FFmpegError) {
        guard let source = raw.avFormat else {
            throw FFmpegError("encoding a frame", message: "pixel format \(raw.format) is not supported")
        }
        try FFmpegError.check(av_frame_make_writable(frame), "encoding a frame")
        if raw.format == .gray8 && raw.width == settings.width && raw.height == settings.height {
            copyGray(raw)
        } else {
            try convert(raw, from: source)
        }
        try submit(time: raw.timestamp, sequence: raw.sequence, output: output)
    }

    /// Encodes a picture a decoder or filter made (YUV 4:2:0 at the encoder's size).
    func encode(picture: UnsafePointer<AVFrame>, time: MonotonicInstant, sequence: UInt64,
                output: (EncodedPacket) -> Void) throws(FFmpegError) {
        guard picture.pointee.format == AV_PIX_FMT_YUV420P.rawValue, Int(picture.pointee.width) == settings.width,
              Int(picture.pointee.height) == settings.height else {
            throw FFmpegError("encoding a picture", message: "the picture is not 4:2:0 at \(settings.width)×\(settings.height)")
        }
        try FFmpegError.check(av_frame_make_writable(frame), "encoding a picture")
        try FFmpegError.check(av_frame_copy(frame, picture), "encoding a picture")
        try submit(time: time, sequence: sequence, output: output)
    }

    /// Sends the encoder's picture, captured at `time`, and passes on the packets ready.
    private func submit(time: MonotonicInstant, sequence: UInt64, output: (EncodedPacket) -> Void) throws(FFmpegError) {
        let t = time.nanoseconds / 1000
        if origin == nil { origin = t }
        let pts = t - origin!
        if let last = pending.last, pts <= last.pts {
            throw FFmpegError("encoding a frame", message: "frame time \(time) is not after the previous frame's")
        }
        frame.pointee.pts = pts
        pending.append((pts, sequence, time))
        try FFmpegError.check(avcodec_send_frame(context, frame), "encoding a frame with \(settings.encoder.rawValue)")
        try drain(output)
    }

    /// A grey frame's bytes are the luma as the camera gave it: copied as they are, with
    /// neutral chroma. Why not swscale: it takes GRAY8 as full-range and squeezes it into
    /// 16–235, which shifts every sample (a 30 dB ceiling on the round trip).
    private func copyGray(_ raw: FrameView) {
        let src = raw.base.assumingMemoryBound(to: UInt8.self)
        let y = frame.plane(0)!, yStride = frame.stride(0)
        for row in 0..<raw.height {
            (y + row * yStride).update(from: src + row * raw.bytesPerRow, count: raw.width)
        }
        for plane in 1...2 {
            let c = frame.plane(plane)!, cStride = frame.stride(plane)
            for row in 0..<((raw.height + 1) / 2) {
                (c + row * cStride).update(repeating: 128, count: (raw.width + 1) / 2)
            }
        }
    }

    /// Converts and scales a frame with swscale into the encoder's picture.
    private func convert(_ raw: FrameView, from source: AVPixelFormat) throws(FFmpegError) {
        if scalerSource == nil || scalerSource! != (source, raw.width, raw.height) {
            if let scaler { sws_freeContext(scaler) }
            scaler = sws_getContext(Int32(raw.width), Int32(raw.height), source, Int32(settings.width), Int32(settings.height),
                                    AV_PIX_FMT_YUV420P, SWS_BILINEAR, nil, nil, nil)
            guard scaler != nil else {
                scalerSource = nil
                throw FFmpegError("encoding a frame", message: "cannot convert \(raw.format) \(raw.width)×\(raw.height)")
            }
            scalerSource = (source, raw.width, raw.height)
        }
        let (src, srcStride) = raw.planes()
        let (dst, dstStride) = frame.planeArrays()
        _ = sws_scale(scaler, src, srcStride, 0, Int32(raw.height), dst, dstStride)
    }

    /// Sends the frames the encoder still holds to `output`; the encoder takes no more
    /// frames afterwards.
    public func finish(output: (EncodedPacket) -> Void) throws(FFmpegError) {
        try FFmpegError.check(avcodec_send_frame(context, nil), "finishing \(settings.encoder.rawValue)")
        try drain(output)
    }

    private func drain(_ output: (EncodedPacket) -> Void) throws(FFmpegError) {
        while true {
            let r = avcodec_receive_packet(context, packet)
            if r == sprintgate_averror_eagain() || r == sprintgate_averror_eof() { return }
            try FFmpegError.check(r, "encoding with \(settings.encoder.rawValue)")
            defer { av_packet_unref(packet) }
            let pts = packet.pointee.pts
            guard let i = pending.firstIndex(where: { $0.pts == pts }) else {
                throw FFmpegError("encoding with \(settings.encoder.rawValue)", message: "a packet with an unknown time \(pts) µs")
            }
            let (_, sequence, time) = pending[i]
            pending.removeSubrange(...i)
            let bytes = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            output(EncodedPacket(bytes: bytes, time: time, sequence: sequence, keyframe: packet.pointee.flags & AV_PKT_FLAG_KEY != 0))
        }
    }
}

/// A stream's codec parameters (codec, size, SPS/PPS), owned.
public final class CodecParameters: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<AVCodecParameters>

    init(from context: UnsafeMutablePointer<AVCodecContext>) throws(FFmpegError) {
        guard let p = avcodec_parameters_alloc() else { throw FFmpegError("codec parameters", message: "out of memory") }
        pointer = p
        try FFmpegError.check(avcodec_parameters_from_context(p, context), "codec parameters")
    }

    init(copying source: UnsafePointer<AVCodecParameters>) throws(FFmpegError) {
        guard let p = avcodec_parameters_alloc() else { throw FFmpegError("codec parameters", message: "out of memory") }
        pointer = p
        try FFmpegError.check(avcodec_parameters_copy(p, source), "codec parameters")
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecParameters>? = pointer
        avcodec_parameters_free(&p)
    }

    public var width: Int { Int(pointer.pointee.width) }
    public var height: Int { Int(pointer.pointee.height) }
    /// FFmpeg's short name of the codec, e.g. "h264".
    public var codecName: String { String(cString: avcodec_get_name(pointer.pointee.codec_id)) }
}

extension H264Encoder {
    /// Frames a second `kind` encodes at `width`×`height` on this machine: `frames` grey
    /// frames of moving texture, timed on the monotonic clock. Throws when the encoder
    /// cannot open (not in this FFmpeg, or its device is missing).
    public static func throughput(_ kind: H264EncoderKind, width: Int, height: Int, fps: Double, frames: Int = 60) throws(FFmpegError) -> Double {
        let encoder = try H264Encoder(VideoEncoderSettings(width: width, height: height, fps: fps,
                                                           bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps),
                                                           encoder: kind))
        var luma = [UInt8](repeating: 0, count: width * height)
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let start = Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
        for i in 0..<frames {
            for y in stride(from: 0, to: height, by: 1) {
                for x in stride(from: 0, to: width, by: 8) { luma[y * width + x] = UInt8(truncatingIfNeeded: x + y + i * 5) }
            }
            var failure: FFmpegError?
            luma.withUnsafeBytes { p in
                do throws(FFmpegError) {
                    try encoder.encode(FrameView(base: p.baseAddress!, width: width, height: height, bytesPerRow: width, format: .gray8,
                                                sequence: UInt64(i), timestamp: MonotonicInstant(seconds: Double(i) / fps))) { _ in }
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
        }
        try encoder.finish { _ in }
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(frames) / max(1e-9, Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9 - start)
    }
}

extension CodecParameters {
    /// The parameters of a camera's Motion JPEG at `width`×`height`: each packet one JPEG,
    /// every one a keyframe.
    public static func mjpeg(width: Int, height: Int) throws(FFmpegError) -> CodecParameters {
        guard let p = avcodec_parameters_alloc() else { throw FFmpegError("codec parameters", message: "out of memory") }
        p.pointee.codec_type = AVMEDIA_TYPE_VIDEO
        p.pointee.codec_id = AV_CODEC_ID_MJPEG
        p.pointee.width = Int32(width)
        p.pointee.height = Int32(height)
        defer {
            var q: UnsafeMutablePointer<AVCodecParameters>? = p
            avcodec_parameters_free(&q)
        }
        return try CodecParameters(copying: p)
    }

    /// Whether the stream is Motion JPEG.
    public var isMJPEG: Bool { pointer.pointee.codec_id == AV_CODEC_ID_MJPEG }
}
