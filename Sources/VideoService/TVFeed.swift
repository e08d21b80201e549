// SPDX-License-Identifier: Apache-2.0
// The delayed view on a TV: the screen opened (and opened again after a failure), each
// delayed picture painted full screen with the delay as its caption.

import CLinuxSys
public import FFmpegVideo
public import GateCore

/// Where the delayed view goes besides the page: a screen opener (the real one drives the
/// board's HDMI through DRM/KMS) and how pictures are turned on it.
public struct TVConfig: Sendable {
    public var open: @Sendable () throws -> any PictureScreen
    public var view: ScreenView
    /// Live and delayed side by side (live on the left), each in half the screen.
    public var versus: Bool

    public init(view: ScreenView = ScreenView(), versus: Bool = false, open: @escaping @Sendable () throws -> any PictureScreen) {
        self.open = open
        self.view = view
        self.versus = versus
    }
}

/// The TV side of the view thread. While no screen is open it tries again every
/// `retry` (a TV plugged in later, a desktop that let go of the display); a screen that
/// fails is closed and tried again the same way. View thread only.
final class TVFeed {
    private let config: TVConfig
    private let log: (String) -> Void
    private var screen: (any PictureScreen)?
    private var painter: ScreenPainter?
    /// The versus view's halves: live on the left, delayed on the right.
    private var halves: (live: ScreenPainter, delayed: ScreenPainter)?
    private var retryAt = MonotonicInstant(nanoseconds: .min)
    /// The caption of the blank screen shown last (repainted only when it changes).
    private var blankShown: String?
    /// What the page shows: the display, or why there is none.
    private(set) var state: String = "looking for a display"

    /// Why 3 s: opening a card is cheap, and a coach who plugs the TV in sees it soon.
    static let retry = Span.seconds(3)
    /// At most 30 pictures a second: painting a whole screen costs about twice decoding the
    /// picture (BENCHMARKS.md), and a board's CPU is shared with the encoder.
    static let interval = Span.seconds(1.0 / 30)
    /// When the next picture may be painted, on the real monotonic clock (the thread's
    /// own clock can be a test's).
    private var nextPaint: Int64 = 0

    /// Microseconds until the next picture may be painted, or nil when it may be now.
    func untilNextPaint() -> UInt32? {
        let left = nextPaint - sprintgate_monotonic_ns()
        return left > 0 ? UInt32(left / 1000) + 1 : nil
    }

    init(_ config: TVConfig, log: @escaping (String) -> Void) {
        self.config = config
        self.log = log
    }

    /// Whether a screen is open, opening one when a retry is due.
    func ready(now: MonotonicInstant) -> Bool {
        if screen != nil { return true }
        guard now >= retryAt else { return false }
        retryAt = now + Self.retry
        do {
            let s = try config.open()
            screen = s
            painter = ScreenPainter(width: s.width, height: s.height, view: config.view)
            let half = s.width / 2
            halves = (ScreenPainter(width: half, height: s.height, view: config.view, caption: "Live"),
                      ScreenPainter(width: half, height: s.height, view: config.view))
            blankShown = nil
            state = s.name
            log("video: the delayed view is on the TV, \(s.name)")
            return true
        } catch {
            let why = "\(error)"
            if why != state { log("video: no TV: \(why)") }
            state = why
            return false
        }
    }

    /// Paints `picture` with `caption`.
    func show(_ picture: DecodedPicture, caption: String) {
        guard let screen, let painter else { return }
        painter.caption = caption
        presentPicture(screen) { p, pitch in try painter.paint(picture, into: p, pitch: pitch) }
    }

    /// The live picture in the left half and the delayed one, with `caption`, in the right.
    func show(live: DecodedPicture, delayed: DecodedPicture, caption: String) {
        guard let screen, let halves else { return }
        halves.delayed.caption = caption
        presentPicture(screen) { p, pitch in
            try halves.live.paint(live, into: p, pitch: pitch)
            try halves.delayed.paint(delayed, into: p + (screen.width - halves.delayed.width) * 4, pitch: pitch)
        }
    }

    /// Shows a delayed picture and starts the wait for the next.
    private func presentPicture(_ s: any PictureScreen, _ draw: (UnsafeMutableRawPointer, Int) throws -> Void) {
        blankShown = nil
        nextPaint = sprintgate_monotonic_ns() + Self.interval.nanoseconds
        present(s, draw)
    }

    /// A black screen with `caption` (before the delayed view has its first picture).
    func showBlank(caption: String) {
        guard let screen, let painter, blankShown != caption else { return }
        painter.caption = caption
        blankShown = caption
        present(screen) { p, pitch in try painter.paintBlank(into: p, pitch: pitch) }
    }

    private func present(_ s: any PictureScreen, _ draw: (UnsafeMutableRawPointer, Int) throws -> Void) {
        do { try s.present(draw) } catch {
            // Unplugged, or the display taken: close it (giving the console back) and retry.
            log("video: the TV stopped: \(error); trying again every \(Int(Self.retry.seconds)) s")
            state = "\(error)"
            screen = nil
            painter = nil
            halves = nil
        }
    }

    /// Closes the screen (the console comes back).
    func close() {
        screen = nil
        painter = nil
        halves = nil
    }
}
