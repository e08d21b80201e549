// SPDX-License-Identifier: Apache-2.0
// The photo-finish detector's public face: storage, the per-frame pipeline, background and status.

public import GateCore

/// Finds the instant a person's torso crosses a vertical gate line in a stream of frames.
///
/// Per frame, in a fixed number of passes over a reduced luma work image and with no heap
/// allocation after `init` (each stage in a file of its own):
/// 1. reduce the input to the work image (this file);
/// 2. estimate global image motion (shake) from column/row intensity profiles and the
///    global gain (cloud, auto-exposure) as the median frame/background ratio (this file);
/// 3. mark motion pixels against the gain- and shift-compensated background, with a
///    threshold per pixel that rises where the scene itself flickers (leaves, water), and
///    join the horizontal runs of motion pixels into connected bodies, bridging the small
///    gaps that clothes matching the background leave (`BodySegmenter.swift`);
/// 4. in each body's torso band, find the leading edge per row with sub-pixel coverage,
///    fit the trunk's edge as a straight line through the rows that are not arm
///    protrusions and take its foremost point (`TorsoEdge.swift`);
/// 5. follow every body as a track of its own; when a track that approached the line
///    passes it and keeps going, fit the edge position over the frames around it and solve
///    for the crossing instant, with rolling-shutter correction per row and an uncertainty
///    from the fit (`TrackSet.swift`);
/// 6. update the background and its deviation, slowly where there is motion (this file).
///
/// All size thresholds derive from the one body-size setting, `minCrossingHeight`
/// (`BodyScale`).
public struct PhotoFinishDetector: ~Copyable {
    public let config: DetectorConfig
    public let geometry: WorkGeometry
    public let scale: BodyScale

    // Work image, background (Q8), background deviation (Q8) and motion mask, width × height each.
    let cur: UnsafeMutablePointer<UInt8>
    let bg: UnsafeMutablePointer<UInt16>
    let dev: UnsafeMutablePointer<UInt16>
    let mask: UnsafeMutablePointer<UInt8>
    // Scratch for the trunk of the body being measured (TorsoEdge): two bitmaps and a
    // flood-fill queue the size of the work image, and the trunk's extent per row.
    let scratchA: UnsafeMutablePointer<UInt8>
    let scratchB: UnsafeMutablePointer<UInt8>
    let fillQueue: UnsafeMutablePointer<Int32>
    let trunkLeft: UnsafeMutablePointer<Int16>
    let trunkRight: UnsafeMutablePointer<Int16>
    let erodedLeft: UnsafeMutablePointer<Int16>
    let erodedRight: UnsafeMutablePointer<Int16>
    // Intensity profiles for shake estimation: sums per column and per row.
    let curCols: UnsafeMutablePointer<Int32>
    let curRows: UnsafeMutablePointer<Int32>
    let bgCols: UnsafeMutablePointer<Int32>
    let bgRows: UnsafeMutablePointer<Int32>
    // Horizontal runs of motion pixels and their union-find forest (BodySegmenter).
    let runs: UnsafeMutablePointer<MotionRun>
    let runParent: UnsafeMutablePointer<Int32>
    let rowFirstRun: UnsafeMutablePointer<Int32>
    /// Motion pixels per row, as marked before the shake filter.
    let rowMotion: UnsafeMutablePointer<Int32>
    var runCount = 0
    let maxRuns: Int
    // Connected parts found this frame.
    let parts: UnsafeMutablePointer<Blob>
    var partCount = 0
    // Per-row leading edges of the body being measured (forward coordinates).
    let rowEdge: UnsafeMutablePointer<Double>
    // Bodies found in this frame and tracks followed across frames.
    let blobs: UnsafeMutablePointer<Blob>
    var blobCount = 0
    let tracks: UnsafeMutablePointer<Track>
    let history: UnsafeMutablePointer<EdgeSample>
    let fitStorage: UnsafeMutablePointer<Double>
    let fitFlags: UnsafeMutablePointer<Bool>
    let ratioHistogram: UnsafeMutablePointer<Int32>
    let ratioReciprocal: UnsafeMutablePointer<Int32>
    static let ratioBins = 256

    let gateXWork: Double

    // Running state.
    var frames = 0
    var firstTimestamp = MonotonicInstant(nanoseconds: 0)
    var lastTimestamp = MonotonicInstant(nanoseconds: 0)
    var gainQ12: Int32 = 4096
    var noiseQ8: Int32 = 0
    var thresholdQ8: Int32
    var shiftX = 0
    var shiftY = 0
    var shiftedSinceNs: Int64 = -1
    var lastShakeNs: Int64 = .min / 2
    var lastCrossingNs: Int64 = .min / 2
    var lastTooFarNs: Int64 = .min / 2
    var nextTrackID: UInt32 = 1
    var motionPixels = 0
    var frameIntervalNs: Int64 = 16_666_667

