// SPDX-License-Identifier: Apache-2.0
// Reading a video file (a clip of the gate's, or one a coach uploads) with libavformat.

import CFFmpeg
import GateCore

/// What a video file holds, as its container says.
public struct MediaInfo: Hashable, Sendable {
    /// FFmpeg's name of the container, e.g. "mov,mp4,m4a,3gp,3g2,mj2".
    public var container: String
    /// FFmpeg's name of the video codec, e.g. "h264".
    public var codec: String
    public var width: Int
    public var height: Int
    /// Seconds, or nil when the container does not say.
    public var duration: Double?
    /// Frames a second the container states, or nil.
    public var fps: Double?
    /// Frames the container lists, or nil when it does not list them.
    public var frames: Int?
    /// Degrees clockwise (0, 90, 180, 270) a player turns the pictures: a phone filming
    /// upright stores its pictures sideways with this in the container.
    public var rotation = 0
}

/// An open video file: its first video stream, decoded picture by picture. Opening
/// refuses, with a message a coach can act on, a file that is not a video, has no video
/// stream, or whose index is missing (an MP4 cut short while it was written or uploaded).
public final class MediaFile {
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private let streamIndex: Int32
    private let packet: UnsafeMutablePointer<AVPacket>
    private let decoder: VideoDecoder
    /// The video stream's codec parameters (for copying its packets into another file).
    private let parameters: CodecParameters
    public let path: String
    public let info: MediaInfo
    /// Seconds per unit of the stream's timestamps.
    private let timeBase: Double
    /// The stream's first timestamp, subtracted so pictures start near zero.
    private let startPTS: Int64

    public init(path: String) throws(FFmpegError) {
        FFmpegLog.quiet
        self.path = path
        var ctx: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&ctx, path, nil, nil)
        guard opened >= 0, let ctx else {
            throw FFmpegError("opening \(path)", message: "not a video file that can be read (\(FFmpegError.text(opened)))")
        }
        format = ctx
        var index: Int32 = -1
        var parameters: CodecParameters?
        var timeBase = 0.0, startPTS: Int64 = 0
        var info = MediaInfo(container: String(cString: ctx.pointee.iformat.pointee.name), codec: "", width: 0, height: 0)
        do throws(FFmpegError) {
            try FFmpegError.check(avformat_find_stream_info(ctx, nil), "reading \(path)")
            index = av_find_best_stream(ctx, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
            guard index >= 0, let st = ctx.pointee.streams[Int(index)] else {
                throw FFmpegError("opening \(path)", message: "the file has no video in it")
            }
            let par = st.pointee.codecpar!
            guard par.pointee.width > 0, par.pointee.height > 0 else {
                throw FFmpegError("opening \(path)", message: "the video's picture size is missing: the file is damaged")
            }
            parameters = try CodecParameters(copying: par)
            timeBase = av_q2d(st.pointee.time_base)
            startPTS = st.pointee.start_time == sprintgate_av_nopts() ? 0 : st.pointee.start_time
            info.codec = String(cString: avcodec_get_name(par.pointee.codec_id))
            info.width = Int(par.pointee.width)
            info.height = Int(par.pointee.height)
            if st.pointee.duration != sprintgate_av_nopts() && st.pointee.duration > 0 {
                info.duration = Double(st.pointee.duration) * timeBase
            } else if ctx.pointee.duration != sprintgate_av_nopts() && ctx.pointee.duration > 0 {
                info.duration = Double(ctx.pointee.duration) / Double(AV_TIME_BASE)
            }
            let rate = av_q2d(st.pointee.avg_frame_rate)
            info.fps = rate.isFinite && rate > 0 ? rate : nil
            info.frames = st.pointee.nb_frames > 0 ? Int(st.pointee.nb_frames) : nil
            info.rotation = Int(sprintgate_stream_rotation(st))
        } catch {
            avformat_close_input(&format)
            throw error
        }
        guard let p = av_packet_alloc() else {
            avformat_close_input(&format)
            throw FFmpegError("opening \(path)", message: "out of memory")
        }
        packet = p
        do throws(FFmpegError) {
            decoder = try VideoDecoder(parameters!)
        } catch {
            var q: UnsafeMutablePointer<AVPacket>? = p
            av_packet_free(&q)
            avformat_close_input(&format)
            throw error
        }
        streamIndex = index
        self.parameters = parameters!
        self.info = info
        self.timeBase = timeBase
        self.startPTS = startPTS
    }

    deinit {
        avformat_close_input(&format)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }

