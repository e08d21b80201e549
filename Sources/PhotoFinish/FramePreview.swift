// SPDX-License-Identifier: Apache-2.0
// The camera view's tap on the frame path: a few reduced frames a second, only while
// somebody watches, copied into a preallocated slot that another thread encodes.

public import GateCore
import Synchronization

/// Copies a reduced grey image of a frame, at most every `interval` and only while a
/// viewer asked within `linger`, into one preallocated slot. The loop calls `offer` for
/// every frame; a thread that encodes calls `take`. While the slot waits to be taken,
/// frames are skipped and counted: the loop never waits and `offer` allocates nothing.
///
/// A picture is copied in `bands` bands of rows from as many consecutive frames, so no
/// frame pays for a whole picture (at 120 fps, `bands(fps:)` gives sixteen, spanning
/// 133 ms: a still scene is whole, a runner's outline shears a little). The picture
/// carries the first band's time.
public final class FramePreview: @unchecked Sendable {
    /// Slot states.
    private static let free = 0, filling = 1, ready = 2, reading = 3

    /// Frame size the camera delivers, input pixels.
    public let frameWidth: Int
    public let frameHeight: Int
    /// Integer reduction from frame to preview.
    public let scale: Int
    public let width: Int
    public let height: Int
    /// Bands for a camera at `fps`: as many as frames come in `interval`, at most 16, so a
    /// picture is done before the next is due and a band at 120 fps is 1/16 of a picture.
    public static func bands(fps: Double, interval: Span = .milliseconds(200)) -> Int {
        guard fps.isFinite, fps > 0 else { return 1 }
        return max(1, min(16, Int(fps * interval.seconds)))
    }

    /// Time between two copies. Why 200 ms: five pictures a second aim a camera; more
    /// only costs the Wi-Fi.
    public let interval: Span
    /// A viewer's request keeps the copies coming this long. Why 2 s: a page polls a few
    /// times a second; a closed page stops the copies within two seconds.
    public let linger: Span
    /// Bands of rows a picture is copied in, one per frame (loop thread; see `setBands`).
    public private(set) var bands: Int
    private var pendingBands: Int?

    private let state: UnsafeMutablePointer<Atomic<Int>>
    /// The last instant a viewer wants pictures until, CLOCK_MONOTONIC ns.
    private let wantedUntil: UnsafeMutablePointer<Atomic<Int64>>
    private let counters: UnsafeMutablePointer<Atomic<UInt64>>
    private let pixels: UnsafeMutablePointer<UInt8>
    /// Bodies the detector saw in the picture's first frame: four corners each (input
    /// pixels) and a kind (0 person, 1 small, 2 vehicle). Loop thread while filling.
    public static let maxBodies = 8
    private let boxes: UnsafeMutablePointer<Int32>
    private let kinds: UnsafeMutablePointer<UInt8>
    private var boxCount = 0
    /// Loop-thread only.
    private var nextDue: Int64 = .min
    private var slotTime: Int64 = 0
    private var slotSequence: UInt64 = 0
    /// The next band to copy while a picture is being filled (loop thread).
    private var band = 0

    /// A preview of frames of `frameWidth`×`frameHeight`, at most `maxWidth` wide.
    public init(frameWidth: Int, frameHeight: Int, maxWidth: Int = 320, interval: Span = .milliseconds(200),
                linger: Span = .seconds(2), bands: Int = 8) {
        self.frameWidth = max(1, frameWidth)
        self.frameHeight = max(1, frameHeight)
        scale = max(1, (self.frameWidth + maxWidth - 1) / max(1, maxWidth))
        width = max(1, self.frameWidth / scale)
        height = max(1, self.frameHeight / scale)
        self.interval = interval
        self.linger = linger
        self.bands = min(max(1, bands), height)
        state = .allocate(capacity: 1)
        state.initialize(to: Atomic(Self.free))
        wantedUntil = .allocate(capacity: 1)
        wantedUntil.initialize(to: Atomic(Int64.min))
        counters = .allocate(capacity: 2)
        counters.initialize(to: Atomic(0))
        (counters + 1).initialize(to: Atomic(0))
        pixels = .allocate(capacity: width * height)
        pixels.initialize(repeating: 0, count: width * height)
        boxes = .allocate(capacity: Self.maxBodies * 4)
        boxes.initialize(repeating: 0, count: Self.maxBodies * 4)
        kinds = .allocate(capacity: Self.maxBodies)
        kinds.initialize(repeating: 0, count: Self.maxBodies)
    }

    deinit {
        state.deinitialize(count: 1)
        state.deallocate()
        wantedUntil.deinitialize(count: 1)
        wantedUntil.deallocate()
        counters.deinitialize(count: 2)
        counters.deallocate()
        pixels.deallocate()
        boxes.deallocate()
        kinds.deallocate()
    }

