// SPDX-License-Identifier: Apache-2.0
// The hub's Bluetooth side through the real kernel stack, in the qemu rig
// (`scripts/sim-tier` runs this suite beside LinuxHardwareTests; elsewhere it is skipped): two virtual LE controllers from
// BlueZ's btvirt (hci_vhci) in the rig, an emulated PM5 (PM5Emulator's GATT server) on
// hci1 advertising and accepting on an L2CAP ATT socket, the hub on hci0 connecting to it
// and running PM5Link: discovery, device information, subscriptions, a piece's
// notifications recorded (malformed ones dropped and counted), a workout written to the
// control characteristic and answered. Then the hub as the daemon runs it (BluetoothErgs
// into RowingHub and SQLite) across the emulated PM5 going out of reach mid-piece.

import Foundation
import GateDaemon
import LinuxHardware
import Logging
import Rowing
import SQLiteStore
import Synchronization
import Testing
import WebUI

enum BluetoothRig {
    static func env(_ name: String) -> String? {
        guard let p = getenv(name) else { return nil }
        let s = String(cString: p)
        return s.isEmpty ? nil : s
    }

    /// Inside the rig with btvirt's two controllers (`scripts/sim-tier` starts it).
    static var available: Bool {
        env("SPRINTGATE_RIG") == "1" && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci0")
            && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci1")
    }

    /// Both controllers up with no link between them: a link left by an earlier test
    /// would carry the next connection's ATT channel without the peripheral accepting it.
    static func fresh() throws {
        try BlueZController.powerOn(0)
        try BlueZController.powerOn(1)
        try? BlueZController.advertise(1, false)
        var dropped = try BlueZController.dropLinks(0) + BlueZController.dropLinks(1)
        var waited = 0
        while dropped > 0 && waited < 50 {
            usleep(100_000)
            waited += 1
            dropped = try BlueZController.dropLinks(0) + BlueZController.dropLinks(1)
        }
    }
}

/// One suite, one test after another: both use the same two controllers.
@Suite("Bluetooth LE on two virtual controllers", .serialized, .enabled(if: BluetoothRig.available))
enum BluetoothRigTests {
    struct BlueZATTRigTests {
        @Test("a PM5 emulated on hci1 and the hub on hci0: discovered, subscribed, every stroke that arrived whole recorded, a workout taken")
        func pm5OverTheKernel() throws {
            try BluetoothRig.fresh()
            let pm5 = try BlueZController.address(1)
            let listener = try ATTListener(controller: 1)
            try BlueZController.advertise(1, true)
            var piece = PM5Piece()
            piece.distance = 500
            piece.malformedEvery = 17
            let truth = piece.events()
            let notifications = truth.events.compactMap { e -> (UInt16, [UInt8])? in
                if case .notification(_, _, let c, let b) = e { (c, b) } else { nil }
            }
            let emulated = Mutex<(workouts: [PM5Workout], sent: Int, problem: String?)>(([], 0, nil))
            let emulator = Thread {
                do throws(BlueZError) {
                    guard let ch = try listener.accept(timeout: 60) else {
                        emulated.withLock { $0.problem = "no central connected within 60 s" }
                        return
                    }
                    var emu = PM5Emulator()
                    var next = 0
                    while true {
                        if let pdu = try ch.receive(timeout: 0.002) {
                            for r in emu.handle(pdu) { try ch.send(r) }
                        }
                        // Once subscribed, the piece's notifications, a few at a time.
                        if emu.subscribed.count == 11, next < notifications.count {
                            for _ in 0..<4 where next < notifications.count {
                                let (c, b) = notifications[next]
                                if let n = emu.notify(c, b) { try ch.send(n) }
                                next += 1
                            }
                        }
                        let w = emu.workouts
                        emulated.withLock { $0.sent = next; $0.workouts = w }
                    }
                } catch {
                    // The hub closing the link ends the emulator.
                }
            }
            emulator.start()

            let ch = try ATTChannel.connect(from: 0, to: pm5, timeout: 60)
            var link = PM5Link(sampleRate: .halfSecond)
            var recorder = ErgRecorder()
            var info: [UInt16: String] = [:]
            var answers: [[UInt8]] = []
            var ready = false
            let t0 = Date()
            func handle(_ events: [PM5Link.Event]) throws {
                for e in events {
                    switch e {
                    case .send(let b): try ch.send(b)
                    case .notification(0x0022, let b): answers.append(b)
                    case .notification(let c, let b): recorder.receive(characteristic: c, b, at: Date().timeIntervalSince(t0))
                    case .information(let c, let t): info[c] = t
                    case .ready: ready = true
                    case .problem(let why): Issue.record("PM5 link: \(why)")
                    }
                }
            }
            try handle(link.start())
            let deadline = Date().addingTimeInterval(180)
            while recorder.summary == nil && Date() < deadline {
                if let pdu = try ch.receive(timeout: 0.5) { try handle(link.receive(pdu)) }
            }
            #expect(ready && info[0x0012] == "430123456" && info[0x0015] == "Concept2")
            #expect(recorder.strokes.map(\.data.strokeCount) == truth.strokesArrived)
            #expect(recorder.dropped == truth.malformed && truth.malformed > 0)
            #expect(recorder.summary?.distance == 500)
            // A workout for all ergs, written as the hub writes it.
            let w = PM5Workout.distance(metres: 2000, split: 500)
            for f in try w.frames() { try handle(link.writeControl(f)) }
            while answers.isEmpty && Date() < deadline {
                if let pdu = try ch.receive(timeout: 0.5) { try handle(link.receive(pdu)) }
            }
            #expect(answers.count == 1 && (try? PM5ConfigAnswer(frame: answers[0]))?.problem == nil)
            #expect(emulated.withLock { $0.workouts } == [w])
            print("PM5 over two virtual controllers: \(notifications.count) notifications sent, \(recorder.strokes.count) strokes recorded of \(truth.strokesSent.count) (\(truth.malformed) sent malformed), in \(String(format: "%.1f", Date().timeIntervalSince(t0))) s")
            ch.close()
            listener.close()
            try? BlueZController.advertise(1, false)
            try? BlueZController.dropLinks(1)
            #expect(emulated.withLock { $0.problem } == nil)
        }
    