    /// Connected parts kept per frame (largest first when there are more).
    static let maxParts = 48
    static let maxBlobs = 24
    static let maxTracks = 32
    /// Longest a track coasts through a body shared with another person (`coastThroughMerges`):
    /// a sprinter passes a standing person in a fifth of a second, a walker in about one.
    static let maxCoastNs: Int64 = 1_000_000_000
    /// Samples kept per track: 270 ms at 240 fps, 2 s at 30 fps, enough for the crossing
    /// fit window while the torso moves on a quarter of its height past the line.
    static let historyLength = 64
    /// Largest whole-image shift, in work pixels, searched for per frame.
    static let maxShift = 3

    /// Prepares a detector for frames of the given input size. All memory is taken here.
    public init(config: DetectorConfig, inputWidth: Int, inputHeight: Int) {
        self.config = config
        let g = WorkGeometry(inputWidth: inputWidth, inputHeight: inputHeight, shortSide: config.workShortSide)
        geometry = g
        scale = BodyScale(config: config, workHeight: g.height)
        let n = g.width * g.height
        func buffer<T>(_ c: Int, _ v: T) -> UnsafeMutablePointer<T> {
            let p = UnsafeMutablePointer<T>.allocate(capacity: c)
            p.initialize(repeating: v, count: c)
            return p
        }
        cur = buffer(n, 0)
        bg = buffer(n, 0)
        dev = buffer(n, 0)
        mask = buffer(n, 0)
        scratchA = buffer(n, 0)
        scratchB = buffer(n, 0)
        fillQueue = buffer(n, 0)
        trunkLeft = buffer(g.height, -1)
        trunkRight = buffer(g.height, -1)
        erodedLeft = buffer(g.height, -1)
        erodedRight = buffer(g.height, -1)
        curCols = buffer(g.width, 0)
        bgCols = buffer(g.width, 0)
        curRows = buffer(g.height, 0)
        bgRows = buffer(g.height, 0)
        // Why: a run needs a motion pixel and a gap, so a row holds at most width / 2 runs;
        // a quarter of the image in runs is already a scene in uproar (see markMotion).
        maxRuns = max(64, n / 8)
        runs = buffer(maxRuns, MotionRun())
        runParent = buffer(maxRuns, 0)
        rowFirstRun = buffer(g.height + 1, 0)
        rowMotion = buffer(g.height, 0)
        parts = buffer(Self.maxParts, Blob())
        rowEdge = buffer(g.height, 0)
        blobs = buffer(Self.maxBlobs, Blob())
        tracks = buffer(Self.maxTracks, Track())
        history = buffer(Self.maxTracks * Self.historyLength, EdgeSample())
        fitStorage = buffer(2 * Self.historyLength, 0)
        fitFlags = buffer(Self.historyLength, false)
        ratioHistogram = buffer(Self.ratioBins, 0)
        ratioReciprocal = .allocate(capacity: 256)
        for b in 0..<256 { (ratioReciprocal + b).initialize(to: b == 0 ? 0 : Int32(65536 / b)) }
        gateXWork = g.workX(ofInputX: config.gateX)
        thresholdQ8 = Int32(config.motionThreshold) << 8
    }

    deinit {
        cur.deallocate(); bg.deallocate(); dev.deallocate(); mask.deallocate()
        scratchA.deallocate(); scratchB.deallocate(); fillQueue.deallocate(); trunkLeft.deallocate(); trunkRight.deallocate()
        erodedLeft.deallocate(); erodedRight.deallocate()
        curCols.deallocate(); curRows.deallocate(); bgCols.deallocate(); bgRows.deallocate()
        runs.deallocate(); runParent.deallocate(); rowFirstRun.deallocate(); rowMotion.deallocate(); parts.deallocate()
        rowEdge.deallocate(); blobs.deallocate(); tracks.deallocate(); history.deallocate()
        fitStorage.deallocate(); fitFlags.deallocate(); ratioHistogram.deallocate(); ratioReciprocal.deallocate()
    }