    /// Pictures copied for the viewers.
    public var copied: UInt64 { counters.pointee.load(ordering: .relaxed) }
    /// Pictures due while the last one still waited to be taken (the encoder was behind).
    public var skipped: UInt64 { (counters + 1).pointee.load(ordering: .relaxed) }

    /// Any thread: a viewer wants pictures; they come until `linger` after `now`.
    public func watch(now: MonotonicInstant) {
        let until = (now + linger).nanoseconds
        var current = wantedUntil.pointee.load(ordering: .relaxed)
        while current < until {
            let r = wantedUntil.pointee.compareExchange(expected: current, desired: until, ordering: .relaxed)
            if r.exchanged { break }
            current = r.original
        }
    }

    /// Loop thread, every frame before it goes back to the camera: copies the next band
    /// of a picture being filled, or starts one when a viewer is watching, one is due and
    /// the slot is free. Returns true when this frame started a picture: the caller may
    /// then add the bodies seen in it (`addBody`).
    @discardableResult
    public func offer(_ frame: borrowing FrameView) -> Bool {
        let t = frame.timestamp.nanoseconds
        guard frame.width == frameWidth, frame.height == frameHeight else { return false }
        let started = band == 0
        if started {
            if let b = pendingBands {
                bands = b
                pendingBands = nil
            }
            guard t <= wantedUntil.pointee.load(ordering: .relaxed), t >= nextDue else { return false }
            nextDue = t + interval.nanoseconds
            let r = state.pointee.compareExchange(expected: Self.free, desired: Self.filling, ordering: .acquiring)
            guard r.exchanged else {
                (counters + 1).pointee.add(1, ordering: .relaxed)
                return false
            }
            slotTime = t
            slotSequence = frame.sequence
            boxCount = 0
        }
        let first = band * height / bands, end = (band + 1) * height / bands
        subsampleLuma(frame, scale: scale, width: width, rows: first..<end, into: pixels + first * width)
        band += 1
        if band == bands {
            band = 0
            counters.pointee.add(1, ordering: .relaxed)
            state.pointee.store(Self.ready, ordering: .releasing)
        }
        return started
    }

    /// Loop thread: copy pictures in `count` bands from the next picture on (the camera's
    /// frame rate changed; see `bands(fps:)`). A picture being filled keeps its bands.
    public func setBands(_ count: Int) {
        pendingBands = min(max(1, count), height)
    }

    /// Loop thread, right after `offer` returned true: a body the detector saw in that
    /// frame, input pixels; beyond `maxBodies` they are left out.
    public func addBody(left: Int, top: Int, right: Int, bottom: Int, small: Bool, vehicle: Bool) {
        guard boxCount < Self.maxBodies else { return }
        let b = boxes + boxCount * 4
        b[0] = Int32(clamping: left)
        b[1] = Int32(clamping: top)
        b[2] = Int32(clamping: right)
        b[3] = Int32(clamping: bottom)
        kinds[boxCount] = vehicle ? 2 : small ? 1 : 0
        boxCount += 1
    }

    /// A body in a picture, input pixels.
    public struct Body: Sendable, Hashable {
        public var left: Int, top: Int, right: Int, bottom: Int
        public var small: Bool, vehicle: Bool
        public init(left: Int, top: Int, right: Int, bottom: Int, small: Bool, vehicle: Bool) {
            self.left = left
            self.top = top
            self.right = right
            self.bottom = bottom
            self.small = small
            self.vehicle = vehicle
        }
    }

    /// A picture ready for the viewers, taken off the slot.
    public struct Picture: Sendable {
        /// `width`×`height` luma, rows packed.
        public var pixels: [UInt8]
        public var width: Int
        public var height: Int
        /// The frame's timestamp, CLOCK_MONOTONIC, and its driver sequence number.
        public var time: MonotonicInstant
        public var sequence: UInt64
        /// What the detector saw in the first band's frame.
        public var bodies: [Body]
    }

    /// Encoder thread: the waiting picture, if any, which frees the slot.
    public func take() -> Picture? {
        let r = state.pointee.compareExchange(expected: Self.ready, desired: Self.reading, ordering: .acquiring)
        guard r.exchanged else { return nil }
        let picture = Picture(pixels: Array(UnsafeBufferPointer(start: pixels, count: width * height)), width: width, height: height,
                              time: MonotonicInstant(nanoseconds: slotTime), sequence: slotSequence,
                              bodies: (0..<boxCount).map { i in
                                  let b = boxes + i * 4
                                  return Body(left: Int(b[0]), top: Int(b[1]), right: Int(b[2]), bottom: Int(b[3]),
                                              small: kinds[i] == 1, vehicle: kinds[i] == 2)
                              })
        state.pointee.store(Self.free, ordering: .releasing)
        return picture
    }
}
