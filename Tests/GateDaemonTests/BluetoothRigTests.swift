// SPDX-License-Identifier: Apache-2.0
// The hub's Bluetooth side through the real kernel stack, in the qemu rig
// (`scripts/sim-tier` runs this suite after LinuxHardwareTests; elsewhere it is skipped):
// virtual LE controllers from BlueZ's btvirt (hci_vhci), with bluetoothd running. An
// emulated PM5 (PM5Emulator's GATT server) on hci1 advertises and accepts on an L2CAP ATT
// socket; the hub on hci0 connects and runs PM5Link: discovery, device information,
// subscriptions, a piece's notifications recorded (malformed ones dropped and counted), a
// workout written to the control characteristic and answered. Then the hub as the daemon
// runs it (BluetoothErgs into RowingHub and SQLite) across the PM5 going out of reach
// mid-piece. Then the daemon's `[rowing]` (BluetoothRowing): a scan finds eight emulated
// PM5s (as many as sim-tier's controllers allow), the coach picks them, and all of them row
// into the hub at once.

import Foundation
import GATT
import GateConfig
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

    /// Inside the rig with btvirt's controllers (`scripts/sim-tier` starts it).
    static var available: Bool {
        env("SPRINTGATE_RIG") == "1" && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci0")
            && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci1")
    }

    /// Waits until `count` of the hub's pieces are stored with their PM5 summaries, or
    /// until `deadline`. Why not the tiles' "finished": the general status that says so comes
    /// before the summary's notification, so a piece can be finished and its summary not yet
    /// received.
    static func waitForSummaries(_ hub: RowingHub, count: Int, deadline: Date) {
        while Date() < deadline {
            hub.flush()
            if hub.rowingLive().sessions.filter({ $0.summary != nil }).count >= count { return }
            usleep(100_000)
        }
    }

    /// btvirt's controllers: hci0 for the hub, the others for emulated PM5s.
    static var controllers: Int {
        var n = 0
        while FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci\(n)") { n += 1 }
        return n
    }

    /// Every controller up with no link between them: a link left by an earlier test
    /// would carry the next connection's ATT channel without the peripheral accepting it.
    static func fresh() throws {
        let all = 0..<controllers
        for c in all {
            try BlueZController.powerOn(c)
            if c > 0 { try? BlueZController.advertise(c, false) }
        }
        func drop() throws -> Int { try all.reduce(0) { n, c in try n + BlueZController.dropLinks(c) } }
        var dropped = try drop()
        var waited = 0
        while dropped > 0 && waited < 50 {
            usleep(100_000)
            waited += 1
            dropped = try drop()
        }
    }
}

/// A PM5 emulated on controller hciN: it advertises as a PM5 does (its service, and its
/// name in the scan response), accepts the hub and plays a piece's events once the hub has
/// subscribed. A disconnect in the piece drops the link (HCI Disconnect) and advertises
/// again, as a PM5 going out of reach and coming back.
final class EmulatedPM5: @unchecked Sendable {
    let controller: Int
    let serial: String
    let address: BluetoothAddress
    let truth: PM5Piece.Result
    let problem = Mutex<String?>(nil)
    let sentUpTo = Atomic(0)
    let workouts = Mutex<[PM5Workout]>([])
    /// The piece starts once this is true (the hub subscribed first).
    let go: Atomic<Bool>
    private let listener: ATTListener
    private let stopping = Atomic(false)
    private var thread: Thread?

    init(controller: Int, serial: String, piece: PM5Piece, waitForGo: Bool = false) throws {
        go = Atomic(!waitForGo)
        self.controller = controller
        self.serial = serial
        truth = piece.events()
        address = try BlueZController.address(controller)
        listener = try ATTListener(controller: controller)
        try BlueZController.setAdvertising(controller, data: AdvertisingData.advertisement(services: [PM5Finder.service]),
                                           scanResponse: AdvertisingData.scanResponse(name: "PM5 " + serial))
        try BlueZController.advertise(controller, true)
        let t = Thread { [self] in run() }
        t.name = "pm5-emulator-\(controller)"
        thread = t
        t.start()
    }

