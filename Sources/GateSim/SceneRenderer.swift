// SPDX-License-Identifier: Apache-2.0
// Renders synthetic sprint scenes to 8-bit luma frames with exact sub-frame ground truth.

import GateCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Renders the frames of a `SceneSpec`.
///
/// The runner is a side-view figure of capsules (torso, neck, head, upper and lower arms
/// and legs, feet) moving through a gait cycle, drawn over a textured track with
/// horizontal anti-aliasing. Each image row is drawn at its own instant (rolling shutter)
/// and smeared over the exposure time (motion blur); then illumination, sensor noise and
/// camera shake are applied. The ground truth is the instant the foremost point of the
/// torso capsule reaches the gate line, known in closed form from the scene description.
public struct SceneRenderer: Sendable {
    public let spec: SceneSpec
    private let margin = 8
    private let background: [Float]
    private let bgWidth: Int

    public init(spec: SceneSpec) {
        self.spec = spec
        bgWidth = spec.width + 2 * margin
        background = Self.makeBackground(spec: spec, margin: margin)
    }

    // MARK: Background

    private static func makeBackground(spec: SceneSpec, margin: Int) -> [Float] {
        let w = spec.width + 2 * margin, h = spec.height + 2 * margin
        var rng = SplitMix64(seed: spec.seed &* 0x51_7CC1_B727_220A ^ 0xBAC6)
        var px = [Float](repeating: 0, count: w * h)
        let horizon = Double(spec.height) * 0.38
        let postSpacing = 64.0
        let postOffset = rng.uniform(0...postSpacing)
        // Lane lines below the horizon, further apart towards the camera.
        let lanes: [Double] = [0.46, 0.58, 0.74, 0.95].map { Double(spec.height) * $0 }
        for yy in 0..<h {
            let y = Double(yy - margin) + 0.5
            for xx in 0..<w {
                let x = Double(xx - margin) + 0.5
                var v: Double
                if y < horizon {
                    // Wall or fence: light panels with darker posts and a top rail.
                    v = 165 + 10 * sin(x * 0.05) * cos(y * 0.11)
                    let postPhase = (x + postOffset).truncatingRemainder(dividingBy: postSpacing)
                    if postPhase < 7 { v = 95 }
                    if abs(y - horizon * 0.3) < 3 { v = 110 }
                } else {
                    // Track surface with lane lines.
                    v = 100 + 6 * sin(x * 0.13 + y * 0.07)
                    for l in lanes where abs(y - l) < 2.2 { v = 215 }
                }
                if let f = spec.fence, f.covers(x: x, y: y) { v = f.luma + 6 * sin(y * 0.3) }
                v += rng.gaussianish() * 5  // surface grain
                px[yy * w + xx] = Float(v)
            }
        }
        return px
    }

    // MARK: Motion of a runner

    /// Signed distance travelled along the runner's direction at `t`, zero at the
    /// crossing (or at the stop point for an athlete who stops).
    static func travel(_ r: RunnerSpec, at t: Double) -> Double {
        if let stop = r.stopAt {
            if t <= stop { return r.speed * (t - stop) }
            let stood = t - stop
            if stood <= r.standFor { return 2 * sin(stood * 3.0) }
            return -r.speed * (stood - r.standFor)
        }
        let w = 2 * Double.pi * r.strideRate
        // Why: a sprinter's torso speed varies by a few percent within each stride.
        let a = 0.012 * r.bodyHeight
        return r.speed * (t - r.crossingTime) + a * (sin(w * (t - r.crossingTime) + r.phaseAtCrossing) - sin(r.phaseAtCrossing))
    }

    /// Forward offset of the torso's foremost point from the hip, in pixels.
    static func torsoFront(_ r: RunnerSpec) -> Double {
        (Body.torsoLength * sin(r.lean) + Body.torsoRadius) * r.bodyHeight
    }

    /// Hip column of a runner at `t`, before camera shake.
    static func hipX(_ r: RunnerSpec, gateX: Double, at t: Double) -> Double {
        let s: Double = r.direction == .leftToRight ? 1 : -1
        var offset = 0.0
        if r.stopAt != nil { offset = 0.06 * r.bodyHeight }  // stands with the torso on the line
        return gateX + s * (travel(r, at: t) + offset - torsoFront(r))
    }

