// SPDX-License-Identifier: Apache-2.0
// Bodies followed across frames, and the crossing fit when a track's torso passes the line.

import GateCore

/// One frame's measurement of a track's leading edges.
struct EdgeSample {
    var frameNs: Int64 = 0
    /// The body's centre column (work pixels), and whether the picture's edge cut the body.
    var center = 0.0
    var cut = false
    var right = -1.0, left = -1.0
    var rightNs: Int64 = 0, leftNs: Int64 = 0
    var height = 0.0

    func position(_ d: CrossingDirection) -> Double? {
        let v = d == .leftToRight ? right : left
        return v >= 0 ? v : nil
    }

    func time(_ d: CrossingDirection) -> Int64 { d == .leftToRight ? rightNs : leftNs }
}

/// A least-squares slope of positions over time, from three points up.
struct SlopeFit {
    var n = 0.0, st = 0.0, sx = 0.0, stt = 0.0, stx = 0.0

    mutating func add(_ t: Double, _ x: Double) {
        n += 1; st += t; sx += x; stt += t * t; stx += t * x
    }

    var slope: Double? {
        let den = n * stt - st * st
        return n >= 3 && den > 0 ? (n * stx - st * sx) / den : nil
    }
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
    /// The body's height in its last three frames, work pixels (newest first).
    var recentHeights: (Double, Double, Double) = (0, 0, 0)
    /// The body's size: the median of its last three heights, so one frame in which the
    /// trunk faded into the background, or the body was joined to another, does not count.
    var sizePixels: Double {
        let (a, b, c) = recentHeights
        return max(min(a, b), min(max(a, b), c))
    }
    /// The body's box in the frame it was last seen (work pixels).
    var left = 0, right = -1, top = 0, bottom = -1
    /// In a body joined with another person's (see `coastThroughMerges`): followed by its
    /// own motion, with no sample taken, until it comes out.
    var coasting = false
    /// The velocity it coasts at (work pixels per second, see `coastVelocity(track:)`).
    var coastVelocity = 0.0
    /// The velocity to predict its centre with (work pixels per second).
    var predictionVelocity: Double { coasting ? coastVelocity : centerVelocity }
    /// Length of the last stretch spent coasting, and when the track came out of it.
    var bridgedNs: Int64 = 0
    var resumedNs: Int64 = .min / 2
    /// Whether the pending crossing's samples lie on both sides of a coasting stretch.
    var pendingBridged = false
    /// One of its bodies was a vehicle (`Blob.vehicle`): the track is followed, never
    /// timed. Why kept: the same car cut by the frame's edge, or by a fence post, can look
    /// short enough to be a person in other frames.
    var vehicle = false
    /// Bit 0: rightward, bit 1: leftward.
    var seenBits: UInt8 = 0
    var armedBits: UInt8 = 0
    var pending = false
    var pendingDirection = 0
    /// Frame time of the first sample past the line of the pending crossing.
    var firstPostNs: Int64 = 0
    /// Frame time of the last sample before the line of the pending crossing.
    var lastPreNs: Int64 = 0
    /// Half-width of the pending crossing's fit window, fixed when it became pending.
    var halfWindowNs: Int64 = 0
    /// Edge positions and sample times of the two samples that bracket the passage.
    var uPre = 0.0, uPost = 0.0
    var tPreNs: Int64 = 0, tPostNs: Int64 = 0
    /// Instant of this track's last reported crossing (per-body cooldown).
    var lastCrossingNs: Int64 = .min / 2

    func seen(_ d: Int) -> Bool { seenBits & (1 << UInt8(d)) != 0 }
    mutating func setSeen(_ d: Int) { seenBits |= 1 << UInt8(d) }
    func armed(_ d: Int) -> Bool { armedBits & (1 << UInt8(d)) != 0 }
    mutating func setArmed(_ d: Int, _ on: Bool) {
        if on { armedBits |= 1 << UInt8(d) } else { armedBits &= ~(1 << UInt8(d)) }
    }
}

