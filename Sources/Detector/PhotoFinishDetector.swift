// SPDX-License-Identifier: Apache-2.0
// The photo-finish detector: background differencing, body columns, torso leading edge, tracks.

public import GateCore

/// Finds the instant an athlete's torso crosses a vertical gate line in a stream of frames.
///
/// Per frame, in a fixed number of passes over a reduced luma work image and with no heap
/// allocation after `init`:
/// 1. reduce the input to the work image (horizontal box average, one row in `scale`);
/// 2. estimate global image motion (shake) from column/row intensity profiles and the
///    global gain (cloud, auto-exposure) as the median frame/background ratio;
/// 3. mark motion pixels against the gain- and shift-compensated background and record,
///    per column, the longest vertical run of them;
/// 4. group columns with a tall run into bodies (an arm is too thin, a shadow too low);
/// 5. in each body's torso band, find the leading edge per row with sub-pixel coverage,
///    fit the trunk's edge as a straight line through the rows that are not arm
///    protrusions and take its foremost point;
/// 6. follow bodies as tracks; when a track's leading edge passes the line, fit the edge
///    position over the frames around it and solve for the crossing instant, with
///    rolling-shutter correction per row and an uncertainty from the fit;
/// 7. update the background, slowly where there is motion.
public struct PhotoFinishDetector: ~Copyable {
    public let config: DetectorConfig
    public let geometry: WorkGeometry

    // Work image, background (Q8) and motion mask, width × height each.
    private let cur: UnsafeMutablePointer<UInt8>
    private let bg: UnsafeMutablePointer<UInt16>
    private let mask: UnsafeMutablePointer<UInt8>
    // Per column: current vertical run, bridged gap, longest run, band counts.
    private let run: UnsafeMutablePointer<Int16>
    private let gap: UnsafeMutablePointer<Int16>
    private let maxRun: UnsafeMutablePointer<Int16>
    private let bandCount: UnsafeMutablePointer<Int16>
    // Per column: first and last row of a run of at least `solidRun` motion pixels.
    private let firstSolid: UnsafeMutablePointer<Int16>
    private let lastSolid: UnsafeMutablePointer<Int16>
    // Intensity profiles for shake estimation: sums per column and per row.
    private let curCols: UnsafeMutablePointer<Int32>
    private let curRows: UnsafeMutablePointer<Int32>
    private let bgCols: UnsafeMutablePointer<Int32>
    private let bgRows: UnsafeMutablePointer<Int32>
    // Per-row leading edges of the body being measured (forward coordinates).
    private let rowEdge: UnsafeMutablePointer<Double>
    // Bodies found in this frame and tracks followed across frames.
    private let blobs: UnsafeMutablePointer<Blob>
    private var blobCount = 0
    private let tracks: UnsafeMutablePointer<Track>
    private let history: UnsafeMutablePointer<EdgeSample>
    private let fitStorage: UnsafeMutablePointer<Double>
    private let fitFlags: UnsafeMutablePointer<Bool>
    private let ratioHistogram: UnsafeMutablePointer<Int32>
    private let ratioReciprocal: UnsafeMutablePointer<Int32>
    static let ratioBins = 256

    private let gateXWork: Double
    private let runMin: Int16
    private let rearmPixels: Double

    // Running state.
    private var frames = 0
    private var firstTimestamp = MonotonicInstant(nanoseconds: 0)
    private var lastTimestamp = MonotonicInstant(nanoseconds: 0)
    private var gainQ12: Int32 = 4096
    private var noiseQ8: Int32 = 0
    private var thresholdQ8: Int32
    private var shiftX = 0
    private var shiftY = 0
    private var shiftedSinceNs: Int64 = -1
    private var lastShakeNs: Int64 = .min / 2
    private var lastCrossingNs: Int64 = .min / 2
    private var lastTooFarNs: Int64 = .min / 2
    private var nextTrackID: UInt32 = 1
    private var motionPixels = 0
    private var frameIntervalNs: Int64 = 16_666_667

    static let maxBlobs = 8
    static let maxTracks = 4
    /// Samples kept per track: 130 ms at 240 fps, enough for the crossing fit window.
    static let historyLength = 32
    /// Largest whole-image shift, in work pixels, searched for per frame.
    static let maxShift = 3