    /// Column of the torso's foremost point at `t` (ground truth geometry).
    public func torsoFrontX(runner i: Int, at t: Double) -> Double {
        let r = spec.runners[i]
        let s: Double = r.direction == .leftToRight ? 1 : -1
        return Self.hipX(r, gateX: spec.gateX, at: t) + s * Self.torsoFront(r)
    }

    // MARK: Body

    enum Body {
        static let hipHeight = 0.53
        static let torsoLength = 0.24
        static let torsoRadius = 0.075
        static let shoulderAlong = 0.27
        static let neckAlong = 0.33
        static let headAlong = 0.38
        static let headRadius = 0.065
        static let thigh = 0.245, shank = 0.25, foot = 0.09
        static let upperArm = 0.17, forearm = 0.19
    }

    struct Capsule {
        var x0, y0, x1, y1, r: Double
        var lum: Double
    }

    /// The runner's capsules at instant `t` in image coordinates, back to front.
    static func pose(_ r: RunnerSpec, gateX: Double, at t: Double, shake: (Double, Double), into out: inout [Capsule]) {
        out.removeAll(keepingCapacity: true)
        let s: Double = r.direction == .leftToRight ? 1 : -1
        let h = r.bodyHeight
        let moving = r.stopAt == nil || t < r.stopAt! || t > r.stopAt! + r.standFor
        let phase = r.phaseAtCrossing + 2 * Double.pi * r.strideRate * (t - r.crossingTime)
        let hipX = hipX(r, gateX: gateX, at: t) + shake.0
        let bob = moving ? 0.012 * cos(2 * phase) : 0
        let hipY = r.groundY - (Body.hipHeight + bob) * h + shake.1
        func pt(_ f: Double, _ u: Double) -> (Double, Double) { (hipX + s * f * h, hipY - u * h) }
        func along(_ l: Double) -> (Double, Double) { pt(l * sin(r.lean), l * cos(r.lean)) }
        func limb(from p: (Double, Double), angle: Double, length: Double) -> (Double, Double) {
            // angle from straight down, positive forward
            (p.0 + s * sin(angle) * length * h, p.1 + cos(angle) * length * h)
        }
        func add(_ a: (Double, Double), _ b: (Double, Double), _ radius: Double, _ lum: Double) {
            out.append(Capsule(x0: a.0, y0: a.1, x1: b.0, y1: b.1, r: radius * h, lum: lum))
        }
        // Why: a walk swings the limbs about half as far as a sprint.
        let swing = moving ? max(0.5, min(1, r.speed / 600)) : 0.15
        let hip = pt(0, 0)
        let shoulder = along(Body.shoulderAlong)
        func leg(_ ph: Double, shade: Double) {
            let thighAngle = swing * (0.55 * sin(ph) + 0.12)
            let flex = swing * (0.25 + 1.1 * pow(0.5 - 0.5 * cos(ph + 1.2), 2))
            let knee = limb(from: hip, angle: thighAngle, length: Body.thigh)
            let ankle = limb(from: knee, angle: thighAngle - flex, length: Body.shank)
            let toe = limb(from: ankle, angle: thighAngle - flex + 1.45, length: Body.foot)
            add(hip, knee, 0.05, r.skin * shade)
            add(hip, limb(from: hip, angle: thighAngle, length: 0.07), 0.052, r.shorts * shade)
            add(knee, ankle, 0.035, r.skin * shade)
            add(ankle, toe, 0.022, r.shoes * shade)
        }
        func arm(_ ph: Double, shade: Double) {
            let upper = swing * r.armSwing * sin(ph)
            let elbowFlex = 1.35 + 0.25 * sin(ph)
            let elbow = limb(from: shoulder, angle: upper, length: Body.upperArm)
            let hand = limb(from: elbow, angle: upper + elbowFlex, length: Body.forearm)
            add(shoulder, elbow, 0.03, r.shirt * shade)
            add(elbow, hand, 0.025, r.skin * shade)
        }
        guard r.bodyVisible else {
            arm(phase, shade: 1)
            return
        }
        // Far side (opposite phase), slightly darker, then trunk, then near side.
        leg(phase, shade: 0.85)
        arm(phase + .pi, shade: 0.85)
        add(hip, along(Body.torsoLength), Body.torsoRadius, r.shirt)
        add(along(Body.torsoLength), along(Body.neckAlong), 0.03, r.skin)
        let head = along(Body.headAlong)
        add(head, head, Body.headRadius, r.skin)
        // Hair: a cap over the back and top of the head.
        add(pt((Body.headAlong + 0.025) * sin(r.lean) - 0.02, (Body.headAlong + 0.025) * cos(r.lean)),
            pt((Body.headAlong + 0.025) * sin(r.lean) - 0.03, (Body.headAlong + 0.02) * cos(r.lean)), 0.042, 25)
        leg(phase + .pi, shade: 1)
        arm(phase, shade: 1)
    }

