// SPDX-License-Identifier: Apache-2.0
// Motion pixels, their horizontal runs joined into connected parts, and parts into bodies.

/// A horizontal run of motion pixels `[x0, x1)` in work row `y`.
struct MotionRun {
    var x0: Int16 = 0
    var x1: Int16 = 0
    var y: Int16 = 0
    /// Index of the part this run belongs to, −1 when its part is too small to keep.
    var part: Int16 = -1
    /// Pixels in the run's whole connected set, kept on the set's root run.
    var area: Int32 = 0
}

/// A body (or a connected part of one) found in one frame.
struct Blob {
    var left = 0, right = 0, top = 0, bottom = 0
    /// Motion pixels in the body.
    var area = 0
    /// Height as a fraction of the frame height.
    var height = 0.0
    var center = 0.0
    /// Leading edges in forward coordinates, −1 when not measured.
    var frontRight = -1.0, frontLeft = -1.0
    var rowRight = 0, rowLeft = 0
    /// Shorter than the crossing height: followed for the status only, never timed.
    var small = false
    /// Far longer than it is tall (a car, a van): not a person, never timed.
    var vehicle = false
    /// The trunk found inside the body (work pixels), `trunkBottom < trunkTop` when none.
    var trunkLeft = 0, trunkRight = -1, trunkTop = 0, trunkBottom = -1

    var heightPixels: Int { bottom - top + 1 }
    var widthPixels: Int { right - left + 1 }
}

extension PhotoFinishDetector {
    // MARK: - Motion pixels

    /// Marks motion pixels against the background and records their horizontal runs.
    ///
    /// A pixel is motion when it differs from the gain- and shift-compensated background
    /// by more than the frame's threshold and more than three times its own deviation.
    mutating func markMotion(shaking: Bool) {
        let w = geometry.width, h = geometry.height
        let gQ = gainQ12
        let t = thresholdQ8
        let dx = shiftX, dy = shiftY
        var count = 0
        // Why: on a shaking camera the background lines up only to the whole pixel, so
        // every sharp edge of the scene (lane lines, a fence) shows as a motion line one
        // pixel thin that would join a runner to the scene; then a motion pixel needs a
        // motion neighbour both across and along, which no such line has.
        let raw = shaking ? scratchA : mask
        let x0 = max(0, dx), x1 = w + min(0, dx)
        for y in 0..<h {
            let by = min(max(y - dy, 0), h - 1)
            let cp = cur + y * w
            let bp = bg + (by * w - dx)
            let vp = dev + (by * w - dx)
            let mp = raw + y * w
            for x in 0..<x0 { mp[x] = 0 }
            for x in x1..<w { mp[x] = 0 }
            var rowCount: Int32 = 0
            // Plain element-wise arithmetic with wrapping operators and selects only, so
            // the compiler vectorises it.
            for x in x0..<x1 {
                let d = (Int32(cp[x]) &<< 8) &- ((Int32(bp[x]) &* gQ) &>> 12)
                let ad = d < 0 ? 0 &- d : d
                let tv = Int32(vp[x]) &* 3
                let tt = tv > t ? tv : t
                let fg: UInt8 = ad > tt ? 1 : 0
                mp[x] = fg
                rowCount &+= Int32(fg)
            }
            count += Int(rowCount)
            rowMotion[y] = rowCount
        }
        if shaking {
            for x in 0..<w { mask[x] = 0; mask[(h - 1) * w + x] = 0 }
            for y in 1..<(h - 1) {
                let up = raw + (y - 1) * w, mid = raw + y * w, down = raw + (y + 1) * w
                let mp = mask + y * w
                mp[0] = 0
                mp[w - 1] = 0
                for x in 1..<(w - 1) {
                    mp[x] = mid[x] & (up[x] | down[x]) & (mid[x - 1] | mid[x + 1])
                }
            }
        }
        motionPixels = count
        collectRuns()
    }

    /// Records the horizontal runs of the motion mask, row by row.
    private mutating func collectRuns() {
        let w = geometry.width, h = geometry.height
        runCount = 0
        var full = false
        for y in 0..<h {
            rowFirstRun[y] = Int32(runCount)
            // Why: a row with no motion before the shake filter has none after it.
            guard !full, rowMotion[y] > 0 else { continue }
            let mp = mask + y * w
            var x = 0
            while x < w {
                // Why: most of a row is still; skip eight empty pixels at a time.
                if x &+ 8 <= w && UnsafeRawPointer(mp + x).loadUnaligned(as: UInt64.self) == 0 {
                    x &+= 8
                    continue
                }
                if mp[x] == 0 { x &+= 1; continue }
                let s = x
                while x < w && mp[x] != 0 { x &+= 1 }
                guard runCount < maxRuns else { full = true; break }
                runs[runCount] = MotionRun(x0: Int16(truncatingIfNeeded: s), x1: Int16(truncatingIfNeeded: x),
                                           y: Int16(truncatingIfNeeded: y))
                runCount &+= 1
            }
        }
        rowFirstRun[h] = Int32(runCount)
    }

