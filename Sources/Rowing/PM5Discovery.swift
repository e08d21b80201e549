// SPDX-License-Identifier: Apache-2.0
// Telling PM5s among the devices a scan hears: by their name ("PM5 430…") or the PM5's
// discovery service (CE060000-…) in what they advertise. A value type fed Device Found
// events; the scanning thread is in GateDaemon.

public import GATT

/// A PM5 heard advertising.
public struct FoundPM5: Sendable, Hashable, Codable {
    /// "C2:11:22:33:44:55".
    public var address: String
    /// A random (not public) device address: the connection must say so.
    public var random: Bool
    /// "PM5 430123456", or nil while only the advertisement (without the scan response
    /// with the name) has been heard.
    public var name: String?
    /// The strongest signal lately, dBm; nil when the controller gave none.
    public var rssi: Int?
    /// Hub seconds when it was last heard.
    public var lastHeard: Double
}

/// The PM5s heard so far, strongest first.
public struct PM5Finder: Sendable {
    /// The PM5's discovery service, which it advertises.
    public static let service = BLEUUID(PM5UUID.full(0x0000))!

    public private(set) var found: [FoundPM5] = []
    /// Devices heard that are not PM5s (a phone, a heart-rate strap…), and advertisements
    /// that could not be read.
    public private(set) var others = 0
    public private(set) var unreadable = 0
    private var other: Set<[UInt8]> = []

    public init() {}

    /// A PM5 by what it advertises: the PM5 service, or a name of "PM5" and its serial.
    public static func isPM5(_ ad: AdvertisingData) -> Bool {
        ad.services.contains(service) || (ad.name.map { $0 == "PM5" || $0.hasPrefix("PM5 ") } ?? false)
    }

    /// Takes one Device Found event heard at `t`.
    public mutating func heard(_ d: MgmtDeviceFound, at t: Double) {
        guard d.address.count == 6 else { unreadable += 1; return }
        guard let ad = AdvertisingData(d.data) else { unreadable += 1; return }
        let address = BluetoothAddress(bytes: d.address).description
        let rssi: Int? = d.rssi == 127 ? nil : Int(d.rssi)
        if let i = found.firstIndex(where: { $0.address == address }) {
            // Why: a scan response often comes as its own event, with the name and not the service.
            if let n = ad.name { found[i].name = n }
            found[i].rssi = rssi ?? found[i].rssi
            found[i].lastHeard = t
            found[i].random = d.random
        } else if Self.isPM5(ad) {
            found.append(FoundPM5(address: address, random: d.random, name: ad.name, rssi: rssi, lastHeard: t))
            if other.remove(d.address) != nil { others -= 1 }
        } else if !other.contains(d.address) {
            other.insert(d.address)
            others += 1
        }
        found.sort { ($0.rssi ?? -127, $1.address) > ($1.rssi ?? -127, $0.address) }
    }
}