extension PhotoFinishDetector {
    // MARK: - Tracks

    mutating func updateTracks(now: MonotonicInstant, frameSequence: UInt64, result: inout DetectionSet) {
        let tNs = now.nanoseconds
        var matchedBlob: UInt32 = 0
        var matchedTrack: UInt32 = 0
        coastThroughMerges(tNs: tNs, matchedBlob: &matchedBlob, matchedTrack: &matchedTrack)
        // Match bodies to tracks, the best pair over all tracks first (a track that grabs
        // the body nearest to it could take another track's body).
        while true {
            var bestTrack = -1, bestBlob = -1
            var bestCost = Double.greatestFiniteMagnitude
            for ti in 0..<Self.maxTracks where tracks[ti].active && matchedTrack & (1 << UInt32(ti)) == 0 {
                let tr = tracks[ti]
                let dt = Double(tNs &- tr.lastSeenNs) * 1e-9
                let predicted = tr.center + tr.predictionVelocity * dt
                // Why: a body moves less than about half its height between frames at any
                // frame rate this detector serves; a sprinter's centre also sways with the gait.
                let gate = max(0.5 * tr.sizePixels, 3, 2 * abs(tr.centerVelocity) * dt)
                let recent = max(tr.recentHeights.0, tr.recentHeights.1, tr.recentHeights.2)
                for bi in 0..<blobCount where matchedBlob & (1 << UInt32(bi)) == 0 {
                    let d = abs(blobs[bi].center - predicted)
                    // Why: a body half again as tall as the track's has been in its last
                    // frames is the track's body joined to something else (a sun flare, a
                    // passer-by): the track sits the frame out rather than take its centre,
                    // speed and edges.
                    guard d < gate, Double(blobs[bi].heightPixels) <= 1.5 * recent + 4 else { continue }
                    // Why: when a body falls apart for a frame (a trunk the colour of the
                    // ground, a trailing leg), the piece of the track's size is the body.
                    let cost = d + 0.5 * abs(Double(blobs[bi].heightPixels) - tr.sizePixels)
                    if cost < bestCost { bestCost = cost; bestTrack = ti; bestBlob = bi }
                }
            }
            guard bestTrack >= 0 else { break }
            matchedTrack |= 1 << UInt32(bestTrack)
            matchedBlob |= 1 << UInt32(bestBlob)
            observe(track: bestTrack, blob: blobs[bestBlob], tNs: tNs, sequence: frameSequence, result: &result)
        }
        for ti in 0..<Self.maxTracks where tracks[ti].active && matchedTrack & (1 << UInt32(ti)) == 0 {
            tracks[ti].missed += 1
            tracks[ti].coasting = false
            if tracks[ti].missed > 3 || tNs &- tracks[ti].lastSeenNs > 250_000_000 + 2 * frameIntervalNs {
                finishPending(track: ti, sequence: frameSequence, result: &result)
                // Why: two crossings confirmed in one frame; keep the track a frame
                // longer so the second is reported with the next frame.
                if !tracks[ti].pending { tracks[ti].active = false }
            }
        }
        for bi in 0..<blobCount where matchedBlob & (1 << UInt32(bi)) == 0 {
            guard let ti = freeTrack(for: blobs[bi]) else { continue }
            var tr = Track()
            tr.active = true
            tr.id = nextTrackID
            nextTrackID &+= 1
            tr.center = blobs[bi].center
            tr.lastSeenNs = tNs
            tr.vehicle = besideVehicle(blobs[bi], tNs: tNs)
            tracks[ti] = tr
            observe(track: ti, blob: blobs[bi], tNs: tNs, sequence: frameSequence, result: &result)
        }
    }

