// SPDX-License-Identifier: Apache-2.0
// The GPS client thread: keeps a connection to gpsd, hands each fix on, and keeps the status.

import Foundation
public import GPSTiming
public import Logging
import Synchronization

/// Where gpsd is and what the board asks of the receiver.
public struct GPSDConfig: Sendable, Hashable {
    public var host: String
    public var port: UInt16
    /// The fix rate the board's receiver is set to, Hz; a lower measured rate is a warning.
    public var wantedRate: Double?
    /// Ask gpsd to set the receiver to `wantedRate` whenever it is found at another rate (a
    /// u-blox forgets its rate at power-off unless it was saved to its flash).
    public var setRate: Bool
    public init(host: String = "127.0.0.1", port: UInt16 = 2947, wantedRate: Double? = nil, setRate: Bool = false) {
        self.host = host
        self.port = port
        self.wantedRate = wantedRate
        self.setRate = setRate
    }
}

/// gpsd's client on a thread of its own. Fixes go to `onFix` on that thread, in the order
/// gpsd sent them; the status is read from any thread. gpsd absent, a receiver unplugged or
/// no fix are states shown in `status`, never an error that stops anything: the thread
/// reconnects every `retry` seconds.
public final class GPSDReceiver: @unchecked Sendable {
    public let config: GPSDConfig
    private let logger: Logger
    private let onFix: @Sendable (GPSFix) -> Void
    private let shared: Mutex<Shared>
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var started = false

    private struct Shared {
        var status: ReceiverStatus
        var connection: GPSDConnection?
    }

    /// Seconds between attempts to reach gpsd.
    public static let retry = 2.0
    /// Seconds without a report before the receiver counts as silent (gpsd keeps the device
    /// open after a receiver stops talking; a 1 Hz receiver is well inside this).
    public static let silence = 3.0

    public init(config: GPSDConfig, logger: Logger, onFix: @escaping @Sendable (GPSFix) -> Void) {
        self.config = config
        self.logger = logger
        self.onFix = onFix
        shared = Mutex(Shared(status: ReceiverStatus(wantedRate: config.wantedRate)))
    }

    public var status: ReceiverStatus { shared.withLock { $0.status } }

    public func start() {
        precondition(!started, "started twice")
        started = true
        let t = Thread { [self] in
            run()
            stopped.signal()
        }
        t.name = "sprintgate.gps"
        t.start()
    }

    public func stop() {
        guard started, !stopping.exchange(true, ordering: .relaxed) else { return }
        shared.withLock { $0.connection?.shutdown() }
        stopped.wait()
    }

    private func update(_ body: (inout ReceiverStatus) -> Void) {
        shared.withLock { body(&$0.status) }
    }

    private func run() {
        var rate = FixRate()
        var lastLogged = ""
        func note(_ link: ReceiverStatus.Link, _ detail: String) {
            update { $0.link = link; $0.detail = detail }
            let line = "\(link.rawValue): \(detail)"
            if line != lastLogged {
                lastLogged = line
                if link == .fix { logger.info("GPS \(detail)") } else { logger.warning("GPS \(detail)") }
            }
        }
        while !stopping.load(ordering: .relaxed) {
            let c: GPSDConnection
            do {
                c = try GPSDConnection(host: config.host, port: config.port)
                try c.watch()
            } catch {
                note(.noDaemon, error.description)
                sleep(Self.retry)
                continue
            }
            shared.withLock { $0.connection = c }
            if stopping.load(ordering: .relaxed) { break }
            note(.noReceiver, "gpsd has no receiver: plug the GPS receiver in")
            var drivers = GPSDDrivers()
            var asked: [String: Double] = [:]
            var lastReport = Date()
            do {
                while !stopping.load(ordering: .relaxed) {
                    switch try c.nextLine(timeout: 1) {
                    case .timedOut:
                        break
                    case .line(let text):
                        guard !text.isEmpty else { break }
                        let report: GPSDReport
                        do {
                            report = try GPSDReport.decode(text)
                        } catch {
                            update { $0.badLines += 1 }
                            logger.debug("\(error.description)")
                            break
                        }
                        let fix = drivers.fix(report)
                        switch report {
                        case .version(let release):
                            update { $0.gpsdRelease = release }
                        case .devices:
                            describe(drivers.devices)
                            controlRate(c, drivers.devices, &asked)
                        case .device:
                            describe(drivers.devices)
                            if drivers.devices.isEmpty {
                                note(.noReceiver, "the GPS receiver was unplugged: plug it back in")
                                asked = [:]
                            }
                            controlRate(c, drivers.devices, &asked)
                        case .position(let p):
                            lastReport = Date()
                            handle(p, fix, &rate, note)
                        case .sky(let s):
                            lastReport = Date()
                            update { $0.satellitesUsed = s.used; $0.satellitesSeen = s.seen }
                        case .error(let message):
                            logger.warning("gpsd: \(message)")
                        case .watch, .other:
                            break
                        }
                    }
                    let quiet = Date().timeIntervalSince(lastReport)
                    if !drivers.devices.isEmpty, quiet > Self.silence, status.link == .fix || status.link == .noFix {
                        note(.noFix, "the GPS receiver has sent nothing for \(Int(quiet)) s: check its cable")
                    }
                }
            } catch {
                note(.noDaemon, error.description)
            }
            shared.withLock { $0.connection = nil }
            if !stopping.load(ordering: .relaxed) { sleep(Self.retry) }
        }
    }