    /// Forgets the background and all tracks, e.g. after the camera was moved.
    public mutating func reset() {
        frames = 0
        blobCount = 0
        partCount = 0
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
        markMotion(shaking: now.nanoseconds &- lastShakeNs < 500_000_000)
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
            dev[i] = 0
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
        let bins = Self.ratioBins
        for i in 0..<bins { ratioHistogram[i] = 0 }
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
                    let r = Int(min((Int32(cur[row + x]) &* ratioReciprocal[Int(b)]) >> 9, Int32(bins - 1)))
                    ratioHistogram[r] &+= 1
                    samples &+= 1
                    lumSum &+= Int32(cur[row + x])
                }
                x += 4
            }
            y += 4
        }
        guard samples >= 64 else { return }
        gainQ12 = Self.medianGain(ratioHistogram, samples: samples)
        // Noise: mean absolute difference of the sampled pixels that are not motion, from
        // every other sampled row (a mean over a thousand pixels needs no more).
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
            y += 8
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

    /// Median of frame/background ratios in a histogram of `ratioBins` bins of 1/128, as a
    /// gain in Q12, clamped to 0.25...4.
    private static func medianGain(_ histogram: UnsafeMutablePointer<Int32>, samples: Int32) -> Int32 {
        var below: Int32 = 0
        var bin = 0
        while bin < ratioBins - 1 && (below &+ histogram[bin]) * 2 < samples {
            below &+= histogram[bin]
            bin += 1
        }
        // Interpolate within the median bin; bin i holds ratios [i, i+1) / 128.
        let inBin = max(1, histogram[bin])
        let frac = Double(samples / 2 - below) / Double(inBin)
        let ratio = (Double(bin) + min(1, max(0, frac))) / 128
        return Int32(min(max(ratio, 0.25), 4) * 4096)
    }

    // MARK: - Background

    /// Follows the scene: the background mean at the background rate where there is no
    /// motion and at the (slow) absorption rate where there is; and the mean absolute
    /// deviation of each pixel from it, so that leaves, water and flicker raise their own
    /// pixels' threshold (see `markMotion`).
    private mutating func updateBackground(dtNs: Int64) {
        // Blend factors in Q12 from the frame interval, so behaviour does not depend on fps.
        func alpha(_ tau: Span) -> Int32 {
            let a = Double(dtNs) / Double(max(1, tau.nanoseconds))
            return Int32(max(1, min(4096, (a * 4096).rounded())))
        }
        // Why: the background changes over hundreds of milliseconds. At high frame rates,
        // where the time per frame is short, each frame updates every second or fourth
        // row (in turn) at two or four times the rate, so every row is still updated
        // about every 33 ms. The deviation changes over seconds and gets every fourth row
        // at four times its rate.
        let stride = frameIntervalNs >= 25_000_000 ? 1 : (frameIntervalNs >= 12_500_000 ? 2 : 4)
        let aBg = min(4096, Int32(stride) &* alpha(config.backgroundTimeConstant))
        let aFg = min(4096, Int32(stride) &* alpha(config.absorbTimeConstant))
        let aDiff = aBg - aFg
        let aDev = min(4096, 4 &* alpha(config.deviationTimeConstant))
        let bgPhase = frames & (stride - 1)
        let devPhase = frames & 3
        let gQ = gainQ12
        // Why: a moving body must not teach its pixels that they flicker; a difference
        // counts towards the deviation only up to twice the motion threshold.
        let devCap = 2 &* thresholdQ8
        let w = geometry.width
        for y in 0..<geometry.height where y & (stride - 1) == bgPhase {
            let bp = bg + y * w, cp = cur + y * w, mp = mask + y * w, vp = dev + y * w
            var s: Int32 = 0
            if y & 3 == devPhase {
                // Background and deviation in one pass over the row.
                for x in 0..<w {
                    let b = Int32(bp[x])
                    let c = Int32(cp[x]) &<< 8
                    let dg = c &- ((b &* gQ) &>> 12)
                    let ad0 = dg < 0 ? 0 &- dg : dg
                    let ad = ad0 < devCap ? ad0 : devCap
                    let v = Int32(vp[x])
                    vp[x] = UInt16(truncatingIfNeeded: v &+ (((ad &- v) &* aDev &+ 2048) &>> 12))
                    let a = aBg &- Int32(mp[x]) &* aDiff
                    let nb = b &+ (((c &- b) &* a &+ 2048) &>> 12)
                    bp[x] = UInt16(truncatingIfNeeded: nb)
                    bgCols[x] &+= (nb &>> 8) &- (b &>> 8)
                    s &+= nb &>> 8
                }
            } else {
                for x in 0..<w {
                    let a = aBg &- Int32(mp[x]) &* aDiff
                    let b = Int32(bp[x])
                    let d = (Int32(cp[x]) &<< 8) &- b
                    let nb = b &+ ((d &* a &+ 2048) &>> 12)
                    bp[x] = UInt16(truncatingIfNeeded: nb)
                    // The column profile follows the row's change.
                    bgCols[x] &+= (nb &>> 8) &- (b &>> 8)
                    s &+= nb &>> 8
                }
            }
            bgRows[y] = s
        }
    }

    // MARK: - Status

    private func status(now: MonotonicInstant) -> GateStatus {
        let t = now.nanoseconds
        var tallest = 0.0
        var clear = true
        let hyst = scale.armDistance
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
            ready: tallest >= scale.readyHeight,
            clear: clear,
            tooFar: t &- lastTooFarNs < 2_000_000_000,
            shaking: shaking,
            blobHeight: tallest,
            motion: Double(motionPixels) / Double(geometry.width * geometry.height))
    }
}

