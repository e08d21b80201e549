// SPDX-License-Identifier: Apache-2.0
// Compressed packets into an MP4 file with FFmpeg's libavformat, without re-encoding.

import CFFmpeg
public import GateCore

/// Writes one video stream of already-compressed packets into an MP4 file. Times are
/// capture times; the file's zero is `origin`. Packets before `origin` (the frames from
/// the keyframe a clip must decode from up to its first shown frame) get negative times,
/// which the MP4 muxer turns into an edit list, so players start at `origin`.
public final class MP4Writer {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let stream: UnsafeMutablePointer<AVStream>
    private var packet: UnsafeMutablePointer<AVPacket>?
    public let path: String
    public let origin: MonotonicInstant
    private var lastPTS: Int64?
    private var finished = false
    /// Packets written.
    public private(set) var packets = 0

    public init(path: String, parameters: CodecParameters, origin: MonotonicInstant, fps: Double) throws(FFmpegError) {
        FFmpegLog.quiet
        self.path = path
        self.origin = origin
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        try FFmpegError.check(avformat_alloc_output_context2(&ctx, nil, "mp4", path), "creating \(path)")
        guard let ctx else { throw FFmpegError("creating \(path)", message: "out of memory") }
        guard let st = avformat_new_stream(ctx, nil), let p = av_packet_alloc() else {
            avformat_free_context(ctx)
            throw FFmpegError("creating \(path)", message: "out of memory")
        }
        format = ctx
        stream = st
        packet = p
        do throws(FFmpegError) {
            try FFmpegError.check(avcodec_parameters_copy(st.pointee.codecpar, parameters.pointer), "creating \(path)")
            st.pointee.codecpar.pointee.codec_tag = 0
            st.pointee.time_base = H264Encoder.timeBase
            st.pointee.avg_frame_rate = av_d2q(fps, 100_000)
            try FFmpegError.check(avio_open(&ctx.pointee.pb, path, AVIO_FLAG_WRITE), "creating \(path)")
            try FFmpegError.check(avformat_write_header(ctx, nil), "writing \(path)")
        } catch {
            abandon()
            throw error
        }
    }

    deinit { abandon() }

    /// Closes and frees without a trailer (the file is left unfinished).
    private func abandon() {
        if let f = format {
            if f.pointee.pb != nil { avio_closep(&f.pointee.pb) }
            avformat_free_context(f)
            format = nil
        }
        av_packet_free(&packet)
    }

    /// Appends one packet captured at `time`.
    public func write(_ bytes: UnsafeRawBufferPointer, time: MonotonicInstant, keyframe: Bool) throws(FFmpegError) {
        guard let format, let packet, !finished else { throw FFmpegError("writing \(path)", message: "the file is already finished") }
        let pts = (time.nanoseconds - origin.nanoseconds) / 1000
        if let lastPTS, pts <= lastPTS {
            throw FFmpegError("writing \(path)", message: "packet time \(time) is not after the previous packet's")
        }
        lastPTS = pts
        try packet.fill(bytes, pts: pts, keyframe: keyframe, operation: "writing \(path)")
        packet.pointee.stream_index = stream.pointee.index
        av_packet_rescale_ts(packet, H264Encoder.timeBase, stream.pointee.time_base)
        try FFmpegError.check(av_interleaved_write_frame(format, packet), "writing \(path)")
        packets += 1
    }

    /// Writes the MP4's index and closes the file.
    public func finish() throws(FFmpegError) {
        guard let format, !finished else { return }
        finished = true
        try FFmpegError.check(av_write_trailer(format), "finishing \(path)")
        try FFmpegError.check(avio_closep(&format.pointee.pb), "closing \(path)")
    }
}
