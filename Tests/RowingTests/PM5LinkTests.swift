// SPDX-License-Identifier: Apache-2.0
// One PM5's GATT session against a GATT server of the test's own holding a PM5's
// attribute table (services, characteristics, configuration descriptors as Concept2's
// interface definition lists them): discovery, device information, the sample rate, every
// notification subscribed, notifications mapped to their characteristics, and a workout
// written to the control characteristic and answered. The ATT codec's round trips, and
// random PDUs that never crash the client. The real stack (BlueZ, an emulated PM5 on a
// virtual controller) is not in these tests.

import GATT
import Rowing
import Testing

/// A PM5's attributes, served as an ATT server would.
struct PM5GATTServer {
    struct Attribute {
        var handle: UInt16
        var type: BLEUUID
        var value: [UInt8]
    }
    var attributes: [Attribute] = []
    var groups: [(start: UInt16, end: UInt16, uuid: BLEUUID)] = []
    var subscribed: Set<UInt16> = []
    var sampleRate: UInt8?
    var control: [UInt8] = []
    var reader = PM5WorkoutReader()
    var workouts: [PM5Workout] = []
    var mtu: UInt16 = 23
    var handleOf: [UInt16: UInt16] = [:]

    static func pm5(_ short: UInt16) -> BLEUUID { BLEUUID(PM5UUID.full(short))! }

    init() {
        var h: UInt16 = 1
        func service(_ uuid: BLEUUID, _ chars: [(BLEUUID, UInt8, [UInt8], UInt16?)]) {
            let start = h
            attributes.append(Attribute(handle: h, type: .primaryService, value: uuid.wire))
            h += 1
            for (u, props, value, short) in chars {
                attributes.append(Attribute(handle: h, type: .characteristic, value: [props, UInt8((h + 1) & 0xFF), UInt8((h + 1) >> 8)] + u.wire))
                attributes.append(Attribute(handle: h + 1, type: u, value: value))
                if let short { handleOf[short] = h + 1 }
                h += 2
                if props & 0x30 != 0 {
                    attributes.append(Attribute(handle: h, type: .clientConfiguration, value: [0, 0]))
                    h += 1
                }
            }
            groups.append((start, h - 1, uuid))
        }
        service(BLEUUID(0x1800), [(BLEUUID(0x2A00), 0x02, Array("PM5 430123456".utf8), nil)])
        service(Self.pm5(0x0010), [(Self.pm5(0x0011), 0x02, Array("PM5".utf8), 0x11), (Self.pm5(0x0012), 0x02, Array("430123456".utf8), 0x12),
                                   (Self.pm5(0x0013), 0x02, Array("907".utf8), 0x13), (Self.pm5(0x0014), 0x02, Array("210".utf8), 0x14),
                                   (Self.pm5(0x0015), 0x02, Array("Concept2".utf8), 0x15), (Self.pm5(0x0016), 0x02, Array("0".utf8), 0x16)])
        service(Self.pm5(0x0020), [(Self.pm5(0x0021), 0x0C, [], 0x21), (Self.pm5(0x0022), 0x10, [], 0x22)])
        service(Self.pm5(0x0030), [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D].map { (s: UInt16) in
            (Self.pm5(s), s == 0x34 ? 0x0A : 0x10, s == 0x34 ? [1] : [], s)
        })
    }

    /// Answers one request; notifications it sends as a result come after the answer.
    mutating func handle(_ bytes: [UInt8]) -> [[UInt8]] {
        guard let pdu = try? ATTPDU.decode(bytes) else { return [ATTPDU.error(request: bytes.first ?? 0, handle: 0, code: 0x04).encoded] }
        let notFound = { (op: UInt8, h: UInt16) in [ATTPDU.error(request: op, handle: h, code: ATTPDU.attributeNotFound).encoded] }
        switch pdu {
        case .mtuRequest(let m):
            mtu = min(m, 247)
            return [ATTPDU.mtuResponse(247).encoded]
        case .readByGroupTypeRequest(let s, let e, _):
            let g = groups.filter { $0.start >= s && $0.start <= e }
            guard let first = g.first else { return notFound(0x10, s) }
            let same = g.filter { $0.uuid.wire.count == first.uuid.wire.count }.prefix(Int(mtu - 2) / (4 + first.uuid.wire.count))
            return [ATTPDU.readByGroupTypeResponse(same.map { ($0.start, $0.end, $0.uuid.wire) }).encoded]
        case .readByTypeRequest(let s, let e, let t):
            let a = attributes.filter { $0.handle >= s && $0.handle <= e && $0.type == t }
            guard let first = a.first else { return notFound(0x08, s) }
            let same = a.filter { $0.value.count == first.value.count }.prefix(Int(mtu - 2) / (2 + first.value.count))
            return [ATTPDU.readByTypeResponse(same.map { ($0.handle, $0.value) }).encoded]
        case .findInformationRequest(let s, let e):
            let a = attributes.filter { $0.handle >= s && $0.handle <= e }
            guard !a.isEmpty else { return notFound(0x04, s) }
            return [ATTPDU.findInformationResponse(a.prefix(4).map { ($0.handle, $0.type) }).encoded]
        case .readRequest(let h):
            guard let a = attributes.first(where: { $0.handle == h }) else { return [ATTPDU.error(request: 0x0A, handle: h, code: 0x01).encoded] }
            return [ATTPDU.readResponse(a.value).encoded]
        case .writeRequest(let h, let v):
            guard let a = attributes.first(where: { $0.handle == h }) else { return [ATTPDU.error(request: 0x12, handle: h, code: 0x01).encoded] }
            var after: [[UInt8]] = []
            if a.type == .clientConfiguration {
                if v == [1, 0] { subscribed.insert(h - 1) } else { subscribed.remove(h - 1) }
            } else if h == handleOf[0x34] {
                sampleRate = v.first
            } else if h == handleOf[0x21] {
                control += v
                if v.last == CSAFEFrame.stop, let (outcome, answer) = try? reader.take(control) {
                    control = []
                    if case .workout(let w) = outcome { workouts.append(w) }
                    if subscribed.contains(handleOf[0x22]!) { after.append(ATTPDU.notification(handle: handleOf[0x22]!, value: answer).encoded) }
                }
            }
            return [ATTPDU.writeResponse.encoded] + after
        default:
            return [ATTPDU.error(request: bytes[0], handle: 0, code: ATTPDU.requestNotSupported).encoded]
        }
    }

    /// A notification of characteristic `short`, if the client subscribed.
    func notify(_ short: UInt16, _ value: [UInt8]) -> [UInt8]? {
        guard let h = handleOf[short], subscribed.contains(h) else { return nil }
        return ATTPDU.notification(handle: h, value: value).encoded
    }
}

@Suite struct PM5LinkTests {
    /// Runs the link against the server until nothing more is sent; the events seen.
    static func run(_ link: inout PM5Link, _ server: inout PM5GATTServer, _ first: [PM5Link.Event]) -> [PM5Link.Event] {
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
        var server = PM5GATTServer()
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
        var server = PM5GATTServer()
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
        var server = PM5GATTServer()
        server.groups.removeAll { $0.uuid == PM5GATTServer.pm5(0x0030) }
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