        @Test("the hub over Bluetooth: the PM5 goes out of reach mid-piece and comes back; every stroke that arrived stored once, the gap marked with its strokes; a workout set through the hub")
        func hubAcrossAnOutage() throws {
            try BluetoothRig.fresh()
            let pm5 = try BlueZController.address(1)
            let listener = try ATTListener(controller: 1)
            try BlueZController.advertise(1, true)
            var piece = PM5Piece()
            piece.distance = 1000
            piece.malformedEvery = 23
            piece.outOfReach = 100...120
            let truth = piece.events()
            let events = truth.events
            let problem = Mutex<String?>(nil)
            let sentUpTo = Atomic(0)
            let emulator = Thread {
                var i = 1  // past the piece's first "connected"
                var workouts: [PM5Workout] = []
                do throws(BlueZError) {
                    while true {
                        guard let ch = try listener.accept(timeout: 60) else {
                            problem.withLock { $0 = "no central connected within 60 s" }
                            return
                        }
                        var emu = PM5Emulator()
                        serving: while true {
                            if let pdu = try ch.receive(timeout: 0.002) {
                                for r in emu.handle(pdu) { try ch.send(r) }
                                workouts = emu.workouts
                            }
                            sentUpTo.store(i, ordering: .relaxed)
                            guard emu.subscribed.count == 11 else { continue }
                            for _ in 0..<4 where i < events.count {
                                switch events[i] {
                                case .notification(_, _, let c, let b):
                                    if let n = emu.notify(c, b) { try ch.send(n) }
                                    i += 1
                                case .connected:
                                    i += 1
                                case .disconnected:
                                    // Out of reach: the link drops; the PM5 advertises again.
                                    i += 1
                                    try BlueZController.dropLinks(1)
                                    ch.close()
                                    try BlueZController.advertise(1, true)
                                    break serving
                                }
                            }
                        }
                    }
                } catch {
                    // The hub stopping ends the emulator.
                }
                _ = workouts
            }
            emulator.start()

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-bt-hub-\(getpid())").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try RunStore(directory: directory, logger: Logger(label: "test"))
            let t0 = Date()
            let clock: @Sendable () -> Double = { Date().timeIntervalSince(t0) }
            let hub = RowingHub(store: store, control: nil, source: "Bluetooth hci0", logger: Logger(label: "test"), clock: clock)
            let erg = try #require(BluetoothErgs.Erg(number: 1, address: pm5.description))
            let ergs = BluetoothErgs(ergs: [erg], controller: 0, sampleRate: .halfSecond, logger: Logger(label: "test"), clock: clock) { hub.apply($0) }
            hub.setControl(ergs)
            hub.add(erg: 1, name: "PM5 430123456")
            try hub.assign(erg: 1, athlete: "Ada")
            ergs.start()
            defer {
                ergs.stop()
                listener.close()
                try? BlueZController.advertise(1, false)
                try? BlueZController.dropLinks(1)
            }
            let deadline = Date().addingTimeInterval(Double(BluetoothRig.env("BT_DEADLINE") ?? "240") ?? 240)
            while hub.rowingLive().board.tiles.first?.finished != true && Date() < deadline { usleep(50_000) }
            hub.flush()
            let tile = hub.rowingLive().board.tiles.first
            print("after the piece: emulator at event \(sentUpTo.load(ordering: .relaxed)) of \(events.count); tile strokes \(tile?.strokes ?? -1), distance \(tile?.distance ?? -1), connected \(tile?.connected ?? false), gaps \(tile?.gaps ?? -1)")
            let sessions = try store.ergSessions()
            let s = try #require(sessions.first, "no session stored; emulator: \(problem.withLock { $0 } ?? "ok")")
            let strokes = try store.ergStrokes(sessionID: s.id).map { UInt16($0.stroke) }
            #expect(strokes == truth.strokesArrived)
            let gaps = try store.ergGaps(sessionID: s.id)
            let rowedInGap = truth.strokesSent.filter { !truth.strokesArrived.contains($0) }.count - truth.malformed
            #expect(gaps.count == 1 && gaps[0].missedStrokes == rowedInGap && rowedInGap > 0)
            #expect(s.summary?.distance == 1000 && s.athlete == "Ada")
            let results = try hub.program(.distance(metres: 2000, split: 500))
            #expect(results.count == 1 && results[0].accepted, "\(results)")
            print("hub over Bluetooth across an outage: \(truth.strokesSent.count) strokes rowed, \(strokes.count) stored "
                  + "(\(truth.strokesArrived.count) arrived whole, \(truth.malformed) malformed, \(rowedInGap) in the gap), in \(String(format: "%.1f", clock())) s")
        }
    }
}