    /// Decodes the whole video in order. `picture` receives each picture and its time in
    /// seconds from the stream's start (pictures an edit list hides are not shown). Returns
    /// the number of pictures. A file that ends before the frames its index lists, or
    /// holds damaged data, throws after the pictures before the damage.
    @discardableResult
    public func readAll(_ picture: (DecodedPicture, Double) throws -> Void) throws -> Int {
        var count = 0, packets = 0
        let deliver: (DecodedPicture) throws -> Void = { p in
            count += 1
            try picture(p, Double(p.pts - self.startPTS) * self.timeBase)
        }
        let cutShort = { (listed: Int) in
            FFmpegError("reading \(self.path)", message: "the file is cut short: \(packets) of the \(listed) frames it lists are there")
        }
        do throws(FFmpegError) {
            while true {
                let r = av_read_frame(format, packet)
                if r == sprintgate_averror_eof() { break }
                try FFmpegError.check(r, "reading \(path)")
                defer { av_packet_unref(packet) }
                guard packet.pointee.stream_index == streamIndex else { continue }
                packets += 1
                do { try decoder.send(packet, picture: deliver) } catch let e as FFmpegError { throw e } catch {
                    throw FFmpegError("reading \(path)", message: "\(error)")
                }
            }
            do { try decoder.finish(picture: deliver) } catch let e as FFmpegError { throw e } catch {
                throw FFmpegError("reading \(path)", message: "\(error)")
            }
        } catch {
            if let listed = info.frames, packets < listed { throw cutShort(listed) }
            throw FFmpegError("reading \(path)", message: "the file is damaged after \(count) frames (\(error.message))")
        }
        if let listed = info.frames, packets < listed { throw cutShort(listed) }
        return count
    }

    /// What `trim` wrote: the frames shown, and the first and last shown times in seconds
    /// of this file's timeline.
    public struct Trimmed: Sendable, Hashable {
        public var frames: Int
        public var first: Double
        public var last: Double
    }

    /// Copies the pictures from `from` to `to` seconds (this file's timeline, as a player
    /// shows it) into a new MP4 at `destination` without re-encoding: the copy starts at the
    /// keyframe before `from`, the frames before `from` hidden by an edit list. A picture
    /// within half a frame of either end is kept (a player paused on a frame reports a time
    /// a little either side of it). Holds one group of pictures at a time. Call on a file
    /// not read yet.
    public func trim(from: Double, to: Double, into destination: String) throws(FFmpegError) -> Trimmed {
        guard from.isFinite, to.isFinite, from >= 0, to > from else {
            throw FFmpegError("trimming \(path)", message: "the part to keep must start at 0 s or later and end after it starts")
        }
        // The group of pictures since the last keyframe, until the first shown one.
        var group: [(bytes: [UInt8], t: Double, key: Bool)] = []
        var writer: MP4Writer?
        var shown = 0, first = 0.0, last = 0.0
        let halfFrame = 0.5 / (info.fps ?? 30)
        let (from, to) = (from - halfFrame, to + halfFrame)
        func instant(_ t: Double) -> MonotonicInstant { MonotonicInstant(nanoseconds: Int64((t * 1e9).rounded())) }
        while true {
            let r = av_read_frame(format, packet)
            if r == sprintgate_averror_eof() { break }
            try FFmpegError.check(r, "reading \(path)")
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex, packet.pointee.pts != sprintgate_av_nopts() else { continue }
            let t = Double(packet.pointee.pts - startPTS) * timeBase
            let key = packet.pointee.flags & AV_PKT_FLAG_KEY != 0
            if t > to { break }
            let bytes = UnsafeRawBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))
            if let writer {
                try writer.write(bytes, time: instant(t), keyframe: key)
                shown += 1
                last = t
                continue
            }
            if key { group.removeAll(keepingCapacity: true) }
            guard !group.isEmpty || key else { continue }  // nothing decodes before the first keyframe
            group.append((Array(bytes), t, key))
            guard t >= from else { continue }
            // The first shown picture: the file's zero; its group goes first, hidden before it.
            let w = try MP4Writer(path: destination, parameters: parameters, origin: instant(t), fps: info.fps ?? 30)
            for p in group {
                do { try p.bytes.withUnsafeBytes { try w.write($0, time: instant(p.t), keyframe: p.key) } } catch let e as FFmpegError {
                    throw e
                } catch {
                    throw FFmpegError("writing \(destination)", message: "\(error)")
                }
            }
            group.removeAll()
            writer = w
            shown = 1
            first = t
            last = t
        }
        guard let writer else {
            throw FFmpegError("trimming \(path)", message: "there are no pictures between \(from) s and \(to) s")
        }
        try writer.finish()
        return Trimmed(frames: shown, first: first, last: last)
    }
}
