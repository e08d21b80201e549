// SPDX-License-Identifier: Apache-2.0
// The torso's leading edge of each body: the trunk as what survives an opening, per-row edges
// with sub-pixel coverage, and a straight-line fit of the trunk's edge.

extension PhotoFinishDetector {
    /// Whether a body tall enough to be timed is in view this frame.
    var fullBodyInView: Bool {
        for i in 0..<blobCount where !blobs[i].small { return true }
        return false
    }

    /// Measures each body's torso leading edge in both directions.
    mutating func measureBodies() {
        let vehicles = config.subject == .vehicle
        // Why: the athlete subject never times a vehicle, so it does not measure one.
        for i in 0..<blobCount where !blobs[i].small && (vehicles || !blobs[i].vehicle) {
            var b = blobs[i]
            if vehicles { measureFront(&b) } else { measureTorso(&b) }
            blobs[i] = b
        }
    }

    /// Finds the trunk inside a body and measures its leading edges.
    ///
    /// Why: arms, legs, the neck and a hand are thinner than the trunk. An opening (erode,
    /// then dilate) with a square about a tenth of the body height wide removes them and
    /// keeps the trunk, whatever the pose: upright, leaning, or a crouched start with
    /// the trunk nearly level. The head, thicker than the neck, survives as a piece of its
    /// own; the trunk is the largest piece. Its upper part, shoulders to belly, is where
    /// the leading edge is measured; the thighs below the hips can stand ahead of it.
    private func measureTorso(_ b: inout Blob) {
        let w = geometry.width
        let bl = b.left, bt = b.top
        let bw = b.widthPixels
        // Why: the band measured ends at 40 % of the body height; the trunk's shape down
        // to 52 % (the band plus more than the opening square) is enough to tell it from the
        // head and arms, and halves the work.
        let fullHeight = b.heightPixels
        // Why: a far body, a few pixels across, has no trunk an opening can find (its
        // trunk is three or four pixels wide); its band rows' own extents stand for it.
        guard fullHeight >= Self.smallBodyPixels else {
            measureSmallTorso(&b)
            return
        }
        let bh = min(fullHeight, max(6, (fullHeight * 52) / 100))
        guard bw >= 3, bh >= 6 else { return }
        let a = scratchA, s2 = scratchB
        // 1. The body's mask with gaps of up to `joinGap` closed along rows and columns
        //    (a striped shirt, a belt the colour of the wall).
        // Why: the gaps scale with the body: a twentieth of its height is a stripe of a
        // shirt that matches the wall behind it.
        let g = max(scale.joinGap, Int((Double(fullHeight) / 20).rounded()))
        for y in 0..<bh {
            let src = mask + (bt + y) * w + bl
            let dst = a + y * bw
            var lastOn = -1 - g - 1
            for x in 0..<bw {
                let on = src[x] != 0
                dst[x] = on ? 1 : 0
                if on {
                    if x - lastOn > 1 && x - lastOn <= g + 1 { for k in (lastOn + 1)..<x { dst[k] = 1 } }
                    lastOn = x
                }
            }
        }
        for x in 0..<bw {
            var lastOn = -1 - g - 1
            for y in 0..<bh where a[y * bw + x] != 0 {
                if y - lastOn > 1 && y - lastOn <= g + 1 { for k in (lastOn + 1)..<y { a[k * bw + x] = 1 } }
                lastOn = y
            }
        }
        // 2. Opening with an s × s square, erode then dilate. The erosion is anchored at
        //    the top-left corner; the pieces and the dilation are taken from the eroded
        //    image directly (its pieces are the opening's, and a row of the opening spans
        //    the rows above it within the square), which spares two passes.
        let sq = max(2, Int((0.07 * Double(fullHeight)).rounded()))
        Self.erode(a, into: s2, lines: bh, lineStep: bw, length: bw, step: 1, by: sq)
        Self.erode(s2, into: a, lines: bw, lineStep: 1, length: bh, step: bw, by: sq)
        // 3. The largest 4-connected piece of the eroded image (labels from 2 up in `a`).
        var label: UInt8 = 2
        var bestLabel: UInt8 = 0, bestArea = 0
        for start in 0..<(bw * bh) where a[start] == 1 {
            guard label < 255 else { break }
            var head = 0, tail = 0
            fillQueue[tail] = Int32(start); tail += 1
            a[start] = label
            while head < tail {
                let i = Int(fillQueue[head]); head += 1
                let x = i % bw, y = i / bw
                if x > 0 && a[i - 1] == 1 { a[i - 1] = label; fillQueue[tail] = Int32(i - 1); tail += 1 }
                if x < bw - 1 && a[i + 1] == 1 { a[i + 1] = label; fillQueue[tail] = Int32(i + 1); tail += 1 }
                if y > 0 && a[i - bw] == 1 { a[i - bw] = label; fillQueue[tail] = Int32(i - bw); tail += 1 }
                if y < bh - 1 && a[i + bw] == 1 { a[i + bw] = label; fillQueue[tail] = Int32(i + bw); tail += 1 }
            }
            if tail > bestArea { bestArea = tail; bestLabel = label }
            label += 1
        }
        // Why: a trunk is at least a couple of squares of the opening; what erodes to less
        // than a row of one is a hand or a knot of leaves that happened to be thick.
        guard bestArea >= sq else { return }
        // 4. The trunk's extent per row: the eroded piece's, dilated back over the square,
        //    and its second moments, for its lean.
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0
        for y in 0..<bh {
            var l = -1, r = -1
            for x in 0..<bw where a[y * bw + x] == bestLabel {
                if l < 0 { l = x }
                r = x
                let fx = Double(x), fy = Double(y)
                n += 1; sx += fx; sy += fy; sxx += fx * fx; syy += fy * fy; sxy += fx * fy
            }
            erodedLeft[y] = Int16(l)
            erodedRight[y] = Int16(r)
        }
        var top = bh, bottom = -1
        b.trunkLeft = bl + bw
        b.trunkRight = -1
        for y in 0..<bh {
            var l = Int.max, r = -1
            for yy in max(0, y - sq + 1)...y where erodedRight[yy] >= 0 {
                l = min(l, Int(erodedLeft[yy]))
                r = max(r, Int(erodedRight[yy]) + sq - 1)
            }
            trunkLeft[bt + y] = Int16(r < 0 ? -1 : bl + l)
            trunkRight[bt + y] = Int16(r < 0 ? -1 : bl + min(r, bw - 1))
            if r >= 0 {
                top = min(top, y); bottom = max(bottom, y)
                b.trunkLeft = min(b.trunkLeft, bl + l); b.trunkRight = max(b.trunkRight, bl + min(r, bw - 1))
            }
        }
        b.trunkTop = bt + top
        b.trunkBottom = bt + bottom
        // Why: a person's trunk, even level in a crouched start or two trunks side by side,
        // is at most about as long as the body is tall; a car's or a van's upper half is
        // 2.5 to 3 times its height long (4–5 m against 1.5–2 m). A body whose trunk is
        // half as long again as it is tall is a vehicle; once more than that much of a car
        // has come into view it is known as one.
        if 2 * (b.trunkRight - b.trunkLeft + 1) > 3 * fullHeight {
            b.vehicle = true
            return
        }
        let cxx = sxx / n - (sx / n) * (sx / n), cyy = syy / n - (sy / n) * (sy / n)
        let cxy = sxy / n - (sx / n) * (sy / n)
        // The trunk's long axis is within 30° of vertical when tan(2φ) = 2cxy / (cyy − cxx)
        // is below tan 60°.
        let upright = cyy > cxx && abs(2 * cxy) < 1.732 * (cyy - cxx)
        let y0: Int, y1: Int
        if upright {
            // Why: in a side view the chest starts about a fifth of the body height below
            // the top of the head and the hips about 0.45; below the band, shorts and a
            // thigh swung forward stand ahead of the trunk, above, the head may lead it.
            y0 = max(bt + (fullHeight * 20) / 100, b.trunkTop)
            y1 = min(bt + max(3, (fullHeight * 40) / 100), b.trunkBottom + 1)
        } else {
            // Why: a trunk leaning forward (a sprint start, a dip at the line) leads with
            // its shoulders, at the top of the trunk; the body's box, stretched by the
            // legs behind, says little about where they are.
            y0 = b.trunkTop
            y1 = b.trunkTop + max(3, ((b.trunkBottom - b.trunkTop + 1) * 50) / 100)
        }
        guard y1 - y0 >= 3 else { return }
        // Why: an opening keeps a thick part's vertical edges where they are and rounds
        // only its corners, so the edge lies within a pixel or two of the trunk's extent.
        b.frontRight = leadingEdge(rows: y0..<y1, direction: 1, reach: 2, pick: upright ? .torso : .median, row: &b.rowRight)
        b.frontLeft = leadingEdge(rows: y0..<y1, direction: -1, reach: 2, pick: upright ? .torso : .median, row: &b.rowLeft)
    }

