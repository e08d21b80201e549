// SPDX-License-Identifier: Apache-2.0
// Command-line options of the served clock and multi-gate racing (run and demo), merged over the `[peers]` table.

import ArgumentParser
import GateConfig
import GateCore
import LinuxHardware
import Logging
import Race
import GateDaemon

/// `--ntp-port`, and `--peer-role`, `--peer-port`, `--pairing-code`, `--peer-host-address`,
/// `--gate-id`. The race options override the `[peers]` table of the settings file;
/// `--peer-role` alone (with a pairing code) turns racing on without one.
struct PeerArguments: ParsableArguments {
    @Option(help: "UDP port of the NTP server (serves the gate's clock); 0 turns it off. Default: 123 as root, off otherwise.")
    var ntpPort: Int?

    @Option(help: ArgumentHelp("For tests only: skew the served clock by OFFSET_MS,PPM.", visibility: .hidden))
    var testClockSkew: String?

    @Option(help: "Take part in a multi-gate race as host (keeps the results), gate, or auto (the auto gates elect a host: the lowest gate id).")
    var peerRole: String?

    @Option(help: "UDP port of the race link (default 47210, or [peers] port).")
    var peerPort: Int?

    @Option(help: "Pairing code shared by every gate of the group (6-64 letters or digits).")
    var pairingCode: String?

    @Option(help: "Gate only: send announces to this HOST:PORT instead of broadcasting.")
    var peerHostAddress: String?

    @Option(help: ArgumentHelp("For tests only: this gate's id (default: kept in the state directory).", visibility: .hidden))
    var gateID: UInt32?

    /// A race or served-clock option was given: the demo then runs one gate, which joins a
    /// session or serves its (skewed) clock over NTP as the options say.
    var givesGateOptions: Bool {
        peerRole != nil || pairingCode != nil || peerPort != nil || peerHostAddress != nil || gateID != nil
            || testClockSkew != nil || (ntpPort ?? 0) != 0
    }

    /// The race options, or nil when racing is off. Exits with a clear message on bad values.
    /// `--test-clock-skew` parsed (none without it), for the NTP server and the race link
    /// alike. Exits with a clear message on a bad value.
    func clockSkew(now: MonotonicInstant, log: Logger) -> ClockSkew {
        guard let testClockSkew else { return .none }
        guard let parsed = ClockSkew(parsing: testClockSkew, origin: now) else {
            fail("--test-clock-skew \(testClockSkew): expected OFFSET_MS,PPM with |offset| ≤ 1 day and |ppm| ≤ 1000")
        }
        log.warning("test clock skew: \(testClockSkew) (offset ms, ppm) applied to the served clock and the race link")
        return parsed
    }

    func resolve(settings: PeerSettings?, skew: ClockSkew, now: MonotonicInstant, listenHost: String = "0.0.0.0") -> PeerOptions? {
        guard peerRole != nil || settings != nil else {
            if pairingCode != nil || peerPort != nil || peerHostAddress != nil {
                fail("--pairing-code, --peer-port and --peer-host-address need --peer-role or a [peers] table")
            }
            return nil
        }
        let role: RaceSession.Kind
        var electable = false
        switch peerRole ?? settings?.role.rawValue {
        case "host"?: role = .host
        case "gate"?: role = .gate
        case "auto"?:
            role = .gate
            electable = true
        case let other: fail("--peer-role \(other ?? ""): expected host, gate or auto")
        }
        let port = peerPort ?? Int(settings?.port ?? PeerSettings.defaultPort)
        guard (0...65535).contains(port) else { fail("--peer-port \(port) is not a port (0...65535)") }
        guard let code = pairingCode ?? settings?.pairingCode else {
            fail("multi-gate racing needs a pairing code (--pairing-code or [peers] pairing_code)")
        }
        var hostAddress: UDPAddress?
        if let text = peerHostAddress {
            guard let a = UDPAddress(parsing: text) else { fail("--peer-host-address \(text): expected IPv4 HOST:PORT") }
            hostAddress = a
        } else if let h = settings?.hostAddress {
            guard let a = UDPAddress(host: h, port: UInt16(port)) else { fail("[peers] host \(h): not an IPv4 address") }
            hostAddress = a
        }
        if role == .host, hostAddress != nil { fail("--peer-host-address is for gates; the host listens") }
        if gateID == 0 { fail("--gate-id 0 is reserved") }
        var options = PeerOptions(role: role, electable: electable, port: UInt16(port), pairingCode: code, hostAddress: hostAddress,
                                  gateID: gateID, skew: skew)
        options.listenHost = listenHost
        return options
    }

    /// The services around the loop with this command line's NTP server and race link,
    /// both bound to `listenHost` (the page's address); exits with a clear message when the
    /// race link cannot start.
    func services(storage: GateStorage, web: WebGate?, settings: PeerSettings?, stateDirectory: String, listenHost: String,
                  epoll: borrowing EpollLoop, now: MonotonicInstant, peerLog: Logger, log: Logger) -> GateServices {
        if let ntpPort, !(0...65535).contains(ntpPort) { fail("--ntp-port \(ntpPort) is not a port (1...65535, 0 turns it off)") }
        let skew = clockSkew(now: now, log: peerLog)
        do {
            return try GateServices(storage: storage, web: web, ntpPort: ntpPort, listenHost: listenHost,
                                    peer: resolve(settings: settings, skew: skew, now: now, listenHost: listenHost),
                                    skew: skew, stateDirectory: stateDirectory, epoll: epoll, now: now, peerLog: peerLog, log: log)
        } catch {
            fail("race link not started: \(error)")
        }
    }
}
