// SPDX-License-Identifier: Apache-2.0
// Bluetooth LE's ATT channel through the kernel's L2CAP sockets (BlueZ's libbluetooth):
// a central connects to a peripheral's ATT channel, a peripheral (the emulated PM5 of the
// rig's tests) accepts one; and the few controller calls the rig's virtual controllers
// need (address, power, advertising).

import CBlueZShim
public import GATT
import Glibc

/// A Bluetooth call that failed, with what to do where there is something.
public struct BlueZError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ what: String, errno e: Int32) {
        let why = String(cString: strerror(e))
        let advice = switch e {
        case ENODEV: ": no such Bluetooth controller (is the adapter there and not blocked? see `rfkill list`)"
        case EHOSTDOWN, ETIMEDOUT: ": the device did not answer (is it on and in reach?)"
        case EBUSY: ": the controller is busy with another connection attempt; try again"
        default: ""
        }
        description = "Bluetooth: \(what): \(why)\(advice)"
    }
    public init(_ description: String) { self.description = "Bluetooth: " + description }
}

/// Controller calls (hciN by number).
public enum BlueZController {
    public static func address(_ controller: Int) throws(BlueZError) -> BluetoothAddress {
        var out = [UInt8](repeating: 0, count: 6)
        guard sg_bt_address(Int32(controller), &out) == 0 else { throw BlueZError("address of hci\(controller)", errno: errno) }
        return BluetoothAddress(bytes: out)
    }

    /// Whether the controller is up (powered); throws when there is no such controller.
    public static func isUp(_ controller: Int) throws(BlueZError) -> Bool {
        let r = sg_bt_is_up(Int32(controller))
        guard r >= 0 else { throw BlueZError("hci\(controller)", errno: errno) }
        return r == 1
    }

    public static func powerOn(_ controller: Int) throws(BlueZError) {
        guard sg_bt_up(Int32(controller)) == 0 else { throw BlueZError("powering hci\(controller) on", errno: errno) }
    }

    /// Drops every link of the controller, as a device going out of reach does; how many.
    @discardableResult
    public static func dropLinks(_ controller: Int) throws(BlueZError) -> Int {
        let n = sg_bt_drop_links(Int32(controller))
        guard n >= 0 else { throw BlueZError("dropping the links of hci\(controller)", errno: errno) }
        return Int(n)
    }

    /// What the controller's advertising says: the advertisement and the scan response
    /// (at most 31 bytes each; the Core specification's AD structures).
    public static func setAdvertising(_ controller: Int, data: [UInt8], scanResponse: [UInt8]) throws(BlueZError) {
        guard sg_bt_set_advertising_data(Int32(controller), data, Int32(data.count)) == 0 else {
            throw BlueZError("setting the advertising data of hci\(controller)", errno: errno)
        }
        guard sg_bt_set_scan_response(Int32(controller), scanResponse, Int32(scanResponse.count)) == 0 else {
            throw BlueZError("setting the scan response of hci\(controller)", errno: errno)
        }
    }

    /// Connectable advertising on or off.
    public static func advertise(_ controller: Int, _ on: Bool) throws(BlueZError) {
        guard sg_bt_advertise(Int32(controller), on ? 1 : 0) == 0 else { throw BlueZError("advertising on hci\(controller)", errno: errno) }
    }
}

/// One ATT channel: a sequenced-packet socket, one PDU per read and write.
public final class ATTChannel: @unchecked Sendable {
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }
    deinit { close() }

    /// Connects from controller `controller` (nil: any) to `peer`'s ATT channel; the kernel
    /// creates the LE link (it waits for the peer's advertising) within `timeout` seconds.
    public static func connect(from controller: Int?, to peer: BluetoothAddress, random: Bool = false,
                               timeout: Double) throws(BlueZError) -> ATTChannel {
        let fd = sg_att_connect(Int32(controller ?? -1), peer.bytes, random ? 1 : 0)
        guard fd >= 0 else { throw BlueZError("connecting to \(peer)", errno: errno) }
        let ch = ATTChannel(fd: fd)
        var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let n = poll(&p, 1, Int32(timeout * 1000))
        guard n > 0 else { throw BlueZError("connecting to \(peer)", errno: n == 0 ? ETIMEDOUT : errno) }
        let e = sg_socket_error(fd)
        guard e == 0 else { throw BlueZError("connecting to \(peer)", errno: e) }
        // Blocking from here: reads wait in poll with their own timeout.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return ch
    }

    /// Sends one PDU.
    public func send(_ pdu: [UInt8]) throws(BlueZError) {
        let n = pdu.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n == pdu.count else { throw BlueZError("sending on the ATT channel", errno: n < 0 ? errno : EMSGSIZE) }
    }

    /// The next PDU, or nil when none came within `timeout` seconds. Throws when the link
    /// is gone (the peer went out of reach or disconnected).
    public func receive(timeout: Double) throws(BlueZError) -> [UInt8]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(max(0, timeout) * 1000))
        if r < 0 { if errno == EINTR { return nil }; throw BlueZError("waiting on the ATT channel", errno: errno) }
        if r == 0 { return nil }
        var buf = [UInt8](repeating: 0, count: 1024)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 { throw BlueZError("reading the ATT channel", errno: errno) }
        if n == 0 { throw BlueZError("the link was closed") }
        return Array(buf[0..<n])
    }

    /// Bytes sent and still queued in the kernel (the controller has not taken them yet);
    /// 0 once everything went out.
    public var unsentBytes: Int { fd < 0 ? 0 : max(0, Int(sg_socket_unsent(fd))) }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }
}

/// A listening ATT socket: the peripheral's side (the rig's emulated PM5).
public final class ATTListener: @unchecked Sendable {
    private var fd: Int32

    public init(controller: Int) throws(BlueZError) {
        fd = sg_att_listen(Int32(controller))
        guard fd >= 0 else { throw BlueZError("listening for ATT on hci\(controller)", errno: errno) }
    }
    deinit { close() }

    /// The next central that connects, or nil after `timeout` seconds.
    public func accept(timeout: Double) throws(BlueZError) -> ATTChannel? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let r = poll(&p, 1, Int32(timeout * 1000))
        guard r > 0 else { if r < 0 { throw BlueZError("waiting for a central", errno: errno) }; return nil }
        let c = Glibc.accept(fd, nil, nil)
        guard c >= 0 else { throw BlueZError("accepting a central", errno: errno) }
        _ = fcntl(c, F_SETFD, FD_CLOEXEC)
        return ATTChannel(fd: c)
    }

    public func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }
}

/// BlueZ's management channel: the kernel's interface for controlling controllers, which
/// bluetoothd uses too. Every management socket hears every event (a device found while
/// bluetoothd discovers reaches this one as well). Commands need CAP_NET_ADMIN.
public final class BlueZManagement: @unchecked Sendable {
    // Why an ATTChannel: a management socket is a packet socket as the ATT channel is, one
    // packet per read and write, and needs nothing else.
    private let socket: ATTChannel

    public init() throws(BlueZError) {
        let fd = sg_mgmt_open()
        guard fd >= 0 else { throw BlueZError("opening the management channel", errno: errno) }
        socket = ATTChannel(fd: fd)
    }

    /// Sends one command (header and parameters).
    public func send(_ packet: [UInt8]) throws(BlueZError) { try socket.send(packet) }

    /// The next event, or nil when none came within `timeout` seconds.
    public func receive(timeout: Double) throws(BlueZError) -> [UInt8]? { try socket.receive(timeout: timeout) }

    public func close() { socket.close() }
}