    /// Finds the bodies in which two people have met: a body that holds the predicted
    /// centres of two tracks that were well apart within the last second, move
    /// differently (one stands while the other passes, or they pass each other) and are
    /// each of a good part of the body's height. Neither track takes such a body: its
    /// edges are the other person's as much as its own. Both coast on their own motion,
    /// and the body starts no track, until they come apart again; a crossing made
    /// meanwhile is fitted from the samples on both sides (`checkCrossing`).
    ///
    /// Why: the motion mask cannot tell two people apart where they overlap, but each
    /// one's motion over the fraction of a second they overlap is known from before.
    /// Pieces of one body (an arm, a leg the colour of the ground) never were half a
    /// body apart, and are matched as before.
    private mutating func coastThroughMerges(tNs: Int64, matchedBlob: inout UInt32, matchedTrack: inout UInt32) {
        for bi in 0..<blobCount {
            let b = blobs[bi]
            let bh = Double(b.heightPixels)
            var claimants: UInt32 = 0
            for ti in 0..<Self.maxTracks where tracks[ti].active && matchedTrack & (1 << UInt32(ti)) == 0 {
                let tr = tracks[ti]
                let dtNs = tNs &- tr.lastSeenNs
                // Only bodies followed for a few frames, seen in the last one or coasting,
                // for at most `maxCoastNs`.
                guard tr.samples >= 3, tr.missed == 0 || tr.coasting, dtNs <= Self.maxCoastNs,
                      tr.sizePixels >= scale.minTracked else { continue }
                let predicted = tr.center + tr.predictionVelocity * Double(dtNs) * 1e-9
                let rows = tr.bottom - tr.top + 1
                let shared = min(tr.bottom, b.bottom) - max(tr.top, b.top) + 1
                // Why: a vehicle (a car behind the fence) is shorter than the athlete
                // who passes in front of it, and as much the other party of a meeting.
                guard predicted >= Double(b.left), predicted <= Double(b.right + 1), 2 * shared >= rows,
                      bh >= 0.6 * tr.sizePixels, tr.vehicle || tr.sizePixels >= 0.5 * bh else { continue }
                claimants |= 1 << UInt32(ti)
            }
            guard claimants.nonzeroBitCount >= 2 else { continue }
            var met = false
            for i in 0..<Self.maxTracks where claimants & (1 << UInt32(i)) != 0 && !met {
                for j in (i + 1)..<Self.maxTracks where claimants & (1 << UInt32(j)) != 0 {
                    // Why: coasting serves two people who get through each other within
                    // `maxCoastNs`; two walking side by side at one pace stay one body,
                    // and its leading edge is the front one's.
                    let relative = abs(coastVelocity(track: i) - coastVelocity(track: j))
                    let widths = Double(tracks[i].right - tracks[i].left + tracks[j].right - tracks[j].left + 2)
                    guard relative > 2 * scale.minVelocity, relative * Double(Self.maxCoastNs) * 1e-9 >= widths,
                          wereApart(i, j, since: tNs &- Self.maxCoastNs) else { continue }
                    met = true
                    break
                }
            }
            guard met else { continue }
            matchedBlob |= 1 << UInt32(bi)
            matchedTrack |= claimants
            for ti in 0..<Self.maxTracks where claimants & (1 << UInt32(ti)) != 0 && !tracks[ti].coasting {
                tracks[ti].coastVelocity = coastVelocity(track: ti)
                tracks[ti].coasting = true
            }
        }
    }

    /// The velocity a track coasts at (work pixels per second): its own while coasting;
    /// else a straight-line fit over the last 300 ms (at least three frames) of its torso's
    /// leading edge in the direction it moves, or of its centre where that edge was
    /// measured in fewer than three of those frames, or the smoothed frame-to-frame
    /// velocity. Frames in which the picture's edge cut the body are left out: a body
    /// coming into view has no torso to measure yet.
    ///
    /// Why: the torso moves with the body; a centre also moves with the gait's sway and
    /// by half-pixel steps (at 120 fps, half a pixel is 60 px/s), and a body coming into
    /// view keeps growing behind for a few frames. A coast of a few tenths of a second
    /// needs the speed over a stride.
    private func coastVelocity(track ti: Int) -> Double {
        let tr = tracks[ti]
        guard !tr.coasting else { return tr.coastVelocity }
        guard let newest = sample(track: ti, back: 0) else { return tr.centerVelocity }
        var center = SlopeFit(), leading = SlopeFit()
        let rightward = tr.centerVelocity >= 0
        let w = Double(geometry.width)
        var back = 0
        while let s = sample(track: ti, back: back), back < 3 || newest.frameNs &- s.frameNs <= 300_000_000 {
            back += 1
            guard !s.cut else { continue }
            let t = Double(s.frameNs &- newest.frameNs) * 1e-9
            center.add(t, s.center)
            if rightward, s.right >= 0 { leading.add(t, s.right) }
            if !rightward, s.left >= 0 { leading.add(t, w - s.left) }
        }
        return leading.slope ?? center.slope ?? tr.centerVelocity
    }