    // MARK: - Connected parts

    private func find(_ i: Int) -> Int {
        var i = i
        while Int(runParent[i]) != i {
            let p = Int(runParent[i])
            runParent[i] = runParent[p]
            i = p
        }
        return i
    }

    /// Joins two runs' sets; the smaller index stays the root, so a set's root is its
    /// first run in row order.
    private func union(_ a: Int, _ b: Int) {
        let ra = find(a), rb = find(b)
        if ra < rb { runParent[rb] = Int32(ra) } else if rb < ra { runParent[ra] = Int32(rb) }
    }

    /// Joins runs into connected parts: runs that touch (8-connected) or lie within
    /// `joinGap` pixels of each other, in the same row or up to `joinGap` rows apart.
    private mutating func joinRuns() {
        let h = geometry.height
        let gap = Int16(scale.joinGap)
        for i in 0..<runCount { runParent[i] = Int32(i) }
        for y in 0..<h {
            let a0 = Int(rowFirstRun[y]), a1 = Int(rowFirstRun[y + 1])
            guard a1 > a0 else { continue }
            if a1 - a0 > 1 {
                for i in (a0 + 1)..<a1 where runs[i].x0 - runs[i - 1].x1 <= gap { union(i - 1, i) }
            }
            for yy in max(0, y - Int(gap))..<y {
                let b0 = Int(rowFirstRun[yy]), b1 = Int(rowFirstRun[yy + 1])
                guard b1 > b0 else { continue }
                var j = b0
                for i in a0..<a1 {
                    let lo = runs[i].x0 - gap, hi = runs[i].x1 + gap
                    while j < b1 && runs[j].x1 <= lo { j += 1 }
                    var k = j
                    while k < b1 && runs[k].x0 < hi {
                        union(i, k)
                        k += 1
                    }
                }
            }
        }
    }

    /// Connected parts of at least `minArea` pixels, with their bounding boxes.
    private mutating func collectParts() {
        partCount = 0
        for i in 0..<runCount {
            runs[i].area = 0
            runs[i].part = -1
        }
        for i in 0..<runCount {
            let r = find(i)
            runs[r].area &+= Int32(runs[i].x1 - runs[i].x0)
        }
        let minArea = Int32(scale.minArea)
        for i in 0..<runCount {
            let r = find(i)
            guard runs[r].area >= minArea else { continue }
            var p = Int(runs[r].part)
            if r == i {
                guard partCount < Self.maxParts else { continue }
                p = partCount
                partCount += 1
                runs[i].part = Int16(p)
                var b = Blob()
                b.left = Int(runs[i].x0)
                b.right = Int(runs[i].x1) - 1
                b.top = Int(runs[i].y)
                b.bottom = b.top
                parts[p] = b
            }
            guard p >= 0 else { continue }
            runs[i].part = Int16(p)
            parts[p].left = min(parts[p].left, Int(runs[i].x0))
            parts[p].right = max(parts[p].right, Int(runs[i].x1) - 1)
            parts[p].bottom = max(parts[p].bottom, Int(runs[i].y))
            parts[p].area += Int(runs[i].x1 - runs[i].x0)
        }
    }

    // MARK: - Bodies

