// SPDX-License-Identifier: Apache-2.0
// BlueZ's management protocol (the kernel's HCI control channel, as bluetoothd and btmgmt
// speak it), the part a hub needs to find devices: Start and Stop Discovery out, their
// answers and the Device Found and Discovering events in. Bytes only; the socket is in
// LinuxHardware. Layout from BlueZ's doc/mgmt-api.txt: a 6-byte header (opcode or event
// code, controller index, parameter length, each little-endian) and the parameters.

/// A management command's bytes.
public enum MgmtCommand {
    /// Start Discovery: `types` 0x06 is LE with public and random addresses.
    public static let startDiscovery: UInt16 = 0x0023
    public static let stopDiscovery: UInt16 = 0x0024
    /// The address types of an LE discovery (bit 1 LE public, bit 2 LE random).
    public static let leTypes: UInt8 = 0x06

    public static func bytes(opcode: UInt16, index: UInt16, parameters: [UInt8]) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(6 + parameters.count)
        for v in [opcode, index, UInt16(parameters.count)] { b += [UInt8(v & 0xFF), UInt8(v >> 8)] }
        return b + parameters
    }

    public static func startLEDiscovery(index: UInt16) -> [UInt8] {
        bytes(opcode: startDiscovery, index: index, parameters: [leTypes])
    }

    public static func stopLEDiscovery(index: UInt16) -> [UInt8] {
        bytes(opcode: stopDiscovery, index: index, parameters: [leTypes])
    }
}

/// A device heard while discovering: Device Found (event 0x0012).
public struct MgmtDeviceFound: Sendable, Hashable {
    /// Most significant byte first, as the address is written.
    public var address: [UInt8]
    /// 0 BR/EDR, 1 LE public, 2 LE random.
    public var addressType: UInt8
    /// dBm; 127 when the controller did not say.
    public var rssi: Int8
    public var flags: UInt32
    /// The advertising data, and the scan response after it when one came (EIR format).
    public var data: [UInt8]
    public var random: Bool { addressType == 2 }
}

/// A management event, decoded strictly: a packet whose lengths disagree is nil.
public enum MgmtEvent: Sendable, Hashable {
    case commandComplete(index: UInt16, opcode: UInt16, status: UInt8)
    case commandStatus(index: UInt16, opcode: UInt16, status: UInt8)
    case deviceFound(index: UInt16, MgmtDeviceFound)
    case discovering(index: UInt16, types: UInt8, on: Bool)
    /// Any other event (controller added or removed, settings changed, …): its code.
    case other(index: UInt16, code: UInt16)

    public init?(_ b: [UInt8]) {
        guard b.count >= 6 else { return nil }
        func u16(_ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
        let code = u16(0), index = u16(2), length = Int(u16(4))
        guard b.count == 6 + length else { return nil }
        switch code {
        case 0x0001, 0x0002:
            guard length >= 3 else { return nil }
            self = code == 1 ? .commandComplete(index: index, opcode: u16(6), status: b[8])
                             : .commandStatus(index: index, opcode: u16(6), status: b[8])
        case 0x0012:
            guard length >= 14 else { return nil }
            let dataLength = Int(u16(18))
            guard length == 14 + dataLength else { return nil }
            let flags = UInt32(b[14]) | UInt32(b[15]) << 8 | UInt32(b[16]) << 16 | UInt32(b[17]) << 24
            self = .deviceFound(index: index, MgmtDeviceFound(address: Array(b[6..<12].reversed()), addressType: b[12],
                                                              rssi: Int8(bitPattern: b[13]), flags: flags, data: Array(b[20...])))
        case 0x0013:
            guard length == 2 else { return nil }
            self = .discovering(index: index, types: b[6], on: b[7] != 0)
        default:
            self = .other(index: index, code: code)
        }
    }

    /// A command's status code in words (doc/mgmt-api.txt's table), with what to do.
    public static func statusText(_ status: UInt8) -> String {
        switch status {
        case 0x00: "success"
        case 0x03: "failed"
        case 0x05: "rejected"
        case 0x0A: "busy (another discovery is running)"
        case 0x0C: "not supported by this controller"
        case 0x0D: "invalid parameters"
        case 0x0F: "the controller is off (power it on: `bluetoothctl power on`)"
        case 0x11: "no such controller"
        case 0x12: "the controller is blocked (see `rfkill list`)"
        case 0x14: "permission denied (the hub needs CAP_NET_ADMIN)"
        default: "status 0x" + String(status, radix: 16)
        }
    }
}

/// Advertising data (or a scan response, or both one after the other): the AD structures
/// of the Core specification, vol. 3 part C §11 — length, type, data.
public struct AdvertisingData: Sendable, Hashable {
    /// The complete or shortened local name.
    public var name: String?
    /// Service UUIDs listed, 16-bit ones widened over the base UUID.
    public var services: [BLEUUID] = []

    /// Nil when a structure runs past the end. A zero length ends the data (the padding of
    /// a 31-byte advertisement).
    public init?(_ b: [UInt8]) {
        var i = 0
        while i < b.count {
            let length = Int(b[i])
            if length == 0 { break }
            guard i + 1 + length <= b.count else { return nil }
            let type = b[i + 1]
            let value = Array(b[(i + 2)..<(i + 1 + length)])
            switch type {
            case 0x08, 0x09:
                // Why: a complete name (0x09) wins over a shortened one (0x08) in either order.
                let text = String(decoding: value, as: UTF8.self)
                if type == 0x09 || name == nil { name = text }
            case 0x02, 0x03:
                guard value.count % 2 == 0 else { return nil }
                for k in stride(from: 0, to: value.count, by: 2) { services.append(BLEUUID(wire: value[k..<(k + 2)])!) }
            case 0x06, 0x07:
                guard value.count % 16 == 0 else { return nil }
                for k in stride(from: 0, to: value.count, by: 16) { services.append(BLEUUID(wire: value[k..<(k + 16)])!) }
            default:
                break
            }
            i += 1 + length
        }
    }

    /// Flags, then the 128-bit service UUIDs: what a peripheral puts in its advertisement.
    public static func advertisement(services: [BLEUUID]) -> [UInt8] {
        var b: [UInt8] = [2, 0x01, 0x06]  // LE general discoverable, no BR/EDR
        if !services.isEmpty {
            b += [UInt8(1 + 16 * services.count), 0x07]
            for s in services { b += s.bytes.reversed() }
        }
        return b
    }

    /// The complete local name: what a peripheral puts in its scan response.
    public static func scanResponse(name: String) -> [UInt8] {
        let n = Array(name.utf8.prefix(29))
        return [UInt8(1 + n.count), 0x09] + n
    }
}
