// SPDX-License-Identifier: Apache-2.0
// A TV on the board's HDMI through DRM/KMS (libdrm): a mode set on the first connected
// connector, two dumb buffers, each picture shown by a page flip at the next refresh.

import CDRM
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// The whole screen of a display, driven by KMS with no desktop: the program is DRM
/// master on the card, sets a mode on a connected output and flips between two
/// CPU-painted buffers. Closing it gives the CRTC back as it was (the console returns).
/// Used from one thread.
public final class DRMScreen: PictureScreen {
    public let path: String
    public let width: Int
    public let height: Int
    public let name: String
    /// The mode's refresh rate, Hz.
    public let refresh: Double

    private let fd: Int32
    private let crtc: UInt32
    private var connector: UInt32
    private var mode: drmModeModeInfo
    private let saved: UnsafeMutablePointer<drmModeCrtc>?
    private struct Buffer {
        var handle: UInt32 = 0
        var framebuffer: UInt32 = 0
        var pitch = 0
        var size = 0
        var pixels: UnsafeMutableRawPointer?
    }
    private var buffers: [Buffer] = []
    /// The buffer painted next (the other is on the screen).
    private var back = 1
    /// Page flips work on this card; false: each picture is set with SetCrtc.
    private var flips = true
    /// The flag the page-flip event sets; on the heap, as an event may arrive after a wait
    /// gave up.
    private let flipped: UnsafeMutablePointer<Int32>

    /// The largest picture painted: a full-HD or 4K TV runs at 1280×720 (and scales it up
    /// itself), as the CPU paints every pixel of every picture and a camera's picture is
    /// seldom larger.
    public static let maxWidth = 1280
    public static let maxHeight = 800