    /// Finds this frame's bodies: connected parts, with parts stacked one above the other
    /// (a head over a trunk, a trunk over legs of another shade) merged, that are tall
    /// enough to follow and shaped like a person rather than a lit patch of the scene.
    mutating func findBodies() {
        joinRuns()
        collectParts()
        // Merge parts that overlap in x and are close in y.
        var merged = true
        while merged {
            merged = false
            var i = 0
            while i < partCount {
                var j = i + 1
                while j < partCount {
                    let a = parts[i], b = parts[j]
                    let overlap = min(a.right, b.right) - max(a.left, b.left) + 1
                    let narrower = min(a.widthPixels, b.widthPixels)
                    let vGap = max(a.top, b.top) - min(a.bottom, b.bottom) - 1
                    let taller = max(a.heightPixels, b.heightPixels)
                    // Why: a silhouette split across its width (a belt, a shirt the colour
                    // of the wall) leaves pieces that share most of their columns and sit
                    // within a few percent of the body's height of each other; a person
                    // further back, standing higher in the picture, is further away.
                    if overlap * 2 >= narrower && vGap * 25 <= taller * 2 || sideBySide(a, b) {
                        var m = a
                        m.left = min(a.left, b.left)
                        m.right = max(a.right, b.right)
                        m.top = min(a.top, b.top)
                        m.bottom = max(a.bottom, b.bottom)
                        m.area = a.area + b.area
                        parts[i] = m
                        partCount -= 1
                        parts[j] = parts[partCount]
                        merged = true
                    } else {
                        j += 1
                    }
                }
                i += 1
            }
        }
        blobCount = 0
        let hWork = Double(geometry.height)
        for i in 0..<partCount where blobCount < Self.maxBlobs {
            var b = parts[i]
            let hp = Double(b.heightPixels), wp = Double(b.widthPixels)
            guard hp >= scale.minTracked else { continue }
            // Why: a person, upright or in a crouched start, is at most about twice as
            // wide as tall and, side-on with arms down, about a fifth as wide as tall,
            // and fills a good part of the box around them; a sun flare, a lit wall or a
            // car is wider, a pole or a post's edge on a shaking camera narrower, a web of
            // leaves is sparse.
            // Why: a vehicle seen side-on is three to six times as long as it is tall (a
            // kart 1.8 m by 0.6 m, a car with its open door or a trailer); nothing longer
            // moves through a gate's view as one body.
            let longest = config.subject == .vehicle ? 8.0 : 3.0
            guard wp <= longest * hp, wp >= max(2, 0.1 * hp), Double(b.area) >= 0.12 * hp * wp else { continue }
            b.height = hp / hWork
            b.center = Double(b.left + b.right + 1) / 2
            b.small = hp < scale.minBody
            blobs[blobCount] = b
            blobCount += 1
        }
        markVehicleRows()
    }

    /// Whether two parts are pieces of one vehicle cut apart by what stands in front of
    /// it (a post, a fence's bars and rails, a pole): in the vehicle subject only, parts
    /// whose boxes lie within a quarter of the taller's height of each other, across and
    /// along, the shorter at least a fifth as tall as the taller.
    ///
    /// Why: a post 10–15 cm wide before a car 1.5 m tall cuts a gap of a tenth of its
    /// height, a fence's bars and rails less; a quarter leaves room for a lamp post close
    /// to the camera. Two vehicles nose to tail in one lane are further apart than that
    /// at any speed worth timing. A vehicle is one compact thing; a person's limbs, which
    /// the athlete subject must keep apart from the trunk and from other people, do not
    /// matter here. A fleck of leaves or of sensor noise near a vehicle is far shorter
    /// than the pieces a fence leaves of it, and stays apart: joined, it would stand
    /// ahead of the nose.
    private func sideBySide(_ a: Blob, _ b: Blob) -> Bool {
        guard config.subject == .vehicle else { return false }
        let taller = max(a.heightPixels, b.heightPixels)
        guard 5 * min(a.heightPixels, b.heightPixels) >= taller else { return false }
        let reach = max(scale.joinGap, taller / 4)
        let gapX = max(a.left - b.right, b.left - a.right) - 1
        let gapY = max(a.top - b.bottom, b.top - a.bottom) - 1
        return gapX <= reach && gapY <= reach
    }

    /// Marks the bodies that are pieces of one long thing on the ground: bodies side by
    /// side, each bottom within a tenth of the tallest's height of the first's and gaps of
    /// at most a tenth of it between them, together more than 2.2 times as long as the
    /// tallest is high.
    ///
    /// Why: a fence's posts or a lamp post in front of a car cut it into pieces, each short
    /// enough to be a person's. People side by side on the same ground (two sprinters at
    /// full stride, each about as wide as tall) stay under twice their height together.
    private mutating func markVehicleRows() {
        guard blobCount > 1 else { return }
        for i in 0..<blobCount where !blobs[i].vehicle {
            var left = blobs[i].left, right = blobs[i].right, tallest = blobs[i].heightPixels
            let bottom = blobs[i].bottom
            var grew = true
            while grew {
                grew = false
                for j in 0..<blobCount where j != i {
                    let b = blobs[j]
                    guard b.left < left || b.right > right else { continue }
                    let reach = max(scale.joinGap, max(tallest, b.heightPixels) / 10)
                    let gap = max(b.left - right, left - b.right) - 1
                    guard gap <= reach, abs(b.bottom - bottom) * 10 <= max(tallest, b.heightPixels) else { continue }
                    left = min(left, b.left)
                    right = max(right, b.right)
                    tallest = max(tallest, b.heightPixels)
                    grew = true
                }
            }
            if 5 * (right - left + 1) > 11 * tallest { blobs[i].vehicle = true }
        }
    }
}