    private func describe(_ devices: [String: GPSDDevice]) {
        let d = devices.values.sorted { $0.path < $1.path }.first
        update {
            $0.device = d?.path
            $0.driver = d?.driver
        }
    }

    /// Brings each receiver to the board's rate through gpsd, once per device and
    /// connection: asks, then reads gpsd's answer in the device's next DEVICE report.
    private func controlRate(_ c: GPSDConnection, _ devices: [String: GPSDDevice], _ asked: inout [String: Double]) {
        guard config.setRate, let wanted = config.wantedRate else { return }
        for d in devices.values.sorted(by: { $0.path < $1.path }) where d.active && d.driver != nil {
            let control: ReceiverStatus.RateControl?
            if let cycle = asked[d.path] {
                guard cycle > 0 else { continue } // answered already
                asked[d.path] = 0
                if let now = d.cycle, abs(now - cycle) <= 0.05 * cycle {
                    control = .set(wanted)
                } else {
                    control = .refused("gpsd did not change the receiver's rate: if gpsd runs read-only (-b in GPSD_OPTIONS of /etc/default/gpsd), remove -b; or set it to \(ReceiverStatus.hz(wanted)) Hz with its maker's tool")
                }
            } else {
                switch d.rateChange(to: wanted) {
                case .already:
                    control = nil
                case .set(let cycle):
                    do {
                        try c.setCycle(path: d.path, cycle: cycle)
                        asked[d.path] = cycle
                        control = .asked(wanted)
                    } catch {
                        control = .refused(error.description)
                    }
                case .unsupported(let why):
                    control = .refused(why)
                }
            }
            let before = status.rateControl
            update { $0.rateControl = control }
            guard control != before, let control else { continue }
            switch control {
            case .asked(let h): logger.info("GPS: asking gpsd to set \(d.path) (\(d.driver ?? "")) to \(ReceiverStatus.hz(h)) fixes/s")
            case .set(let h): logger.notice("GPS: gpsd set \(d.path) to \(ReceiverStatus.hz(h)) fixes/s")
            case .refused(let why): logger.warning("GPS: \(why)")
            }
        }
    }

    private func handle(_ p: GPSDPosition, _ fix: GPSFix?, _ rate: inout FixRate, _ note: (ReceiverStatus.Link, String) -> Void) {
        if let t = p.time, p.mode >= .twoD { rate.note(t) }
        let hertz = rate.hertz
        update {
            $0.mode = p.mode
            $0.horizontalError = p.eph
            $0.speedError = fix?.speedError
            $0.speed = p.mode >= .twoD ? p.speed : nil
            if let t = p.time, p.mode >= .twoD { $0.lastFix = t }
            $0.rate = hertz
            if p.device != nil, $0.device == nil { $0.device = p.device }
        }
        if p.mode >= .twoD {
            let eph = p.eph.map { ", ±\(Int($0.rounded())) m" } ?? ""
            note(.fix, "\(p.mode == .threeD ? "3D" : "2D") fix\(eph)")
        } else {
            note(.noFix, "the GPS receiver has no fix yet: give it a clear view of the sky")
        }
        if let fix { onFix(fix) }
    }

    /// Watches gpsd for `seconds` (or until five fixes have come and the rate is known)
    /// and returns what it saw: `selftest`'s view of the receiver. With `config.setRate` it
    /// also has gpsd set the receiver's rate, and measures it again (`selftest --fix`).
    public static func probe(_ config: GPSDConfig, seconds: Double, logger: Logger) -> ReceiverStatus {
        let rx = GPSDReceiver(config: config, logger: logger) { _ in }
        rx.start()
        let end = Date().addingTimeInterval(seconds)
        // The rate needs five fixes: a 1 Hz receiver needs the whole wait. A rate set through
        // gpsd is measured anew before the answer.
        func settled(_ s: ReceiverStatus) -> Bool {
            guard s.rate != nil, s.satellitesUsed != nil else { return false }
            switch s.rateControl {
            case .asked: return false
            case .set: return s.rateWarning == nil
            case nil, .refused: return true
            }
        }
        while Date() < end, !settled(rx.status) { usleep(100_000) }
        let s = rx.status
        rx.stop()
        return s
    }

    private func sleep(_ seconds: Double) {
        var left = seconds
        while left > 0, !stopping.load(ordering: .relaxed) {
            usleep(100_000)
            left -= 0.1
        }
    }
}
