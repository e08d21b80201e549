// SPDX-License-Identifier: Apache-2.0
// libFuzzer harness over the rowing parsers: PM5 notifications, the erg recorder, CSAFE
// frames and answers, the erg's workout reader, ATT PDUs and a PM5's GATT session.

import GATT
import Rowing

#if canImport(Glibc)
import Glibc
#endif

// Input layout: a sequence of records, each a characteristic selector byte, a length
// byte and that many bytes (a short last record takes what is left). Every record goes
// to `PM5Data.decode`, to one `ErgRecorder` in order (with a connect or a disconnect when
// the selector's top bits say so), to `CSAFEFrame.decode` and `CSAFEResponse`, and to the
// discovery decoders (`MgmtEvent`, `AdvertisingData`, `PM5Finder`).
// Invariants checked (a violation traps, which libFuzzer reports as a crash):
//   - what decodes re-encodes to a value that decodes the same;
//   - a frame's contents encode to a frame that decodes to the same contents (when the
//     escaped frame fits the PM's 120 bytes);
//   - an answer that parses gives back its own contents;
//   - the recorder never holds two strokes of one count in a row, nor more strokes than
//     stroke notifications it was given;
//   - an ATT PDU that decodes re-encodes to bytes that decode the same;
//   - the workout reader and a PM5's GATT session (fed every record as a PDU from the
//     peer, after its discovery began) take anything without a crash.

private let characteristics: [UInt16] = [0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x3D, 0x80]

private func records(_ input: UnsafeRawBufferPointer) -> [(selector: UInt8, bytes: [UInt8])] {
    var out: [(UInt8, [UInt8])] = []
    var i = 0
    while i + 1 < input.count, out.count < 256 {
        let selector = input[i], n = Int(input[i + 1])
        i += 2
        let end = min(input.count, i + n)
        out.append((selector, Array(input[i..<end])))
        i = end
    }
    return out
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    // With SPRINTGATE_FUZZ_SEED_DIR set, write one seed per characteristic (a valid value
    // of each, encoded) and a few workout frames there, and exit.
    guard let dir = getenv("SPRINTGATE_FUZZ_SEED_DIR").map({ String(cString: $0) }) else { return 0 }
    var seeds: [[UInt8]] = []
    for (k, id) in characteristics.enumerated() {
        let n = [19, 17, 20, 1, 20, 15, 18, 19, 20, 19, 20, 20][k]
        var value = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        if id == 0x3D { value[0] = 0x19 }
        seeds.append([UInt8(k), UInt8(n)] + value)
    }
    let workouts: [PM5Workout] = [.justRow, .distance(metres: 2000, split: 500), .time(seconds: 1200, split: 240),
                                  .intervals([.init(.metres(500), restSeconds: 60), .init(.seconds(180), restSeconds: 30)])]
    for w in workouts {
        for f in (try? w.frames()) ?? [] { seeds.append([0x40, UInt8(f.count)] + f) }
    }
    // A PM5's advertisement and scan response as Device Found events (scanning).
    for data in [AdvertisingData.advertisement(services: [PM5Finder.service]), AdvertisingData.scanResponse(name: "PM5 430123456")] {
        let params: [UInt8] = [0x55, 0x44, 0x33, 0x22, 0x11, 0xC2, 1, 0xC4, 0, 0, 0, 0, UInt8(data.count), 0] + data
        let event: [UInt8] = [0x12, 0, 0, 0, UInt8(params.count), 0] + params
        seeds.append([0, UInt8(event.count)] + event)
    }
    for (i, s) in seeds.enumerated() {
        let path = "\(dir)/seed-\(i)"
        guard let file = fopen(path, "wb") else { continue }
        _ = s.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var recorder = ErgRecorder()
    var reader = PM5WorkoutReader()
    var link = PM5Link()
    _ = link.start()
    var strokeNotifications = 0
    var finder = PM5Finder()
    var t = 0.0
    for (selector, bytes) in records(input) {
        t += Double(selector & 0x0F) * 0.05
        switch selector >> 6 {
        case 1: recorder.connected(at: t)
        case 2: recorder.disconnected(at: t)
        default: break
        }
        let id = characteristics[Int(selector & 0x3F) % characteristics.count]
        if let v = try? PM5Data.decode(characteristic: id, bytes) {
            let (c, again) = v.encoded
            guard (try? PM5Data.decode(characteristic: c, again)) == v else { fatalError("0x\(id): decoded value does not re-decode the same") }
            if case .strokeData = v { strokeNotifications += 1 }
        }
        recorder.receive(characteristic: id, bytes, at: t)
        guard recorder.strokes.count <= strokeNotifications else { fatalError("more strokes recorded than were sent") }
        for (a, b) in zip(recorder.strokes, recorder.strokes.dropFirst()) where a.data.strokeCount == b.data.strokeCount {
            fatalError("stroke \(a.data.strokeCount) recorded twice in a row")
        }
        if let contents = try? CSAFEFrame.decode(bytes) {
            guard (try? CSAFEFrame.decode(CSAFEFrame.encode(contents))) == contents else { fatalError("frame contents do not round-trip") }
            if let r = try? CSAFEResponse(contents: contents), r.contents != contents { fatalError("answer does not give back its contents") }
        }
        if let pdu = try? ATTPDU.decode(bytes), (try? ATTPDU.decode(pdu.encoded)) != pdu { fatalError("an ATT PDU does not re-decode the same") }
        _ = link.receive(bytes)
        _ = try? reader.take(bytes)
        // Discovery: management events, advertising data, the PM5 finder.
        if case .deviceFound(_, let d)? = MgmtEvent(bytes) {
            guard d.address.count == 6, d.data.count == bytes.count - 20 else { fatalError("Device Found read past its lengths") }
            finder.heard(d, at: t)
            guard Set(finder.found.map(\.address)).count == finder.found.count else { fatalError("a PM5 found twice") }
        }
        if let ad = AdvertisingData(bytes), ad.services.count <= 15 {
            let name = ad.name.map { Array($0.utf8) }
            if name.map({ $0.count <= 29 }) ?? true {
                let again = AdvertisingData.advertisement(services: ad.services) + (ad.name.map { AdvertisingData.scanResponse(name: $0) } ?? [])
                guard let back = AdvertisingData(again), back.services == ad.services, back.name == ad.name else {
                    fatalError("advertising data does not read back the same")
                }
            }
        }
        // Contents whose escaped frame is over the PM's 120 bytes are refused on decoding.
        let frame = CSAFEFrame.encode(bytes)
        if frame.count <= CSAFEFrame.maxFrameBytes, (try? CSAFEFrame.decode(frame)) != bytes {
            fatalError("encoded contents do not decode back")
        }
    }
    return 0
}
