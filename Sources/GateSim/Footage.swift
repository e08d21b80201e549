// SPDX-License-Identifier: Apache-2.0
// Hand-annotated real footage: the annotation model and the scoring of detections against it.

public import GateCore
public import Detector

/// A clip's annotation file (`<id>.json` beside `<id>_<W>x<H>.raw.gz`): the torso
/// crossings a careful annotator placed at chosen gate columns, the stretches where nobody
/// touches a column, and distractors. Frame numbers count from 0.
public struct FootageAnnotation: Decodable, Sendable {
    public var clipID: String
    public var width: Int
    public var height: Int
    public var fps: Double
    public var frameCount: Int?
    /// The clip file's name in the annotation's folder, when given.
    public var rawFile: String?
    public var gateLines: [GateLine]

    public struct GateLine: Decodable, Sendable {
        /// Gate column in the stored frames: the vertical line through that pixel column's centre.
        public var x: Double
        public var crossings: [AnnotatedCrossing]
        /// Inclusive frame ranges in which no part of any person overlaps the column.
        public var noCrossingRanges: [[Int]]
        public var distractors: [Distractor]

        enum CodingKeys: String, CodingKey {
            case x, crossings
            case noCrossingRanges = "no_crossing_ranges"
            case distractors
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            x = try c.decode(Double.self, forKey: .x)
            crossings = try c.decodeIfPresent([AnnotatedCrossing].self, forKey: .crossings) ?? []
            noCrossingRanges = try c.decodeIfPresent([[Int]].self, forKey: .noCrossingRanges) ?? []
            distractors = try c.decodeIfPresent([Distractor].self, forKey: .distractors) ?? []
            for r in noCrossingRanges where r.count != 2 || r[0] > r[1] {
                throw DecodingError.dataCorruptedError(forKey: .noCrossingRanges, in: c,
                    debugDescription: "a no-crossing range is [first, last] with first ≤ last, not \(r)")
            }
        }
    }

    public struct AnnotatedCrossing: Decodable, Sendable {
        /// First frame in which the torso's leading edge is at or past the column.
        public var frame: Int
        /// The frames a careful annotator could defend, inclusive.
        public var frameRange: ClosedRange<Int>
        public var direction: CrossingDirection

        enum CodingKeys: String, CodingKey {
            case frame
            case frameRange = "frame_range"
            case direction
        }

        public init(frame: Int, frameRange: ClosedRange<Int>, direction: CrossingDirection) {
            self.frame = frame
            self.frameRange = frameRange
            self.direction = direction
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            frame = try c.decode(Int.self, forKey: .frame)
            let r = try c.decodeIfPresent([Int].self, forKey: .frameRange) ?? [frame, frame]
            guard r.count == 2, r[0] <= r[1] else {
                throw DecodingError.dataCorruptedError(forKey: .frameRange, in: c,
                    debugDescription: "frame_range is [first, last] with first ≤ last, not \(r)")
            }
            frameRange = r[0]...r[1]
            let d = try c.decode(String.self, forKey: .direction)
            switch d {
            case "left_to_right": direction = .leftToRight
            case "right_to_left": direction = .rightToLeft
            default:
                throw DecodingError.dataCorruptedError(forKey: .direction, in: c,
                    debugDescription: "direction is left_to_right or right_to_left, not '\(d)'")
            }
        }
    }

    public struct Distractor: Decodable, Sendable {
        public var frames: ClosedRange<Int>
        public var what: String
        /// True for `no_crossing` (a detection is a false trigger); false for `ambiguous`
        /// (detections are ignored).
        public var mustNotFire: Bool

        enum CodingKeys: String, CodingKey { case frames, what, expected }

        public init(frames: ClosedRange<Int>, what: String, mustNotFire: Bool) {
            self.frames = frames
            self.what = what
            self.mustNotFire = mustNotFire
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            let r = try c.decode([Int].self, forKey: .frames)
            guard r.count == 2, r[0] <= r[1] else {
                throw DecodingError.dataCorruptedError(forKey: .frames, in: c,
                    debugDescription: "frames is [first, last] with first ≤ last, not \(r)")
            }
            frames = r[0]...r[1]
            what = try c.decodeIfPresent(String.self, forKey: .what) ?? ""
            let e = try c.decode(String.self, forKey: .expected)
            if e.hasPrefix("no_crossing") {
                mustNotFire = true
            } else if e.hasPrefix("ambiguous") {
                mustNotFire = false
            } else {
                throw DecodingError.dataCorruptedError(forKey: .expected, in: c,
                    debugDescription: "expected is no_crossing or ambiguous, not '\(e)'")
            }
        }
    }

    enum CodingKeys: String, CodingKey {
        case clipID = "clip_id"
        case width, height, fps
        case frameCount = "frame_count"
        case rawFile = "raw_file"
        case gateLines = "gate_lines"
    }
}