    /// Bodies shorter than this, in work pixels, are measured without an opening.
    static let smallBodyPixels = 40

    /// The torso edge of a far body from the motion pixels of its band rows (20–45 % of its
    /// height) inside its box, the median of the rows' edges.
    private func measureSmallTorso(_ b: inout Blob) {
        let h = b.heightPixels
        // Why: as `measureTorso`, with the body's box for the trunk: a far runner's box,
        // legs at full stride, is about as wide as tall; a car's is three times.
        if b.widthPixels > 2 * h {
            b.vehicle = true
            return
        }
        let y0 = b.top + (h * 20) / 100
        let y1 = max(y0 + 3, b.top + (h * 45) / 100)
        guard y1 <= geometry.height else { return }
        markRowExtents(rows: y0..<y1, columns: b.left...b.right)
        b.frontRight = leadingEdge(rows: y0..<y1, direction: 1, reach: 1, pick: .median, row: &b.rowRight)
        b.frontLeft = leadingEdge(rows: y0..<y1, direction: -1, reach: 1, pick: .median, row: &b.rowLeft)
    }

    /// The foremost point of a whole body, for the vehicle subject: each row's extent of
    /// motion pixels inside the body's box, with sub-pixel coverage at its ends, and the
    /// point that the foremost twentieth of the rows reach.
    ///
    /// Why: a vehicle is rigid, so any fixed point of its outline moves with it; the
    /// nose's rows are a good part of its height (a bumper, a kart's nose cone, a wheel),
    /// while a single row ahead of them is noise or a fence bar's edge.
    private func measureFront(_ b: inout Blob) {
        let rows = b.top..<(b.bottom + 1)
        markRowExtents(rows: rows, columns: b.left...b.right)
        b.frontRight = leadingEdge(rows: rows, direction: 1, reach: 1, pick: .front, row: &b.rowRight)
        b.frontLeft = leadingEdge(rows: rows, direction: -1, reach: 1, pick: .front, row: &b.rowLeft)
    }

