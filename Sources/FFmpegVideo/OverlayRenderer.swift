// SPDX-License-Identifier: Apache-2.0
// A video re-encoded with text drawn on it (a run's clock, splits and speed) through
// FFmpeg's libavfilter: drawtext in a filter graph, then libx264 into an MP4.

import CFFmpeg
import Glibc
public import GateCore

/// One text drawn on a video.
public struct OverlayText: Sendable, Hashable {
    public enum Content: Sendable, Hashable {
        /// Drawn as it is (no expansion of `%` sequences).
        case fixed(String)
        /// A running clock: seconds since `start` (the source's timeline), never below
        /// zero, cut to hundredths, as `9.87`, or `1:02.34` when `minutes`.
        case clock(start: Double, minutes: Bool)
    }

    public var content: Content
    /// Top-left corner, output pixels.
    public var x: Int
    public var y: Int
    /// Font size, pixels.
    public var size: Int
    /// Shown from this time on (seconds of the source's timeline); nil: from the first frame.
    public var from: Double?
    /// Shown before this time; nil: to the last frame.
    public var until: Double?
    /// An FFmpeg colour: a name (`white`) or `#rrggbb`.
    public var colour: String

    public init(_ content: Content, x: Int, y: Int, size: Int, from: Double? = nil, until: Double? = nil, colour: String = "white") {
        self.content = content
        self.x = x
        self.y = y
        self.size = size
        self.from = from
        self.until = until
        self.colour = colour
    }

    /// drawtext's text for the content, and whether `%{…}` in it is expanded.
    var drawtext: (text: String, expand: Bool) {
        switch content {
        case let .fixed(s): return (s, false)
        case let .clock(start, minutes):
            let c = "trunc(max(t-(\(start)),0)*100)"
            if minutes {
                return ("%{eif:trunc(\(c)/6000):d}:%{eif:mod(trunc(\(c)/100),60):d:2}.%{eif:mod(\(c),100):d:2}", true)
            }
            return ("%{eif:trunc(\(c)/100):d}.%{eif:mod(\(c),100):d:2}", true)
        }
    }

    /// The drawtext filter that draws it, or nil for an empty text.
    var filter: FilterGraph.Filter? {
        let (text, expand) = drawtext
        guard !text.isEmpty else { return nil }
        var options: [(String, String)] = [
            ("text", text), ("expansion", expand ? "normal" : "none"), ("x", "\(x)"), ("y", "\(y)"),
            ("fontsize", "\(max(6, size))"), ("fontcolor", colour),
            ("box", "1"), ("boxcolor", "black@0.55"), ("boxborderw", "\(max(2, size / 5))"),
        ]
        if let font = OverlayRenderer.fontFiles.first(where: { access($0, R_OK) == 0 }) { options.append(("fontfile", font)) }
        if let e = enable { options.append(("enable", e)) }
        return ("drawtext", options)
    }

    /// drawtext's timeline expression, or nil when always shown.
    var enable: String? {
        switch (from, until) {
        case (nil, nil): return nil
        case let (f?, nil): return "gte(t,\(f))"
        case let (nil, u?): return "lt(t,\(u))"
        case let (f?, u?): return "gte(t,\(f))*lt(t,\(u))"
        }
    }
}

/// Re-encodes a video file with texts drawn on it: turned upright as its container asks
/// (a phone's portrait video), scaled so its long side is at most `maxSide`, as H.264 in
/// an MP4 without sound. Used from one thread.
public final class OverlayRenderer {
    public let source: MediaFile
    /// The output's picture size (known before rendering, for laying the texts out).
    public let width: Int
    public let height: Int

    /// Fonts tried in order (Debian's fonts-dejavu-core); without them drawtext asks
    /// fontconfig for its default sans font.
    public static let fontFiles = ["/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
                                   "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"]

