// SPDX-License-Identifier: Apache-2.0
// The rowing hub's PM5s over Bluetooth LE: one thread per erg keeps its ATT channel
// (BlueZ's L2CAP sockets), runs its GATT session and hands what it sends to the hub; a
// lost erg is connected again with back-off, and workouts are written to it in turn.

import Foundation
import GATT
public import LinuxHardware
public import Rowing
import Synchronization
public import Logging

/// The PM5s a hub connects to, by address. Each erg's events reach `deliver` on its own
/// thread: connected once its GATT session is set up, each notification, disconnected when
/// the link is lost (the hub marks the gap; the PM5 goes on counting strokes).
public final class BluetoothErgs: ErgControl, @unchecked Sendable {
    public struct Erg: Sendable, Hashable {
        public var number: Int
        /// "C2:11:22:33:44:55", as `bluetoothctl` and the PM5's own screen show it.
        public var address: String
        public var random: Bool
        let bytes: [UInt8]
        /// Nil when `address` is not a Bluetooth address.
        public init?(number: Int, address: String, random: Bool = false) {
            guard let a = BluetoothAddress(address) else { return nil }
            self.number = number
            self.address = a.description
            self.random = random
            bytes = a.bytes
        }
    }

    /// The ergs connected to (or being connected to), in erg order.
    public var ergs: [Erg] { lock.withLock { wanted.values.sorted { $0.number < $1.number } } }
    private let controller: Int?
    private let sampleRate: PM5SampleRate
    private let clock: @Sendable () -> Double
    private let deliver: @Sendable (PM5LogEvent) -> Void
    private let logger: Logger
    private let stopping = Atomic(false)
    /// Why one at a time: a controller makes one LE connection at a time; a second attempt
    /// meanwhile fails with EBUSY.
    private let connecting = NSLock()
    private let lock = NSLock()
    // Guarded by `lock`: frames waiting per erg, and the answers given back.
    private var outbox: [Int: [[UInt8]]] = [:]
    private var answers: [Int: [[UInt8]]] = [:]
    private var connected: Set<Int> = []
    private var threads: [Thread] = []
    private var wanted: [Int: Erg] = [:]
    private var started = false

    /// Why 1 s doubling to 30 s: an erg back in reach is found again within seconds, and one
    /// switched off costs a connection attempt every half minute.
    static let firstRetry = 1.0, longestRetry = 30.0
    /// How long a connection attempt waits for the PM5's advertising.
    static let connectTimeout = 10.0
    /// How long a new link may take to be read and subscribed: a PM5 does it in about a
    /// second over a 7.5 ms connection interval.
    static let readyTimeout = 15.0

    public init(ergs: [Erg], controller: Int?, sampleRate: PM5SampleRate = .tenthSecond, logger: Logger,
                clock: @escaping @Sendable () -> Double, deliver: @escaping @Sendable (PM5LogEvent) -> Void) {
        wanted = Dictionary(ergs.map { ($0.number, $0) }, uniquingKeysWith: { _, b in b })
        self.controller = controller
        self.sampleRate = sampleRate
        self.logger = logger
        self.clock = clock
        self.deliver = deliver
    }

    public func start() {
        let all = lock.withLock {
            started = true
            return wanted.values.sorted { $0.number < $1.number }
        }
        for erg in all { spawn(erg) }
    }

    private func spawn(_ erg: Erg) {
        let t = Thread { [self] in keep(erg) }
        t.name = "pm5-\(erg.number)"
        lock.withLock { threads.append(t) }
        t.start()
    }

    /// Connects to one more erg (the coach picked it on the page). Throws when its number
    /// or its address is already taken.
    public func add(_ erg: Erg) throws(BlueZError) {
        let (go, problem) = lock.withLock { () -> (Bool, String?) in
            guard wanted[erg.number] == nil else { return (false, "there is already an erg \(erg.number)") }
            guard !wanted.values.contains(where: { $0.address == erg.address }) else { return (false, "\(erg.address) is already connected") }
            wanted[erg.number] = erg
            return (started, nil)
        }
        if let problem { throw BlueZError(problem) }
        if go { spawn(erg) }
    }

    /// Lets erg `number` go: its link is closed and not made again.
    public func remove(number: Int) {
        lock.withLock { _ = wanted.removeValue(forKey: number) }
    }

    private func wants(_ erg: Erg) -> Bool {
        !stopping.load(ordering: .relaxed) && lock.withLock { wanted[erg.number]?.address == erg.address }
    }

