// SPDX-License-Identifier: Apache-2.0
// Descriptions of synthetic sprint scenes: camera, runners, light, shadows, shake.

public import GateCore

/// One synthetic athlete, seen from the side.
public struct RunnerSpec: Sendable, Hashable {
    public var direction: CrossingDirection = .leftToRight
    /// Instant, in seconds from the first frame, at which the torso's foremost point
    /// reaches the gate line. This is the ground truth.
    public var crossingTime: Double = 0.8
    /// Mean horizontal speed in input pixels per second.
    public var speed: Double = 1200
    /// Standing height in input pixels.
    public var bodyHeight: Double = 250
    /// Image row of the ground under the runner.
    public var groundY: Double = 300
    /// Forward trunk lean in radians.
    public var lean: Double = 0.08
    /// Strides per second (a sprinter takes about 4.5 steps, so 2.25 strides).
    public var strideRate: Double = 2.25
    /// Phase of the arm and leg cycle at the crossing, radians; π/2 has the near arm
    /// fully forward when the torso crosses (an arm-first crossing).
    public var phaseAtCrossing: Double = 0.0
    /// Forward swing of the arms, radians either side of vertical.
    public var armSwing: Double = 0.9
    /// Luma of shirt, shorts, skin and shoes.
    public var shirt: Double = 45
    public var shorts: Double = 30
    public var skin: Double = 140
    public var shoes: Double = 230
    /// When false only the arm nearest the camera is drawn and the body is hidden behind
    /// the frame edge: an arm reaching into the view (false-trigger scene).
    public var bodyVisible = true
    /// Speed multiplier over time: 1 is constant; walking athletes can stop (see `stopAt`).
    public var stopAt: Double? = nil
    /// When stopped, seconds to stand before walking back the way they came.
    public var standFor: Double = 0

    public init() {}
}

/// A ground shadow sliding along the track (cast by someone outside the view).
public struct ShadowSpec: Sendable, Hashable {
    public var direction: CrossingDirection = .leftToRight
    /// Instant its leading tip reaches the gate line.
    public var crossingTime: Double = 0.8
    public var speed: Double = 1200
    public var length: Double = 260
    /// Vertical thickness in pixels, on the ground.
    public var thickness: Double = 22
    public var groundY: Double = 300
    /// Fraction of light left inside the shadow.
    public var darkness: Double = 0.55
    public init() {}
}

/// A vehicle passing through the view: not a person, never a crossing.
public struct VehicleSpec: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A car seen from the side: a long body on two wheels with a cabin on top.
        case car
        /// A bicycle with its rider leaning forward and pedalling.
        case bicycle
    }
    public var kind: Kind = .car
    public var direction: CrossingDirection = .leftToRight
    /// Instant, in seconds from the first frame, at which its reference point reaches the
    /// gate line: the front of its drawing's frame, within a few percent of its height of
    /// its foremost point (`SceneSpec.expectedVehicleCrossings` has that instant).
    public var crossingTime: Double = 0.8
    /// Horizontal speed in input pixels per second.
    public var speed: Double = 600
    /// Height from the ground to its top (roof or rider's head), input pixels.
    public var height: Double = 120
    /// Image row of the ground under it.
    public var groundY: Double = 170
    /// Luma of the paint (car) or the rider's clothes (bicycle).
    public var paint: Double = 60
    public init() {}
}

/// A fence between the camera and the vehicles behind it, drawn in front of the vehicles
/// and behind the runners on the track: a steel bar fence, as round many tracks (bars a
/// few centimetres wide at 12–20 cm, a post every 2–2.5 m, two rails).
public struct FenceSpec: Sendable, Hashable {
    /// Rows the bars span.
    public var top: Double = 40
    public var bottom: Double = 175
    /// Distance between bars and their width, input pixels.
    public var barSpacing: Double = 12
    public var barWidth: Double = 3
    /// Distance between posts and their width, input pixels.
    public var postSpacing: Double = 160
    public var postWidth: Double = 7
    /// Rows of the horizontal rails' centres and their thickness.
    public var rails: [Double] = [48, 110]
    public var railThickness: Double = 4
    public var luma: Double = 80
    public init() {}

