// SPDX-License-Identifier: Apache-2.0
// Turns the loop's snapshot and finished runs into one shared board message for all clients.

import Foundation
import GateCore
public import Logging
public import ServiceLifecycle
import Synchronization
public import VideoDelay

/// What the page needs to know besides the live state: choices and units.
public struct WebSettings: Sendable, Hashable, Codable {
    public struct PresetInfo: Sendable, Hashable, Codable {
        public var id: String
        public var title: String
        public var distanceMetres: Double?
        public var startType: String
        public var solo: Bool
        /// Distances the coach chooses from (the settings' `distance`); empty: `distanceMetres` only.
        public var distances: [Double]
        public init(id: String, title: String, distanceMetres: Double?, startType: String, solo: Bool, distances: [Double] = []) {
            self.id = id
            self.title = title
            self.distanceMetres = distanceMetres
            self.startType = startType
            self.solo = solo
            self.distances = distances
        }
    }
    public var gateName: String
    /// Start type ids the engine knows, e.g. `flying`, `button-release`, `countdown`.
    public var startTypes: [String]
    /// The start types the page's Start button begins (the others start from the athlete
    /// or the button).
    public static let startedFromThePage: Set<String> = ["countdown", "voice"]
    public var presets: [PresetInfo]
    /// `m/s`, `km/h` or `mph`.
    public var speedUnit: String
    /// Read-only rows of the settings view (board file, camera, state directory, …).
    public var details: [String: String]
    /// The settings the page edits, as the loop runs them (`GET /api/settings` only).
    public var editable: EditableSettings?
    /// The camera's frame rate as opened; a different `editable.fps` waits for a restart.
    public var runningFPS: Int?
    /// The frame rates the page's menu offers: the camera's own, once it opened and said
    /// (`GET /api/settings` only).
    public var frameRates: [Int]?

    public init(gateName: String, startTypes: [String], presets: [PresetInfo], speedUnit: String,
                details: [String: String] = [:]) {
        self.gateName = gateName
        self.startTypes = startTypes
        self.presets = presets
        self.speedUnit = speedUnit
        self.details = details
    }

    /// Average speed over `distance` metres in `seconds`, in `speedUnit`; nil without a distance.
    public func speed(distance: Double?, seconds: Double) -> Double? {
        guard let d = distance, seconds > 0 else { return nil }
        let ms = d / seconds
        switch speedUnit {
        case "km/h": return ms * 3.6
        case "mph": return ms * 3600 / 1609.344
        default: return ms
        }
    }
}

/// A run as the board and the history show it: the record plus its speed.
public struct RunView: Sendable, Hashable, Codable {
    public var run: RunRecord
    /// Average speed in the settings' unit; nil without a distance.
    public var speed: Double?
    /// The run's videos (run details only; nil on a gate that keeps none).
    public var videos: [RunVideoRecord]? = nil
    /// What is drawn on them unless the page chooses (the settings file's `[video] overlay`).
    public var videoOverlay: [OverlayPart]? = nil
}

/// The board message: built once per change, shared by every WebSocket client.
struct BoardMessage: Codable {
    var version: UInt64
    var gate: LiveSnapshot
    var results: [RunView]
    var nextAthlete: Athlete?
    var speedUnit: String
    var droppedResults: UInt64
    /// The newest run, when it set its athlete's personal best: every phone toasts it once.
    var newBest: BestNews?
    /// Moves whenever the book changes (a run stored or deleted, an athlete added): pages
    /// read their lists again when it does.
    var bookVersion: UInt64
    /// The rotating roster in running order (empty: none); `nextAthlete` is its current.
    var roster: [Athlete]
}

/// Drains finished runs into the book and keeps the encoded board message current.
/// `refresh()` runs every `period` from `run()` (a Hummingbird service) and on demand
/// from request handlers, so a test without the service sees the same state.
public final class LiveHub: Service, Sendable {
    public let bridge: GateBridge
    public let book: any ResultsBook
    private let settingsCell: Mutex<WebSettings>
    /// The page's choices and units; the speed unit follows the page's settings.
    public var settings: WebSettings {
        var s = settingsCell.withLock { $0 }
        if let unit = bridge.settings.current.speedUnit { s.speedUnit = unit }
        return s
    }
    private let logger: Logger
    private let state = Mutex<(snapshotVersion: UInt64, bookVersion: UInt64, version: UInt64, json: String)>((0, 0, 0, ""))
    private let bookVersion = Atomic<UInt64>(1)

    /// Why: 20 Hz keeps the board under one frame of a phone's 60 Hz display behind
    /// the gate's state while costing 50 cheap version checks per second.
    public static let period: Duration = .milliseconds(50)
    /// Why: the board shows the latest runs; the history view pages through the rest.
    public static let boardResults = 10