    private func run() {
        let events = truth.events
        var i = 1  // past the piece's first "connected"
        // Every central that connects is served (the hub, and the rig's filler links, which
        // only hold a connection); the piece goes to the one that subscribed.
        var links: [(ch: ATTChannel, emu: PM5Emulator)] = []
        do throws(BlueZError) {
            while !stopping.load(ordering: .relaxed) {
                if let ch = try listener.accept(timeout: links.isEmpty ? 0.5 : 0) {
                    links.append((ch, PM5Emulator(name: "PM5 " + serial, serial: serial)))
                }
                var k = 0
                while k < links.count {
                    do throws(BlueZError) {
                        if let pdu = try links[k].ch.receive(timeout: links.count > 1 ? 0 : 0.002) {
                            // A workout taken is published before its answer goes out:
                            // the test reads it as soon as the answer arrives.
                            let replies = links[k].emu.handle(pdu)
                            let w = links[k].emu.workouts
                            if !w.isEmpty { workouts.withLock { $0 = w } }
                            for r in replies { try links[k].ch.send(r) }
                        }
                        k += 1
                    } catch {
                        links[k].ch.close()
                        links.remove(at: k)
                    }
                }
                sentUpTo.store(i, ordering: .relaxed)
                guard go.load(ordering: .relaxed), let h = links.firstIndex(where: { $0.emu.subscribed.count == 11 }) else {
                    if links.count > 1 { usleep(1000) }
                    continue
                }
                for _ in 0..<4 where i < events.count {
                    switch events[i] {
                    case .notification(_, _, let c, let b):
                        if let n = links[h].emu.notify(c, b) { try links[h].ch.send(n) }
                        i += 1
                    case .connected:
                        i += 1
                    case .disconnected:
                        // Out of reach: the link drops (every link of this controller);
                        // the PM5 advertises again.
                        i += 1
                        // Why wait: the HCI Disconnect is a command, and commands overtake
                        // the link's data still queued for the controller; what the piece
                        // says arrived must have left before the PM5 goes out of reach.
                        let until = Date().addingTimeInterval(5)
                        while links[h].ch.unsentBytes > 0, Date() < until { usleep(2_000) }
                        usleep(100_000)
                        try BlueZController.dropLinks(controller)
                        for l in links { l.ch.close() }
                        links = []
                        try BlueZController.advertise(controller, true)
                    }
                    if links.isEmpty { break }
                }
            }
        } catch {
            if !stopping.load(ordering: .relaxed) { problem.withLock { $0 = "\(error)" } }
        }
        for l in links { l.ch.close() }
    }

    func stop() {
        stopping.store(true, ordering: .relaxed)
        while thread.map({ !$0.isFinished }) ?? false { usleep(10_000) }
        listener.close()
        try? BlueZController.advertise(controller, false)
        try? BlueZController.dropLinks(controller)
    }
}

