// SPDX-License-Identifier: Apache-2.0
// Archery target faces and their scoring zones, from the World Archery rules' dimensions.

/// A point on a target face, millimetres from the face's centre (x to the right, y up).
public struct FacePoint: Hashable, Sendable, Codable {
    public var x: Double
    public var y: Double
    public init(x: Double, y: Double) {
        self.x = x
        self.y = y
    }

    func distance(to other: FacePoint) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// The bow class decides what the inner rings are worth on the indoor faces.
public enum BowClass: String, Sendable, Codable, CaseIterable {
    case recurve, compound, barebow

    /// World Archery: a compound archer on the 40 cm face and on the 3-spot scores 10 only
    /// inside the inner ten ring (the X ring); the rest of the ten zone scores 9.
    var usesInnerTen: Bool { self == .compound }
}

/// The value of one arrow.
public enum ArrowScore: Hashable, Sendable, Comparable {
    /// Inside the inner ten (X) ring: worth 10, counted apart for ties.
    case x
    /// A scoring zone, 1 to 10.
    case ring(Int)
    /// Outside the scoring zones or off the face.
    case miss

    /// Points it adds to a total.
    public var points: Int {
        switch self {
        case .x: return 10
        case .ring(let n): return n
        case .miss: return 0
        }
    }

    /// What a score sheet writes: "X", "10" … "1", "M".
    public var label: String {
        switch self {
        case .x: return "X"
        case .ring(let n): return String(n)
        case .miss: return "M"
        }
    }

    /// Reads a score sheet's label back.
    public init?(label: String) {
        switch label.uppercased() {
        case "X": self = .x
        case "M": self = .miss
        default:
            guard let n = Int(label), (1...10).contains(n) else { return nil }
            self = .ring(n)
        }
    }

    /// Ordered as a sheet orders arrows: X above 10 above … 1 above M.
    public static func < (a: ArrowScore, b: ArrowScore) -> Bool { a.rank < b.rank }
    private var rank: Int {
        switch self {
        case .x: return 11
        case .ring(let n): return n
        case .miss: return 0
        }
    }
}

/// The target faces the scorer draws and scores.
///
/// Dimensions from World Archery's rules (Book 3, target faces): a ten-zone face has ten
/// rings of equal width, the width a twentieth of the face's diameter, and an inner ten
/// (X) ring half the ten's diameter. The 3-spot face carries three spots of the 40 cm
/// face's rings 6 to 10 only.
public enum TargetFace: String, Sendable, Codable, CaseIterable {
    /// 122 cm, ten zones: rings 61 mm wide, X ring 61 mm across.
    case wa122
    /// 80 cm, ten zones: rings 40 mm wide, X ring 40 mm across.
    case wa80
    /// 40 cm, ten zones: rings 20 mm wide, X ring 20 mm across.
    case wa40
    /// Vegas 3-spot: three 40 cm spots of rings 6 to 10 (200 mm across each), centres on an
    /// equilateral triangle of 220 mm sides (two above, one below), so the spots stand 20 mm
    /// apart.
    case vegas3

    /// What a menu shows.
    public var title: String {
        switch self {
        case .wa122: return "WA 122 cm"
        case .wa80: return "WA 80 cm"
        case .wa40: return "WA 40 cm"
        case .vegas3: return "Vegas 3-spot"
        }
    }

    /// Width of one scoring ring, millimetres.
    public var ringWidth: Double {
        switch self {
        case .wa122: return 61
        case .wa80: return 40
        case .wa40, .vegas3: return 20
        }
    }

    /// The lowest ring printed: 1 on the full faces, 6 on each spot of the 3-spot.
    public var lowestRing: Int { self == .vegas3 ? 6 : 1 }

    /// Radius of the X ring, millimetres: half the ten ring's.
    public var xRadius: Double { ringWidth / 2 }

    /// Outer radius of ring `n`'s zone (10 is the centre disc), millimetres.
    public func outerRadius(ofRing n: Int) -> Double {
        precondition((lowestRing...10).contains(n), "ring \(n) is not on \(rawValue)")
        return Double(11 - n) * ringWidth
    }

    /// Radius of the outermost scoring line on one spot, millimetres.
    public var spotRadius: Double { outerRadius(ofRing: lowestRing) }

    /// Where each spot's centre lies, millimetres from the face centre.
    public var spotCentres: [FacePoint] {
        guard self == .vegas3 else { return [FacePoint(x: 0, y: 0)] }
        // Equilateral triangle, side 220 mm, centroid at the face centre.
        let side = 220.0
        let h = side * 3.0.squareRoot() / 2
        return [FacePoint(x: -side / 2, y: h / 3), FacePoint(x: side / 2, y: h / 3), FacePoint(x: 0, y: -2 * h / 3)]
    }

    /// Half the width of the square the face is drawn in, millimetres.
    public var drawingRadius: Double {
        guard self == .vegas3 else { return spotRadius }
        return spotCentres.map { max(abs($0.x), abs($0.y)) + spotRadius }.max() ?? spotRadius
    }

    /// A shaft this close to a line touches it, millimetres. Why: positions reach the
    /// scorer through floating-point conversions (page pixels to millimetres), and a
    /// micrometre is far below what a coach can place or see.
    static let touching = 0.001

    /// Scores an arrow whose shaft's centre is at `point`, by the line-cutter rule: a
    /// shaft that touches the line between two zones scores the higher zone, so the
    /// arrow's edge nearest the centre decides. On the 3-spot the nearest spot counts.
    /// `arrowDiameter` is in millimetres (`ArrowDiameter.range`).
    public func score(_ point: FacePoint, arrowDiameter: Double, bow: BowClass) -> ArrowScore {
        let centre = spotCentres.min { point.distance(to: $0) < point.distance(to: $1) } ?? FacePoint(x: 0, y: 0)
        let reach = point.distance(to: centre) - arrowDiameter / 2 - Self.touching
        let innerTenOnly = bow.usesInnerTen && (self == .wa40 || self == .vegas3)
        if reach <= xRadius { return .x }
        for n in stride(from: 10, through: lowestRing, by: -1) where reach <= outerRadius(ofRing: n) {
            if n == 10 && innerTenOnly { return .ring(9) }
            return .ring(n)
        }
        return .miss
    }
}

/// The arrow shafts the scorer accepts, millimetres: 3.1 mm (the thinnest carbon shafts) to
/// 9.9 mm (the thickest indoor aluminium shafts).
public enum ArrowDiameter {
    public static let range: ClosedRange<Double> = 3.1...9.9
    /// A common outdoor carbon shaft.
    public static let standard = 5.5
}