    /// Prepares a detector for frames of the given input size. All memory is taken here.
    public init(config: DetectorConfig, inputWidth: Int, inputHeight: Int) {
        self.config = config
        let g = WorkGeometry(inputWidth: inputWidth, inputHeight: inputHeight, shortSide: config.workShortSide)
        geometry = g
        let n = g.width * g.height
        cur = .allocate(capacity: n)
        cur.initialize(repeating: 0, count: n)
        bg = .allocate(capacity: n)
        bg.initialize(repeating: 0, count: n)
        mask = .allocate(capacity: n)
        mask.initialize(repeating: 0, count: n)
        func cols<T: FixedWidthInteger>(_: T.Type, _ c: Int) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: c)
            p.initialize(repeating: 0, count: c)
            return p
        }
        run = cols(Int16.self, g.width)
        gap = cols(Int16.self, g.width)
        maxRun = cols(Int16.self, g.width)
        bandCount = cols(Int16.self, g.width)
        firstSolid = cols(Int16.self, g.width)
        lastSolid = cols(Int16.self, g.width)
        curCols = cols(Int32.self, g.width)
        bgCols = cols(Int32.self, g.width)
        curRows = cols(Int32.self, g.height)
        bgRows = cols(Int32.self, g.height)
        rowEdge = .allocate(capacity: g.height)
        rowEdge.initialize(repeating: 0, count: g.height)
        blobs = .allocate(capacity: Self.maxBlobs)
        blobs.initialize(repeating: Blob(), count: Self.maxBlobs)
        tracks = .allocate(capacity: Self.maxTracks)
        tracks.initialize(repeating: Track(), count: Self.maxTracks)
        history = .allocate(capacity: Self.maxTracks * Self.historyLength)
        history.initialize(repeating: EdgeSample(), count: Self.maxTracks * Self.historyLength)
        fitStorage = .allocate(capacity: 2 * Self.historyLength)
        fitStorage.initialize(repeating: 0, count: 2 * Self.historyLength)
        fitFlags = .allocate(capacity: Self.historyLength)
        fitFlags.initialize(repeating: false, count: Self.historyLength)
        ratioHistogram = .allocate(capacity: Self.ratioBins)
        ratioHistogram.initialize(repeating: 0, count: Self.ratioBins)
        ratioReciprocal = .allocate(capacity: 256)
        for b in 0..<256 { (ratioReciprocal + b).initialize(to: b == 0 ? 0 : Int32(65536 / b)) }
        gateXWork = g.workX(ofInputX: config.gateX)
        runMin = Int16(max(2, (config.columnRunFraction * Double(g.height)).rounded(.up)))
        rearmPixels = config.rearmFraction * Double(g.width)
        thresholdQ8 = Int32(config.motionThreshold) << 8
    }

    deinit {
        cur.deallocate(); bg.deallocate(); mask.deallocate()
        run.deallocate(); gap.deallocate(); maxRun.deallocate(); bandCount.deallocate()
        firstSolid.deallocate(); lastSolid.deallocate()
        curCols.deallocate(); curRows.deallocate(); bgCols.deallocate(); bgRows.deallocate()
        rowEdge.deallocate(); blobs.deallocate(); tracks.deallocate(); history.deallocate()
        fitStorage.deallocate(); fitFlags.deallocate(); ratioHistogram.deallocate(); ratioReciprocal.deallocate()
    }

    /// Forgets the background and all tracks, e.g. after the camera was moved.
    public mutating func reset() {
        frames = 0
        blobCount = 0
        for i in 0..<Self.maxTracks { tracks[i] = Track() }
        lastCrossingNs = .min / 2
        shiftedSinceNs = -1
        gainQ12 = 4096
    }

    /// Processes one frame. `frame` must have the input size given at `init`; its pixels
    /// are read during this call only. Results replace the contents of `result`.
    public mutating func process(_ frame: FrameView, into result: inout DetectionSet) {
        precondition(frame.width == geometry.inputWidth && frame.height == geometry.inputHeight,
                     "frame size differs from the detector's input size")
        result.crossing = nil
        let now = frame.timestamp
        reduce(frame)
        if frames == 0 {
            seedBackground()
            firstTimestamp = now
            lastTimestamp = now
            frames = 1
            result.status = GateStatus(armed: false, ready: false, clear: true)
            return
        }
        let dtNs = max(1, now.nanoseconds &- lastTimestamp.nanoseconds)
        lastTimestamp = now
        // Why: the interval follows the camera (drops, rate changes) but not one late frame.
        frameIntervalNs = frames == 1 ? dtNs : (frameIntervalNs * 7 + min(dtNs, 2 * frameIntervalNs)) / 8
        frames += 1

        estimateShift()
        if shiftX != 0 || shiftY != 0 {
            lastShakeNs = now.nanoseconds
            if shiftedSinceNs < 0 { shiftedSinceNs = now.nanoseconds }
        } else {
            shiftedSinceNs = -1
        }
        estimateGainAndNoise()
        markMotion()
        findBodies()
        measureBodies()
        updateTracks(now: now, frameSequence: frame.sequence, result: &result)

        // Why: a camera knocked to a new position shows a lasting shift; relearn rather
        // than compare against a background that no longer lines up.
        if shiftedSinceNs >= 0 && now.nanoseconds &- shiftedSinceNs > 500_000_000 {
            seedBackground()
            shiftedSinceNs = -1
        } else if shiftX == 0 && shiftY == 0 {
            updateBackground(dtNs: dtNs)
        }
        result.status = status(now: now)
    }

    // MARK: - Reduction

    private func reduce(_ frame: FrameView) {
        let g = geometry
        let k = g.scale
        let step = frame.format.lumaStep
        let w = g.width
        // Why: a reciprocal in Q16 turns the division by k into a multiply and shift.
        let recip = Int32((65536 + k / 2) / k)
        for c in 0..<w { curCols[c] = 0 }
        for y in 0..<g.height {
            let src = frame.base.advanced(by: g.inputRow(ofWorkRow: y) * frame.bytesPerRow)
                .assumingMemoryBound(to: UInt8.self)
            let dst = cur + y * w
            if k == 1 && step == 1 {
                for x in 0..<w { dst[x] = src[x] }
            } else if k == 2 && step == 1 {
                for x in 0..<w {
                    dst[x] = UInt8(truncatingIfNeeded: (UInt16(src[2 &* x]) &+ UInt16(src[2 &* x &+ 1]) &+ 1) &>> 1)
                }
            } else {
                for x in 0..<w {
                    var s: Int32 = 0
                    let base = x &* k &* step
                    for j in 0..<k { s &+= Int32(src[base &+ j &* step]) }
                    dst[x] = UInt8(truncatingIfNeeded: (s &* recip &+ 32768) &>> 16)
                }
            }
            var rowSum: Int32 = 0
            for x in 0..<w {
                let v = Int32(dst[x])
                rowSum &+= v
                curCols[x] &+= v
            }
            curRows[y] = rowSum
        }
    }

    private mutating func seedBackground() {
        let n = geometry.width * geometry.height
        for i in 0..<n {
            bg[i] = UInt16(cur[i]) << 8
            mask[i] = 0
        }
        for x in 0..<geometry.width { bgCols[x] = curCols[x] }
        for y in 0..<geometry.height { bgRows[y] = curRows[y] }
        shiftX = 0
        shiftY = 0
    }

    // MARK: - Global motion and light

    /// Finds the whole-pixel shift that best aligns the frame's column and row profiles
    /// with the background's. A shift is reported only when clearly better than none.
    private mutating func estimateShift() {
        shiftX = Self.bestShift(cur: curCols, bg: bgCols, count: geometry.width)
        shiftY = Self.bestShift(cur: curRows, bg: bgRows, count: geometry.height)
    }

    private static func bestShift(cur: UnsafeMutablePointer<Int32>, bg: UnsafeMutablePointer<Int32>, count: Int) -> Int {
        let m = maxShift
        guard count > 4 * m else { return 0 }
        // Remove each profile's mean so a global light change does not look like a shift.
        var sc: Int64 = 0, sb: Int64 = 0
        for i in m..<(count - m) { sc += Int64(cur[i]); sb += Int64(bg[i]) }
        let n = Int64(count - 2 * m)
        let mc = sc / n, mb = sb / n
        // Why: scale the background profile by the ratio of means (Q16), a cheap gain fix.
        let scale = mb == 0 ? Int64(0) : (mc << 16) / mb
        var best = 0
        var bestCost = Int64.max
        var zeroCost = Int64.max
        for s in -m...m {
            var cost: Int64 = 0
            for i in m..<(count - m) {
                let d = Int64(cur[i]) &- ((Int64(bg[i - s]) &* scale) &>> 16)
                cost &+= d < 0 ? 0 &- d : d
            }
            if s == 0 { zeroCost = cost }
            if cost < bestCost { bestCost = cost; best = s }
        }
        // Why: accept a shift only when it explains most of the profile difference; a
        // runner changes the profile locally and no shift explains that.
        return best != 0 && bestCost * 10 < zeroCost * 6 ? best : 0
    }

    /// Gain of this frame relative to the background, and the background-difference
    /// noise, from a sparse grid of pixels (every fourth row and column).
    ///
    /// The gain is the median of the per-pixel ratio frame/background: a runner covers
    /// far less than half of the view, so the median follows the light (cloud, automatic
    /// exposure) and not the runner, even when most pixels changed at once.
    private mutating func estimateGainAndNoise() {
        let w = geometry.width, h = geometry.height
        for i in 0..<Self.ratioBins { ratioHistogram[i] = 0 }
        var samples: Int32 = 0
        var lumSum: Int32 = 0
        var y = 2
        while y < h {
            let row = y * w
            var x = 2
            while x < w {
                let b = Int32(bg[row + x] >> 8)
                if b >= 16 {
                    // ratio · 128, from a reciprocal table instead of a division
                    let r = (Int32(cur[row + x]) &* ratioReciprocal[Int(b)]) >> 9
                    ratioHistogram[Int(min(r, Int32(Self.ratioBins - 1)))] &+= 1
                    samples &+= 1
                    lumSum &+= Int32(cur[row + x])
                }
                x += 4
            }
            y += 4
        }
        guard samples >= 64 else { return }
        var below: Int32 = 0
        var bin = 0
        while bin < Self.ratioBins - 1 && (below &+ ratioHistogram[bin]) * 2 < samples {
            below &+= ratioHistogram[bin]
            bin += 1
        }
        // Interpolate within the median bin; bin i holds ratios [i, i+1) / 128.
        let inBin = max(1, ratioHistogram[bin])
        let frac = Double(samples / 2 - below) / Double(inBin)
        let ratio = (Double(bin) + min(1, max(0, frac))) / 128
        gainQ12 = Int32(min(max(ratio, 0.25), 4) * 4096)
        // Noise: mean absolute difference of the sampled pixels that are not motion.
        var sD: Int32 = 0, n: Int32 = 0
        let limit = thresholdQ8 >> 8
        y = 2
        while y < h {
            let row = y * w
            var x = 2
            while x < w {
                let d = abs(Int32(cur[row + x]) &- ((Int32(bg[row + x]) &* gainQ12) >> 20))
                let keep: Int32 = d < limit ? 1 : 0
                sD &+= d &* keep
                n &+= keep
                x += 4
            }
            y += 4
        }
        guard n > 0 else { return }
        // Why: the mean absolute deviation of Gaussian noise is 0.8σ (and this mean only
        // sees differences under the threshold, so it reads low in heavy noise); the
        // threshold is kept at or above about three deviations so grain is not motion.
        noiseQ8 = (sD << 8) / n
        let threeSigma = (noiseQ8 &* 4)
        // Why: contrast shrinks with the light, so the base threshold does too in a dim
        // scene (mean luma under 100), down to half; the noise floor still applies.
        let meanLum = lumSum / max(1, samples)
        let base = (Int32(config.motionThreshold) << 8) &* min(100, max(50, meanLum)) / 100
        thresholdQ8 = max(base, threeSigma)
    }

    // MARK: - Motion pixels and bodies

    private mutating func markMotion() {
        let w = geometry.width, h = geometry.height
        let gQ = gainQ12
        let t = thresholdQ8
        let dx = shiftX, dy = shiftY
        let none = Int16.max
        for x in 0..<w { run[x] = 0; gap[x] = 0; maxRun[x] = 0; firstSolid[x] = none; lastSolid[x] = -1 }
        // Why: three pixels in a column make a body's top or bottom; one or two are noise.
        let solid: Int16 = 3
        var count = 0
        let x0 = max(0, dx), x1 = w + min(0, dx)
        // Both loops below are plain element-wise arithmetic with wrapping operators and
        // selects only, so the compiler vectorises them.
        for y in 0..<h {
            let by = min(max(y - dy, 0), h - 1)
            let cp = cur + y * w
            let bp = bg + (by * w - dx)
            let mp = mask + y * w
            for x in 0..<x0 { mp[x] = 0 }
            for x in x1..<w { mp[x] = 0 }
            var rowCount: Int32 = 0
            for x in x0..<x1 {
                let d = (Int32(cp[x]) &<< 8) &- ((Int32(bp[x]) &* gQ) &>> 12)
                let ad = d < 0 ? 0 &- d : d
                let fg: UInt8 = ad > t ? 1 : 0
                mp[x] = fg
                rowCount &+= Int32(fg)
            }
            count += Int(rowCount)
            let yy = Int16(truncatingIfNeeded: y)
            let first = yy &- (solid &- 1)
            for x in 0..<w {
                // Why: in dim light a body's pixels sit close to the threshold and single
                // pixels drop out; a run bridges one missing pixel (and counts it).
                let fg = Int16(mp[x])
                let r0 = run[x], g0 = gap[x]
                let bridge: Int16 = g0 == 0 && r0 > 0 ? 1 : 0
                let nf = 1 &- fg
                let r = fg &* (r0 &+ 1 &+ g0) &+ nf &* bridge &* r0
                gap[x] = nf &* bridge
                run[x] = r
                let m = maxRun[x]
                maxRun[x] = r > m ? r : m
                let isSolid = r >= solid
                let f = firstSolid[x]
                firstSolid[x] = isSolid && f == none ? first : f
                let l = lastSolid[x]
                lastSolid[x] = isSolid ? yy : l
            }
        }
        motionPixels = count
    }

    /// Groups adjacent columns holding a tall vertical run into bodies.
    private mutating func findBodies() {
        blobCount = 0
        segmentColumns(minRun: runMin, small: false)
        // Why: a body far from the camera is short and narrow and its columns hold shorter
        // runs. Such bodies are kept for the status only (ready, too far): they are
        // shorter than the crossing height and are never timed.
        segmentColumns(minRun: max(2, runMin / 2), small: true)
    }

    /// Finds runs of adjacent columns whose longest vertical run reaches `minRun` and
    /// records those wide enough for their height as bodies. With `small`, columns
    /// already inside a body are skipped and only bodies under the crossing height kept.
    private mutating func segmentColumns(minRun: Int16, small: Bool) {
        let w = geometry.width
        let bodiesBefore = blobCount
        func insideBody(_ c: Int) -> Bool {
            for i in 0..<bodiesBefore where c >= blobs[i].left - 2 && c <= blobs[i].right + 2 { return true }
            return false
        }
        // Why: a runner's silhouette can leave a column or two without a tall run (between
        // torso and trailing leg); up to two such gaps still join one body.
        let maxGap = 2
        var x = 0
        while x < w && blobCount < Self.maxBlobs {
            guard maxRun[x] >= minRun, !(small && insideBody(x)) else { x += 1; continue }
            let left = x
            var right = x, cols = 0, gap = 0
            var top = Int(firstSolid[x]), bottom = Int(lastSolid[x])
            var c = x
            while c < w && !(small && insideBody(c)) {
                if maxRun[c] >= minRun {
                    cols += 1
                    gap = 0
                    right = c
                    top = min(top, Int(firstSolid[c]))
                    bottom = max(bottom, Int(lastSolid[c]))
                } else {
                    gap += 1
                    if gap > maxGap { break }
                }
                c += 1
            }
            x = right + 1
            let height = Double(bottom - top + 1) / Double(geometry.height)
            // A body is at least `minBodyColumns` wide at the crossing height and
            // proportionally narrower when shorter (further away).
            let needed = min(Double(config.minBodyColumns), Double(config.minBodyColumns) * height / config.minCrossingHeight)
            if cols < 3 || Double(cols) < needed { continue }
            if small && (height >= config.minCrossingHeight || height < 0.1) { continue }
            var b = Blob()
            b.left = left
            b.right = right
            b.top = top
            b.bottom = bottom
            b.height = height
            b.center = Double(left + right + 1) / 2
            b.small = small
            blobs[blobCount] = b
            blobCount += 1
        }
    }

    /// Measures each body's torso leading edge in both directions.
    /// Whether a body tall enough to be timed is in view this frame.
    private var fullBodyInView: Bool {
        for i in 0..<blobCount where !blobs[i].small && blobs[i].height >= config.minCrossingHeight { return true }
        return false
    }

    private mutating func measureBodies() {
        for i in 0..<blobCount where !blobs[i].small {
            var b = blobs[i]
            measureTorso(&b)
            blobs[i] = b
        }
    }

    private func measureTorso(_ b: inout Blob) {
        let w = geometry.width
        let h = b.bottom - b.top + 1
        // Why: in a side view the chest starts about a fifth of the body height below the
        // top of the head and the hips about 0.45; the band stops short of the hips, where
        // shorts and a thigh swung forward stand ahead of the trunk.
        let y0 = b.top + (h * 20) / 100
        let y1 = max(y0 + 3, b.top + (h * 40) / 100)
        guard y1 < geometry.height else { return }
        let rows = y1 - y0
        // Band density per column.
        let l = max(0, b.left - 2), r = min(w - 1, b.right + 2)
        for x in l...r {
            var c: Int16 = 0
            for y in y0..<y1 { c &+= Int16(mask[y * w + x]) }
            bandCount[x] = c
        }
        // The torso core: the widest run of columns filled in at least half the band.
        let half = Int16(rows / 2)
        var coreL = -1, coreR = -1, bestWidth = 0
        var x = l
        while x <= r {
            if bandCount[x] >= half {
                let s = x
                while x <= r && bandCount[x] >= half { x += 1 }
                if x - s > bestWidth { bestWidth = x - s; coreL = s; coreR = x - 1 }
            } else {
                x += 1
            }
        }
        guard bestWidth >= 3 else { return }
        let mid = (coreL + coreR) / 2
        b.frontRight = leadingEdge(rows: y0..<y1, from: mid, direction: 1, row: &b.rowRight)
        b.frontLeft = leadingEdge(rows: y0..<y1, from: mid, direction: -1, row: &b.rowLeft)
    }

    /// Leading edge in forward coordinates (x for rightward motion, width − x for
    /// leftward), or −1 when no row gives one. `row` receives the work row it was found in.
    private func leadingEdge(rows: Range<Int>, from mid: Int, direction: Int, row: inout Int) -> Double {
        let w = geometry.width
        let gQ = gainQ12
        var valid = 0
        for y in rows {
            let base = y * w
            rowEdge[y] = -1
            guard mask[base + mid] != 0 else { continue }
            // Walk forward over the run of motion pixels to where it ends.
            // Why: one or two missing pixels inside a dim torso are noise, not its end.
            var x = mid
            while true {
                let n1 = x + direction, n2 = x + 2 * direction, n3 = x + 3 * direction
                if n1 >= 0 && n1 < w && mask[base + n1] != 0 { x = n1; continue }
                if n2 >= 0 && n2 < w && mask[base + n2] != 0 { x = n2; continue }
                if n3 >= 0 && n3 < w && mask[base + n3] != 0 { x = n3; continue }
                break
            }
            // Why: the area under the coverage profile from a pixel fully inside the torso
            // to past the edge is the sub-pixel distance to the edge, for a sharp edge and
            // for a motion-blurred ramp alike. Start a few pixels inside the run's end, as
            // a ramp at 8 ms exposure and sprint speed is about that long.
            let inset = 5
            let start = direction > 0 ? max(mid, x - inset) : min(mid, x + inset)
            let inner = max(0, min(w - 1, start - direction))
            let tLum = (Int32(cur[base + start]) + Int32(cur[base + inner])) * 128
            var cover = 0.0
            var c = start
            let end = x + 3 * direction
            while c != end + direction && c >= 0 && c < w {
                let i = Int32(cur[base + c]) << 8
                let bgv = (Int32(bg[base + c]) &* gQ) >> 12
                let full = tLum - bgv
                let part = i - bgv
                let cov: Double
                if abs(full) < 6 * 256 {
                    cov = mask[base + c] != 0 ? 1 : 0
                } else {
                    cov = min(1, max(0, Double(part) / Double(full)))
                }
                cover += cov
                c += direction
            }
            let edgeX = direction > 0 ? Double(start) + cover : Double(start + 1) - cover
            rowEdge[y] = direction > 0 ? edgeX : Double(w) - edgeX
            valid += 1
        }
        guard valid >= 5 else { return -1 }
        return torsoFront(rows: rows, row: &row)
    }

    /// The torso's foremost point from the per-row edges in `rowEdge`: a straight line
    /// (the trunk's lean) fitted to the rows that are not protrusions. An arm held in
    /// front of the chest shows as rows whose edge lies ahead of that line; they are
    /// dropped, starting from a line through the rearmost third of the rows.
    private func torsoFront(rows: Range<Int>, row: inout Int) -> Double {
        // Start: slope 0 at the 30th-percentile edge (arms only ever push edges forward).
        var below = 0, total = 0
        var lo = Double.greatestFiniteMagnitude, hi = -1.0
        for y in rows where rowEdge[y] >= 0 { lo = min(lo, rowEdge[y]); hi = max(hi, rowEdge[y]); total += 1 }
        var level = lo
        // Why: a bisection on the value finds the percentile without sorting (no scratch).
        var a = lo, b = hi
        for _ in 0..<24 {
            let m = (a + b) / 2
            below = 0
            for y in rows where rowEdge[y] >= 0 && rowEdge[y] <= m { below += 1 }
            if below * 10 >= total * 3 { b = m } else { a = m }
            level = b
        }
        var slope = 0.0
        var yMean = Double(rows.lowerBound + rows.upperBound - 1) / 2
        var intercept = level
        // Why: 1.5 px keeps rows on a straight trunk edge through sensor noise and the
        // rounding of the work image; an arm stands several pixels proud of it.
        let tolerance = 1.5
        // Rows behind the line: a limb of another colour over the edge, the chest's curve.
        let backTolerance = 2.5
        for _ in 0..<4 {
            var n = 0.0, sy = 0.0, se = 0.0
            for y in rows where rowEdge[y] >= 0 {
                let r = rowEdge[y] - (intercept + slope * (Double(y) - yMean))
                if r <= tolerance && r >= -backTolerance { n += 1; sy += Double(y); se += rowEdge[y] }
            }
            guard n >= 4 else { return -1 }
            let ym = sy / n, em = se / n
            var syy = 0.0, sye = 0.0
            for y in rows where rowEdge[y] >= 0 {
                let r = rowEdge[y] - (intercept + slope * (Double(y) - yMean))
                if r <= tolerance && r >= -backTolerance {
                    syy += (Double(y) - ym) * (Double(y) - ym)
                    sye += (Double(y) - ym) * (rowEdge[y] - em)
                }
            }
            slope = syy > 0 ? sye / syy : 0
            // Why: a trunk leans at most about 45° from vertical; steeper is an artefact.
            slope = min(max(slope, -2), 2)
            yMean = ym
            intercept = em
        }
        // The foremost point of the fitted trunk edge within the rows that support it.
        var best = -1.0
        for y in rows where rowEdge[y] >= 0 {
            let fitted = intercept + slope * (Double(y) - yMean)
            let r = rowEdge[y] - fitted
            guard r <= tolerance && r >= -backTolerance else { continue }
            if fitted > best { best = fitted; row = y }
        }
        return best
    }

    // MARK: - Tracks and crossings

    private mutating func updateTracks(now: MonotonicInstant, frameSequence: UInt64, result: inout DetectionSet) {
        let tNs = now.nanoseconds
        // Match bodies to tracks, nearest predicted centre first.
        var matchedBlob: UInt8 = 0
        for ti in 0..<Self.maxTracks where tracks[ti].active {
            let tr = tracks[ti]
            let dt = Double(tNs &- tr.lastSeenNs) * 1e-9
            let predicted = tr.center + tr.centerVelocity * dt
            let gate = max(0.15 * Double(geometry.width), 2 * abs(tr.centerVelocity) * dt)
            var best = -1
            var bestD = gate
            for bi in 0..<blobCount where matchedBlob & (1 << UInt8(bi)) == 0 {
                let d = abs(blobs[bi].center - predicted)
                if d < bestD { bestD = d; best = bi }
            }
            if best >= 0 {
                matchedBlob |= 1 << UInt8(best)
                observe(track: ti, blob: blobs[best], tNs: tNs, sequence: frameSequence, result: &result)
            } else {
                tracks[ti].missed += 1
                if tracks[ti].missed > 3 || tNs &- tr.lastSeenNs > 250_000_000 {
                    finishPending(track: ti, sequence: frameSequence, result: &result)
                    tracks[ti].active = false
                }
            }
        }
        for bi in 0..<blobCount where matchedBlob & (1 << UInt8(bi)) == 0 {
            guard let ti = (0..<Self.maxTracks).first(where: { !tracks[$0].active }) else { break }
            var tr = Track()
            tr.active = true
            tr.id = nextTrackID
            nextTrackID &+= 1
            tr.center = blobs[bi].center
            tr.lastSeenNs = tNs
            tracks[ti] = tr
            observe(track: ti, blob: blobs[bi], tNs: tNs, sequence: frameSequence, result: &result)
        }
    }

    private func sampleTime(frameNs: Int64, workRow: Int) -> Int64 {
        frameNs &+ Int64(geometry.inputRow(ofWorkRow: workRow)) &* config.rowReadout.nanoseconds
    }

    private mutating func observe(track ti: Int, blob: Blob, tNs: Int64, sequence: UInt64, result: inout DetectionSet) {
        var tr = tracks[ti]
        let dt = Double(tNs &- tr.lastSeenNs) * 1e-9
        if tr.samples > 0 && dt > 0 {
            let v = (blob.center - tr.center) / dt
            tr.centerVelocity = tr.samples == 1 ? v : 0.5 * tr.centerVelocity + 0.5 * v
        }
        // A body too short to be timed whose centre passes the line: tell the user.
        tr.tallest = max(tr.tallest, blob.height)
        // Why: only when no full-size body is in view; a runner's own limbs can form a
        // short blob of their own for a frame or two.
        if tr.samples > 0 && tr.tallest < config.minCrossingHeight && !fullBodyInView
            && abs(tr.centerVelocity) >= config.minVelocity
            && (tr.center - gateXWork) * (blob.center - gateXWork) <= 0 {
            lastTooFarNs = tNs
        }
        tr.center = blob.center
        tr.lastSeenNs = tNs
        tr.missed = 0
        var s = EdgeSample()
        s.frameNs = tNs
        s.height = blob.height
        if blob.frontRight >= 0 { s.right = blob.frontRight; s.rightNs = sampleTime(frameNs: tNs, workRow: blob.rowRight) }
        if blob.frontLeft >= 0 { s.left = blob.frontLeft; s.leftNs = sampleTime(frameNs: tNs, workRow: blob.rowLeft) }
        let slot = ti * Self.historyLength + tr.samples % Self.historyLength
        history[slot] = s
        tr.samples += 1
        tracks[ti] = tr
        checkCrossing(track: ti, direction: .leftToRight, sequence: sequence, result: &result)
        checkCrossing(track: ti, direction: .rightToLeft, sequence: sequence, result: &result)
    }

    /// The `back`-th most recent sample of a track (0 is the newest).
    private func sample(track ti: Int, back: Int) -> EdgeSample? {
        let n = tracks[ti].samples
        guard back < min(n, Self.historyLength) else { return nil }
        return history[ti * Self.historyLength + (n - 1 - back) % Self.historyLength]
    }

    private func gateU(_ d: CrossingDirection) -> Double {
        d == .leftToRight ? gateXWork : Double(geometry.width) - gateXWork
    }

    private func newFit() -> LineFit {
        LineFit(storage: fitStorage, flags: fitFlags, capacity: Self.historyLength)
    }

    /// Half-width of the time window around a crossing whose samples are fitted: long
    /// enough for at least two frames on each side at low frame rates and for a good
    /// part of a stride (about 40 ms) at high ones, so limb poses average out.
    private var fitHalfWindowNs: Int64 {
        max(2 * frameIntervalNs + frameIntervalNs / 2, 40_000_000)
    }

    private mutating func checkCrossing(track ti: Int, direction d: CrossingDirection, sequence: UInt64, result: inout DetectionSet) {
        let di = d == .leftToRight ? 0 : 1
        guard let now = sample(track: ti, back: 0), let u = now.position(d) else { return }
        let g = gateU(d)
        var tr = tracks[ti]
        if tr.pending && tr.pendingDirection == di {
            if now.frameNs &- tr.firstPostNs >= fitHalfWindowNs {
                finishPending(track: ti, sequence: sequence, result: &result)
            }
            return
        }
        if !tr.seen(di) {
            tr.setSeen(di)
            tr.setArmed(di, u < g)
            tracks[ti] = tr
            return
        }
        if !tr.armed(di) {
            if u <= g - rearmPixels { tr.setArmed(di, true) }
            tracks[ti] = tr
            return
        }
        guard u >= g, !tr.pending else { return }
        // The edge passed the line since the last sample; the fit decides whether it counts.
        tr.setArmed(di, false)
        tr.pending = true
        tr.pendingDirection = di
        tr.firstPostNs = now.frameNs
        tracks[ti] = tr
    }

    /// Fits the pending crossing of a track, if any, and reports it when the body was tall
    /// and fast enough and it does not fall within the cooldown of the previous one.
    private mutating func finishPending(track ti: Int, sequence: UInt64, result: inout DetectionSet) {
        var tr = tracks[ti]
        guard tr.pending else { return }
        tr.pending = false
        tracks[ti] = tr
        let d: CrossingDirection = tr.pendingDirection == 0 ? .leftToRight : .rightToLeft
        let g = gateU(d)
        let half = fitHalfWindowNs
        var fit = newFit()
        var tallest = 0.0
        var back = 0
        while let s = sample(track: ti, back: back) {
            back += 1
            if s.frameNs &- tr.firstPostNs > half { continue }
            if tr.firstPostNs &- s.frameNs > half { break }
            tallest = max(tallest, s.height)
            if let u = s.position(d) { fit.add(timeNs: s.time(d), position: u) }
        }
        guard fit.count >= 2, let line = fit.fit(outlierPixels: 1.0) else { return }
        guard line.slope >= config.minVelocity else { return }
        guard tallest >= config.minCrossingHeight else {
            if !fullBodyInView { lastTooFarNs = tr.firstPostNs }
            return
        }
        let tCross = line.tMean + (g - line.intercept) / line.slope
        let crossNs = fit.originNs &+ Int64((tCross * 1e9).rounded())
        guard crossNs &- lastCrossingNs >= config.cooldown.nanoseconds else { return }
        lastCrossingNs = crossNs
        // Uncertainty: position scatter through the fit, converted to time, plus jitter.
        let sigmaU = max(0.25, line.residualRMS)
        let dtm = tCross - line.tMean
        let varT = (sigmaU * sigmaU / (line.slope * line.slope)) * (1 / Double(line.n) + dtm * dtm / line.stt)
        let jitter = config.timestampJitter.seconds
        let sigma = (varT + jitter * jitter).squareRoot()
        result.crossing = Crossing(
            time: MonotonicInstant(nanoseconds: crossNs),
            uncertainty: .seconds(sigma),
            direction: d,
            blobHeight: tallest,
            speedWorkPixelsPerSecond: line.slope,
            reportedAtSequence: sequence)
    }

    // MARK: - Background and status

    private mutating func updateBackground(dtNs: Int64) {
        // Blend factors in Q12 from the frame interval, so behaviour does not depend on fps.
        func alpha(_ tau: Span) -> Int32 {
            let a = Double(dtNs) / Double(max(1, tau.nanoseconds))
            return Int32(max(1, min(4096, (a * 4096).rounded())))
        }
        let aBg = alpha(config.backgroundTimeConstant)
        let aFg = alpha(config.absorbTimeConstant)
        let aDiff = aBg - aFg
        let w = geometry.width
        for x in 0..<w { bgCols[x] = 0 }
        for y in 0..<geometry.height {
            let bp = bg + y * w, cp = cur + y * w, mp = mask + y * w
            for x in 0..<w {
                let a = aBg &- Int32(mp[x]) &* aDiff
                let b = Int32(bp[x])
                let d = (Int32(cp[x]) &<< 8) &- b
                bp[x] = UInt16(truncatingIfNeeded: b &+ ((d &* a &+ 2048) &>> 12))
            }
            var s: Int32 = 0
            for x in 0..<w {
                let v = Int32(bp[x] &>> 8)
                s &+= v
                bgCols[x] &+= v
            }
            bgRows[y] = s
        }
    }

    private func status(now: MonotonicInstant) -> GateStatus {
        let t = now.nanoseconds
        var tallest = 0.0
        var clear = true
        let hyst = rearmPixels
        for i in 0..<blobCount {
            let b = blobs[i]
            tallest = max(tallest, b.height)
            if Double(b.right + 1) > gateXWork - hyst && Double(b.left) < gateXWork + hyst { clear = false }
        }
        let learned = t &- firstTimestamp.nanoseconds >= config.warmup.nanoseconds
        let shaking = t &- lastShakeNs < 500_000_000
        let cooling = t &- lastCrossingNs < config.cooldown.nanoseconds
        return GateStatus(
            armed: learned && !shaking && !cooling,
            ready: tallest >= config.minReadyHeight,
            clear: clear,
            tooFar: t &- lastTooFarNs < 2_000_000_000,
            shaking: shaking,
            blobHeight: tallest,
            motion: Double(motionPixels) / Double(geometry.width * geometry.height))
    }
}