/// How the detections at one gate column compare with its annotation.
public struct FootageScore: Sendable {
    public var crossings = 0
    public var hits = 0
    /// Detections in a no-crossing range or a `no_crossing` distractor, a second detection
    /// of one crossing, or a detection with the wrong direction inside a crossing's window.
    public var falseTriggers = 0
    /// Detections in no annotated window at all (neither counted nor ignored).
    public var unannotated = 0
    /// Frame error of each hit: the detection's frame minus the annotated frame.
    public var frameErrors: [Int] = []
    /// Annotated frames of the crossings that were missed.
    public var missedFrames: [Int] = []
    /// Frames of the detections counted as false triggers.
    public var falseFrames: [Int] = []

    public init() {}

    public var recall: Double { crossings == 0 ? 1 : Double(hits) / Double(crossings) }
    public var meanAbsFrameError: Double {
        frameErrors.isEmpty ? 0 : Double(frameErrors.reduce(0) { $0 + abs($1) }) / Double(frameErrors.count)
    }

    public mutating func add(_ o: FootageScore) {
        crossings += o.crossings
        hits += o.hits
        falseTriggers += o.falseTriggers
        unannotated += o.unannotated
        frameErrors += o.frameErrors
        missedFrames += o.missedFrames
        falseFrames += o.falseFrames
    }
}

/// The frame a detection stands for: the first frame at or after its crossing instant, as
/// an annotator marks the first frame with the torso at or past the line.
public func detectionFrame(_ c: ClipCrossing) -> Int {
    Int((c.frame - 1e-6).rounded(.up))
}

/// Scores detections at one gate column. A detection is a hit for a crossing when its frame
/// lies within the crossing's frame range widened by one frame on each side and its
/// direction matches; each crossing takes the nearest such detection. Of the rest, those in
/// a no-crossing range are false triggers; then those in an ambiguous distractor are
/// ignored; those in a `no_crossing` distractor or a crossing's window are false triggers.
public func scoreGateLine(_ line: FootageAnnotation.GateLine, detections: [ClipCrossing]) -> FootageScore {
    var s = FootageScore()
    s.crossings = line.crossings.count
    let frames = detections.map(detectionFrame)
    var used = [Bool](repeating: false, count: detections.count)
    for c in line.crossings {
        let window = (c.frameRange.lowerBound - 1)...(c.frameRange.upperBound + 1)
        var best = -1
        for (i, d) in detections.enumerated() where !used[i] && d.direction == c.direction && window.contains(frames[i]) {
            if best < 0 || abs(frames[i] - c.frame) < abs(frames[best] - c.frame) { best = i }
        }
        if best >= 0 {
            used[best] = true
            s.hits += 1
            s.frameErrors.append(frames[best] - c.frame)
        } else {
            s.missedFrames.append(c.frame)
        }
    }
    for (i, f) in frames.enumerated() where !used[i] {
        let inCrossingWindow = line.crossings.contains {
            ($0.frameRange.lowerBound - 1...$0.frameRange.upperBound + 1).contains(f)
        }
        let nobody = line.noCrossingRanges.contains { ($0[0]...$0[1]).contains(f) }
        let ambiguous = line.distractors.contains { !$0.mustNotFire && $0.frames.contains(f) }
        let distractor = line.distractors.contains { $0.mustNotFire && $0.frames.contains(f) }
        // Why: an ambiguous window names a specific event (an arm ahead of the torso) and
        // overrides a broad no-crossing distractor (foliage over the whole clip); nothing
        // overrides a range in which nobody touches the column.
        if nobody || (!ambiguous && (distractor || inCrossingWindow)) {
            s.falseTriggers += 1
            s.falseFrames.append(f)
        } else if !ambiguous {
            s.unannotated += 1
        }
    }
    return s
}

/// One gate column of an annotated clip: what the detector reported there and its score.
public struct FootageGateResult: Sendable {
    public var x: Double
    public var detections: [ClipCrossing]
    public var score: FootageScore
}

/// Replays `clipPath` once per annotated gate column with `config` (its `gateX` replaced by
/// the column's centre) and scores each column against the annotation.
/// With `debugDirectory`, writes the debug images of each column into `<dir>/<clip>-x<X>/`.
public func evaluateFootage(_ annotation: FootageAnnotation, clipPath: String, config: DetectorConfig,
                            debugDirectory: String? = nil) throws(ClipError) -> [FootageGateResult] {
    var results: [FootageGateResult] = []
    for line in annotation.gateLines {
        let reader = try ClipReader(path: clipPath, size: (annotation.width, annotation.height), fps: annotation.fps)
        guard reader.width == annotation.width, reader.height == annotation.height else {
            throw ClipError("\(clipPath): frames are \(reader.width)x\(reader.height), the annotation says \(annotation.width)x\(annotation.height)")
        }
        guard line.x >= 0, line.x < Double(reader.width) else {
            throw ClipError("\(annotation.clipID): gate column x = \(line.x) is outside the frame (0..<\(reader.width))")
        }
        var c = config
        // The annotated column's centre line, in the detector's continuous coordinates.
        c.gateX = line.x + 0.5
        let dump = try debugDirectory.map { (d: String) throws(ClipError) in
            try DetectorDebugDump(directory: "\(d)/\(annotation.clipID)-x\(Int(line.x))")
        }
        let found = try replayClip(reader, config: c, debug: dump)
        results.append(FootageGateResult(x: line.x, detections: found, score: scoreGateLine(line, detections: found)))
    }
    return results
}