    /// Ends every link and waits for the threads.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        while lock.withLock({ threads.contains { !$0.isFinished } }) { usleep(10_000) }
        // Why: each thread's block holds this object; letting go of them frees it.
        lock.withLock { threads.removeAll() }
    }

    /// Keeps erg `erg` connected until `stop`.
    private func keep(_ erg: Erg) {
        var delay = Self.firstRetry
        while wants(erg) {
            let channel: ATTChannel
            do {
                channel = try connecting.withLock { () throws(BlueZError) -> ATTChannel in
                    try ATTChannel.connect(from: controller, to: BluetoothAddress(bytes: erg.bytes), random: erg.random, timeout: Self.connectTimeout)
                }
            } catch {
                logger.debug("PM5 \(erg.number) (\(erg.address)) not connected: \(error); again in \(Int(delay)) s")
                sleep(delay, erg)
                delay = min(Self.longestRetry, delay * 2)
                continue
            }
            delay = Self.firstRetry
            logger.debug("PM5 \(erg.number) (\(erg.address)): link made; reading its services")
            session(erg, channel)
            channel.close()
            let was = lock.withLock { connected.remove(erg.number) != nil }
            if was, wants(erg) {
                deliver(.disconnected(t: clock(), erg: erg.number))
                logger.warning("PM5 \(erg.number) (\(erg.address)) out of reach; connecting again")
            }
        }
    }

    /// Runs one connection's GATT session until the link is lost or the hub stops.
    private func session(_ erg: Erg, _ ch: ATTChannel) {
        var link = PM5Link(sampleRate: sampleRate)
        func handle(_ events: [PM5Link.Event]) throws(BlueZError) {
            for e in events {
                switch e {
                case .send(let b): try ch.send(b)
                case .notification(0x0022, let b): lock.withLock { answers[erg.number, default: []].append(b) }
                case .notification(let c, let b): deliver(.notification(t: clock(), erg: erg.number, characteristic: c, bytes: b))
                case .information(let c, let text): logger.debug("PM5 \(erg.number): information 0x\(String(c, radix: 16)) \(text)")
                case .ready:
                    lock.withLock { _ = connected.insert(erg.number) }
                    deliver(.connected(t: clock(), erg: erg.number))
                    logger.notice("PM5 \(erg.number) (\(erg.address)) connected")
                case .problem(let why): logger.warning("PM5 \(erg.number): \(why)")
                }
            }
        }
        do throws(BlueZError) {
            try handle(link.start())
            var checked = clock()
            let began = checked
            while !stopping.load(ordering: .relaxed) {
                // Why: a link whose peer never answers the GATT discovery (a device that is
                // not a PM5, or a PM5 busy in its menus) would hold the erg forever.
                if !link.ready, clock() - began > Self.readyTimeout {
                    logger.warning("PM5 \(erg.number) (\(erg.address)) did not answer the GATT discovery within \(Int(Self.readyTimeout)) s; connecting again")
                    return
                }
                // Why every half second: a forgotten erg's link closes soon enough for the
                // page, and the hot loop takes no lock per PDU.
                if clock() - checked > 0.5 {
                    checked = clock()
                    guard wants(erg) else { return }
                }
                if link.ready, let frames = lock.withLock({ outbox.removeValue(forKey: erg.number) }) {
                    for f in frames { try handle(link.writeControl(f)) }
                }
                if let pdu = try ch.receive(timeout: 0.02) { try handle(link.receive(pdu)) }
            }
        } catch {
            logger.debug("PM5 \(erg.number): \(error)")
        }
    }

    /// Writes the frames on the erg's thread and waits for its answers (one a frame).
    public func program(erg: Int, frames: [[UInt8]]) throws -> [[UInt8]] {
        let problem = lock.withLock { () -> String? in
            guard wanted[erg] != nil else { return "no PM5 \(erg) on this hub" }
            guard connected.contains(erg) else { return "PM5 \(erg) is not connected" }
            answers[erg] = []
            outbox[erg, default: []] += frames
            return nil
        }
        if let problem { throw BlueZError(problem) }
        // Why 5 s: a PM5 answers a frame within a connection interval or two; a link that
        // says nothing for seconds has gone.
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let got = lock.withLock({ answers[erg] }), got.count >= frames.count { return got }
            usleep(10_000)
        }
        throw BlueZError("PM5 \(erg) did not answer the workout within 5 s")
    }

    private func sleep(_ seconds: Double, _ erg: Erg) {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, wants(erg) { usleep(50_000) }
    }
}
