// SPDX-License-Identifier: Apache-2.0
// The daemon's `[rowing]`: the hub with its PM5s over Bluetooth. The settings file's PM5s
// are connected at every start; the coach scans for more on the page and picks them, and
// those picks are kept in the state directory so that the row of ergs comes back after a
// power cut.

import Foundation
import GATT
public import GateConfig
import LinuxHardware
public import Logging
public import Rowing
public import SQLiteStore
import Synchronization
public import WebUI

/// The rowing hub as the daemon runs it on one Bluetooth adapter.
public final class BluetoothRowing: ErgPicker, @unchecked Sendable {
    public let hub: RowingHub
    public let ergs: BluetoothErgs
    public let scanner: PM5Scanner
    private let controller: Int
    private let fromSettings: [String]
    private let picksFile: String
    private let logger: Logger
    private let state: Mutex<State>

    /// A PM5 the coach picked, as the picks file keeps it.
    struct Pick: Codable, Hashable {
        var erg: Int
        var address: String
        var random: Bool
        var name: String
    }

    struct State {
        var picks: [Pick] = []
        var version: UInt64 = 1
        var saveProblem: String?
    }

    /// Why 20 s: two of the kernel's LE discoveries, and a PM5 woken from its menu
    /// advertises within a few seconds.
    public static let scanSeconds = 20.0
    public static let picksFileName = "rowing-pm5s.json"

    public init(settings: RowingSettings, store: RunStore?, stateDirectory: String, logger: Logger,
                clock: @escaping @Sendable () -> Double) {
        controller = settings.controller
        fromSettings = settings.ergs
        picksFile = stateDirectory + "/" + Self.picksFileName
        self.logger = logger
        let hub = RowingHub(store: store, control: nil, source: "Bluetooth hci\(settings.controller)", logger: logger, clock: clock)
        self.hub = hub
        let rate = PM5SampleRate.allCases.first { Int(($0.interval * 1000).rounded()) == settings.sampleRateMs } ?? .tenthSecond
        ergs = BluetoothErgs(ergs: [], controller: settings.controller, sampleRate: rate, logger: logger, clock: clock) { hub.apply($0) }
        scanner = PM5Scanner(controller: settings.controller, logger: logger, clock: clock)
        var s = State()
        s.picks = Self.load(picksFile, logger: logger)
        state = Mutex(s)
        hub.setControl(ergs)
        hub.setPicker(self)
    }