    /// Whether two tracks' centres were more than half the taller body's height apart in
    /// a frame since `sinceNs` in which both were seen.
    private func wereApart(_ a: Int, _ b: Int, since sinceNs: Int64) -> Bool {
        let apart = 0.5 * max(tracks[a].sizePixels, tracks[b].sizePixels)
        var ia = 0, ib = 0
        // Both histories run newest first; step the newer one back until the times meet.
        while let sa = sample(track: a, back: ia), let sb = sample(track: b, back: ib),
              sa.frameNs >= sinceNs, sb.frameNs >= sinceNs {
            if sa.frameNs > sb.frameNs { ia += 1; continue }
            if sb.frameNs > sa.frameNs { ib += 1; continue }
            if abs(sa.center - sb.center) > apart { return true }
            ia += 1
            ib += 1
        }
        return false
    }

    /// Whether a new body is a piece of a vehicle followed already: it lies beside the
    /// vehicle's body of the last frame, within a few percent of its height, over most of
    /// its own rows. Why: a fence post or a lamp post in front of a car cuts the part of it
    /// ahead of the post off as a body of its own, short enough to be a person's.
    private func besideVehicle(_ blob: Blob, tNs: Int64) -> Bool {
        for ti in 0..<Self.maxTracks where tracks[ti].active && tracks[ti].vehicle {
            let v = tracks[ti]
            guard tNs &- v.lastSeenNs <= 2 * frameIntervalNs else { continue }
            let reach = max(scale.joinGap, Int((v.sizePixels / 10).rounded()))
            let gap = max(blob.left - v.right, v.left - blob.right) - 1
            let shared = min(blob.bottom, v.bottom) - max(blob.top, v.top) + 1
            if gap <= reach && 2 * shared >= blob.heightPixels { return true }
        }
        return false
    }

    /// A slot for a new track: a free one, or else the weakest track that is neither armed
    /// nor about to report a crossing (missed longest, then shortest) when the new body is
    /// taller.
    private func freeTrack(for blob: Blob) -> Int? {
        var weakest = -1
        for ti in 0..<Self.maxTracks {
            let t = tracks[ti]
            if !t.active { return ti }
            // Why: a sun flare or leaves can fill every slot with fragments for a few
            // frames; a person approaching the line keeps theirs.
            guard !t.pending, t.armedBits == 0 else { continue }
            if weakest < 0 || t.missed > tracks[weakest].missed
                || (t.missed == tracks[weakest].missed && t.tallest < tracks[weakest].tallest) { weakest = ti }
        }
        guard weakest >= 0, tracks[weakest].missed > 0 || blob.height > tracks[weakest].tallest else { return nil }
        return weakest
    }

    private func sampleTime(frameNs: Int64, workRow: Int) -> Int64 {
        frameNs &+ Int64(geometry.inputRow(ofWorkRow: workRow)) &* config.rowReadout.nanoseconds
    }

