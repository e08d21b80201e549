// SPDX-License-Identifier: Apache-2.0
// Finding PM5s: an LE discovery through BlueZ's management channel for as long as the
// coach asked, every Device Found event read for PM5s. Alongside bluetoothd: when it is
// already discovering (the kernel runs one discovery at a time), the hub listens to that one.

import Foundation
import GATT
import LinuxHardware
public import Logging
public import Rowing
import Synchronization

/// What a scan has found so far.
public struct PM5ScanStatus: Sendable, Hashable {
    public var scanning = false
    /// Why the last scan could not run, in words with what to do.
    public var problem: String?
    public var found: [FoundPM5] = []
    /// Devices heard that are not PM5s, and Device Found events that could not be read.
    public var others = 0
    public var unreadable = 0
    /// The hub listens to a discovery another program started (bluetoothd's): the kernel
    /// runs one at a time, and every management socket hears what it finds.
    public var shared = false
    /// Changes whenever anything above does.
    public var version: UInt64 = 0
}

/// Scans controller hciN for PM5s on a thread of its own, one scan at a time.
public final class PM5Scanner: @unchecked Sendable {
    public let controller: Int
    private let logger: Logger
    private let clock: @Sendable () -> Double
    private let state = Mutex(PM5ScanStatus())
    private let stopping = Atomic(false)
    private let threadLock = NSLock()
    private var thread: Thread?

    public init(controller: Int, logger: Logger, clock: @escaping @Sendable () -> Double) {
        self.controller = controller
        self.logger = logger
        self.clock = clock
    }

    public var status: PM5ScanStatus { state.withLock { $0 } }

    /// Starts a scan of `seconds` (a scan under way goes on that long from now). What was
    /// found before is forgotten. Returns at once; `status` follows the scan.
    public func scan(seconds: Double) {
        let until = clock() + seconds
        let running = state.withLock { s -> Bool in
            defer {
                s.scanning = true
                s.problem = nil
                s.version &+= 1
            }
            return s.scanning
        }
        deadline.withLock { $0 = until }
        guard !running else { return }
        let t = Thread { [self] in run() }
        t.name = "pm5-scan"
        threadLock.withLock { thread = t }
        t.start()
    }

    private let deadline = Mutex(0.0)

    /// Ends a scan under way (its discovery stopped) and waits for its thread; the scanner
    /// can scan again.
    public func end() {
        deadline.withLock { $0 = 0 }
        waitForThread()
    }

    /// Ends a scan under way and waits for its thread.
    public func stop() {
        stopping.store(true, ordering: .relaxed)
        waitForThread()
        // Why: the thread's block holds this object; letting go of the thread frees both.
        threadLock.withLock { thread = nil }
    }

    private func waitForThread() {
        while threadLock.withLock({ thread.map { !$0.isFinished } ?? false }) { usleep(10_000) }
    }

    private func publish(_ f: PM5Finder) {
        state.withLock { s in
            guard s.found != f.found || s.others != f.others || s.unreadable != f.unreadable else { return }
            s.found = f.found
            s.others = f.others
            s.unreadable = f.unreadable
            s.version &+= 1
        }
    }

    private func setShared(_ on: Bool) {
        state.withLock { s in
            guard s.shared != on else { return }
            s.shared = on
            s.version &+= 1
        }
    }

    private func finish(problem: String?) {
        if let problem { logger.warning("scanning for PM5s on hci\(controller): \(problem)") }
        state.withLock { s in
            s.scanning = false
            s.shared = false
            s.problem = problem
            s.version &+= 1
        }
    }

    private func run() {
        let index = UInt16(controller)
        let mgmt: BlueZManagement
        do { mgmt = try BlueZManagement() } catch {
            finish(problem: "\(error)")
            return
        }
        defer { mgmt.close() }
        // Each scan starts afresh: what an earlier one heard is forgotten.
        var finder = PM5Finder()
        var ours = false
        var problem: String?
        var lastStart = -1.0
        logger.info("scanning for PM5s on hci\(controller)")
        do throws(BlueZError) {
            try mgmt.send(MgmtCommand.startLEDiscovery(index: index))
            lastStart = clock()
            while !stopping.load(ordering: .relaxed), clock() < deadline.withLock({ $0 }) {
                let event = try mgmt.receive(timeout: 0.2).flatMap { MgmtEvent($0) }
                switch event {
                case let .commandComplete(i, MgmtCommand.startDiscovery, status) where i == index,
                     let .commandStatus(i, MgmtCommand.startDiscovery, status) where i == index:
                    if status == 0 {
                        ours = true
                        setShared(false)
                    } else if status == 0x0A {
                        // Busy is someone else's discovery (bluetoothd's): its devices
                        // reach this socket too.
                        setShared(true)
                    } else {
                        problem = "could not start discovery: " + MgmtEvent.statusText(status)
                    }
                case let .deviceFound(i, found) where i == index:
                    finder.heard(found, at: clock())
                    publish(finder)
                case let .discovering(i, _, on) where i == index && !on:
                    ours = false
                default:
                    break
                }
                if problem != nil { break }
                // Why again: the kernel ends an LE discovery after about ten seconds, and
                // bluetoothd's (busy) may end before the coach's scan does.
                if !ours, clock() - lastStart > 1 {
                    try mgmt.send(MgmtCommand.startLEDiscovery(index: index))
                    lastStart = clock()
                }
            }
            if ours { try mgmt.send(MgmtCommand.stopLEDiscovery(index: index)) }
        } catch {
            problem = "\(error)"
        }
        publish(finder)
        logger.info("scan for PM5s on hci\(controller) ended: \(finder.found.count) PM5s, \(finder.others) other devices")
        finish(problem: problem)
    }
}