    /// Opens `path` (`/dev/dri/card0`), or with nil the first card with a connected
    /// display, and shows a black screen on it. Throws, saying what to do, when there is no
    /// card, no connected display, or another program (a desktop) holds the display.
    public init(path: String? = nil) throws(DeviceError) {
        let candidates = path.map { [$0] } ?? Self.cards()
        guard !candidates.isEmpty else {
            throw DeviceError(operation: "open", errno: ENOENT, path: "/dev/dri",
                              detail: "no display card: on a Raspberry Pi, keep dtoverlay=vc4-kms-v3d in config.txt")
        }
        var lastError: DeviceError?
        var found: (fd: Int32, card: String, connector: UInt32, crtc: UInt32, mode: drmModeModeInfo, label: String)?
        for card in candidates where found == nil {
            let fd = Glibc.open(card, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else {
                lastError = Sys.fail("open", card)
                continue
            }
            do throws(DeviceError) {
                let (connector, crtc, mode, label) = try Self.output(fd, card)
                found = (fd, card, connector, crtc, mode, label)
            } catch {
                _ = Glibc.close(fd)
                lastError = error
            }
        }
        guard let found else { throw lastError! }
        fd = found.fd
        self.path = found.card
        crtc = found.crtc
        connector = found.connector
        mode = found.mode
        width = Int(mode.hdisplay)
        height = Int(mode.vdisplay)
        refresh = Self.refresh(mode)
        name = "\(found.label) \(width)×\(height) at \(Int(refresh.rounded())) Hz"
        saved = drmModeGetCrtc(fd, crtc)
        flipped = .allocate(capacity: 1)
        flipped.initialize(to: 0)
        // On failure here, deinit gives back what was made.
        try allocate()
    }

    deinit { release() }

    /// The card nodes, in order (`/dev/dri/card0`, `card1`, …).
    static func cards() -> [String] {
        guard let dir = opendir("/dev/dri") else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let e = readdir(dir) {
            let n = withUnsafePointer(to: e.pointee.d_name) { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
            if n.hasPrefix("card") { names.append("/dev/dri/" + n) }
        }
        return names.sorted { $0.count != $1.count ? $0.count < $1.count : $0 < $1 }
    }

    static func refresh(_ m: drmModeModeInfo) -> Double {
        guard m.htotal > 0, m.vtotal > 0 else { return Double(m.vrefresh) }
        return Double(m.clock) * 1000 / (Double(m.htotal) * Double(m.vtotal))
    }

    /// The mode shown: the display's preferred mode when it fits in 1280×800, else the
    /// largest that does, nearest 60 Hz among equals.
    static func choose(_ modes: [drmModeModeInfo]) -> drmModeModeInfo? {
        let fitting = modes.filter { Int($0.hdisplay) <= maxWidth && Int($0.vdisplay) <= maxHeight && $0.flags & UInt32(DRM_MODE_FLAG_INTERLACE) == 0 }
        if let p = fitting.first(where: { withUnsafePointer(to: $0) { sprintgate_drm_preferred($0) != 0 } }) { return p }
        return fitting.max { a, b in
            let (pa, pb) = (Int(a.hdisplay) * Int(a.vdisplay), Int(b.hdisplay) * Int(b.vdisplay))
            return pa != pb ? pa < pb : abs(refresh(a) - 60) > abs(refresh(b) - 60)
        }
    }

    /// A connected connector with a mode that fits, and a CRTC that can drive it.
    private static func output(_ fd: Int32, _ card: String) throws(DeviceError) -> (UInt32, UInt32, drmModeModeInfo, String) {
        guard let res = drmModeGetResources(fd) else {
            throw DeviceError(operation: "drmModeGetResources", errno: Glibc.errno, path: card,
                              detail: "not a display (KMS) card")
        }
        defer { drmModeFreeResources(res) }
        var sawConnected = false
        for i in 0..<Int(res.pointee.count_connectors) {
            guard let c = drmModeGetConnector(fd, res.pointee.connectors[i]) else { continue }
            defer { drmModeFreeConnector(c) }
            guard sprintgate_drm_connected(c) != 0, c.pointee.count_modes > 0 else { continue }
            sawConnected = true
            let modes = (0..<Int(c.pointee.count_modes)).map { c.pointee.modes[$0] }
            guard let mode = choose(modes), let crtc = crtcFor(fd, res, c) else { continue }
            let type = drmModeGetConnectorTypeName(c.pointee.connector_type).map { String(cString: $0) } ?? "output"
            return (c.pointee.connector_id, crtc, mode, "\(type)-\(c.pointee.connector_type_id)")
        }
        throw DeviceError(operation: "find a display", errno: ENODEV, path: card,
                          detail: sawConnected ? "no usable mode on the connected display"
                                               : "no display connected: plug the TV into HDMI (HDMI 0 on a Pi 4) and switch it on")
    }

    /// The CRTC already driving the connector's encoder, or a free one the encoder can use.
    private static func crtcFor(_ fd: Int32, _ res: UnsafeMutablePointer<drmModeRes>, _ c: UnsafeMutablePointer<drmModeConnector>) -> UInt32? {
        if c.pointee.encoder_id != 0, let e = drmModeGetEncoder(fd, c.pointee.encoder_id) {
            defer { drmModeFreeEncoder(e) }
            if e.pointee.crtc_id != 0 { return e.pointee.crtc_id }
        }
        for j in 0..<Int(c.pointee.count_encoders) {
            guard let e = drmModeGetEncoder(fd, c.pointee.encoders[j]) else { continue }
            defer { drmModeFreeEncoder(e) }
            for k in 0..<Int(res.pointee.count_crtcs) where e.pointee.possible_crtcs & (1 << UInt32(k)) != 0 {
                return res.pointee.crtcs[k]
            }
        }
        return nil
    }

    /// Two black dumb buffers, the first shown.
    private func allocate() throws(DeviceError) {
        for _ in 0..<2 {
            var b = Buffer()
            var pitch: UInt32 = 0, size: UInt64 = 0, offset: UInt64 = 0
            // libdrm's dumb-buffer helpers return −errno.
            let made = drmModeCreateDumbBuffer(fd, UInt32(width), UInt32(height), 32, 0, &b.handle, &pitch, &size)
            guard made == 0 else { throw Sys.fail("DRM_IOCTL_MODE_CREATE_DUMB", path, -made) }
            b.pitch = Int(pitch)
            b.size = Int(size)
            buffers.append(b)
            guard drmModeAddFB(fd, UInt32(width), UInt32(height), 24, 32, pitch, b.handle, &buffers[buffers.count - 1].framebuffer) == 0 else {
                throw Sys.fail("drmModeAddFB", path)
            }
            let mapped = drmModeMapDumbBuffer(fd, b.handle, &offset)
            guard mapped == 0 else { throw Sys.fail("DRM_IOCTL_MODE_MAP_DUMB", path, -mapped) }
            guard let p = Glibc.mmap(nil, b.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, Int(offset)), p != MAP_FAILED else {
                throw Sys.fail("mmap", path)
            }
            memset(p, 0, b.size)
            buffers[buffers.count - 1].pixels = p
        }
        guard drmModeSetCrtc(fd, crtc, buffers[0].framebuffer, 0, 0, &connector, 1, &mode) == 0 else {
            let e = Glibc.errno
            throw DeviceError(operation: "drmModeSetCrtc", errno: e, path: path,
                              detail: e == EACCES || e == EPERM ? "another program is showing on the display (a desktop, or a running gate's delayed view): stop it, or run the Pi without a desktop"
                                                                : String(cString: strerror(e)))
        }
    }

    private func release() {
        if let saved {
            var conn = connector
            if saved.pointee.mode_valid != 0 {
                _ = drmModeSetCrtc(fd, saved.pointee.crtc_id, saved.pointee.buffer_id, saved.pointee.x, saved.pointee.y, &conn, 1, &saved.pointee.mode)
            }
            drmModeFreeCrtc(saved)
        }
        for b in buffers {
            if let p = b.pixels { _ = Glibc.munmap(p, b.size) }
            if b.framebuffer != 0 { _ = drmModeRmFB(fd, b.framebuffer) }
            if b.handle != 0 { _ = drmModeDestroyDumbBuffer(fd, b.handle) }
        }
        buffers = []
        _ = Glibc.close(fd)
        flipped.deallocate()
    }

    /// Waits up to 200 ms for the flip asked for to complete. Why 200 ms: a refresh is
    /// 17–40 ms; a display that does not answer in ten of them is stuck, and the next
    /// picture tries again.
    private func waitFlip() throws(DeviceError) {
        var waited = 0
        while flipped.pointee == 0 && waited < 200 {
            guard try Sys.waitReadable(fd, timeoutMs: 20) else {
                waited += 20
                continue
            }
            if sprintgate_drm_handle_events(fd) != 0 { throw Sys.fail("drmHandleEvent", path) }
        }
    }

    public func present(_ draw: (UnsafeMutableRawPointer, Int) throws -> Void) throws {
        let b = buffers[back]
        try draw(b.pixels!, b.pitch)
        var attempts = 0
        while flips {
            flipped.pointee = 0
            if drmModePageFlip(fd, crtc, b.framebuffer, sprintgate_drm_flip_event(), flipped) == 0 {
                try waitFlip()
                back ^= 1
                return
            }
            let e = Glibc.errno
            attempts += 1
            if e == EBUSY {
                // The flip before has not completed (its wait gave up): wait for it once more,
                // then skip this picture.
                if attempts > 1 { return }
                try waitFlip()
                continue
            }
            // A card without page flips: set each buffer with SetCrtc instead.
            guard e == EINVAL || e == ENOSYS || e == EOPNOTSUPP else { throw Sys.fail("drmModePageFlip", path, e) }
            flips = false
        }
        guard drmModeSetCrtc(fd, crtc, b.framebuffer, 0, 0, &connector, 1, &mode) == 0 else { throw Sys.fail("drmModeSetCrtc", path) }
        back ^= 1
    }
}