    private mutating func observe(track ti: Int, blob: Blob, tNs: Int64, sequence: UInt64, result: inout DetectionSet) {
        var tr = tracks[ti]
        let previousWidth = tr.right - tr.left + 1
        let dt = Double(tNs &- tr.lastSeenNs) * 1e-9
        let lastColumn = geometry.width - 1
        if tr.samples > 0 && dt > 0 {
            var v = (blob.center - tr.center) / dt
            // Why: the centre of a body cut by the picture's edge (a runner coming into
            // view) moves at half its speed; its side away from that edge moves with it.
            let atLeft = blob.left == 0 || tr.left == 0, atRight = blob.right == lastColumn || tr.right == lastColumn
            if atRight && !atLeft {
                v = Double(blob.left - tr.left) / dt
            } else if atLeft && !atRight {
                v = Double(blob.right - tr.right) / dt
            }
            tr.centerVelocity = tr.samples == 1 ? v : 0.5 * tr.centerVelocity + 0.5 * v
        }
        // A body too short to be timed whose centre passes the line: tell the user.
        tr.tallest = max(tr.tallest, blob.height)
        let hp = Double(blob.heightPixels)
        tr.recentHeights = tr.samples == 0 ? (hp, hp, hp) : (hp, tr.recentHeights.0, tr.recentHeights.1)
        // Why: only when no full-size body is in view; a runner's own limbs can form a
        // short blob of their own for a frame or two.
        if tr.samples > 0 && tr.tallest < scale.minTimedHeight && !fullBodyInView
            && abs(tr.centerVelocity) >= scale.minVelocity
            && (tr.center - gateXWork) * (blob.center - gateXWork) <= 0 {
            lastTooFarNs = tNs
        }
        tr.center = blob.center
        if tr.coasting {
            tr.coasting = false
            tr.bridgedNs = tNs &- tr.lastSeenNs
            tr.resumedNs = tNs
        }
        tr.lastSeenNs = tNs
        tr.left = blob.left
        tr.right = blob.right
        tr.top = blob.top
        tr.bottom = blob.bottom
        tr.missed = 0
        var s = EdgeSample()
        s.frameNs = tNs
        s.center = blob.center
        s.cut = blob.left == 0 || blob.right == lastColumn
        s.height = blob.height
        // Why: a car coming into view, or coming out from behind a post, grows a little
        // every frame; a runner whose body joins a car passing behind grows by a car's
        // length at once, and is a runner again when they part.
        let grewSlowly = tr.samples <= 1 || blob.widthPixels - previousWidth <= blob.heightPixels / 2
        if blob.vehicle && grewSlowly && config.subject == .athlete {
            tr.vehicle = true
            tr.pending = false
            tr.armedBits = 0
        }
        // Why: in the vehicle subject every body is timed by its foremost point, so a
        // long body is what is looked for, not a reason to stay silent.
        let timed = config.subject == .vehicle || !tr.vehicle && !blob.vehicle
        if timed, blob.frontRight >= 0 { s.right = blob.frontRight; s.rightNs = sampleTime(frameNs: tNs, workRow: blob.rowRight) }
        if timed, blob.frontLeft >= 0 { s.left = blob.frontLeft; s.leftNs = sampleTime(frameNs: tNs, workRow: blob.rowLeft) }
        let slot = ti * Self.historyLength + tr.samples % Self.historyLength
        history[slot] = s
        tr.samples += 1
        tracks[ti] = tr
        checkCrossing(track: ti, direction: .leftToRight, sequence: sequence, result: &result)
        checkCrossing(track: ti, direction: .rightToLeft, sequence: sequence, result: &result)
    }

