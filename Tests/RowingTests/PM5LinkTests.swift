// SPDX-License-Identifier: Apache-2.0
// One PM5's GATT session against the PM5 emulator's GATT server holding a PM5's
// attribute table (services, characteristics, configuration descriptors as Concept2's
// interface definition lists them): discovery, device information, the sample rate, every
// notification subscribed, notifications mapped to their characteristics, and a workout
// written to the control characteristic and answered. The ATT codec's round trips, and
// random PDUs that never crash the client. The same emulator over the real kernel stack
// (two virtual controllers) is in LinuxHardwareTests (BlueZATTTests), in the qemu rig.

import GATT
import Rowing
import Testing

@Suite struct PM5LinkTests {
    /// Runs the link against the server until nothing more is sent; the events seen.
    static func run(_ link: inout PM5Link, _ server: inout PM5Emulator, _ first: [PM5Link.Event]) -> [PM5Link.Event] {
        var seen: [PM5Link.Event] = []
        var pending = first
        var rounds = 0
        while !pending.isEmpty && rounds < 10_000 {
            rounds += 1
            let e = pending.removeFirst()
            seen.append(e)
            if case .send(let bytes) = e {
                for reply in server.handle(bytes) { pending += link.receive(reply) }
            }
        }
        return seen
    }

    @Test("discovery, device information, the sample rate and every notification subscribed; then notifications by characteristic")
    func setUp() throws {
        var server = PM5Emulator()
        var link = PM5Link(sampleRate: .quarterSecond)
        let events = Self.run(&link, &server, link.start())
        #expect(events.contains(.ready))
        #expect(!events.contains { if case .problem = $0 { true } else { false } })
        let info = events.compactMap { e -> String? in if case .information(let c, let t) = e { "\(c):\(t)" } else { nil } }
        #expect(info == ["17:PM5", "18:430123456", "19:907", "20:210", "21:Concept2", "22:0"])
        #expect(server.sampleRate == PM5SampleRate.quarterSecond.rawValue)
        // Every characteristic the PM5 notifies: the ten rowing ones and the CSAFE answers.
        let notifying = Set(server.attributes.filter { $0.type == .clientConfiguration }.map { $0.handle - 1 })
        #expect(notifying.count == 11 && server.subscribed == notifying)
        let status = PM5Data.generalStatus(GeneralStatus(elapsed: 12.3, distance: 45.6, workoutType: 3, intervalType: 1, workoutState: 1,
                                                         rowingState: 1, strokeState: 2, totalWorkDistance: 45, workoutDuration: 2000,
                                                         workoutDurationType: 0x80, dragFactor: 120)).encoded
        let n = try #require(server.notify(0x0031, status.bytes))
        #expect(link.receive(n) == [.notification(characteristic: 0x0031, bytes: status.bytes)])
        // An indication is confirmed; a request from the peer is answered, never left hanging.
        #expect(link.receive(ATTPDU.readRequest(1).encoded) == [.send(ATTPDU.error(request: 0x0A, handle: 0, code: ATTPDU.requestNotSupported).encoded)])
        #expect(link.receive(ATTPDU.mtuRequest(100).encoded) == [.send(ATTPDU.mtuResponse(185).encoded)])
    }

    @Test("a workout goes to the control characteristic in 20-byte writes; the PM5's answer comes back as a notification of 0x0022")
    func workout() throws {
        var server = PM5Emulator()
        var link = PM5Link()
        _ = Self.run(&link, &server, link.start())
        #expect(link.ready)
        let w = PM5Workout.intervals((0..<8).map { PM5Workout.Interval(.metres(500 + 100 * $0), restSeconds: 60) })
        var answers: [[UInt8]] = []
        for frame in try w.frames() {
            let events = Self.run(&link, &server, link.writeControl(frame))
            #expect(events.allSatisfy { if case .send(let b) = $0 { b.count <= 23 } else { true } }, "a write longer than the default MTU")
            answers += events.compactMap { if case .notification(0x0022, let b) = $0 { b } else { nil } }
        }
        #expect(server.workouts == [w])
        #expect(answers.count == 2 && answers.allSatisfy { (try? PM5ConfigAnswer(frame: $0))?.problem == nil })
    }

    @Test("a peer that is not a PM5 is said to be one not")
    func notAPM5() {
        var server = PM5Emulator()
        server.groups.removeAll { $0.uuid == PM5Emulator.pm5(0x0030) }
        var link = PM5Link()
        let events = Self.run(&link, &server, link.start())
        #expect(events.contains(.problem("not a PM5: no rowing service (CE060030-…)")) && !link.ready)
    }

    static let pdus: [ATTPDU] = {
        var list: [ATTPDU] = [.error(request: 0x08, handle: 0x0010, code: 0x0A), .mtuRequest(185), .mtuResponse(247)]
        list.append(.findInformationRequest(start: 5, end: 9))
        list.append(.findInformationResponse([(UInt16(6), BLEUUID(0x2902)), (UInt16(7), BLEUUID(0x2901))]))
        list.append(.findInformationResponse([(UInt16(8), BLEUUID(PM5UUID.full(0x0031))!)]))
        list.append(.readByTypeRequest(start: 1, end: 0xFFFF, type: .characteristic))
        list.append(.readByTypeResponse([(UInt16(2), [UInt8(0x02), 3, 0, 0x00, 0x2A]), (UInt16(4), [UInt8(0x10), 5, 0, 0x01, 0x2A])]))
        list += [.readRequest(3), .readResponse([1, 2, 3]), .readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService)]
        list.append(.readByGroupTypeResponse([(UInt16(1), UInt16(5), BLEUUID(PM5UUID.full(0x0030))!.wire)]))
        list += [.writeRequest(handle: 9, value: [1, 0]), .writeResponse, .writeCommand(handle: 9, value: [7])]
        list += [.notification(handle: 12, value: Array(repeating: 0xAB, count: 20)), .indication(handle: 12, value: [1]), .confirmation]
        return list
    }()

    @Test("ATT PDUs: encoded and decoded again", arguments: pdus)
    func codec(pdu: ATTPDU) throws {
        #expect(try ATTPDU.decode(pdu.encoded) == pdu)
    }

    @Test("malformed PDUs are refused with the reason, and the client lives through 100 000 random PDUs")
    func malformed() {
        for bad: [UInt8] in [[], [0x02, 1], [0x03, 1, 2, 3], [0x09, 7, 1, 0, 2], [0x05, 3, 1, 0, 2, 0], [0x11, 3, 1, 0, 2], [0x7F]] {
            #expect(throws: ATTError.self) { try ATTPDU.decode(bad) }
        }
        var rng = SystemRandomNumberGenerator()
        var client = GATTClient()
        _ = client.start()
        for _ in 0..<100_000 {
            let n = Int.random(in: 0...24, using: &rng)
            let bytes = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = client.receive(bytes)
        }
        #expect(BLEUUID("CE060031-43E5-11E4-916C-0800200C9A66")?.description == "CE060031-43E5-11E4-916C-0800200C9A66")
        #expect(BLEUUID(0x2902).short == 0x2902 && BLEUUID(PM5UUID.full(0x31))?.short == nil)
    }
}