// MARK: - Debug view

/// A body as the detector saw it in the last frame, for debug images.
public struct DetectorBodyView: Sendable {
    public var left: Int, right: Int, top: Int, bottom: Int
    /// Shorter than the crossing height: followed for the status only.
    public var small: Bool
    /// A vehicle, or a piece of one: never timed.
    public var vehicle: Bool
    /// Torso leading edge for rightward and leftward motion, work x, nil when not measured.
    public var edgeRight: Double?, edgeLeft: Double?
    public var rowRight: Int, rowLeft: Int
    /// The trunk's box inside the body, nil when no trunk was found.
    public var trunk: (left: Int, right: Int, top: Int, bottom: Int)?
}

/// A track as the detector holds it after the last frame, for debug images.
public struct DetectorTrackView: Sendable {
    public var id: UInt32
    public var center: Double
    public var velocity: Double
    public var pending: Bool
    public var armedRight: Bool, armedLeft: Bool
    /// In a body shared with another person, followed by its own motion.
    public var coasting: Bool
}

extension PhotoFinishDetector {
    /// Calls `body` with the last frame's work image, background, per-pixel deviation
    /// (Q8, grey levels × 256) and motion mask, each `geometry.width × geometry.height`,
    /// valid during the call only. For debug dumps; not for the frame path.
    public func withDebugImages<R>(_ body: (_ work: UnsafePointer<UInt8>, _ background: UnsafePointer<UInt16>,
                                             _ deviation: UnsafePointer<UInt16>, _ mask: UnsafePointer<UInt8>) -> R) -> R {
        body(cur, bg, dev, mask)
    }

    /// Bodies found in the last frame (for the camera view's overlay; no allocation).
    public var bodyCount: Int { blobCount }

    /// Body `i` of the last frame in input pixels (left and top inclusive, right and
    /// bottom exclusive); `small`: shorter than the crossing height, never timed;
    /// `vehicle`: far longer than tall, never timed.
    public func bodyBox(_ i: Int) -> (left: Int, top: Int, right: Int, bottom: Int, small: Bool, vehicle: Bool) {
        precondition(i >= 0 && i < blobCount, "body index out of range")
        let b = blobs[i], s = geometry.scale
        return (b.left * s, b.top * s, (b.right + 1) * s, (b.bottom + 1) * s, b.small, b.vehicle)
    }

    /// The last frame's bodies (allocates; for debug dumps only).
    public var debugBodies: [DetectorBodyView] {
        (0..<blobCount).map { i in
            let b = blobs[i]
            let w = Double(geometry.width)
            return DetectorBodyView(left: b.left, right: b.right, top: b.top, bottom: b.bottom, small: b.small, vehicle: b.vehicle,
                                    edgeRight: b.frontRight >= 0 ? b.frontRight : nil,
                                    edgeLeft: b.frontLeft >= 0 ? w - b.frontLeft : nil,
                                    rowRight: b.rowRight, rowLeft: b.rowLeft,
                                    trunk: b.trunkBottom >= b.trunkTop ? (b.trunkLeft, b.trunkRight, b.trunkTop, b.trunkBottom) : nil)
        }
    }

    /// The active tracks (allocates; for debug dumps only).
    public var debugTracks: [DetectorTrackView] {
        (0..<Self.maxTracks).filter { tracks[$0].active }.map { i in
            let t = tracks[i]
            return DetectorTrackView(id: t.id, center: t.center, velocity: t.centerVelocity, pending: t.pending,
                                     armedRight: t.armed(0), armedLeft: t.armed(1), coasting: t.coasting)
        }
    }

    /// The gate line in work-image x.
    public var gateWorkX: Double { gateXWork }
}