/// One suite, one test after another: they share the controllers.
@Suite("Bluetooth LE on btvirt's virtual controllers", .serialized, .enabled(if: BluetoothRig.available))
enum BluetoothRigTests {
    struct BlueZATTRigTests {
        @Test("a PM5 emulated on hci1 and the hub on hci0: discovered, subscribed, a workout of intervals with rests played; every stroke that arrived whole recorded in its interval, a workout taken")
        func pm5OverTheKernel() throws {
            try BluetoothRig.fresh()
            var piece = PM5Piece()
            piece.intervals = Array(repeating: PM5Workout.Interval(.metres(250), restSeconds: 20), count: 3)
            piece.malformedEvery = 17
            let pm5 = try EmulatedPM5(controller: 1, serial: "430123456", piece: piece)
            defer { pm5.stop() }
            let truth = pm5.truth
            let notifications = truth.events.filter { if case .notification = $0 { true } else { false } }.count

            let ch = try ATTChannel.connect(from: 0, to: pm5.address, timeout: 60)
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
            #expect(recorder.strokes.map(\.interval) == truth.intervalsArrived && Set(truth.intervalsArrived) == [1, 2, 3])
            #expect(recorder.restarts == 0 && recorder.zeroedStrokes == 2 && recorder.splits.map(\.splitNumber) == [1, 2, 3])
            #expect(recorder.dropped == truth.malformed && truth.malformed > 0)
            #expect(recorder.summary?.distance == 750)
            // A workout for all ergs, written as the hub writes it.
            let w = PM5Workout.distance(metres: 2000, split: 500)
            for f in try w.frames() { try handle(link.writeControl(f)) }
            while answers.isEmpty && Date() < deadline {
                if let pdu = try ch.receive(timeout: 0.5) { try handle(link.receive(pdu)) }
            }
            #expect(answers.count == 1 && (try? PM5ConfigAnswer(frame: answers[0]))?.problem == nil)
            #expect(pm5.workouts.withLock { $0 } == [w])
            print("PM5 over two virtual controllers: \(notifications) notifications sent, \(recorder.strokes.count) strokes recorded of \(truth.strokesSent.count) (\(truth.malformed) sent malformed), in \(String(format: "%.1f", Date().timeIntervalSince(t0))) s")
            ch.close()
            #expect(pm5.problem.withLock { $0 } == nil)
        }
    