    /// Whether the fence covers input pixel centre (`x`, `y`).
    public func covers(x: Double, y: Double) -> Bool {
        guard y >= top, y < bottom else { return false }
        if x.truncatingRemainder(dividingBy: barSpacing) < barWidth { return true }
        if x.truncatingRemainder(dividingBy: postSpacing) < postWidth { return true }
        return rails.contains { abs(y - $0) < railThickness / 2 }
    }
}

/// A change of scene illumination (cloud, auto-exposure step).
public struct LightChange: Sendable, Hashable {
    /// Start of the change, seconds from the first frame.
    public var start: Double
    /// Length of the ramp; 0 for a step from one frame to the next.
    public var duration: Double
    /// Illumination after the change relative to before (0.6 is 40 % darker).
    public var factor: Double
    /// Extra change across the image, left to right (a cloud edge is not uniform).
    public var tilt: Double = 0.1
    public init(start: Double, duration: Double, factor: Double, tilt: Double = 0.1) {
        self.start = start
        self.duration = duration
        self.factor = factor
        self.tilt = tilt
    }
}

/// Everything needed to render a clip and know its truth.
public struct SceneSpec: Sendable, Hashable {
    public var name: String
    public var width = 568
    public var height = 320
    public var fps = 60.0
    public var duration = 1.6
    /// Gate line column in input pixels.
    public var gateX = 284.0
    /// Sensor noise deviation in luma levels.
    public var noise = 2.0
    /// Exposure time in seconds (motion blur).
    public var exposure = 0.002
    /// Rolling-shutter readout per row in seconds (0 for global shutter).
    public var rowReadout = 0.0
    /// Tripod shake amplitude in pixels and its frequency in hertz.
    public var shakeAmplitude = 0.0
    public var shakeFrequency = 6.0
    /// Overall brightness of the scene (1 is a sunny afternoon).
    public var brightness = 1.0
    public var runners: [RunnerSpec] = []
    public var shadows: [ShadowSpec] = []
    public var light: [LightChange] = []
    /// Vehicles behind the fence (drawn before it, back to front).
    public var vehicles: [VehicleSpec] = []
    public var fence: FenceSpec? = nil
    public var seed: UInt64 = 1

    public init(name: String) { self.name = name }

    public var frameCount: Int { Int((duration * fps).rounded(.down)) }

    /// Timestamp of frame `i` (middle of the top row's exposure) in seconds.
    public func frameTime(_ i: Int) -> Double { Double(i) / fps }

    /// The crossings a perfect detector reports: one per visible, moving runner whose
    /// torso reaches the line and that is faster than a walk when it does.
    public var expectedCrossings: [ExpectedCrossing] {
        runners.enumerated().compactMap { i, r in
            guard r.bodyVisible, r.stopAt == nil, r.crossingTime > 0, r.crossingTime < duration else { return nil }
            return ExpectedCrossing(time: r.crossingTime, direction: r.direction, runner: i)
        }.sorted { $0.time < $1.time }
    }
}

extension SceneSpec {
    /// The crossings a gate in the vehicle subject should report: each vehicle's foremost
    /// point reaching the line, in the order they happen (`runner` is the vehicle's index).
    public var expectedVehicleCrossings: [ExpectedCrossing] {
        vehicles.enumerated().compactMap { i, v in
            guard v.crossingTime > 0, v.crossingTime < duration else { return nil }
            return ExpectedCrossing(time: v.crossingTime - Self.noseAhead(v) / v.speed, direction: v.direction, runner: i)
        }.sorted { $0.time < $1.time }
    }

    /// How far the drawn outline of `v` reaches ahead of its reference point, input pixels
    /// (negative: it stays behind it), at its crossing instant: the car's rounded nose
    /// lies a little behind it, the bicycle's front tyre a little ahead.
    static func noseAhead(_ v: VehicleSpec) -> Double {
        var capsules: [SceneRenderer.Capsule] = []
        SceneRenderer.vehiclePose(v, gateX: 0, at: v.crossingTime, shake: (0, 0), into: &capsules)
        let s: Double = v.direction == .leftToRight ? 1 : -1
        return capsules.map { max(s * $0.x0, s * $0.x1) + $0.r }.max() ?? 0
    }
}

/// A ground-truth crossing.
public struct ExpectedCrossing: Sendable, Hashable {
    public var time: Double
    public var direction: CrossingDirection
    public var runner: Int
}