    /// A vehicle's capsules at instant `t` in image coordinates, back to front.
    static func vehiclePose(_ v: VehicleSpec, gateX: Double, at t: Double, shake: (Double, Double),
                            into out: inout [Capsule]) {
        out.removeAll(keepingCapacity: true)
        let s: Double = v.direction == .leftToRight ? 1 : -1
        let h = v.height
        let front = gateX + s * v.speed * (t - v.crossingTime) + shake.0
        let ground = v.groundY + shake.1
        // `back` is measured from the foremost point backwards, `up` from the ground, both
        // in units of the height.
        func pt(_ back: Double, _ up: Double) -> (Double, Double) { (front - s * back * h, ground - up * h) }
        func add(_ a: (Double, Double), _ b: (Double, Double), _ radius: Double, _ lum: Double) {
            out.append(Capsule(x0: a.0, y0: a.1, x1: b.0, y1: b.1, r: radius * h, lum: lum))
        }
        switch v.kind {
        case .car:
            // About 4.3 m long and 1.5 m high.
            add(pt(0.3, 0.42), pt(2.6, 0.42), 0.24, v.paint)
            add(pt(1.05, 0.74), pt(2.1, 0.74), 0.24, v.paint)
            add(pt(1.1, 0.77), pt(2.05, 0.77), 0.15, 45)
            for back in [0.5, 2.35] {
                add(pt(back, 0.2), pt(back, 0.2), 0.2, 25)
                add(pt(back, 0.2), pt(back, 0.2), 0.08, 150)
            }
        case .bicycle:
            // A 1.75 m rider on 0.7 m wheels, pedalling at 1.4 turns a second.
            let wheel = 0.2, frameLum = 110.0, tyre = 30.0
            let frontHub = pt(wheel, wheel), rearHub = pt(wheel + 0.57, wheel)
            let crank = pt(0.47, 0.19), seat = pt(0.62, 0.55), head = pt(0.27, 0.52)
            let crankAngle = 2 * Double.pi * 1.4 * t
            func pedal(_ a: Double) -> (Double, Double) {
                (crank.0 + s * 0.1 * h * cos(a), crank.1 + 0.1 * h * sin(a))
            }
            func ring(_ c: (Double, Double)) {
                let n = 12
                for k in 0..<n {
                    let a0 = 2 * Double.pi * Double(k) / Double(n), a1 = 2 * Double.pi * Double(k + 1) / Double(n)
                    add((c.0 + wheel * h * cos(a0), c.1 + wheel * h * sin(a0)),
                        (c.0 + wheel * h * cos(a1), c.1 + wheel * h * sin(a1)), 0.018, tyre)
                }
            }
            let hip = pt(0.62, 0.6)
            func leg(_ a: Double, shade: Double) {
                // The knee from the thigh and shank lengths (0.245 and 0.25 of the height),
                // ahead of the line from hip to pedal.
                let p = pedal(a)
                let dx = p.0 - hip.0, dy = p.1 - hip.1
                let d = min((dx * dx + dy * dy).squareRoot(), 0.49 * h)
                let along = d / 2, across = max(0, (0.2475 * h) * (0.2475 * h) - along * along).squareRoot()
                let ux = dx / max(d, 1e-9), uy = dy / max(d, 1e-9)
                let knee = (hip.0 + ux * along + s * abs(uy) * across, hip.1 + uy * along - abs(ux) * across)
                add(hip, knee, 0.05, v.paint * shade)
                add(knee, p, 0.035, 140 * shade)
            }
            leg(crankAngle + .pi, shade: 0.85)
            ring(rearHub)
            ring(frontHub)
            add(crank, seat, 0.014, frameLum)
            add(seat, rearHub, 0.012, frameLum)
            add(crank, rearHub, 0.012, frameLum)
            add(crank, head, 0.014, frameLum)
            add(seat, head, 0.014, frameLum)
            add(head, frontHub, 0.014, frameLum)
            // Rider: trunk leaning 50° forward, head beyond the shoulders, arms to the bar.
            let shoulder = (hip.0 + s * 0.23 * h, hip.1 - 0.19 * h)
            add(hip, shoulder, 0.075, v.paint)
            add((shoulder.0 + s * 0.08 * h, shoulder.1 - 0.1 * h), (shoulder.0 + s * 0.08 * h, shoulder.1 - 0.1 * h),
                0.065, 140)
            add(shoulder, pt(0.26, 0.58), 0.03, v.paint)
            leg(crankAngle, shade: 1)
        }
    }

