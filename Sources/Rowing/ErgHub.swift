// SPDX-License-Identifier: Apache-2.0
// A row of ergs as the coach sees them: athletes assigned, one recorder each, the live
// board's tiles (stale ones marked) and the race order on one distance.

/// The ergs of one hub and what the coach's board shows of them.
public struct ErgHub: Sendable {
    public struct Erg: Sendable {
        public var id: Int
        /// As it advertises itself ("PM5 430123456").
        public var name: String
        public var athlete: String
        public var recorder = ErgRecorder()
    }

    /// An erg whose last notification is older than this, in seconds, is stale. Why 3 s:
    /// three status notifications at the PM5's slowest sample rate (1 s).
    public var staleAfter = 3.0
    public private(set) var ergs: [Int: Erg] = [:]

    public init() {}

    /// Adds an erg (or renames it), keeping its record.
    public mutating func add(erg id: Int, name: String) {
        if ergs[id] == nil { ergs[id] = Erg(id: id, name: name, athlete: "") } else { ergs[id]?.name = name }
    }

    /// Takes erg `id` off the hub (its link was let go).
    public mutating func remove(erg id: Int) {
        ergs[id] = nil
    }

    /// Puts `athlete` on erg `id` (empty: nobody).
    public mutating func assign(erg id: Int, athlete: String) {
        add(erg: id, name: ergs[id]?.name ?? "erg \(id)")
        ergs[id]?.athlete = athlete
    }

    /// Begins a new piece on erg `id` at hub time `t`: the piece so far is handed back (to
    /// be stored and closed), and a fresh recorder takes the erg's notifications from here,
    /// connected if the erg is.
    public mutating func newPiece(erg id: Int, at t: Double) -> ErgRecorder? {
        guard let old = ergs[id]?.recorder else { return nil }
        var fresh = ErgRecorder()
        if old.live.connected { fresh.connected(at: t) }
        ergs[id]?.recorder = fresh
        return old
    }

    /// One event from an erg: a notification, or its link going or coming back.
    public mutating func apply(_ event: PM5LogEvent) {
        if ergs[event.erg] == nil { add(erg: event.erg, name: "erg \(event.erg)") }
        switch event {
        case .connected(let t, let e): ergs[e]?.recorder.connected(at: t)
        case .disconnected(let t, let e): ergs[e]?.recorder.disconnected(at: t)
        case .notification(let t, let e, let c, let bytes): ergs[e]?.recorder.receive(characteristic: c, bytes, at: t)
        }
    }

    /// The board at hub time `now`: a tile per erg in erg order, and the race order.
    public func board(now: Double) -> RowingBoard {
        let tiles = ergs.values.sorted { $0.id < $1.id }.map { e -> RowingBoard.Tile in
            let l = e.recorder.live
            let fresh = l.lastHeard.map { now - $0 <= staleAfter } ?? false
            return RowingBoard.Tile(
                erg: e.id, name: e.name, athlete: e.athlete, connected: l.connected, stale: !(l.connected && fresh),
                elapsed: l.elapsed, distance: l.distance, pace: l.pace, strokeRate: l.strokeRate.map(Int.init),
                power: l.power.map(Int.init), heartRate: l.heartRate.map(Int.init), dragFactor: l.dragFactor.map(Int.init),
                strokes: l.strokes, forceCurve: l.forceCurve, gaps: e.recorder.gaps.count, dropped: e.recorder.dropped,
                finished: l.workoutState?.finished ?? false, heardAgo: l.lastHeard.map { max(0, now - $0) },
                interval: l.interval, resting: l.workoutState?.resting ?? false, workoutDistance: l.workoutDistance)
        }
        // Race order: furthest from the workout's start first; ergs that have not started
        // are left out.
        func along(_ t: RowingBoard.Tile) -> Double { t.workoutDistance ?? t.distance ?? 0 }
        let racing = tiles.filter { along($0) > 0 }.sorted { (along($0), -$0.erg) > (along($1), -$1.erg) }
        let lead = racing.first.map(along) ?? 0
        let race = racing.enumerated().map { i, t in
            RowingBoard.Place(place: i + 1, erg: t.erg, athlete: t.athlete, distance: along(t), behind: lead - along(t))
        }
        return RowingBoard(now: now, tiles: tiles, race: race)
    }
}

/// What the coach's board shows, as the page receives it.
public struct RowingBoard: Sendable, Hashable, Codable {
    public struct Tile: Sendable, Hashable, Codable {
        public var erg: Int
        public var name: String
        public var athlete: String
        public var connected: Bool
        /// Out of reach, or nothing heard for `staleAfter` seconds: its figures are old.
        public var stale: Bool
        public var elapsed: Double?
        public var distance: Double?
        /// Seconds per 500 m.
        public var pace: Double?
        public var strokeRate: Int?
        public var power: Int?
        public var heartRate: Int?
        public var dragFactor: Int?
        public var strokes: Int
        /// Pounds of force along the last drive.
        public var forceCurve: [Double]
        /// Stretches out of reach so far, and notifications dropped as malformed.
        public var gaps: Int
        public var dropped: Int
        public var finished: Bool
        /// Seconds from the last notification to `now`; nil before the first.
        public var heardAgo: Double?
        /// The interval under way (from 1) in a workout of intervals, whose elapsed time
        /// and distance are the interval's; nil in any other workout.
        public var interval: Int?
        /// Resting between intervals (optional: hubs of earlier releases do not send it).
        public var resting: Bool?
        /// Metres from the workout's start (across its intervals); the race is on it.
        public var workoutDistance: Double?
    }
    /// A place in the race on one distance.
    public struct Place: Sendable, Hashable, Codable {
        public var place: Int
        public var erg: Int
        public var athlete: String
        public var distance: Double
        /// Metres behind the leader.
        public var behind: Double
    }
    public var now: Double
    public var tiles: [Tile]
    public var race: [Place]
}
