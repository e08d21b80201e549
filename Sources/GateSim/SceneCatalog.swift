// SPDX-License-Identifier: Apache-2.0
// Named synthetic scenes: timed sprints and the situations that must not trigger.

import GateCore

/// The named scenes the generator, the tests and the accuracy benchmark share.
public enum SceneCatalog {
    /// Scenes in which every runner's torso crossing must be timed.
    public static let timed = ["sprint", "sprint-rl", "arm-first", "two-runners", "light-runner",
                               "shadow-runner", "rolling-shutter", "motion-blur", "dim-noisy"]
    /// Scenes that must produce no crossing at all.
    public static let quiet = ["arm-only", "shadow-only", "light-only", "shake-only", "standing",
                               "car-behind-fence", "bicycle-behind-fence"]
    /// Timed scenes reported on their own because their error has a physical floor
    /// (a shaking camera moves the gate line itself).
    public static let extra = ["shake-runner"]

    /// Timed scenes in which two bodies overlap in the picture at the line, reported
    /// apart: a sprinter passing in front of a person who stands on the line, two
    /// athletes crossing in opposite directions a tenth of a second apart, a sprinter
    /// overtaking a jogger in the lane behind at the line, and a sprinter crossing while
    /// a car behind the fence passes the line the other way.
    public static let overlap = ["past-stander", "opposite-close", "overtake", "past-car"]
    public static var all: [String] { timed + quiet + extra + overlap }

