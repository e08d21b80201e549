// SPDX-License-Identifier: Apache-2.0
// The hub's Bluetooth side through the real kernel stack: two virtual LE controllers from
// BlueZ's btvirt (hci_vhci) in the rig, an emulated PM5 (PM5Emulator's GATT server) on
// hci1 advertising and accepting on an L2CAP ATT socket, the hub on hci0 connecting to it
// and running PM5Link: discovery, device information, subscriptions, a piece's
// notifications recorded (malformed ones dropped and counted), a workout written to the
// control characteristic and answered.

import Foundation
import GATT
import LinuxHardware
import Rowing
import Synchronization
import Testing

enum BluetoothRig {
    /// Inside the rig with btvirt's two controllers (`scripts/sim-tier` starts it).
    static var available: Bool {
        Rig.env("SPRINTGATE_RIG") == "1" && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci0")
            && FileManager.default.fileExists(atPath: "/sys/class/bluetooth/hci1")
    }
}

extension RigDevices {
    @Suite("Bluetooth LE on two virtual controllers", .serialized, .enabled(if: BluetoothRig.available))
    struct BlueZATTRigTests {
        @Test("a PM5 emulated on hci1 and the hub on hci0: discovered, subscribed, every stroke that arrived whole recorded, a workout taken")
        func pm5OverTheKernel() throws {
            try BlueZController.powerOn(0)
            try BlueZController.powerOn(1)
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
            #expect(emulated.withLock { $0.problem } == nil)
        }
    }
}