    public init(bridge: GateBridge, book: any ResultsBook, settings: WebSettings, logger: Logger) {
        self.bridge = bridge
        self.book = book
        settingsCell = Mutex(settings)
        self.logger = logger
    }

    /// Replaces one read-only row of the settings view (e.g. where the gate line is now).
    public func setDetail(_ key: String, _ value: String) {
        settingsCell.withLock { $0.details[key] = value }
    }

    /// Tells the hub the book changed outside the loop's results (a delete, an assignment).
    public func bookChanged() { bookVersion.add(1, ordering: .relaxed) }

    /// Moves finished runs into the book and re-encodes the message if anything changed.
    /// Returns the message's version.
    @discardableResult
    public func refresh() -> UInt64 {
        while let run = bridge.results.pop() {
            // The storage thread already stored it; the board learns of it from `changeCount`.
            if book.storesRunsItself { continue }
            do {
                _ = try book.record(run)
            } catch {
                logger.error("cannot store a \(run.seconds) s run: \(error)")
            }
            bookChanged()
        }
        let (snapVersion, snap) = bridge.snapshot.read()
        let settings = self.settings
        let bv = bookVersion.load(ordering: .relaxed) &+ book.changeCount
        let current = state.withLock { ($0.snapshotVersion, $0.bookVersion) }
        if current == (snapVersion, bv) { return state.withLock { $0.version } }
        let b = bookPart(at: bv)
        return state.withLock { s in
            // Another thread may have built the same state meanwhile.
            if s.snapshotVersion == snapVersion && s.bookVersion == bv { return s.version }
            let msg = BoardMessage(version: s.version + 1, gate: snap,
                                   results: b.results.map { RunView(run: $0, speed: settings.speed(distance: $0.distanceMetres, seconds: $0.seconds)) },
                                   nextAthlete: b.nextAthlete, speedUnit: settings.speedUnit,
                                   droppedResults: bridge.results.dropped, newBest: b.newBest, bookVersion: bv, roster: b.roster)
            s.json = (try? String(decoding: JSONEncoder.board.encode(msg), as: UTF8.self)) ?? "{}"
            s.snapshotVersion = snapVersion
            s.bookVersion = bv
            s.version += 1
            return s.version
        }
    }

    /// What the board shows from the book: read again only when the book's version
    /// moved, not with every change of the gate's state (10 a second).
    private struct BookPart {
        var version: UInt64
        var results: [RunRecord]
        var nextAthlete: Athlete?
        var newBest: BestNews?
        var roster: [Athlete]
    }
    private let bookCache = Mutex<BookPart?>(nil)

    private func bookPart(at version: UInt64) -> BookPart {
        if let cached = bookCache.withLock({ $0 }), cached.version == version { return cached }
        let results = (try? book.history(HistoryQuery.latest(Self.boardResults))) ?? []
        let part = BookPart(version: version, results: results, nextAthlete: book.nextRunAthlete(),
                            newBest: results.first.flatMap(news), roster: (try? book.roster()) ?? [])
        bookCache.withLock { $0 = part }
        return part
    }

    /// `run` as news of a personal best, when it is one for an athlete.
    private func news(_ run: RunRecord) -> BestNews? {
        guard run.personalBest, let name = run.athleteName else { return nil }
        let previous = (try? book.bestBefore(runID: run.id)) ?? nil
        return BestNews(runID: run.id, athleteName: name, seconds: run.seconds, startType: run.startType,
                        distanceMetres: run.distanceMetres, previousBestSeconds: previous,
                        improvementSeconds: previous.map { $0 - run.seconds })
    }

    /// The current message and its version.
    public func message() -> (version: UInt64, json: String) {
        state.withLock { ($0.version, $0.json) }
    }

    /// The text sent to a client: the board message wrapped with the gate's monotonic
    /// `now` (ns), so the page can run the clock from `gate.runStartMonoNs`.
    public func framed(now: Int64) -> (version: UInt64, text: String) {
        let (v, json) = message()
        return (v, "{\"nowMonoNs\":\(now),\"board\":\(json)}")
    }

    public func run() async throws {
        logger.info("live board hub running at \(Int(1 / (Double(Self.period.components.attoseconds) * 1e-18))) Hz")
        while !Task.isCancelled {
            refresh()
            try? await Task.sleep(for: Self.period)
            if Task.isShuttingDownGracefully { break }
        }
    }
}

extension HistoryQuery {
    static func latest(_ n: Int) -> HistoryQuery {
        var q = HistoryQuery()
        q.limit = n
        return q
    }
}

extension JSONEncoder {
    static var board: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys]
        return e
    }
}

/// CLOCK_MONOTONIC now, nanoseconds (the gate loop's time domain).
func monotonicNowNs() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}
