// SPDX-License-Identifier: Apache-2.0
// The ski track logger's tracks in SQLite: recording across a restart, fixes stored once,
// imports, and what is refused.

import Foundation
import GateCore
import SQLiteStore
import Testing

@Suite struct SkiTrackStoreTests {
    static func point(_ s: Int64, alt: Double = 2000) -> SkiTrackPoint {
        SkiTrackPoint(timeNs: (1_768_467_600 + s) * 1_000_000_000, latitude: 46 + Double(s) * 1e-5, longitude: 7, altitude: alt, speed: 5)
    }

    @Test func aTrackRecordedAcrossARestartKeepsEveryFixOnce() throws {
        let dir = TempDir()
        var store = try openStore(dir)
        #expect(try store.recordingSkiTrack() == nil)
        let t = try store.startSkiTrack(name: "  Verbier  ", sport: .snowboard, wallTime: 1_768_467_000)
        #expect(t.name == "Verbier" && t.sport == .snowboard && t.source == .gate && t.recording && t.points == 0)
        // One receiver, one track.
        #expect(throws: StoreError.self) { try store.startSkiTrack(name: "", sport: .ski, wallTime: 1_768_467_001) }
        try store.appendSkiPoints(trackID: t.id, (0 ..< 10).map { Self.point($0) })
        // The gate restarts: the track is still being recorded, with its fixes.
        store = try openStore(dir)
        let again = try #require(try store.recordingSkiTrack())
        #expect(again.id == t.id && again.points == 10)
        // A fix sent again (the same instant) is stored once.
        #expect(try store.appendSkiPoints(trackID: t.id, (8 ..< 20).map { Self.point($0) }) == 10)
        #expect(throws: StoreError.self) { try store.deleteSkiTrack(id: t.id) }
        try store.stopSkiTrack(id: t.id, wallTime: 1_768_470_000)
        #expect(throws: StoreError.self) { try store.stopSkiTrack(id: t.id, wallTime: 1_768_470_001) }
        let stopped = try store.skiTrack(id: t.id)
        #expect(!stopped.recording && stopped.points == 20 && stopped.endedWall == 1_768_470_000)
        #expect(stopped.firstNs == Self.point(0).timeNs && stopped.lastNs == Self.point(19).timeNs)
        let pts = try store.skiPoints(trackID: t.id)
        #expect(pts == (0 ..< 20).map { Self.point($0) })
        #expect(try store.recordingSkiTrack() == nil)
        #expect(try store.integrityCheck() == ["ok"])
    }

    @Test func importsRenamesAndDeletes() throws {
        let dir = TempDir()
        let store = try openStore(dir)
        // Out of order in, in order out.
        let imported = try store.importSkiTrack(name: "From a watch", sport: .ski, wallTime: 1_768_500_000,
                                                points: [Self.point(5), Self.point(1), Self.point(3)])
        #expect(imported.source == .gpx && !imported.recording && imported.points == 3)
        #expect(try store.skiPoints(trackID: imported.id).map(\.timeNs) == [1, 3, 5].map { Self.point($0).timeNs })
        #expect(throws: StoreError.self) { try store.importSkiTrack(name: "", sport: .ski, wallTime: 0, points: []) }
        #expect(throws: StoreError.self) { try store.importSkiTrack(name: String(repeating: "x", count: 81), sport: .ski, wallTime: 0, points: [Self.point(1)]) }
        let gate = try store.startSkiTrack(name: "", sport: .ski, wallTime: 1_768_600_000)
        #expect(try store.skiTracks().map(\.id) == [gate.id, imported.id])
        try store.updateSkiTrack(id: imported.id, name: "Watch", sport: .snowboard)
        try store.updateSkiTrack(id: imported.id, name: nil, sport: nil)
        let changed = try store.skiTrack(id: imported.id)
        #expect(changed.name == "Watch" && changed.sport == .snowboard)
        #expect(throws: StoreError.self) { try store.updateSkiTrack(id: 999, name: "x", sport: nil) }
        try store.deleteSkiTrack(id: imported.id)
        #expect(try store.skiPoints(trackID: imported.id).isEmpty)
        #expect(throws: StoreError.self) { try store.skiTrack(id: imported.id) }
        #expect(throws: StoreError.self) { try store.deleteSkiTrack(id: imported.id) }
    }
}