    public init(source path: String, maxSide: Int = 1280) throws(FFmpegError) {
        source = try MediaFile(path: path)
        let turned = source.info.rotation == 90 || source.info.rotation == 270
        let (w, h) = turned ? (source.info.height, source.info.width) : (source.info.width, source.info.height)
        let scale = min(1, Double(maxSide) / Double(max(w, h)))
        // Even sizes: 4:2:0 chroma and the encoder want them.
        width = max(2, Int((Double(w) * scale / 2).rounded()) * 2)
        height = max(2, Int((Double(h) * scale / 2).rounded()) * 2)
    }

    /// What `render` wrote.
    public struct Rendered: Sendable, Hashable {
        public var frames: Int
        /// The source's time of the first frame written, seconds.
        public var first: Double
        public var last: Double
    }

    /// Draws `texts` on the frames from `from` to `to` seconds (all when nil) and writes
    /// them to `destination`. A damaged source throws after the frames before the damage
    /// were read; the partial output is left for the caller to delete.
    public func render(_ texts: [OverlayText], from: Double? = nil, to: Double? = nil, into destination: String,
                       encoder kind: H264EncoderKind = .x264) throws(FFmpegError) -> Rendered {
        let fps = source.info.fps ?? 30
        let encoder = try H264Encoder(VideoEncoderSettings(
            width: width, height: height, fps: fps,
            bitsPerSecond: VideoEncoderSettings.defaultBitsPerSecond(width: width, height: height, fps: fps), encoder: kind))
        let parameters = try encoder.parameters()
        var graph: FilterGraph?
        var writer: MP4Writer?
        var written = Rendered(frames: 0, first: 0, last: 0)
        var sequence: UInt64 = 0
        var failure: FFmpegError?
        let pull: (FilterGraph) throws(FFmpegError) -> Void = { g throws(FFmpegError) in
            try g.drain { picture throws(FFmpegError) in
                let time = MonotonicInstant(nanoseconds: picture.pointee.pts * 1000)
                if writer == nil {
                    writer = try MP4Writer(path: destination, parameters: parameters, origin: time, fps: fps)
                    written.first = time.seconds
                }
                try encoder.encode(picture: picture, time: time, sequence: sequence) { p in
                    do throws(FFmpegError) { try writer!.write(p.bytes, time: p.time, keyframe: p.keyframe) } catch { failure = failure ?? error }
                }
                sequence += 1
                written.frames += 1
                written.last = time.seconds
                if let f = failure { throw f }
            }
        }
        do {
            try source.readAll { picture, t in
                if let from, t < from - 0.0005 { return }
                if let to, t > to + 0.0005 { return }
                if graph == nil {
                    graph = try FilterGraph(input: picture.frame, rotation: source.info.rotation, width: width, height: height, texts: texts)
                }
                picture.frame.pointee.pts = Int64((t * 1e6).rounded())
                try graph!.push(picture.frame)
                try pull(graph!)
            }
        } catch let e as FFmpegError {
            throw e
        } catch {
            throw FFmpegError("drawing on \(source.path)", message: "\(error)")
        }
        guard let graph else {
            throw FFmpegError("drawing on \(source.path)", message: "there are no pictures in the part asked for")
        }
        try graph.push(nil)
        try pull(graph)
        try encoder.finish { p in
            do throws(FFmpegError) { try writer?.write(p.bytes, time: p.time, keyframe: p.keyframe) } catch { failure = failure ?? error }
        }
        if let failure { throw failure }
        try writer?.finish()
        return written
    }
}

/// buffer → filters → buffersink, built filter by filter with options set one by one, so no
/// text needs the graph language's escaping.
final class FilterGraph {
    private var graph: UnsafeMutablePointer<AVFilterGraph>?
    private let source: UnsafeMutablePointer<AVFilterContext>
    private let sink: UnsafeMutablePointer<AVFilterContext>
    private let output: UnsafeMutablePointer<AVFrame>
    /// What the graph is for, in its errors ("drawing the overlay").
    private let purpose: String

    /// A filter and its options.
    typealias Filter = (name: String, options: [(String, String)])

    /// The filters that turn a picture upright by `rotation` degrees clockwise (the display
    /// matrix's), and mirror it when `flip`.
    static func turn(_ rotation: Int, flip: Bool = false) -> [Filter] {
        var f: [Filter] = flip ? [("hflip", [])] : []
        switch rotation {
        case 90: f.append(("transpose", [("dir", "clock")]))
        case 180: f += [("hflip", []), ("vflip", [])]
        case 270: f.append(("transpose", [("dir", "cclock")]))
        default: break
        }
        return f
    }