    /// Drops the newest sample's edge in direction `d`.
    private func forgetEdge(track ti: Int, direction d: CrossingDirection) {
        let n = tracks[ti].samples
        guard n > 0 else { return }
        let slot = ti * Self.historyLength + (n - 1) % Self.historyLength
        if d == .leftToRight { history[slot].right = -1 } else { history[slot].left = -1 }
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
    /// enough for at least two frames on each side at low frame rates, for a good part of
    /// a stride (about 40 ms) at high ones, and for the body to move a tenth of its height
    /// (a walker's torso edge wobbles with the gait; a few frames of it say little), so
    /// limb poses average out. At most what the history holds.
    private func fitHalfWindowNs(_ tr: Track) -> Int64 {
        let frames = max(2 * frameIntervalNs + frameIntervalNs / 2, 40_000_000)
        let speed = max(abs(tr.centerVelocity), scale.minVelocity)
        let travel = Int64(min(2.0, 0.1 * tr.sizePixels / speed) * 1e9)
        return min(max(frames, travel), Int64(Self.historyLength / 2 - 1) * frameIntervalNs)
    }

    /// How far before the line a track's leading edge must have been for a crossing to
    /// count: a quarter of its height, at least the scale's minimum.
    private func armDistance(_ tr: Track) -> Double {
        max(scale.armDistance, 0.25 * tr.sizePixels)
    }

    /// How far past the line a torso must get for its crossing to count: 15 % of the body
    /// height, two and a half times what a person leaning over the line reaches.
    private func confirmDistance(_ tr: Track) -> Double {
        max(0.6 * scale.armDistance, 0.15 * tr.sizePixels)
    }

    private mutating func checkCrossing(track ti: Int, direction d: CrossingDirection, sequence: UInt64, result: inout DetectionSet) {
        let di = d == .leftToRight ? 0 : 1
        guard let now = sample(track: ti, back: 0), let u = now.position(d) else { return }
        let g = gateU(d)
        var tr = tracks[ti]
        if tr.pending && tr.pendingDirection == di {
            // Why: a crossing counts once the torso is well past the line: a person who
            // leans over the line, stands on it or touches it and turns back is not timed.
            if now.frameNs &- tr.firstPostNs >= tr.halfWindowNs && u >= g + confirmDistance(tr) {
                finishPending(track: ti, sequence: sequence, result: &result, confirmed: true)
            } else if u < g - armDistance(tr) {
                tr.pending = false
                tr.setArmed(di, true)
                tracks[ti] = tr
            }
            return
        }
        if !tr.seen(di) {
            tr.setSeen(di)
            tr.setArmed(di, u <= g - armDistance(tr))
            tracks[ti] = tr
            return
        }
        if !tr.armed(di) {
            if u <= g - armDistance(tr) { tr.setArmed(di, true) }
            tracks[ti] = tr
            return
        }
        guard u >= g, !tr.pending else { return }
        // The latest earlier sample with an edge (a far body's edge is not found in every
        // frame), within the fit window.
        var back = 1
        var found: EdgeSample?
        // Why: a track that has just come out of a body it shared with another person
        // looks back over the stretch it coasted through.
        let bridge = now.frameNs &- tr.resumedNs <= 2 * fitHalfWindowNs(tr) ? tr.bridgedNs : 0
        let reach = 2 * fitHalfWindowNs(tr) + bridge
        while let s = sample(track: ti, back: back), now.frameNs &- s.frameNs <= reach {
            if s.position(d) != nil { found = s; break }
            back += 1
        }
        // Why: the two samples must bracket the line; an edge seen only past it (after
        // frames without an edge) says nothing about when it got there.
        guard let before = found, let uBefore = before.position(d), uBefore < g else {
            tr.setArmed(di, false)
            tracks[ti] = tr
            return
        }
        // Why: an edge that jumps across the line by more than half the body's height
        // between two frames is a body the segmentation joined or split (a flare, a
        // passer-by), not a torso moving.
        let coasted = bridge > 0 && before.frameNs < tr.resumedNs
        let travelled = coasted ? abs(tr.coastVelocity) * Double(now.frameNs &- before.frameNs) * 1e-9 : 0
        guard u - uBefore <= 0.5 * max(tr.sizePixels, scale.minBody) + travelled else {
            // The edge is not the torso's: forget it, so that the next edge is compared
            // with the last good one, and keep the track armed.
            forgetEdge(track: ti, direction: d)
            return
        }
        // The edge passed the line since the last sample; the fit decides whether it counts.
        tr.setArmed(di, false)
        tr.pending = true
        tr.pendingDirection = di
        tr.firstPostNs = now.frameNs
        tr.lastPreNs = before.frameNs
        tr.halfWindowNs = fitHalfWindowNs(tr)
        tr.pendingBridged = coasted
        tr.uPre = uBefore
        tr.uPost = u
        tr.tPreNs = before.time(d)
        tr.tPostNs = now.time(d)
        tracks[ti] = tr
    }

    /// Fits the pending crossing of a track, if any, and reports it when the body was tall
    /// and fast enough, kept going past the line, and it does not fall within the cooldown
    /// of the same body's previous crossing. When another crossing was already reported
    /// in this frame, it stays pending until the next.
    private mutating func finishPending(track ti: Int, sequence: UInt64, result: inout DetectionSet, confirmed: Bool = false) {
        var tr = tracks[ti]
        guard tr.pending, result.crossing == nil else { return }
        tr.pending = false
        tracks[ti] = tr
        let d: CrossingDirection = tr.pendingDirection == 0 ? .leftToRight : .rightToLeft
        let g = gateU(d)
        let half = tr.halfWindowNs
        var fit = newFit()
        var tallest = 0.0
        var back = 0
        var newest = -1.0
        // Why: across a stretch coasted through, the window reaches back from the last
        // sample before it.
        let earliest = (tr.pendingBridged ? tr.lastPreNs : tr.firstPostNs) &- half
        while let s = sample(track: ti, back: back) {
            back += 1
            if s.frameNs &- tr.firstPostNs > half { continue }
            if s.frameNs < earliest { break }
            tallest = max(tallest, s.height)
            if let u = s.position(d) {
                if newest < 0 { newest = u }
                fit.add(timeNs: s.time(d), position: u)
            }
        }
        // Why: outliers are judged against the body's size: a pixel is a lot for a far
        // walker and nothing for a near sprinter.
        let outlier = max(1.0, 0.03 * tr.sizePixels)
        guard fit.count >= 2, let line = fit.fit(outlierPixels: outlier) else { return }
        guard line.slope >= scale.minVelocity else { return }
        // Why: a track lost while pending counts only when it was last seen past the line.
        guard confirmed || newest >= g else { return }
        guard tallest >= scale.minTimedHeight else {
            if !fullBodyInView { lastTooFarNs = tr.firstPostNs }
            return
        }
        // Why: a torso edge is a straight line over a few frames; scatter of more than a
        // tenth of the body's height is limbs and segmentation, not a torso to time.
        guard line.residualRMS <= max(1.5, 0.1 * tr.sizePixels) else { return }
        let tCross = line.tMean + (g - line.intercept) / line.slope
        var crossNs = fit.originNs &+ Int64((tCross * 1e9).rounded())
        // Uncertainty: position scatter through the fit, converted to time, plus jitter.
        let sigmaU = max(0.25, line.residualRMS)
        let dtm = tCross - line.tMean
        var varT = (sigmaU * sigmaU / (line.slope * line.slope)) * (1 / Double(line.n) + dtm * dtm / line.stt)
        // Why: the fit must place the crossing where the samples saw it happen, between
        // the last frame before the line and the first past it (with a frame to spare).
        // A torso edge that wobbles (a body rising out of a crouch, a walker's gait) can
        // tilt the fit; then the two samples around the passage are interpolated, and
        // the instant is known to about half their interval.
        if crossNs < tr.lastPreNs &- frameIntervalNs || crossNs > tr.firstPostNs &+ frameIntervalNs {
            let span = Double(tr.tPostNs &- tr.tPreNs)
            let f = min(1, max(0, (g - tr.uPre) / max(1e-9, tr.uPost - tr.uPre)))
            crossNs = tr.tPreNs &+ Int64((f * span).rounded())
            varT = (0.5 * span * 1e-9) * (0.5 * span * 1e-9)
        }
        guard crossNs &- tr.lastCrossingNs >= config.cooldown.nanoseconds else { return }
        tracks[ti].lastCrossingNs = crossNs
        lastCrossingNs = crossNs
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
}