    /// Horizontal extent of a capsule on the line y = `y`, if it reaches it.
    static func span(_ c: Capsule, y: Double) -> (Double, Double)? {
        var lo = Double.infinity, hi = -Double.infinity
        for (cx, cy) in [(c.x0, c.y0), (c.x1, c.y1)] {
            let dy = y - cy
            if abs(dy) <= c.r {
                let hw = (c.r * c.r - dy * dy).squareRoot()
                lo = min(lo, cx - hw)
                hi = max(hi, cx + hw)
            }
        }
        let dx = c.x1 - c.x0, dyv = c.y1 - c.y0
        let len2 = dx * dx + dyv * dyv
        if len2 > 1e-12 {
            let len = len2.squareRoot()
            var a = -Double.infinity, b = Double.infinity
            // Projection onto the axis in [0, 1] and distance from it in [−r, r], both
            // linear in x along the row.
            for (k, off, l, u) in [(dx / len2, ((y - c.y0) * dyv - c.x0 * dx) / len2, 0.0, 1.0),
                                   (-dyv / len, ((y - c.y0) * dx + c.x0 * dyv) / len, -c.r, c.r)] {
                if abs(k) < 1e-12 {
                    if off < l || off > u { a = .infinity; b = -.infinity }
                } else {
                    let p = (l - off) / k, q = (u - off) / k
                    a = max(a, min(p, q))
                    b = min(b, max(p, q))
                }
            }
            if a < b { lo = min(lo, a); hi = max(hi, b) }
        }
        return lo < hi ? (lo, hi) : nil
    }

    // MARK: Frames

    /// Illumination factor at `t` for column fraction `xf` in 0...1.
    func light(at t: Double, xf: Double) -> Double {
        var f = spec.brightness
        for c in spec.light {
            let p = c.duration <= 0 ? (t >= c.start ? 1 : 0) : min(1, max(0, (t - c.start) / c.duration))
            let change = (c.factor - 1) * (1 + c.tilt * (xf - 0.5))
            f *= 1 + change * p
        }
        return f
    }

    func shake(at t: Double) -> (Double, Double) {
        guard spec.shakeAmplitude > 0 else { return (0, 0) }
        let w = 2 * Double.pi * spec.shakeFrequency
        return (spec.shakeAmplitude * sin(w * t + 0.3), 0.6 * spec.shakeAmplitude * sin(1.3 * w * t + 1.1))
    }

