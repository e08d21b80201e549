// SPDX-License-Identifier: Apache-2.0
// Decoded pictures to colour JPEG with FFmpeg's MJPEG encoder, scaled for a phone.

import CFFmpeg

/// Encodes decoded pictures as JPEG, at most `maxWidth` wide (aspect kept, even sizes).
/// Used from one thread.
public final class JPEGPictureEncoder {
    public let maxWidth: Int
    /// FFmpeg's MJPEG quantiser, 2 (best) to 31. Why 5: sharp enough to judge a bow arm on
    /// a phone, about 60 KB for 1280×720.
    public let quality: Int32
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var scaler: OpaquePointer?
    private var source: (Int, Int, Int32)?
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    public private(set) var width = 0
    private var nextPTS: Int64 = 0
    public private(set) var height = 0

    public init(maxWidth: Int = 1280, quality: Int32 = 5) throws(FFmpegError) {
        FFmpegLog.quiet
        self.maxWidth = max(16, maxWidth)
        self.quality = quality
        guard let f = av_frame_alloc(), let p = av_packet_alloc() else { throw FFmpegError("JPEG encoder", message: "out of memory") }
        frame = f
        packet = p
    }

    deinit {
        close()
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    private func close() {
        avcodec_free_context(&context)
        if let scaler { sws_freeContext(scaler) }
        scaler = nil
        source = nil
    }

    /// Opens the encoder and scaler for pictures of `w`×`h` in `format`.
    private func prepare(width w: Int, height h: Int, format: Int32) throws(FFmpegError) {
        if let s = source, s == (w, h, format) { return }
        close()
        let outW = min(w, maxWidth) & ~1
        let outH = max(2, (h * outW / max(1, w)) & ~1)
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG), let ctx = avcodec_alloc_context3(codec) else {
            throw FFmpegError("opening the JPEG encoder", message: "this FFmpeg has no MJPEG encoder")
        }
        context = ctx
        ctx.pointee.width = Int32(outW)
        ctx.pointee.height = Int32(outH)
        ctx.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        ctx.pointee.time_base = AVRational(num: 1, den: 25)
        ctx.pointee.flags |= Int32(AV_CODEC_FLAG_QSCALE)
        ctx.pointee.global_quality = Int32(FF_QP2LAMBDA) * quality
        try FFmpegError.check(avcodec_open2(ctx, codec, nil), "opening the JPEG encoder")
        scaler = sws_getContext(Int32(w), Int32(h), AVPixelFormat(rawValue: format), Int32(outW), Int32(outH), AV_PIX_FMT_YUVJ420P,
                                SWS_BILINEAR, nil, nil, nil)
        guard scaler != nil else { throw FFmpegError("opening the JPEG encoder", message: "cannot scale \(w)×\(h)") }
        av_frame_unref(frame)
        frame.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        frame.pointee.width = Int32(outW)
        frame.pointee.height = Int32(outH)
        try FFmpegError.check(av_frame_get_buffer(frame, 0), "opening the JPEG encoder")
        width = outW
        height = outH
        source = (w, h, format)
    }

    /// The picture as a JPEG file's bytes.
    public func encode(_ picture: DecodedPicture) throws(FFmpegError) -> [UInt8] {
        let src = picture.frame
        try prepare(width: picture.width, height: picture.height, format: src.pointee.format)
        try FFmpegError.check(av_frame_make_writable(frame), "encoding a JPEG")
        let (sp, ss) = src.planeArrays()
        let (dp, ds) = frame.planeArrays()
        _ = sws_scale(scaler, sp.map { UnsafePointer($0) }, ss, 0, Int32(picture.height), dp, ds)
        frame.pointee.quality = context!.pointee.global_quality
        // Why: libavcodec refuses a frame whose time is not after the last one's.
        frame.pointee.pts = nextPTS
        nextPTS += 1
        try FFmpegError.check(avcodec_send_frame(context, frame), "encoding a JPEG")
        try FFmpegError.check(avcodec_receive_packet(context, packet), "encoding a JPEG")
        defer { av_packet_unref(packet) }
        return Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size)))
    }
}