    /// The scene `name` at `fps`; `variant` picks speed, size, colours, gate position
    /// and gait phase from a seeded generator (variant 0 is the plain default).
    public static func scene(_ name: String, fps: Double, variant: Int = 0) -> SceneSpec? {
        var spec = SceneSpec(name: name)
        spec.fps = fps
        spec.seed = UInt64(variant) &* 7919 &+ UInt64(name.utf8.reduce(0) { $0 &* 31 &+ Int($1) }.magnitude)
        var rng = SplitMix64(seed: spec.seed)
        var r = RunnerSpec()
        if variant > 0 {
            r.speed = rng.uniform(900...1400)
            r.bodyHeight = rng.uniform(210...270)
            r.groundY = rng.uniform(292...308)
            r.lean = rng.uniform(0.03...0.12)
            r.phaseAtCrossing = rng.uniform(0...(2 * Double.pi))
            r.crossingTime = rng.uniform(0.75...0.9)
            r.shirt = [40.0, 200, 70, 225][Int(rng.next() % 4)]
            spec.gateX = rng.uniform(230...340)
        }
        // Why: a typical sensor reads the frame in about 80 % of the frame interval.
        let fullReadout = 0.8 / fps
        switch name {
        case "sprint":
            spec.runners = [r]
        case "sprint-rl":
            r.direction = .rightToLeft
            spec.runners = [r]
        case "arm-first":
            r.phaseAtCrossing = Double.pi / 2
            r.armSwing = 1.15
            spec.runners = [r]
        case "two-runners":
            var far = farLane(r)
            far.crossingTime = r.crossingTime + 0.45
            spec.duration = 2.0
            spec.runners = [far, r]  // the far lane is drawn first, behind
        case "light-runner":
            spec.runners = [r]
            spec.light = [LightChange(start: r.crossingTime - 0.12, duration: 0.25, factor: 0.6),
                          LightChange(start: r.crossingTime + 0.02, duration: 0, factor: 1.3)]
        case "shadow-runner":
            spec.runners = [r]
            var sh = ShadowSpec()
            sh.direction = r.direction
            sh.speed = r.speed
            sh.groundY = r.groundY
            sh.length = 1.2 * r.bodyHeight
            sh.crossingTime = r.crossingTime - 0.45 * r.bodyHeight / r.speed
            spec.shadows = [sh]
        case "rolling-shutter":
            spec.rowReadout = fullReadout / Double(spec.height)
            spec.runners = [r]
        case "motion-blur":
            spec.exposure = min(0.008, 1 / fps)
            spec.runners = [r]
        case "dim-noisy":
            spec.brightness = 0.45
            spec.noise = 5
            spec.runners = [r]
        case "shake-runner":
            spec.shakeAmplitude = 2
            spec.runners = [r]
        case "arm-only":
            r.bodyVisible = false
            r.groundY = 290
            r.armSwing = 1.3
            spec.runners = [r]
        case "shadow-only":
            var sh = ShadowSpec()
            sh.speed = r.speed
            sh.crossingTime = r.crossingTime
            sh.length = rng.uniform(220...320)
            sh.groundY = r.groundY
            spec.shadows = [sh]
        case "light-only":
            spec.light = [LightChange(start: 0.5, duration: 0.3, factor: 0.6),
                          LightChange(start: 1.0, duration: 0, factor: 1.35),
                          LightChange(start: 1.3, duration: 0.1, factor: 0.8, tilt: 0.3)]
        case "shake-only":
            spec.shakeAmplitude = 3
            spec.shakeFrequency = 5 + Double(variant % 4)
        case "past-stander":
            // Walks in briskly along the far lane and stands with the torso on the line;
            // a sprinter in the near lane crosses in front a second later.
            var stander = farLane(r)
            stander.direction = .leftToRight
            stander.speed = 250
            stander.strideRate = 1.0
            stander.armSwing = 0.4
            stander.stopAt = 1.4
            stander.standFor = 10
            r.crossingTime += 1.6
            spec.duration = 3.2
            spec.runners = [stander, r]
        case "opposite-close":
            var far = farLane(r)
            far.direction = r.direction == .leftToRight ? .rightToLeft : .leftToRight
            far.crossingTime = r.crossingTime + 0.1
            spec.duration = 2.0
            spec.runners = [far, r]
        case "overtake":
            var jogger = farLane(r)
            jogger.speed = 0.45 * r.speed
            jogger.strideRate = 1.4
            jogger.crossingTime = r.crossingTime - 0.05
            spec.duration = 2.0
            spec.runners = [jogger, r]
        case "past-car":
            // A sprinter crosses while a car behind the fence passes the line the other
            // way: their bodies join in the picture for a few frames.
            var v = VehicleSpec()
            v.direction = r.direction == .leftToRight ? .rightToLeft : .leftToRight
            v.crossingTime = r.crossingTime + rng.uniform(-0.1...0.1)
            v.groundY = 160
            v.height = 0.35 * Double(spec.height)
            v.speed = 700
            v.paint = r.shirt > 128 ? 60 : 210
            spec.vehicles = [v]
            spec.fence = barFence(before: v, top: v.groundY - v.height - 15, metre: v.height / 1.5,
                                  barSpacing: 0.15, barWidth: 0.04, postSpacing: 2.2)
            spec.runners = [r]
            spec.duration = 2.0
        case "car-behind-fence", "bicycle-behind-fence":
            // A car on a road, or a cyclist on a path, behind the fence at the far side of
            // the track. The car is as tall in the picture as the smallest timed body or
            // taller (a car park just behind the fence); the cyclist is further away, as
            // tall as 70–80 % of the set body size (the default 0.33 of the frame).
            var v = VehicleSpec()
            v.direction = variant % 2 == 0 ? .leftToRight : .rightToLeft
            v.crossingTime = rng.uniform(0.7...0.9)
            v.groundY = rng.uniform(150...170)
            let top: Double
            if name == "car-behind-fence" {
                v.kind = .car
                v.height = rng.uniform(0.32...0.45) * Double(spec.height)
                v.speed = rng.uniform(400...900)
                v.paint = [50.0, 210, 120][Int(rng.next() % 3)]
                top = v.groundY - v.height - 15
            } else {
                v.kind = .bicycle
                v.height = rng.uniform(0.23...0.26) * Double(spec.height)
                v.speed = rng.uniform(250...450)
                v.paint = [40.0, 200][Int(rng.next() % 2)]
                top = v.groundY - 0.7 * v.height
            }
            // Scaled by the vehicle's height (a car 1.5 m, a cyclist 1.75 m), as if it
            // went close behind the fence: bars 3–5 cm at 12–20 cm, posts 7 cm every
            // 2–2.5 m.
            spec.fence = barFence(before: v, top: top, metre: v.height / (name == "car-behind-fence" ? 1.5 : 1.75),
                                  barSpacing: rng.uniform(0.12...0.2), barWidth: rng.uniform(0.03...0.05),
                                  postSpacing: rng.uniform(2...2.5))
            spec.vehicles = [v]
            spec.duration = 2.0
        case "standing":
            // Walks up slower than the crossing speed limit, stands on the line, walks back.
            r.speed = 100
            r.strideRate = 0.9
            r.armSwing = 0.4
            spec.gateX = 200
            r.stopAt = 2.7
            r.standFor = 1.5
            spec.duration = 5.6
            spec.runners = [r]
        default:
            return nil
        }
        return spec
    }

    /// A bar fence in front of vehicle `v`, from row `top` to just under its wheels, sized
    /// in metres at `metre` pixels per metre: bars `barWidth` wide (at least a pixel) every
    /// `barSpacing`, a 7 cm post every `postSpacing`, a rail at the top and one halfway down.
    static func barFence(before v: VehicleSpec, top: Double, metre: Double, barSpacing: Double, barWidth: Double,
                         postSpacing: Double) -> FenceSpec {
        var f = FenceSpec()
        f.top = top
        f.bottom = v.groundY + 6
        f.barSpacing = metre * barSpacing
        f.barWidth = max(1, metre * barWidth)
        f.postSpacing = metre * postSpacing
        f.postWidth = metre * 0.07
        f.rails = [f.top + 4, (f.top + f.bottom) / 2]
        return f
    }

    /// A second athlete in the lane behind `r`: further away (smaller, higher in the
    /// picture), in a shirt that contrasts with `r`'s, out of step with `r`.
    static func farLane(_ r: RunnerSpec) -> RunnerSpec {
        var far = r
        far.bodyHeight = r.bodyHeight * 0.85
        far.groundY = r.groundY - 30
        far.shirt = r.shirt > 128 ? 60 : 210
        far.phaseAtCrossing = r.phaseAtCrossing + 1.7
        return far
    }
}