    /// Draws frame `index` into `out`, which holds `width × height` bytes.
    public func render(frame index: Int, into out: UnsafeMutableBufferPointer<UInt8>) {
        let w = spec.width, h = spec.height
        precondition(out.count >= w * h, "frame buffer too small")
        var rng = SplitMix64(seed: spec.seed ^ (UInt64(index) &* 0x9E37_79B9_7F4A_7C15))
        var row = [Double](repeating: 0, count: w)
        var lightRow = [Double](repeating: 0, count: w)
        var behind = [Double](repeating: 0, count: spec.vehicles.isEmpty ? 0 : w)
        var capsules: [Capsule] = []
        capsules.reserveCapacity(24)
        let t0 = spec.frameTime(index)
        for y in 0..<h {
            let tRow = t0 + Double(y) * spec.rowReadout
            let tStart = tRow - spec.exposure / 2
            let (ox, oy) = shake(at: tRow)
            // Background, bilinearly shifted by the shake.
            let fx = Double(margin) - ox, fy = Double(y + margin) - oy
            let ix = Int(fx.rounded(.down)), iy = Int(fy.rounded(.down))
            let ax = fx - Double(ix), ay = fy - Double(iy)
            let r0 = min(max(iy, 0), h + 2 * margin - 2) * bgWidth
            let r1 = r0 + bgWidth
            for x in 0..<w {
                let c = min(max(ix + x, 0), bgWidth - 2)
                let top = Double(background[r0 + c]) * (1 - ax) + Double(background[r0 + c + 1]) * ax
                let bot = Double(background[r1 + c]) * (1 - ax) + Double(background[r1 + c + 1]) * ax
                row[x] = top * (1 - ay) + bot * ay
            }
            let yc = Double(y) + 0.5
            if !spec.vehicles.isEmpty {
                for x in 0..<w { behind[x] = row[x] }
                for v in spec.vehicles {
                    guard yc >= v.groundY - v.height - 10 - spec.shakeAmplitude, yc <= v.groundY + 10 + spec.shakeAmplitude
                    else { continue }
                    Self.vehiclePose(v, gateX: spec.gateX, at: tStart, shake: (ox, oy), into: &capsules)
                    let dir: Double = v.direction == .leftToRight ? 1 : -1
                    for c in capsules {
                        if let (a, b) = Self.span(c, y: yc) {
                            Self.blend(&row, a: a, b: b, blur: v.speed * spec.exposure, dir: dir) { p, cov in p * (1 - cov) + c.lum * cov }
                        }
                    }
                }
                if let f = spec.fence {
                    // The fence stands in front of the vehicles: its pixels show it again.
                    for x in 0..<w where f.covers(x: Double(x) + 0.5 - ox, y: yc - oy) { row[x] = behind[x] }
                }
            }
            for sh in spec.shadows {
                let s: Double = sh.direction == .leftToRight ? 1 : -1
                let tip = spec.gateX + s * sh.speed * (tRow - sh.crossingTime) + ox
                let cy = sh.groundY + sh.thickness / 2 + oy
                let rad = sh.thickness / 2
                let cap = Capsule(x0: tip - s * (sh.length - rad), y0: cy, x1: tip - s * rad, y1: cy, r: rad, lum: 0)
                if let (a, b) = Self.span(cap, y: yc) {
                    Self.blend(&row, a: a, b: b, blur: 0, dir: 1) { v, c in v * (1 - c * (1 - sh.darkness)) }
                }
            }
            for r in spec.runners {
                let top = r.groundY - 1.1 * r.bodyHeight - 10, bottom = r.groundY + 10
                guard yc >= top - spec.shakeAmplitude, yc <= bottom + spec.shakeAmplitude else { continue }
                Self.pose(r, gateX: spec.gateX, at: tStart, shake: (ox, oy), into: &capsules)
                let moving = r.stopAt == nil || tStart < r.stopAt! || tStart > r.stopAt! + r.standFor
                let blur = moving ? r.speed * spec.exposure : 0
                let dir: Double = (r.direction == .leftToRight) == (r.stopAt == nil || tStart < r.stopAt!) ? 1 : -1
                for c in capsules {
                    if let (a, b) = Self.span(c, y: yc) {
                        Self.blend(&row, a: a, b: b, blur: blur, dir: dir) { v, cov in v * (1 - cov) + c.lum * cov }
                    }
                }
            }
            for x in 0..<w { lightRow[x] = light(at: tRow, xf: (Double(x) + 0.5) / Double(w)) }
            let base = y * w
            for x in 0..<w {
                let v = row[x] * lightRow[x] + spec.noise * rng.gaussianish()
                out[base + x] = UInt8(min(255, max(0, v.rounded())))
            }
        }
    }

    /// Applies `paint` with each pixel's coverage by the interval [a, b] smeared over
    /// `blur` pixels in direction `dir` during the exposure.
    static func blend(_ row: inout [Double], a: Double, b: Double, blur: Double, dir: Double,
                      _ paint: (Double, Double) -> Double) {
        let lo = dir > 0 ? a : a - blur, hi = dir > 0 ? b + blur : b
        let p0 = max(0, Int(lo.rounded(.down))), p1 = min(row.count - 1, Int(hi.rounded(.down)))
        guard p0 <= p1 else { return }
        func H(_ z: Double) -> Double { z < 0 ? 0 : (z < 1 ? z * z / 2 : z - 0.5) }
        for p in p0...p1 {
            let x = Double(p)
            let cov: Double
            if blur < 0.01 {
                cov = max(0, min(b, x + 1) - max(a, x))
            } else if dir > 0 {
                cov = (H(b - x + blur) - H(b - x) - H(a - x + blur) + H(a - x)) / blur
            } else {
                cov = (H(b - x) - H(b - x - blur) - H(a - x) + H(a - x - blur)) / blur
            }
            if cov > 0 { row[p] = paint(row[p], min(1, cov)) }
        }
    }
}
