// SPDX-License-Identifier: Apache-2.0
// The event loop's wait: deadlines, readable descriptors and cross-thread wake-ups.

import GateCore
import LinuxHardware
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("Epoll loop")
struct EpollLoopTests {
    @Test("a wait with nothing ready returns at or after its deadline, as a timeout")
    func deadline() throws {
        var loop = try EpollLoop()
        let start = Sys.monotonicNow()
        let (now, ready) = loop.wait(until: start + .milliseconds(30))
        #expect(ready == 0)
        #expect(now >= start + .milliseconds(30))
        #expect(loop.timeouts == 1 && loop.wakeups == 1)
    }

    @Test("a readable pipe ends the wait early and is reported")
    func readable() throws {
        var loop = try EpollLoop()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        try loop.add(fds[0])
        var byte: UInt8 = 7
        #expect(write(fds[1], &byte, 1) == 1)
        let start = Sys.monotonicNow()
        let (now, ready) = loop.wait(until: start + .seconds(30))
        #expect(ready == 1)
        #expect(now.since(start) < .seconds(5))
        loop.remove(fds[0])
        let (_, after) = loop.wait(until: Sys.monotonicNow() + .milliseconds(5))
        #expect(after == 0)  // removed: the unread byte no longer wakes it
    }

    @Test("another thread wakes a long wait through the eventfd")
    func wakeFromThread() throws {
        var loop = try EpollLoop()
        let fd = loop.wakeFD
        var thread = pthread_t()
        let box = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        box.pointee = fd
        defer { box.deallocate() }
        #expect(pthread_create(&thread, nil, { arg in
            usleep(20_000)
            EpollLoop.wake(arg!.assumingMemoryBound(to: Int32.self).pointee)
            return nil
        }, box) == 0)
        let start = Sys.monotonicNow()
        let (now, ready) = loop.wait(until: start + .seconds(30))
        pthread_join(thread, nil)
        #expect(ready == 1)
        #expect(now.since(start) < .seconds(5))
        // The wake-up was consumed: the next wait times out.
        let (_, again) = loop.wait(until: Sys.monotonicNow() + .milliseconds(5))
        #expect(again == 0)
    }
}
