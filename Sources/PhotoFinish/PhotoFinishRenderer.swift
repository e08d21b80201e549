// SPDX-License-Identifier: Apache-2.0
// The slit-scan composite of a capture: uniform time axis, millisecond scale, crossing mark.

public import GateCore

/// How a capture is drawn.
public struct PhotoFinishRenderOptions: Sendable, Hashable {
    /// Time per composite column, milliseconds. Why: 1 ms per column spreads a 0.6 s
    /// window over 600 px, wider than the frame rate resolves, so no frame is lost to
    /// resampling and thousandths can be read off the scale.
    public var millisecondsPerColumn: Double = 1.0
    /// The composite is never wider than this; the time per column grows instead.
    public var maxCompositeWidth: Int = 3000
    /// Integer magnification of the 3×5 label font.
    public var labelScale: Int = 2
    public init() {}
}

/// Where things are in a rendered picture, image pixels and the capture's time domain.
public struct PhotoFinishLayout: Sendable, Hashable {
    /// Top-left corner and size of the slit-scan composite.
    public let compositeX: Int
    public let compositeY: Int
    public let compositeWidth: Int
    public let compositeHeight: Int
    /// Time of composite column 0 (local monotonic clock).
    public let startTime: MonotonicInstant
    /// Nanoseconds per composite column (uniform).
    public let nanosecondsPerColumn: Double
    /// Image column of the crossing-instant marker.
    public let crossingX: Int
    /// Major tick spacing of the scale, milliseconds.
    public let majorTickMilliseconds: Int

    /// The composite column (fractional, 0 = `startTime`) of instant `t`.
    public func column(of t: MonotonicInstant) -> Double {
        Double(t.since(startTime).nanoseconds) / nanosecondsPerColumn
    }

    /// The instant composite column `c` shows.
    public func time(ofColumn c: Int) -> MonotonicInstant {
        startTime + Span(nanoseconds: Int64((Double(c) * nanosecondsPerColumn).rounded()))
    }
}

/// A rendered photo finish: the picture, its layout, and the thumbnails on their own.
public struct PhotoFinishPicture: Sendable, Hashable {
    public let image: GrayImage
    public let layout: PhotoFinishLayout
    /// The frames around the crossing (up to four), each with its offset from the
    /// crossing instant in nanoseconds (negative before).
    public let thumbnails: [GrayImage]
    public let thumbnailOffsetsNs: [Int64]
    public let crossing: Crossing
}

/// Renders captures. Runs on any thread (allocates); never on the loop thread.
public enum PhotoFinishRenderer {
    static let margin = 6
    static let markerHeight = 6
    static let background: UInt8 = 255
    static let ink: UInt8 = 0

    /// Draws `capture`: thumbnails with the gate line on top, then the slit-scan
    /// composite resampled onto a uniform time axis (nearest frame in time for every
    /// column, so dropped frames show as wider bands, not as a shifted axis), the
    /// crossing instant marked, and a scale in milliseconds from the crossing.
    public static func render(_ capture: PhotoFinishCapture,
                              options: PhotoFinishRenderOptions = PhotoFinishRenderOptions()) throws(PhotoFinishError) -> PhotoFinishPicture {
        guard capture.columnCount >= 2 else { throw PhotoFinishError("a photo finish needs at least two frames, the capture has \(capture.columnCount)") }
        guard options.millisecondsPerColumn.isFinite, options.millisecondsPerColumn > 0 else {
            throw PhotoFinishError("milliseconds per column must be positive")
        }
        guard (1...8).contains(options.labelScale), options.maxCompositeWidth >= 16 else {
            throw PhotoFinishError("label scale must be 1...8 and the width at least 16")
        }
        let n = capture.columnCount
        let start = capture.columnTime(0)
        let end = capture.columnTime(n - 1)
        let span = Double(end.since(start).nanoseconds)
        guard span > 0 else { throw PhotoFinishError("the capture's frames do not advance in time") }
        var dt = options.millisecondsPerColumn * 1e6
        if span / dt + 1 > Double(options.maxCompositeWidth) { dt = span / Double(options.maxCompositeWidth - 1) }
        let compositeWidth = Int((span / dt).rounded(.down)) + 1
        let h = capture.columnHeight
        let scale = options.labelScale
        let labelHeight = BitmapFont.glyphHeight * scale
        let crossing = capture.crossing

        // Thumbnails row.
        let tw = capture.thumbnailWidth, th = capture.thumbnailHeight
        let thumbCount = capture.thumbnailCount
        let thumbsWidth = thumbCount == 0 ? 0 : thumbCount * tw + (thumbCount - 1) * margin
        let thumbsBlock = thumbCount == 0 ? 0 : th + 2 + labelHeight + margin

        // Scale: major ticks at least 44 px apart so labels like "-300" never touch.
        let pxPerMs = 1e6 / dt
        let majors = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000]
        let major = majors.first { Double($0) * pxPerMs >= Double(BitmapFont.width("-0000", scale: scale) + 8) } ?? 5000
        let minor = major % 5 == 0 ? major / 5 : major / 2

