// SPDX-License-Identifier: Apache-2.0
// Decoded pictures painted on a whole screen (a TV): turned, mirrored, scaled to fit with
// black bars and captioned, through a libavfilter graph, into the screen's XRGB buffer.

import CFFmpeg
import Glibc

/// How pictures are shown on a screen: turned clockwise by a quarter turn or more, and
/// mirrored (the coach sees the athlete as in a mirror).
public struct ScreenView: Sendable, Hashable {
    /// 0, 90, 180 or 270 degrees clockwise.
    public var rotation: Int
    public var flip: Bool

    public init(rotation: Int = 0, flip: Bool = false) {
        self.rotation = rotation
        self.flip = flip
    }
}

/// Paints pictures onto a `width`×`height` screen in XRGB (bytes B, G, R, unused): scaled
/// to fit inside it keeping their shape, centred on black, with `caption` (if any) in the
/// top-left corner. The graph is built again only when the picture's size or format, the
/// view or the caption changes. Used from one thread.
public final class ScreenPainter {
    public let width: Int
    public let height: Int
    public var view: ScreenView
    /// A line drawn in the top-left corner (the delay, a message); nil: none.
    public var caption: String?

    private var graph: FilterGraph?
    private var built: (width: Int32, height: Int32, format: Int32, view: ScreenView, caption: String?)?
    private var blank: UnsafeMutablePointer<AVFrame>?
    private var count: Int64 = 0

    public init(width: Int, height: Int, view: ScreenView = ScreenView(), caption: String? = nil) {
        self.width = width
        self.height = height
        self.view = view
        self.caption = caption
    }

    deinit {
        if blank != nil { av_frame_free(&blank) }
    }

    /// Paints `picture` into `pixels`, rows `pitch` bytes apart.
    public func paint(_ picture: DecodedPicture, into pixels: UnsafeMutableRawPointer, pitch: Int) throws(FFmpegError) {
        try paint(frame: picture.frame, into: pixels, pitch: pitch)
    }

    /// Paints a black screen with `caption` on it (while there is no picture yet).
    public func paintBlank(into pixels: UnsafeMutableRawPointer, pitch: Int) throws(FFmpegError) {
        if blank == nil {
            // A small 16:9 black picture; the graph scales it to the screen.
            guard let f = av_frame_alloc() else { throw FFmpegError("painting the screen", message: "out of memory") }
            f.pointee.width = 64
            f.pointee.height = 36
            f.pointee.format = AV_PIX_FMT_YUV420P.rawValue
            blank = f
            try FFmpegError.check(av_frame_get_buffer(f, 0), "painting the screen")
            for (plane, value) in [(0, Int32(16)), (1, 128), (2, 128)] {
                if let p = f.plane(plane) { memset(p, value, f.stride(plane) * (plane == 0 ? 36 : 18)) }
            }
        }
        try paint(frame: blank!, into: pixels, pitch: pitch)
    }

    private func paint(frame: UnsafeMutablePointer<AVFrame>, into pixels: UnsafeMutableRawPointer, pitch: Int) throws(FFmpegError) {
        let key = (frame.pointee.width, frame.pointee.height, frame.pointee.format, view, caption)
        if graph == nil || built.map({ $0.width != key.0 || $0.height != key.1 || $0.format != key.2 || $0.view != key.3 || $0.caption != key.4 }) ?? true {
            graph = nil
            graph = try FilterGraph(input: frame, filters: filters(), purpose: "painting the screen")
            built = key
        }
        frame.pointee.pts = count
        count += 1
        try graph!.push(frame)
        var painted = false
        try graph!.drain { out throws(FFmpegError) in
            let frame = UnsafeMutablePointer(mutating: out)
            guard let src = frame.plane(0) else { return }
            let stride = frame.stride(0)
            let rows = min(height, Int(out.pointee.height)), bytes = min(width, Int(out.pointee.width)) * 4
            for y in 0..<rows {
                (pixels + y * pitch).copyMemory(from: src + y * stride, byteCount: bytes)
            }
            painted = true
        }
        if !painted { throw FFmpegError("painting the screen", message: "the picture did not come out of the scaler") }
    }

    private func filters() -> [FilterGraph.Filter] {
        var f = FilterGraph.turn(view.rotation, flip: view.flip)
        f.append(("scale", [("w", "\(width)"), ("h", "\(height)"), ("force_original_aspect_ratio", "decrease"),
                            ("flags", "bilinear")]))
        f.append(("pad", [("w", "\(width)"), ("h", "\(height)"), ("x", "(ow-iw)/2"), ("y", "(oh-ih)/2"), ("color", "black")]))
        if let caption, !caption.isEmpty {
            let size = max(16, height / 22)
            if let text = OverlayText(.fixed(caption), x: size / 2, y: size / 2, size: size).filter { f.append(text) }
        }
        f.append(("format", [("pix_fmts", "bgr0")]))
        return f
    }
}
