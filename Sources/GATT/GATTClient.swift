// SPDX-License-Identifier: Apache-2.0
// A GATT client as a value-type state machine: bytes from the ATT channel in, actions out
// (PDUs to send, what was found, notifications). No I/O: the Bluetooth adapter feeds it
// from its L2CAP socket, the tests from a GATT server of their own.

/// A characteristic as discovered.
public struct GATTCharacteristic: Sendable, Hashable {
    public var uuid: BLEUUID
    public var declaration: UInt16
    public var valueHandle: UInt16
    /// Bit 0x02 read, 0x08 write, 0x04 write without response, 0x10 notify, 0x20 indicate.
    public var properties: UInt8
    /// The client characteristic configuration descriptor, for one that notifies.
    public var configuration: UInt16?
    public var notifies: Bool { properties & 0x30 != 0 }
}

/// A primary service as discovered, with its characteristics.
public struct GATTService: Sendable, Hashable {
    public var uuid: BLEUUID
    public var start: UInt16
    public var end: UInt16
    public var characteristics: [GATTCharacteristic] = []
}

/// Discovers a peer's services, characteristics and their configuration descriptors, then
/// runs reads and writes one at a time (ATT allows one request outstanding), passing
/// notifications and indications on. Requests the peer makes are answered: its MTU, and
/// "request not supported" for the rest (this side serves no attributes).
public struct GATTClient: Sendable {
    public enum Action: Sendable, Hashable {
        case send(ATTPDU)
        /// Discovery finished.
        case discovered([GATTService])
        case read(handle: UInt16, value: [UInt8])
        case written(handle: UInt16)
        case notification(handle: UInt16, value: [UInt8])
        /// A request failed, or the peer broke the protocol: what and why.
        case failed(String)
    }

    enum Phase: Sendable {
        case idle, mtu, services, characteristics(Int), descriptors(Int, Int), ready
    }

    enum Operation: Sendable {
        case read(UInt16)
        case write(UInt16, [UInt8])
    }

    public let mtu: UInt16
    public private(set) var services: [GATTService] = []
    public private(set) var peerMTU: UInt16 = 23
    private var phase = Phase.idle
    private var queue: [Operation] = []
    private var outstanding: Operation?

    /// `mtu`: what this side takes. Why 185: what BlueZ offers as a central, and more than a
    /// PM5's 20-byte notifications need.
    public init(mtu: UInt16 = 185) { self.mtu = mtu }

    public var ready: Bool { if case .ready = phase { true } else { false } }

    /// Begins: the MTU exchange, then discovery.
    public mutating func start() -> [Action] {
        phase = .mtu
        return [.send(.mtuRequest(mtu))]
    }

    /// Reads `handle` once discovery is over and the requests before it are answered.
    public mutating func read(_ handle: UInt16) -> [Action] {
        queue.append(.read(handle))
        return next()
    }

    /// Writes `value` to `handle` (a write request, answered), in turn.
    public mutating func write(_ handle: UInt16, _ value: [UInt8]) -> [Action] {
        queue.append(.write(handle, value))
        return next()
    }

    /// A PDU from the peer.
    public mutating func receive(_ bytes: [UInt8]) -> [Action] {
        let pdu: ATTPDU
        do { pdu = try ATTPDU.decode(bytes) } catch {
            // Why: a request the client cannot read must still be answered, or the peer's
            // transaction never ends; anything else is dropped and said.
            if let op = bytes.first, op & 0x01 == 0, op & 0x40 == 0, op != 0x1B, op != 0x1D {
                return [.send(.error(request: op, handle: 0, code: ATTPDU.requestNotSupported)), .failed(error.description)]
            }
            return [.failed(error.description)]
        }
        switch pdu {
        case .notification(let h, let v): return [.notification(handle: h, value: v)]
        case .indication(let h, let v): return [.send(.confirmation), .notification(handle: h, value: v)]
        case .mtuRequest(let m):
            peerMTU = max(23, min(m, mtu))
            return [.send(.mtuResponse(mtu))]
        case .findInformationRequest, .readByTypeRequest, .readRequest, .readByGroupTypeRequest, .writeRequest:
            return [.send(.error(request: pdu.encoded[0], handle: 0, code: ATTPDU.requestNotSupported))]
        case .writeCommand, .confirmation:
            return []
        default:
            return response(pdu)
        }
    }

