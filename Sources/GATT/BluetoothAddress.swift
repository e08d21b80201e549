// SPDX-License-Identifier: Apache-2.0
// A Bluetooth device address and its written form, as bluetoothctl and a PM5's own
// screen show it: the one parser and printer for the settings file, the scan and the
// kernel's sockets.

/// A Bluetooth device address, written most significant byte first ("C2:11:22:33:44:55").
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    /// Six bytes, most significant first.
    public var bytes: [UInt8]
    public init(bytes: [UInt8]) { self.bytes = bytes }
    /// Six two-digit hex numbers with colons, in either case; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6 else { return nil }
        var b: [UInt8] = []
        for p in parts {
            guard p.count == 2, p.allSatisfy(\.isHexDigit), let v = UInt8(p, radix: 16) else { return nil }
            b.append(v)
        }
        bytes = b
    }
    /// Upper case, as bluetoothctl writes it.
    public var description: String {
        bytes.map { v in let s = String(v, radix: 16, uppercase: true); return s.count == 1 ? "0" + s : s }.joined(separator: ":")
    }
}
