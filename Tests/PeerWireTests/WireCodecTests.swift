// SPDX-License-Identifier: Apache-2.0
// The codec: round trips of every message type, canonical bytes, and every way to be wrong.

import GateCore
import PeerWire
import Testing

@Suite struct WireCodecTests {
    @Test func samplesCoverEveryMessageType() {
        let covered = Set(sampleMessages.map(\.type))
        #expect(covered == Set(MessageType.allCases))
    }

    @Test(arguments: sampleEnvelopes)
    func roundTripIsIdentityAndIdempotent(_ envelope: Envelope) throws {
        let bytes = try envelope.encoded()
        #expect(bytes.count <= Wire.maxDatagramLength - Wire.trailerAllowance)
        let decoded = try Envelope.decode(bytes)
        #expect(decoded == envelope)
        #expect(try decoded.encoded() == bytes)
    }

    @Test func headerLayoutIsAsDocumented() throws {
        let envelope = Envelope(session: SessionID(0x0102_0304), sender: GateID(0x0A0B_0C0D), bootEpoch: 0x1112_1314,
                                sequence: 0x2122_2324, message: .ping(Ping(t1: MonotonicInstant(nanoseconds: 0x3132_3334_3536_3738))))
        let bytes = try envelope.encoded()
        #expect(bytes == [0x53, 0x47, 3, MessageType.ping.rawValue,
                          0x01, 0x02, 0x03, 0x04, 0x0A, 0x0B, 0x0C, 0x0D, 0x11, 0x12, 0x13, 0x14, 0x21, 0x22, 0x23, 0x24,
                          0x00, 0x08, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38])
    }

    @Test func encodesIntoCallerBufferAndReportsTooSmall() throws {
        let envelope = sampleEnvelopes[0]
        let expected = try envelope.encoded()
        var buffer = [UInt8](repeating: 0xEE, count: 2000)
        let count = try buffer.withUnsafeMutableBytes { try envelope.encode(into: $0) }
        #expect(Array(buffer[..<count]) == expected)
        var small = [UInt8](repeating: 0, count: expected.count - 1)
        #expect(throws: WireError.bufferTooSmall) {
            _ = try small.withUnsafeMutableBytes { try envelope.encode(into: $0) }
        }
    }

    /// Every proper prefix of every message is rejected: `truncated` while the header or
    /// declared payload is incomplete, never accepted and never a trap.
    @Test(arguments: sampleEnvelopes)
    func everyTruncationIsRejected(_ envelope: Envelope) throws {
        let bytes = try envelope.encoded()
        for length in 0 ..< bytes.count {
            let result = decodeResult(Array(bytes[..<length]))
            guard case .failure(let error) = result else {
                Issue.record("prefix of \(length)/\(bytes.count) bytes accepted")
                continue
            }
            #expect(error == .truncated || (length < 2 && error == .badMagic), "prefix \(length): \(error)")
        }
    }

    /// Two messages in one datagram are refused, as is any byte after the payload.
    @Test func coalescedMessagesAreRejected() throws {
        for (a, b) in zip(sampleEnvelopes, sampleEnvelopes.dropFirst()) {
            let first = try a.encoded()
            let second = try b.encoded()
            #expect(decodeResult(first + second).failureValue == .trailingBytes(second.count))
        }
        let ping = try sampleEnvelopes[0].encoded()
        #expect(decodeResult(ping + [0]).failureValue == .trailingBytes(1))
    }

    @Test func headerErrors() throws {
        var bytes = try sampleEnvelopes[8].encoded()
        var bad = bytes
        bad[0] = 0x54
        #expect(decodeResult(bad).failureValue == .badMagic)
        bad = bytes
        bad[2] = 4
        #expect(decodeResult(bad).failureValue == .unsupportedVersion(4))
        bad = bytes
        bad[3] = 99
        #expect(decodeResult(bad).failureValue == .unknownType(99))
        bytes = [0x53, 0x47, 3, 1] + [UInt8](repeating: 0, count: 16) + [0xFF, 0xFF]
        #expect(decodeResult(bytes).failureValue == .oversized(0xFFFF))
    }

    /// A payload longer than its message (declared length matching) is not canonical.
    @Test func payloadWithExtraBytesIsMalformed() throws {
        var bytes = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: .endSession).encoded()
        bytes[21] = 1
        bytes.append(0)
        #expect(decodeResult(bytes).failureValue == .malformed("payload length"))
    }

    @Test func nonCanonicalFieldsAreMalformed() throws {
        func mutated(_ message: Message, at payloadOffset: Int, to value: UInt8) throws -> WireError? {
            var bytes = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: message).encoded()
            bytes[Wire.headerLength + payloadOffset] = value
            return decodeResult(bytes).failureValue
        }
        #expect(try mutated(.sessionConfigAck(SessionConfigAck(accepted: true)), at: 0, to: 2) == .malformed("accepted"))
        #expect(try mutated(.startTypeChange(StartTypeChange(startType: .flying)), at: 0, to: 0) == .malformed("startType"))
        #expect(try mutated(.roleRequest(RoleRequest(role: .start)), at: 0, to: 9) == .malformed("role"))
        let status = Message.gateStatus(GateStatusReport(readiness: [], camera: .busy, framesPerSecond: 30))
        #expect(try mutated(status, at: 0, to: 0x20) == .malformed("readiness"))
        #expect(try mutated(status, at: 1, to: 5) == .malformed("camera"))
        // A quiet NaN where the frame rate goes.
        var nan = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: status).encoded()
        nan.replaceSubrange(Wire.headerLength + 2 ..< Wire.headerLength + 6, with: [0x7F, 0xC0, 0, 0])
        #expect(decodeResult(nan).failureValue == .malformed("framesPerSecond"))
        // The temperature flag is 0 or 1; no temperature carries 0; a temperature is in range.
        #expect(try mutated(status, at: 10, to: 2) == .malformed("socCelsius"))
        var stray = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: status).encoded()
        stray.replaceSubrange(Wire.headerLength + 11 ..< Wire.headerLength + 15, with: [0x42, 0x20, 0, 0])  // 40.0 with the flag 0
        #expect(decodeResult(stray).failureValue == .malformed("socCelsius"))
        // −0.0 with the flag 0 equals 0 but is not its bytes: refused too, so every datagram
        // taken decodes to a message that encodes to the same bytes.
        var negativeZero = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: status).encoded()
        negativeZero.replaceSubrange(Wire.headerLength + 11 ..< Wire.headerLength + 15, with: [0x80, 0, 0, 0])
        #expect(decodeResult(negativeZero).failureValue == .malformed("socCelsius"))
        let hot = Message.gateStatus(GateStatusReport(readiness: [], camera: .busy, framesPerSecond: 1, socCelsius: 400))
        #expect(Result { () throws(WireError) -> [UInt8] in
            try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: hot).encoded()
        }.failureValue == .malformed("socCelsius"))
        let crossing = sampleMessages.first { $0.type == .crossingEvent }!
        #expect(try mutated(crossing, at: 28, to: 2) == .malformed("direction"))
        // Uncertainty's sign bit set: a negative uncertainty.
        #expect(try mutated(crossing, at: 20, to: 0x80) == .malformed("uncertainty"))
        let announce = Message.announce(Announce(gateName: "ab", roleWish: nil, listeningPort: 9))
        #expect(try mutated(announce, at: 1, to: 0xC3) == .malformed("gateName"))  // Lone UTF-8 lead byte.
        #expect(try mutated(announce, at: 0, to: 33) == .malformed("gateName"))
        #expect(try mutated(announce, at: 3, to: 7) == .malformed("roleWish"))
        let chunk = Message.thumbnailChunk(ThumbnailChunk(imageID: 1, chunkIndex: 0, chunkCount: 1, bytes: [1]))
        #expect(try mutated(chunk, at: 5, to: 1) == .malformed("chunkIndex"))
        #expect(try mutated(chunk, at: 6, to: 0xFF) == .malformed("chunkCount"))  // 0xFF01 chunks.
    }

    @Test func encoderRefusesWhatTheDecoderWould() {
        func encodeError(_ message: Message) -> WireError? {
            Result { () throws(WireError) -> [UInt8] in
                try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: message).encoded()
            }.failureValue
        }
        #expect(encodeError(.announce(Announce(gateName: String(repeating: "é", count: 17), roleWish: nil, listeningPort: 5)))
            == .malformed("gateName"))
        #expect(encodeError(.announce(Announce(gateName: "a", roleWish: nil, listeningPort: 0))) == .malformed("listeningPort"))
        #expect(encodeError(.distanceChange(DistanceChange(gate: GateID(1), distanceFromStartMetres: .nan)))
            == .malformed("distanceFromStartMetres"))
        #expect(encodeError(.distanceChange(DistanceChange(gate: GateID(1), distanceFromStartMetres: -1)))
            == .malformed("distanceFromStartMetres"))
        #expect(encodeError(.syncResult(SyncResult(gate: GateID(1), offset: .zero, uncertainty: Span(nanoseconds: -1), samples: 1)))
            == .malformed("uncertainty"))
        #expect(encodeError(.gateStatus(GateStatusReport(readiness: ReadinessFlags(rawValue: 0x80), camera: .busy, framesPerSecond: 1)))
            == .malformed("readiness"))
        #expect(encodeError(.thumbnailChunk(ThumbnailChunk(imageID: 1, chunkIndex: 0, chunkCount: 1,
                                                           bytes: [UInt8](repeating: 0, count: ThumbnailChunk.maxBytes + 1))))
            == .malformed("bytes"))
        #expect(encodeError(.thumbnailChunk(ThumbnailChunk(imageID: 1, chunkIndex: 2, chunkCount: 2, bytes: [1])))
            == .malformed("chunkIndex"))
        #expect(encodeError(.sessionConfig(SessionConfig(startType: .flying, runID: 1, gateCount: 0, name: "")))
            == .malformed("gateCount"))
    }

    @Test func thumbnailSplitsIntoDatagramSizedChunks() throws {
        let image = (0 ..< 5000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let chunks = try #require(ThumbnailChunk.split(imageID: 9, image: image))
        #expect(chunks.count == 5)
        #expect(chunks.flatMap(\.bytes) == image)
        #expect(chunks.map(\.chunkIndex) == [0, 1, 2, 3, 4])
        #expect(chunks.allSatisfy { $0.chunkCount == 5 && $0.bytes.count <= ThumbnailChunk.maxBytes })
        for chunk in chunks {
            let bytes = try Envelope(session: SessionID(1), sender: GateID(1), bootEpoch: 1, sequence: 1,
                                     message: .thumbnailChunk(chunk)).encoded()
            #expect(bytes.count + 16 < Wire.maxDatagramLength)
        }
        #expect(ThumbnailChunk.split(imageID: 1, image: []) == nil)
        #expect(ThumbnailChunk.split(imageID: 1, image: [UInt8](repeating: 0, count: ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes))?.count
            == ThumbnailChunk.maxChunks)
        #expect(ThumbnailChunk.split(imageID: 1, image: [UInt8](repeating: 0, count: ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes + 1)) == nil)
    }

    @Test func thumbnailAckRefusesBitsPastItsCount() throws {
        #expect(Result { () throws(WireError) -> [UInt8] in
            try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1,
                         message: .thumbnailAck(ThumbnailAck(imageID: 1, chunkCount: 3, received: [0b1000]))).encoded()
        }.failureValue == .malformed("received"))
        func mutated(_ message: Message, at payloadOffset: Int, to value: UInt8) throws -> WireError? {
            var bytes = try Envelope(session: .none, sender: GateID(1), bootEpoch: 1, sequence: 1, message: message).encoded()
            bytes[Wire.headerLength + payloadOffset] = value
            return decodeResult(bytes).failureValue
        }
        let ack = Message.thumbnailAck(ThumbnailAck(imageID: 1, flags: [true, true, false]))
        // Payload: imageID (4), chunkCount (2), one bitmap byte; set bit 3 (chunk 3 of 3).
        #expect(try mutated(ack, at: 6, to: 0b1011) == .malformed("received"))
        #expect(try mutated(ack, at: 5, to: 0) == .malformed("chunkCount"))
    }

    @Test func photoBundleRoundTripAndRefusals() throws {
        let photo: [UInt8] = [0xFF, 0xD8] + (0 ..< 3000).map { UInt8(truncatingIfNeeded: $0) }
        let thumbs: [[UInt8]] = [[0xFF, 0xD8, 1], [0xFF, 0xD8, 2, 3]]
        let bytes = try #require(PhotoBundle(photo: photo, thumbnails: thumbs).encoded())
        let back = try PhotoBundle(decoding: bytes)
        #expect(back.photo == photo && back.thumbnails == thumbs)
        #expect(PhotoBundle(photo: [], thumbnails: []).encoded() == nil)
        #expect(PhotoBundle(photo: [0xFF, 0xD8], thumbnails: Array(repeating: [0xFF, 0xD8], count: 16)).encoded() == nil)
        #expect(PhotoBundle(photo: [0xFF, 0xD8] + [UInt8](repeating: 0, count: ThumbnailChunk.maxChunks * ThumbnailChunk.maxBytes),
                            thumbnails: []).encoded() == nil)
        func refusal(_ b: [UInt8]) -> WireError? {
            Result { () throws(WireError) in try PhotoBundle(decoding: b) }.failureValue
        }
        #expect(refusal([]) == .malformed("bundle count"))
        #expect(refusal([0]) == .malformed("bundle count"))
        #expect(refusal(Array(bytes.dropLast())) == .malformed("bundle part 2 length"))
        #expect(refusal(bytes + [0]) == .malformed("bundle trailing bytes"))
        var notJPEG = bytes
        notJPEG[5] = 0x00
        #expect(refusal(notJPEG) == .malformed("bundle part 0 is not JPEG"))
        // The photo's time scale rides after the parts; a broken one is refused by name.
        let scale = PhotoScale(crossingX: 301.5, nanosecondsPerColumn: 8_333_333.5, compositeX: 16, compositeWidth: 420)
        let scaled = try #require(PhotoBundle(photo: photo, thumbnails: thumbs, scale: scale).encoded())
        #expect(scaled.count == bytes.count + 25 && Array(scaled.prefix(bytes.count)) == bytes)
        #expect(try PhotoBundle(decoding: scaled) == PhotoBundle(photo: photo, thumbnails: thumbs, scale: scale))
        #expect(back.scale == nil)
        #expect(refusal(Array(scaled.dropLast())) == .malformed("bundle trailing bytes"))
        var badTag = scaled
        badTag[bytes.count] = 0x54
        #expect(refusal(badTag) == .malformed("bundle trailing bytes"))
        var nanScale = scaled
        for k in 0 ..< 8 { nanScale[bytes.count + 9 + k] = 0xFF }
        #expect(refusal(nanScale) == .malformed("bundle scale"))
        #expect(PhotoBundle(photo: photo, thumbnails: thumbs,
                            scale: PhotoScale(crossingX: 1, nanosecondsPerColumn: 0, compositeX: 0, compositeWidth: 10)).encoded() == nil)
    }

    @Test func frameStripRoundTripAndRefusals() throws {
        let frames = [FrameStrip.Frame(offsetMicroseconds: -12_500, jpeg: [0xFF, 0xD8, 9, 9]),
                      FrameStrip.Frame(offsetMicroseconds: -4_100, jpeg: [0xFF, 0xD8] + (0 ..< 2000).map { UInt8(truncatingIfNeeded: $0) }),
                      FrameStrip.Frame(offsetMicroseconds: 4_200, jpeg: [0xFF, 0xD8, 1])]
        let bytes = try #require(FrameStrip(gateX: 79.5625, frames: frames).encoded())
        let back = try FrameStrip(decoding: bytes)
        #expect(back.frames == frames && back.gateX == 79.5625)
        // Rounded to 1/16 px.
        #expect(try FrameStrip(decoding: #require(FrameStrip(gateX: 10.01, frames: frames).encoded())).gateX == 10)
        #expect(FrameStrip(gateX: 1, frames: []).encoded() == nil)
        #expect(FrameStrip(gateX: 1, frames: Array(repeating: frames[0], count: 33)).encoded() == nil)
        #expect(FrameStrip(gateX: 1, frames: [frames[1], frames[0]]).encoded() == nil, "offsets must increase")
        #expect(FrameStrip(gateX: .nan, frames: frames).encoded() == nil)
        #expect(FrameStrip(gateX: 4096, frames: frames).encoded() == nil)
        #expect(FrameStrip(gateX: 1, frames: [FrameStrip.Frame(offsetMicroseconds: 0, jpeg: [])]).encoded() == nil)
        func refusal(_ b: [UInt8]) -> WireError? {
            Result { () throws(WireError) in try FrameStrip(decoding: b) }.failureValue
        }
        #expect(refusal([]) == .malformed("strip count"))
        #expect(refusal([0, 0, 0]) == .malformed("strip count"))
        #expect(refusal(Array(bytes.dropLast())) == .malformed("strip frame 2 length"))
        #expect(refusal(Array(bytes.prefix(3 + 8 + 4 + 4))) == .malformed("strip frame 1 header"))
        #expect(refusal(bytes + [0]) == .malformed("strip trailing bytes"))
        var notJPEG = bytes
        notJPEG[3 + 8] = 0x00
        #expect(refusal(notJPEG) == .malformed("strip frame 0 is not JPEG"))
        var backwards = bytes
        backwards[3 + 8 + 4] = 0x7F  // Frame 1's offset becomes far positive, past frame 2's 4200 µs.
        #expect(refusal(backwards) == .malformed("strip frame 2 offset"))
    }

    @Test func readinessFromDetectorStatus() {
        let status = GateStatus(armed: true, ready: false, clear: true, tooFar: true, shaking: false)
        #expect(ReadinessFlags(status) == [.armed, .clear, .tooFar])
    }

    /// Random datagrams, and valid ones with random bytes changed, never trap; whatever
    /// decodes re-encodes to the same bytes (the decoder accepts canonical forms only).
    @Test func randomInputNeverTrapsAndAcceptedInputIsCanonical() throws {
        var rng = SeededRandom(defaultSeed: 20_261_123)
        let valid = try sampleEnvelopes.map { try $0.encoded() }
        var accepted = 0
        for round in 0 ..< 60_000 {
            var bytes: [UInt8]
            if round % 3 == 0 {
                bytes = (0 ..< Int.random(in: 0 ... 64, using: &rng)).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                if bytes.count >= 3, Bool.random(using: &rng) { bytes[0] = 0x53; bytes[1] = 0x47; bytes[2] = 3 }
            } else {
                bytes = valid[Int.random(in: 0 ..< valid.count, using: &rng)]
                for _ in 0 ..< Int.random(in: 1 ... 3, using: &rng) {
                    bytes[Int.random(in: 0 ..< bytes.count, using: &rng)] = UInt8.random(in: 0 ... 255, using: &rng)
                }
            }
            if case .success(let envelope) = decodeResult(bytes) {
                accepted += 1
                #expect(try envelope.encoded() == bytes)
            }
        }
        #expect(accepted > 0)
    }
}

extension Result {
    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