    private mutating func response(_ pdu: ATTPDU) -> [Action] {
        switch phase {
        case .idle, .ready where outstanding == nil:
            return [.failed("ATT: an answer nothing asked for (0x\(hex(pdu.encoded[0])))")]
        case .mtu:
            if case .mtuResponse(let m) = pdu { peerMTU = max(23, min(m, mtu)) }
            // A peer that refuses the exchange keeps the default 23.
            phase = .services
            return [.send(.readByGroupTypeRequest(start: 1, end: 0xFFFF, type: .primaryService))]
        case .services:
            switch pdu {
            case .readByGroupTypeResponse(let list):
                for r in list {
                    guard let u = BLEUUID(wire: r.value[...]), r.end >= r.handle else { return [.failed("ATT: a service's UUID of \(r.value.count) bytes")] }
                    services.append(GATTService(uuid: u, start: r.handle, end: r.end))
                }
                if let last = list.last, last.end < 0xFFFF {
                    return [.send(.readByGroupTypeRequest(start: last.end + 1, end: 0xFFFF, type: .primaryService))]
                }
                return characteristics(from: 0, at: nil)
            case .error(_, _, ATTPDU.attributeNotFound):
                return characteristics(from: 0, at: nil)
            default:
                return [.failed("ATT: discovering services: \(pdu)")]
            }
        case .characteristics(let i):
            switch pdu {
            case .readByTypeResponse(let list):
                for r in list {
                    guard r.value.count == 5 || r.value.count == 19, let u = BLEUUID(wire: r.value[3...]) else {
                        return [.failed("ATT: a characteristic declaration of \(r.value.count) bytes")]
                    }
                    services[i].characteristics.append(GATTCharacteristic(
                        uuid: u, declaration: r.handle, valueHandle: UInt16(r.value[1]) | UInt16(r.value[2]) << 8, properties: r.value[0]))
                }
                if let last = list.last, last.handle < services[i].end { return characteristics(from: i, at: last.handle + 1) }
                return characteristics(from: i + 1, at: nil)
            case .error(_, _, ATTPDU.attributeNotFound):
                return characteristics(from: i + 1, at: nil)
            default:
                return [.failed("ATT: discovering characteristics: \(pdu)")]
            }
        case .descriptors(let i, let k):
            switch pdu {
            case .findInformationResponse(let list):
                if let d = list.first(where: { $0.type == .clientConfiguration }) { services[i].characteristics[k].configuration = d.handle }
            case .error(_, _, ATTPDU.attributeNotFound):
                break
            default:
                return [.failed("ATT: discovering descriptors: \(pdu)")]
            }
            return descriptors(after: i, k)
        case .ready:
            let op = outstanding!
            outstanding = nil
            var out: [Action]
            switch (op, pdu) {
            case (.read(let h), .readResponse(let v)): out = [.read(handle: h, value: v)]
            case (.write(let h, _), .writeResponse): out = [.written(handle: h)]
            case (.read(let h), .error(_, _, let code)): out = [.failed("reading handle 0x\(hex16(h)): ATT error 0x\(hex(code))")]
            case (.write(let h, _), .error(_, _, let code)): out = [.failed("writing handle 0x\(hex16(h)): ATT error 0x\(hex(code))")]
            default: out = [.failed("ATT: an answer that does not fit the request (0x\(hex(pdu.encoded[0])))")]
            }
            return out + next()
        }
    }

    /// Discovers service `i`'s characteristics from `at` (its start when nil).
    private mutating func characteristics(from i: Int, at: UInt16?) -> [Action] {
        guard i < services.count else { return descriptors(after: 0, -1) }
        phase = .characteristics(i)
        return [.send(.readByTypeRequest(start: at ?? services[i].start, end: services[i].end, type: .characteristic))]
    }

    /// Looks for the configuration descriptor of the next characteristic that notifies.
    private mutating func descriptors(after i: Int, _ k: Int) -> [Action] {
        var si = i, ck = k + 1
        while si < services.count {
            let cs = services[si].characteristics
            while ck < cs.count {
                if cs[ck].notifies {
                    let end = ck + 1 < cs.count ? cs[ck + 1].declaration - 1 : services[si].end
                    if end > cs[ck].valueHandle {
                        phase = .descriptors(si, ck)
                        return [.send(.findInformationRequest(start: cs[ck].valueHandle + 1, end: end))]
                    }
                }
                ck += 1
            }
            si += 1
            ck = 0
        }
        phase = .ready
        return [.discovered(services)] + next()
    }

    private mutating func next() -> [Action] {
        guard ready, outstanding == nil, !queue.isEmpty else { return [] }
        let op = queue.removeFirst()
        outstanding = op
        switch op {
        case .read(let h): return [.send(.readRequest(h))]
        case .write(let h, let v): return [.send(.writeRequest(handle: h, value: v))]
        }
    }
}

/// Four upper-case hex digits.
package func hex16(_ v: UInt16) -> String { hex(UInt8(v >> 8)) + hex(UInt8(v & 0xFF)) }
