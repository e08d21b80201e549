// SPDX-License-Identifier: Apache-2.0
// Timed runs' videos on a gate: each stored run's clip asked of the video thread while the
// delay mode is on, the page's uploads, and the run's times drawn on either.

import Engine
import FFmpegVideo
import Foundation
import GateCore
import Logging
public import SQLiteStore
import Synchronization
public import VideoDelay
public import VideoService
public import WebUI

/// The gate's run videos: the shelf under `STATE_DIR/run-videos`, open whether the delay
/// mode is on or not (a run's video stays downloadable), and the video thread while it is.
public final class GateRunVideos: RunVideoDesk {
    public let shelf: RunVideoShelf
    public let defaultParts: Set<OverlayPart>
    private let video = Mutex<DelayVideo?>(nil)

    public init(shelf: RunVideoShelf, defaultParts: Set<OverlayPart>) {
        self.shelf = shelf
        self.defaultParts = defaultParts
    }

    /// The video thread whose ring the runs' clips are cut from; nil while the mode is off.
    public func attach(_ v: DelayVideo?) { video.withLock { $0 = v } }

    /// A run the store has written (writer thread): its clip is asked for when the delay
    /// mode is on and the run has a time (not a false start).
    public func committed(_ c: CommittedRun) {
        guard let id = c.run.id, let total = c.run.totalNs, total > 0, !c.run.falseStart, c.run.startMonoNs > 0,
              let v = video.withLock({ $0 }) else { return }
        let start = MonotonicInstant(nanoseconds: c.run.startMonoNs)
        v.clipRun(id: id, start: start, finish: start + Span(nanoseconds: total))
    }

    public func videos(run: Int64) -> [RunVideoRecord] { shelf.videos(run: run) }

    public func file(run: Int64, source: RunVideoSource) -> String? {
        shelf.video(run: run, source: source) == nil ? nil : shelf.path(run: run, source: source)
    }

    public var uploadDirectory: String { shelf.directory }

    public func drawn(run: RunRecord, source: RunVideoSource, parts: Set<OverlayPart>, speedUnit: String) throws(VideoDeskError) -> String {
        try desk("source") { () throws(ClipLibraryError) in
            try shelf.drawn(run: run.id, source: source, facts: Self.facts(run, speedUnit: speedUnit), parts: parts)
        }
    }

    public func importVideo(run: Int64, from path: String) throws(VideoDeskError) -> RunVideoRecord {
        try desk("video") { () throws(ClipLibraryError) in try shelf.importVideo(run: run, from: path) }
    }

    public func setStart(run: Int64, seconds: Double) throws(VideoDeskError) -> RunVideoRecord {
        try desk("seconds") { () throws(ClipLibraryError) in try shelf.setStart(run: run, seconds: seconds) }
    }

    public func delete(run: Int64, source: RunVideoSource) { shelf.delete(run: run, source: source) }

    public func runs() -> Set<Int64> { RunVideoSource.allCases.reduce(into: []) { $0.formUnion(shelf.runs(with: $1)) } }

    private func desk<T>(_ field: String, _ body: () throws(ClipLibraryError) -> T) throws(VideoDeskError) -> T {
        try deskCall(field, unknown: "source", body)
    }

    /// What the overlay draws for a run: its preset's title (or start type and distance),
    /// athlete, time, every gate before the finish with its segment speed, and the average
    /// speed in the page's unit.
    public static func facts(_ r: RunRecord, speedUnit: String) -> RunOverlayFacts {
        func speed(_ metresPerSecond: Double) -> String {
            switch speedUnit {
            case "km/h": return String(format: "%.1f km/h", metresPerSecond * 3.6)
            case "mph": return String(format: "%.1f mph", metresPerSecond * 3600 / 1609.344)
            default: return String(format: "%.2f m/s", metresPerSecond)
            }
        }
        func metres(_ d: Double) -> String { d == d.rounded() ? "\(Int(d)) m" : String(format: "%.1f m", d) }
        var title = Preset.all.first { $0.id == r.preset }?.title ?? ""
        if title.isEmpty {
            let type: [String: String] = ["flying": "Flying", "button-release": "Button start", "countdown": "Countdown start",
                                          "voice": "Voice start", "in-frame": "In-frame start"]
            title = [type[r.startType] ?? r.startType, r.distanceMetres.map(metres)].compactMap { $0 }.joined(separator: " · ")
        }
        var splits: [RunOverlayFacts.Split] = []
        if !r.legs.isEmpty {
            // Gate 0 is the start (no time to show); the last leg is the finish.
            for (i, leg) in r.legs.enumerated() where leg.seconds > 0 && leg.seconds < r.seconds - 1e-6 {
                splits.append(.init(label: leg.distanceMetres.map(metres) ?? "Split \(i)", seconds: leg.seconds,
                                    speed: leg.segmentSpeed.map(speed)))
            }
        } else {
            for (i, t) in r.splits.enumerated() where t > 0 && t < r.seconds - 1e-6 {
                splits.append(.init(label: "Split \(i + 1)", seconds: t, speed: nil))
            }
        }
        let average = r.distanceMetres.flatMap { d in r.seconds > 0 ? speed(d / r.seconds) : nil }
        return RunOverlayFacts(title: title, athlete: r.athleteName, total: r.seconds, splits: splits, speed: average)
    }
}