        @Test("the hub over Bluetooth: the PM5 goes out of reach mid-piece and comes back; every stroke that arrived stored once, the gap marked with its strokes; a workout set through the hub")
        func hubAcrossAnOutage() throws {
            try BluetoothRig.fresh()
            var piece = PM5Piece()
            piece.distance = 1000
            piece.malformedEvery = 23
            piece.outOfReach = 100...120
            let pm5 = try EmulatedPM5(controller: 1, serial: "430123456", piece: piece)
            defer { pm5.stop() }
            let truth = pm5.truth
            let events = truth.events

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-bt-hub-\(getpid())").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try RunStore(directory: directory, logger: Logger(label: "test"))
            let t0 = Date()
            let clock: @Sendable () -> Double = { Date().timeIntervalSince(t0) }
            let hub = RowingHub(store: store, control: nil, source: "Bluetooth hci0", logger: Logger(label: "test"), clock: clock)
            let erg = try #require(BluetoothErgs.Erg(number: 1, address: pm5.address.description))
            let ergs = BluetoothErgs(ergs: [erg], controller: 0, sampleRate: .halfSecond, logger: Logger(label: "test"), clock: clock) { hub.apply($0) }
            hub.setControl(ergs)
            hub.add(erg: 1, name: "PM5 430123456")
            try hub.assign(erg: 1, athlete: "Ada")
            ergs.start()
            defer { ergs.stop() }
            let deadline = Date().addingTimeInterval(Double(BluetoothRig.env("BT_DEADLINE") ?? "240") ?? 240)
            BluetoothRig.waitForSummaries(hub, count: 1, deadline: deadline)
            let tile = hub.rowingLive().board.tiles.first
            print("after the piece: emulator at event \(pm5.sentUpTo.load(ordering: .relaxed)) of \(events.count); tile strokes \(tile?.strokes ?? -1), distance \(tile?.distance ?? -1), connected \(tile?.connected ?? false), gaps \(tile?.gaps ?? -1)")
            let sessions = try store.ergSessions()
            let s = try #require(sessions.first, "no session stored; emulator: \(pm5.problem.withLock { $0 } ?? "ok")")
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

    struct BoathouseRowRigTests {
        @Test("the daemon's hub: a scan finds every emulated PM5 by name with bluetoothd running, the coach picks them all, all stream into one hub at once; one goes out of reach and comes back; every stroke that arrived stored once")
        func scanPickAndRow() throws {
            try BluetoothRig.fresh()
            // Half the controllers but the hub's are PM5s, the rest fillers (below).
            let count = BluetoothRig.controllers / 2
            try #require(count >= 2, "btvirt made \(BluetoothRig.controllers) controllers; the test needs four or more")
            // sim-tier says when it started bluetoothd; it must still be running.
            if BluetoothRig.env("SPRINTGATE_BLUETOOTHD") == "1" {
                let running = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).contains { pid in
                    (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("bluetoothd") == true
                }
                #expect(running, "bluetoothd is not running beside the hub")
                print("bluetoothd running beside the hub: \(running)")
            }
            let t0 = Date()
            let clock: @Sendable () -> Double = { Date().timeIntervalSince(t0) }
            var pm5s: [EmulatedPM5] = []
            defer { for p in pm5s { p.stop() } }
            for c in 1...count {
                var piece = PM5Piece()
                piece.distance = 300
                piece.sampleRate = .halfSecond
                piece.malformedEvery = c == 2 ? 13 : 0
                // The first erg goes out of reach for a stretch of its piece.
                if c == 1 { piece.outOfReach = 30...45 }
                pm5s.append(try EmulatedPM5(controller: c, serial: "43000000\(c)", piece: piece, waitForGo: true))
            }
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-bt-row-\(getpid())").path
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let store = try RunStore(directory: directory, logger: Logger(label: "test"))
            var settings = RowingSettings()
            settings.controller = 0
            settings.sampleRateMs = 500
            var log = Logger(label: "test")
            log.logLevel = .debug
            let rowing = BluetoothRowing(settings: settings, store: store, stateDirectory: directory, logger: log, clock: clock)
            rowing.start()
            defer { rowing.stop() }

            // Why filler links: btvirt (BlueZ 5.66's emulator) passes a link's data on
            // under the sending controller's connection handle, so a link routes only while
            // both ends gave it the same handle. The hub's k-th link has its k-th handle; PM5
            // k is given k-1 links first (from the filler controllers, which only hold them),
            // so that its handle for the hub is its k-th too. A real controller has no such
            // limit; the hub connects the PM5s in the order picked, one after another.
            let fillers = Array((count + 1)..<BluetoothRig.controllers)
            var held: [ATTChannel] = []
            defer { for h in held { h.close() } }
            for (j, f) in fillers.enumerated() {
                for k in (j + 2)...count {
                    held.append(try ATTChannel.connect(from: f, to: pm5s[k - 1].address, timeout: 20))
                    try? BlueZController.advertise(k, true)
                }
            }

            // The coach's scan: every PM5 found with its name and address.
            try rowing.hub.scanPM5s()
            var deadline = Date().addingTimeInterval(40)
            func named() -> [FoundPM5] { rowing.bluetooth.found.filter { $0.name != nil } }
            while named().count < count, Date() < deadline { usleep(100_000) }
            let found = named()
            print("scan: \(found.count) of \(count) PM5s found in \(String(format: "%.1f", clock())) s: \(found.map { "\($0.name ?? "?") \($0.address) \($0.rssi.map(String.init) ?? "-") dBm" })")
            #expect(Set(found.compactMap(\.name)) == Set(pm5s.map { "PM5 " + $0.serial }))
            #expect(Set(found.map(\.address)) == Set(pm5s.map(\.address.description)))
            #expect(rowing.bluetooth.scanProblem == nil, "\(rowing.bluetooth.scanProblem ?? "")")

            // Picked on the page, in the scan's order; each becomes an erg.
            var ergOf: [String: Int] = [:]
            for p in pm5s {
                let erg = try rowing.hub.pickPM5(address: p.address.description)
                ergOf[p.address.description] = erg
                try rowing.hub.assign(erg: erg, athlete: "Rower \(p.controller)")
                let until = Date().addingTimeInterval(30)
                while rowing.hub.rowingLive().board.tiles.first(where: { $0.erg == erg })?.connected != true, Date() < until { usleep(50_000) }
            }
            // All connected: every PM5 rows its piece at once.
            #expect(rowing.hub.rowingLive().board.tiles.filter(\.connected).count == count)
            for p in pm5s { p.go.store(true, ordering: .relaxed) }

            deadline = Date().addingTimeInterval(Double(BluetoothRig.env("BT_DEADLINE") ?? "300") ?? 300)
            BluetoothRig.waitForSummaries(rowing.hub, count: count, deadline: deadline)
            let live = rowing.hub.rowingLive()
            print("after the pieces: \(live.board.tiles.map { "erg \($0.erg) \($0.strokes) strokes \(Int($0.distance ?? 0)) m gaps \($0.gaps) \($0.finished ? "finished" : "unfinished")" }) in \(String(format: "%.1f", clock())) s")
            let sessions = try store.ergSessions()
            var rowed = 0, stored = 0, arrived = 0, inGaps = 0
            for p in pm5s {
                let s = try #require(sessions.first { $0.athlete == "Rower \(p.controller)" }, "no session for PM5 \(p.controller); emulator: \(p.problem.withLock { $0 } ?? "ok"), at event \(p.sentUpTo.load(ordering: .relaxed)) of \(p.truth.events.count)")
                let strokes = try store.ergStrokes(sessionID: s.id).map { UInt16($0.stroke) }
                #expect(strokes == p.truth.strokesArrived, "PM5 \(p.controller)")
                #expect(s.summary?.distance == 300)
                let gaps = try store.ergGaps(sessionID: s.id)
                let missed = p.truth.strokesSent.filter { !p.truth.strokesArrived.contains($0) }.count - p.truth.malformed
                #expect(gaps.reduce(0) { $0 + ($1.missedStrokes ?? 0) } == missed, "PM5 \(p.controller): gaps \(gaps)")
                if p.controller == 1 { #expect(gaps.count == 1 && missed > 0) }
                rowed += p.truth.strokesSent.count
                stored += strokes.count
                arrived += p.truth.strokesArrived.count
                inGaps += missed
                #expect(p.problem.withLock { $0 } == nil)
            }
            #expect(sessions.count == count)
            // One workout on every erg at once.
            let results = try rowing.hub.program(.distance(metres: 2000, split: 500))
            #expect(results.count == count && results.allSatisfy(\.accepted), "\(results)")
            print("\(count) PM5s over Bluetooth into one hub: \(rowed) strokes rowed, \(arrived) arrived whole, \(stored) stored, \(inGaps) in the gap; workout taken by \(results.filter(\.accepted).count) in \(String(format: "%.1f", clock())) s")
        }
    }

    struct BlueZGATTServerRigTests {
        @Test("a PM5 made of bluetoothd's own GATT server (its D-Bus API) on hci1: found by the scan while bluetoothd discovers too, picked, every stroke that arrived whole stored, the malformed ones counted")
        func bluezGATTServer() throws {
            guard BluetoothRig.env("SPRINTGATE_BLUETOOTHD") == "1" else {
                print("SKIP: bluetoothd is not running (scripts/sim-tier starts it)")
                return
            }
            try BluetoothRig.fresh()
            var piece = PM5Piece()
            piece.distance = 500
            piece.malformedEvery = 17
            let truth = piece.events()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sprintgate-bt-dbus-\(getpid())").path
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let log = directory + "/piece.log"
            try PM5Log.write(truth.events).write(toFile: log, atomically: true, encoding: .utf8)

            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            let server = Process()
            server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            server.arguments = [root.appendingPathComponent("scripts/pm5-gatt-server.py").path, "--adapter", "hci1", "--log", log,
                                "--serial", "430000009", "--timeout", "150"]
            let out = Pipe()
            server.standardOutput = out
            server.standardError = out
            let lines = Mutex<[String]>([])
            let reader = Thread {
                var rest = ""
                while true {
                    let d = out.fileHandleForReading.availableData
                    if d.isEmpty { break }
                    rest += String(decoding: d, as: UTF8.self)
                    while let nl = rest.firstIndex(of: "\n") {
                        let line = String(rest[..<nl])
                        rest = String(rest[rest.index(after: nl)...])
                        print("pm5-gatt-server: \(line)")
                        lines.withLock { $0.append(line) }
                    }
                }
            }
            try server.run()
            reader.start()
            defer { if server.isRunning { server.terminate() } }
            func said(_ prefix: String) -> Bool { lines.withLock { $0.contains { $0.hasPrefix(prefix) } } }
            var deadline = Date().addingTimeInterval(30)
            while !said("advertising"), !said("error"), Date() < deadline { usleep(50_000) }
            try #require(said("advertising"), "the GATT server did not advertise: \(lines.withLock { $0 })")

            let store = try RunStore(directory: directory, logger: Logger(label: "test"))
            let t0 = Date()
            let rowing = BluetoothRowing(settings: RowingSettings(), store: store, stateDirectory: directory, logger: Logger(label: "test"),
                                         clock: { Date().timeIntervalSince(t0) })
            rowing.start()
            // bluetoothd discovering already (as when a phone app or bluetoothctl scans on
            // the hub): the kernel runs one discovery, and the hub listens to that one.
            let other = Process()
            other.executableURL = URL(fileURLWithPath: "/usr/bin/bluetoothctl")
            other.arguments = ["--timeout", "60", "scan", "on"]
            let otherOut = Pipe()
            other.standardOutput = otherOut
            other.standardError = otherOut
            try other.run()
            defer { if other.isRunning { other.terminate() } }
            // Why 2 s: bluetoothctl asks bluetoothd over the bus, which starts the discovery.
            sleep(2)
            try rowing.hub.scanPM5s()
            deadline = Date().addingTimeInterval(60)
            var sawShared = false
            func found() -> FoundPM5? { rowing.bluetooth.found.first { $0.name == "PM5 430000009" } }
            while found() == nil, Date() < deadline {
                sawShared = sawShared || rowing.bluetooth.sharedScan
                usleep(100_000)
            }
            sawShared = sawShared || rowing.bluetooth.sharedScan
            let pm5 = try #require(found(), "the scan did not find bluetoothd's PM5: \(rowing.bluetooth)")
            #expect(sawShared, "the hub's discovery was not refused as busy while bluetoothctl scanned")
            // bluetoothd ends its discovery when its client goes.
            other.terminate()
            while other.isRunning { usleep(20_000) }
            print("found while bluetoothd discovered: \(pm5.name ?? "?") \(pm5.address), the hub listening to bluetoothd's discovery: \(sawShared)")
            let erg = try rowing.hub.pickPM5(address: pm5.address)
            try rowing.hub.assign(erg: erg, athlete: "Ada")
            deadline = Date().addingTimeInterval(Double(BluetoothRig.env("BT_DEADLINE") ?? "150") ?? 150)
            BluetoothRig.waitForSummaries(rowing.hub, count: 1, deadline: deadline)
            let tile = rowing.hub.rowingLive().board.tiles.first
            rowing.stop()
            server.terminate()
            deadline = Date().addingTimeInterval(15)
            while server.isRunning, Date() < deadline { usleep(50_000) }
            let s = try #require(try store.ergSessions().first, "no session: tile \(String(describing: tile)); server said \(lines.withLock { $0 })")
            let strokes = try store.ergStrokes(sessionID: s.id).map { UInt16($0.stroke) }
            #expect(strokes == truth.strokesArrived)
            #expect(tile?.dropped == truth.malformed && truth.malformed > 0)
            #expect(s.summary?.distance == 500 && s.athlete == "Ada")
            #expect(said("subscribed") && said("sent"))
            #expect(!server.isRunning && server.terminationStatus == 0, "the GATT server did not send its whole log or did not end")
            print("PM5 on bluetoothd's GATT server: \(truth.strokesSent.count) strokes rowed, \(strokes.count) stored (\(truth.strokesArrived.count) arrived whole, \(truth.malformed) malformed) in \(String(format: "%.1f", Date().timeIntervalSince(t0))) s")
        }
    }
}
