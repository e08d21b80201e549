// SPDX-License-Identifier: Apache-2.0
// Compressed packets back to pictures with FFmpeg's libavcodec.

import CFFmpeg

/// A decoded picture, borrowed: valid until the decoder's next call.
public struct DecodedPicture {
    public let width: Int
    public let height: Int
    /// The luma plane and its row length in bytes.
    public let luma: UnsafePointer<UInt8>
    public let lumaStride: Int
    /// Presentation time, microseconds, as the packet carried it.
    public let pts: Int64
    let frame: UnsafeMutablePointer<AVFrame>

    /// Luma sample at column `x`, row `y`.
    public subscript(x: Int, y: Int) -> UInt8 { luma[y * lumaStride + x] }
}

/// One decoder for one stream's packets, in order. Used from one thread.
public final class VideoDecoder {
    private var handles: CodecHandles
    private var context: UnsafeMutablePointer<AVCodecContext> { handles.context }
    private var frame: UnsafeMutablePointer<AVFrame> { handles.frame }
    private var packet: UnsafeMutablePointer<AVPacket> { handles.packet }

    /// A decoder for the stream `parameters` describe (the encoder's or a file's).
    public init(_ parameters: CodecParameters) throws(FFmpegError) {
        FFmpegLog.quiet
        let name = parameters.codecName
        guard let codec = avcodec_find_decoder(parameters.pointer.pointee.codec_id) else {
            throw FFmpegError("opening a \(name) decoder", message: "this FFmpeg cannot decode \(name)")
        }
        guard let ctx = avcodec_alloc_context3(codec), let f = av_frame_alloc(), let p = av_packet_alloc() else {
            throw FFmpegError("opening a \(name) decoder", message: "out of memory")
        }
        handles = CodecHandles(context: ctx, frame: f, packet: p)
        do throws(FFmpegError) {
            try FFmpegError.check(avcodec_parameters_to_context(ctx, parameters.pointer), "opening a \(name) decoder")
            // Why: frame threading holds back one picture per thread; the delayed view wants
            // the picture of the packet just sent.
            ctx.pointee.thread_type = FF_THREAD_SLICE
            try FFmpegError.check(avcodec_open2(ctx, codec, nil), "opening a \(name) decoder")
        } catch {
            handles.free()
            throw error
        }
    }

    deinit { handles.free() }

    /// Decodes one packet; `picture` receives each picture it completes.
    public func decode(_ bytes: UnsafeRawBufferPointer, pts: Int64 = 0, keyframe: Bool = false,
                       picture: (DecodedPicture) throws -> Void) throws {
        try packet.fill(bytes, pts: pts, keyframe: keyframe, operation: "decoding")
        try send(packet, picture: picture)
    }

    /// Sends an FFmpeg packet (as a file reader has it) and passes on the pictures.
    func send(_ p: UnsafeMutablePointer<AVPacket>?, picture: (DecodedPicture) throws -> Void) throws {
        let r = avcodec_send_packet(context, p)
        if r != sprintgate_averror_eof() {
            try FFmpegError.check(r, "decoding \(String(cString: avcodec_get_name(context.pointee.codec_id)))")
        }
        while true {
            let r = avcodec_receive_frame(context, frame)
            if r == sprintgate_averror_eagain() || r == sprintgate_averror_eof() { return }
            try FFmpegError.check(r, "decoding")
            defer { av_frame_unref(frame) }
            guard let luma = frame.plane(0) else { continue }
            try picture(DecodedPicture(width: Int(frame.pointee.width), height: Int(frame.pointee.height),
                                       luma: UnsafePointer(luma), lumaStride: frame.stride(0),
                                       pts: frame.pointee.best_effort_timestamp, frame: frame))
        }
    }

    /// Passes on the pictures the decoder still holds; it takes no packets afterwards.
    public func finish(picture: (DecodedPicture) throws -> Void) throws {
        try send(nil, picture: picture)
    }
}