        let compositeX = margin
        let compositeY = margin + thumbsBlock + markerHeight
        let scaleY = compositeY + h + markerHeight
        let width = max(compositeWidth, thumbsWidth, BitmapFont.width("-0000 ms", scale: scale)) + 2 * margin
        let height = scaleY + 10 + labelHeight + 2 + labelHeight + margin
        var image = GrayImage(width: width, height: height, value: background)

        // Thumbnails with the gate line dashed over them, each labelled with its offset.
        var offsets: [Int64] = []
        var thumbnails: [GrayImage] = []
        for i in 0..<thumbCount {
            let x = margin + i * (tw + margin)
            image.blit(capture.thumbnail(i), width: tw, height: th, x: x, y: margin)
            let gx = x + Int(capture.thumbnailGateX.rounded())
            for y in 0..<th { image[gx, margin + y] = (y / 3) % 2 == 0 ? 255 : 0 }
            let off = capture.thumbnailTime(i).since(crossing.time).nanoseconds
            offsets.append(off)
            let label = signedMilliseconds(off)
            BitmapFont.draw(label, x: x, y: margin + th + 2, scale: scale, value: ink, into: &image)
            var thumb = GrayImage(width: tw, height: th)
            thumb.pixels = Array(capture.thumbnail(i))
            thumbnails.append(thumb)
        }

        // The composite: column c shows the frame nearest in time to start + c·dt.
        var k = 0
        for c in 0..<compositeWidth {
            let t = Double(start.nanoseconds) + Double(c) * dt
            while k + 1 < n, abs(Double(capture.columnTime(k + 1).nanoseconds) - t) <= abs(Double(capture.columnTime(k).nanoseconds) - t) {
                k += 1
            }
            let col = capture.column(k)
            for y in 0..<h { image[compositeX + c, compositeY + y] = col[y] }
        }

        // The crossing instant: triangles above and below, a dashed line through.
        let cross = Double(crossing.time.since(start).nanoseconds) / dt
        let crossingX = compositeX + Int(cross.rounded())
        if crossingX >= compositeX && crossingX < compositeX + compositeWidth {
            for r in 0..<markerHeight - 1 {
                let half = markerHeight - 2 - r
                image.fill(x: crossingX - half, y: compositeY - markerHeight + r, width: 2 * half + 1, height: 1, value: ink)
                image.fill(x: crossingX - half, y: compositeY + h + markerHeight - 1 - r - 1, width: 2 * half + 1, height: 1, value: ink)
            }
            for y in 0..<h { image[crossingX, compositeY + y] = (y / 4) % 2 == 0 ? 255 : 0 }
        }

        // The millisecond scale relative to the crossing instant.
        image.fill(x: compositeX, y: scaleY, width: compositeWidth, height: 1, value: ink)
        let firstMs = Int((Double(start.since(crossing.time).nanoseconds) / 1e6).rounded(.up))
        let lastMs = Int((Double(end.since(crossing.time).nanoseconds) / 1e6).rounded(.down))
        var ms = firstMs - ((firstMs % minor) + minor) % minor
        if ms < firstMs { ms += minor }
        while ms <= lastMs {
            let t = Double(crossing.time.nanoseconds) + Double(ms) * 1e6
            let x = compositeX + Int(((t - Double(start.nanoseconds)) / dt).rounded())
            let isMajor = ms % major == 0
            image.fill(x: x, y: scaleY, width: 1, height: isMajor ? 8 : 4, value: ink)
            if isMajor {
                let label = ms == 0 ? "0" : (ms > 0 ? "+\(ms)" : "\(ms)")
                let lw = BitmapFont.width(label, scale: scale)
                let lx = min(max(0, x - lw / 2), width - lw)
                BitmapFont.draw(label, x: lx, y: scaleY + 10, scale: scale, value: ink, into: &image)
            }
            ms += minor
        }
        let unit = "ms"
        BitmapFont.draw(unit, x: width - margin - BitmapFont.width(unit, scale: scale), y: scaleY + 12 + labelHeight,
                        scale: scale, value: ink, into: &image)

        let layout = PhotoFinishLayout(compositeX: compositeX, compositeY: compositeY, compositeWidth: compositeWidth,
                                       compositeHeight: h, startTime: start, nanosecondsPerColumn: dt,
                                       crossingX: crossingX, majorTickMilliseconds: major)
        return PhotoFinishPicture(image: image, layout: layout, thumbnails: thumbnails, thumbnailOffsetsNs: offsets,
                                  crossing: crossing)
    }

    /// "+4", "-100", "0": an offset in nanoseconds as whole milliseconds with a sign.
    static func signedMilliseconds(_ ns: Int64) -> String {
        let ms = Int((Double(ns) / 1e6).rounded())
        return ms == 0 ? "0" : (ms > 0 ? "+\(ms)" : "\(ms)")
    }
}