    /// The picks file, or none when it is missing or unreadable (said in the log; the
    /// settings file's PM5s still connect).
    static func load(_ path: String, logger: Logger) -> [Pick] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        do { return try JSONDecoder().decode([Pick].self, from: data) } catch {
            logger.error("\(path) is not a list of PM5s (\(error)); the PM5s picked on the page must be picked again")
            return []
        }
    }

    /// Connects the settings file's PM5s (ergs 1, 2, …) and the ones picked on the page.
    public func start() {
        var taken = Set<Int>()
        for (i, address) in fromSettings.enumerated() {
            connect(erg: i + 1, address: address, random: false, name: "PM5 \(address)")
            taken.insert(i + 1)
        }
        for p in state.withLock({ $0.picks }) where !taken.contains(p.erg) && !fromSettings.contains(p.address) {
            connect(erg: p.erg, address: p.address, random: p.random, name: p.name)
        }
        hub.start()
        ergs.start()
        logger.notice("rowing hub on hci\(controller): \(ergs.ergs.count) PM5s (\(fromSettings.count) from the settings file)")
    }

    public func stop() {
        scanner.stop()
        ergs.stop()
        hub.stop()
    }

    private func connect(erg: Int, address: String, random: Bool, name: String) {
        guard let e = BluetoothErgs.Erg(number: erg, address: address, random: random) else { return }
        do throws(BlueZError) {
            try ergs.add(e)
            hub.add(erg: erg, name: name)
        } catch {
            logger.warning("PM5 \(address) not connected: \(error)")
        }
    }

    public var version: UInt64 { state.withLock { $0.version } &+ scanner.status.version }

    public var bluetooth: RowingBluetooth {
        let scan = scanner.status
        let names = state.withLock { s in Dictionary(s.picks.map { ($0.erg, $0.name) }, uniquingKeysWith: { a, _ in a }) }
        let picked = ergs.ergs.map { e in
            RowingBluetooth.Picked(erg: e.number, address: e.address, name: names[e.number] ?? "PM5 \(e.address)",
                                   fromSettings: fromSettings.contains(e.address))
        }
        let problem = scan.problem ?? state.withLock { $0.saveProblem }
        var b = RowingBluetooth(controller: "hci\(controller)", scanning: scan.scanning, scanProblem: problem, found: scan.found,
                                others: scan.others, picked: picked, limit: RowingSettings.ergsPerAdapter)
        b.sharedScan = scan.shared
        return b
    }

    public func scan() throws(ResultsBookError) {
        scanner.scan(seconds: Self.scanSeconds)
    }

    public func pick(address text: String) throws(ResultsBookError) -> Int {
        guard let address = BluetoothAddress(text)?.description else {
            throw ResultsBookError(.invalid, field: "address", reason: "\"\(text)\" is not a Bluetooth address, e.g. \"C2:11:22:33:44:55\"")
        }
        let current = ergs.ergs
        if let e = current.first(where: { $0.address == address }) {
            throw ResultsBookError(.conflict, field: "address", reason: "\(address) is already erg \(e.number)")
        }
        guard current.count < RowingSettings.ergsPerAdapter else {
            throw ResultsBookError(.conflict, field: "address",
                                   reason: "hci\(controller) already has \(current.count) PM5s, as many as one adapter takes: let one go first, or run a second hub")
        }
        let found = scanner.status.found.first { $0.address == address }
        // Why: a connection attempt made while the controller discovers may not go
        // through (in the rig, the first timed out); the coach has found the PM5, so the
        // scan ends here.
        scanner.end()
        let numbers = Set(current.map(\.number))
        let erg = (1...).first { !numbers.contains($0) }!
        let pick = Pick(erg: erg, address: address, random: found?.random ?? false, name: found?.name ?? "PM5 \(address)")
        guard let e = BluetoothErgs.Erg(number: erg, address: address, random: pick.random) else {
            throw ResultsBookError(.invalid, field: "address", reason: "\"\(text)\" is not a Bluetooth address")
        }
        do throws(BlueZError) { try ergs.add(e) } catch {
            throw ResultsBookError(.conflict, field: "address", reason: error.description)
        }
        hub.add(erg: erg, name: pick.name)
        update { $0.removeAll { $0.erg == erg || $0.address == address }; $0.append(pick) }
        logger.notice("PM5 \(address) picked as erg \(erg)")
        return erg
    }

    public func letGo(erg: Int) throws(ResultsBookError) {
        guard let e = ergs.ergs.first(where: { $0.number == erg }) else {
            throw ResultsBookError(.notFound, field: "erg", reason: "there is no erg \(erg) on this hub")
        }
        guard !fromSettings.contains(e.address) else {
            throw ResultsBookError(.conflict, field: "erg",
                                   reason: "erg \(erg) (\(e.address)) is in the settings file's [rowing] ergs: remove it there and restart")
        }
        ergs.remove(number: erg)
        hub.remove(erg: erg)
        update { $0.removeAll { $0.erg == erg } }
        logger.notice("PM5 \(e.address) (erg \(erg)) let go")
    }

    /// Changes the picks and writes them (a new file renamed over the old: a power cut
    /// leaves one or the other whole).
    private func update(_ change: (inout [Pick]) -> Void) {
        let picks = state.withLock { s in
            change(&s.picks)
            s.picks.sort { $0.erg < $1.erg }
            s.version &+= 1
            return s.picks
        }
        var problem: String?
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try encoder.encode(picks).write(to: URL(fileURLWithPath: picksFile), options: .atomic)
        } catch {
            problem = "the PM5s picked could not be saved to \(picksFile) (\(error.localizedDescription)); they are connected until the hub restarts"
            logger.error("\(problem!)")
        }
        state.withLock { s in
            if s.saveProblem != problem { s.saveProblem = problem; s.version &+= 1 }
        }
    }
}