    /// Each row's first and last motion pixel within `columns`, into `trunkLeft` and
    /// `trunkRight` (−1 for a row without one): the extents `leadingEdge` starts from when
    /// no opening found a trunk.
    private func markRowExtents(rows: Range<Int>, columns: ClosedRange<Int>) {
        let w = geometry.width
        for y in rows {
            var l = -1, r = -1
            for x in columns where mask[y * w + x] != 0 {
                if l < 0 { l = x }
                r = x
            }
            trunkLeft[y] = Int16(l)
            trunkRight[y] = Int16(r)
        }
    }

    /// One-dimensional erosion along lines of a bitmap: a pixel stays set when it and the
    /// `by − 1` pixels after it along its line are all set (anchored at the line's start).
    private static func erode(_ src: UnsafeMutablePointer<UInt8>, into dst: UnsafeMutablePointer<UInt8>,
                              lines: Int, lineStep: Int, length: Int, step: Int, by sq: Int) {
        for line in 0..<lines {
            let base = line * lineStep
            var run = 0
            var i = length - 1
            while i >= 0 {
                run = src[base + i * step] != 0 ? run + 1 : 0
                dst[base + i * step] = run >= sq ? 1 : 0
                i -= 1
            }
        }
    }

    /// Leading edge in forward coordinates (x for rightward motion, width − x for
    /// leftward), or −1 when too few rows give one. Each row starts at the trunk's extent
    /// and follows the motion pixels at most `reach` further (what the opening rounded
    /// off); `row` receives the work row of the foremost point.
    private func leadingEdge(rows: Range<Int>, direction: Int, reach: Int, pick: EdgePick, row: inout Int) -> Double {
        let w = geometry.width
        let gQ = gainQ12
        var valid = 0
        for y in rows {
            let base = y * w
            rowEdge[y] = -1
            let t0 = Int(direction > 0 ? trunkRight[y] : trunkLeft[y])
            guard t0 >= 0 else { continue }
            var x = t0
            var steps = 0
            while steps < reach {
                let n1 = x + direction, n2 = x + 2 * direction
                if n1 >= 0 && n1 < w && mask[base + n1] != 0 { x = n1; steps += 1; continue }
                if n2 >= 0 && n2 < w && mask[base + n2] != 0 { x = n2; steps += 2; continue }
                break
            }
            // Why: the area under the coverage profile from a pixel fully inside the torso
            // to past the edge is the sub-pixel distance to the edge, for a sharp edge and
            // for a motion-blurred ramp alike. Start a few pixels inside the run's end, as
            // a ramp at 8 ms exposure and sprint speed is about that long.
            let inset = 5
            let inner0 = Int(direction > 0 ? trunkLeft[y] : trunkRight[y])
            var start = direction > 0 ? max(inner0, x - inset) : min(inner0, x + inset)
            if pick == .front {
                // Why: a vehicle's foremost part may be thin (a tyre, a bumper's lip, a
                // kart's nose bar): with background behind it, the pixels inset from its
                // end are no part of a solid body, so the profile starts where the run of
                // motion pixels that ends at the edge starts.
                var k = x
                while k != start && mask[base + k - direction] != 0 { k -= direction }
                start = k
            }
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
        guard valid >= 3 else { return -1 }
        // Why: the edge of a leaning trunk is no straight vertical line through its rows;
        // the middle of its rows' edges is its front, past the back and short of the head.
        switch pick {
        case .torso: return torsoFront(rows: rows, row: &row)
        case .median: return edgeAt(rows: rows, numerator: 1, denominator: 2, row: &row)
        case .front: return edgeAt(rows: rows, numerator: 19, denominator: 20, row: &row)
        }
    }

    /// Which of a body's per-row edges is its leading edge.
    enum EdgePick {
        /// A straight line fitted to an upright trunk's rows, arms dropped (`torsoFront`).
        case torso
        /// The middle of the rows' edges: a leaning trunk, a far body's band.
        case median
        /// Where the foremost twentieth of the rows reach: a vehicle's nose.
        case front
    }

    /// The bound below which `numerator / denominator` of the measured rows' edges lie,
    /// to 2⁻²⁴ of their spread; the lowest edge when no row is measured.
    private func edgePercentile(rows: Range<Int>, numerator: Int, denominator: Int) -> (bound: Double, rows: Int) {
        var total = 0
        var lo = Double.greatestFiniteMagnitude, hi = -1.0
        for y in rows where rowEdge[y] >= 0 { lo = min(lo, rowEdge[y]); hi = max(hi, rowEdge[y]); total += 1 }
        // Why: a bisection on the value finds the percentile without sorting (no scratch).
        var a = lo, b = hi
        for _ in 0..<24 {
            let m = (a + b) / 2
            var below = 0
            for y in rows where rowEdge[y] >= 0 && rowEdge[y] <= m { below += 1 }
            if below * denominator >= total * numerator { b = m } else { a = m }
        }
        return (b, total)
    }

    /// The largest of the measured rows' edges at or below their `numerator/denominator`
    /// percentile (1/2: the median), and its row.
    private func edgeAt(rows: Range<Int>, numerator: Int, denominator: Int, row: inout Int) -> Double {
        let (m, total) = edgePercentile(rows: rows, numerator: numerator, denominator: denominator)
        guard total > 0 else { return -1 }
        var best = -1.0
        for y in rows where rowEdge[y] >= 0 && rowEdge[y] <= m && rowEdge[y] > best { best = rowEdge[y]; row = y }
        return best
    }

    /// The torso's foremost point from the per-row edges in `rowEdge`: a straight line
    /// (the trunk's lean) fitted to the rows that are not protrusions. An arm held in
    /// front of the chest shows as rows whose edge lies ahead of that line; they are
    /// dropped, starting from a line through the rearmost third of the rows.
    private func torsoFront(rows: Range<Int>, row: inout Int) -> Double {
        // Start: slope 0 at the 30th-percentile edge (arms only ever push edges forward).
        let level = edgePercentile(rows: rows, numerator: 3, denominator: 10).bound
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

}