/// A body found in one frame.
struct Blob {
    var left = 0, right = 0, top = 0, bottom = 0
    var height = 0.0
    var center = 0.0
    /// Leading edges in forward coordinates, −1 when not measured.
    var frontRight = -1.0, frontLeft = -1.0
    var rowRight = 0, rowLeft = 0
    /// Found with the relaxed column test: for the status only, never timed.
    var small = false
}

/// One frame's measurement of a track's leading edges.
struct EdgeSample {
    var frameNs: Int64 = 0
    var right = -1.0, left = -1.0
    var rightNs: Int64 = 0, leftNs: Int64 = 0
    var height = 0.0

    func position(_ d: CrossingDirection) -> Double? {
        let v = d == .leftToRight ? right : left
        return v >= 0 ? v : nil
    }

    func time(_ d: CrossingDirection) -> Int64 { d == .leftToRight ? rightNs : leftNs }
}

/// A body followed across frames.
struct Track {
    var active = false
    var id: UInt32 = 0
    var samples = 0
    var lastSeenNs: Int64 = 0
    var missed = 0
    var center = 0.0
    var centerVelocity = 0.0
    /// Tallest body height seen on this track (fraction of frame height).
    var tallest = 0.0
    /// Bit 0: rightward, bit 1: leftward.
    var seenBits: UInt8 = 0
    var armedBits: UInt8 = 0
    var pending = false
    var pendingDirection = 0
    /// Frame time of the first sample past the line of the pending crossing.
    var firstPostNs: Int64 = 0

    func seen(_ d: Int) -> Bool { seenBits & (1 << UInt8(d)) != 0 }
    mutating func setSeen(_ d: Int) { seenBits |= 1 << UInt8(d) }
    func armed(_ d: Int) -> Bool { armedBits & (1 << UInt8(d)) != 0 }
    mutating func setArmed(_ d: Int, _ on: Bool) {
        if on { armedBits |= 1 << UInt8(d) } else { armedBits &= ~(1 << UInt8(d)) }
    }
}