    init(input: UnsafePointer<AVFrame>, filters: [Filter], purpose: String) throws(FFmpegError) {
        self.purpose = purpose
        guard let g = avfilter_graph_alloc(), let out = av_frame_alloc() else {
            throw FFmpegError(purpose, message: "out of memory")
        }
        graph = g
        output = out
        var chain: [UnsafeMutablePointer<AVFilterContext>] = []
        func add(_ name: String, _ options: [(String, String)]) throws(FFmpegError) -> UnsafeMutablePointer<AVFilterContext> {
            guard let filter = avfilter_get_by_name(name) else {
                throw FFmpegError(purpose, message: "this FFmpeg has no \(name) filter")
            }
            guard let ctx = avfilter_graph_alloc_filter(g, filter, "\(name)\(chain.count)") else {
                throw FFmpegError(purpose, message: "out of memory")
            }
            for (key, value) in options {
                try FFmpegError.check(av_opt_set(ctx, key, value, AV_OPT_SEARCH_CHILDREN), "setting \(name)'s \(key)")
            }
            try FFmpegError.check(avfilter_init_str(ctx, nil), "starting the \(name) filter")
            if let last = chain.last { try FFmpegError.check(avfilter_link(last, 0, ctx, 0), "linking the \(name) filter") }
            chain.append(ctx)
            return ctx
        }
        do throws(FFmpegError) {
            let format = av_get_pix_fmt_name(AVPixelFormat(rawValue: input.pointee.format)).map { String(cString: $0) } ?? "yuv420p"
            let sar = input.pointee.sample_aspect_ratio
            source = try add("buffer", [("width", "\(input.pointee.width)"), ("height", "\(input.pointee.height)"),
                                        ("pix_fmt", format), ("time_base", "1/1000000"),
                                        ("pixel_aspect", sar.num > 0 && sar.den > 0 ? "\(sar.num)/\(sar.den)" : "1/1")])
            for f in filters { _ = try add(f.name, f.options) }
            sink = try add("buffersink", [])
            try FFmpegError.check(avfilter_graph_config(g, nil), purpose)
        } catch {
            avfilter_graph_free(&graph)
            var f: UnsafeMutablePointer<AVFrame>? = out
            av_frame_free(&f)
            throw error
        }
    }

    /// The overlay's graph: (turn) → scale → yuv420p → drawtext…
    convenience init(input: UnsafePointer<AVFrame>, rotation: Int, width: Int, height: Int, texts: [OverlayText]) throws(FFmpegError) {
        var filters = Self.turn(rotation)
        filters.append(("scale", [("w", "\(width)"), ("h", "\(height)")]))
        filters.append(("format", [("pix_fmts", "yuv420p")]))
        for t in texts {
            if let f = t.filter { filters.append(f) }
        }
        try self.init(input: input, filters: filters, purpose: "drawing the overlay")
    }

    deinit {
        avfilter_graph_free(&graph)
        var f: UnsafeMutablePointer<AVFrame>? = output
        av_frame_free(&f)
    }

    /// Sends a picture (its `pts` in microseconds) into the graph; nil: no more.
    func push(_ frame: UnsafeMutablePointer<AVFrame>?) throws(FFmpegError) {
        try FFmpegError.check(av_buffersrc_add_frame_flags(source, frame, Int32(AV_BUFFERSRC_FLAG_KEEP_REF)), purpose)
    }

    /// Passes every picture the graph has ready to `body`.
    func drain(_ body: (UnsafePointer<AVFrame>) throws(FFmpegError) -> Void) throws(FFmpegError) {
        while true {
            let r = av_buffersink_get_frame(sink, output)
            if r == sprintgate_averror_eagain() || r == sprintgate_averror_eof() { return }
            try FFmpegError.check(r, purpose)
            defer { av_frame_unref(output) }
            try body(output)
        }
    }
}
