// SPDX-License-Identifier: Apache-2.0
// Writes frames to a V4L2 output device (vivid's output node) for tests, self-test and recording checks.

import CV4L2
public import GateCore
#if canImport(Glibc)
import Glibc
#endif

/// Frames into a V4L2 video output device by mmap streaming. In the test rig, vivid
/// loops its output node to its capture node, so frames written here come back through
/// `V4L2FrameSource` as if a camera had taken them.
///
/// Not for the engine thread: `write` may wait for a free buffer.
public struct V4L2FrameSink: ~Copyable {
    /// Output device node, e.g. vivid's `/dev/video1`.
    public let path: String
    public let format: PixelFormat
    /// Pixels, as the driver accepted them.
    public let width: Int
    public let height: Int
    /// Bytes from one row to the next in a buffer handed to `write`.
    public let bytesPerRow: Int
    /// Bytes of one frame as the driver expects it (`sizeimage`).
    public let frameBytes: Int
    /// Frames queued to the device so far.
    public private(set) var framesWritten: UInt64 = 0

    private var fd: Int32
    private var maps: [UnsafeMutableRawPointer] = []
    private var lengths: [Int] = []
    private var queued: [Bool] = []
    private var streaming = false

    /// Opens `path`, sets `format` at `width`×`height` and maps `bufferCount` buffers.
    /// Throws when the device is not a streaming output or refuses the format.
    public init(path: String, format: PixelFormat, width: Int, height: Int, bufferCount: Int = 4) throws(DeviceError) {
        let fd = try V4L2.open(path)
        var rowStride = 0, sizeImage = 0
        var maps: [UnsafeMutableRawPointer] = []
        var lengths: [Int] = []
        do throws(DeviceError) {
            let cap = try V4L2.capabilities(fd, path)
            guard cap.caps & u32(V4L2_CAP_VIDEO_OUTPUT) != 0, cap.caps & u32(V4L2_CAP_STREAMING) != 0 else {
                throw DeviceError(operation: "VIDIOC_QUERYCAP", errno: ENOTTY, path: path,
                                  detail: "\(cap.card) (\(cap.driver)) is not a streaming video output device")
            }
            var f = v4l2_format()
            f.type = V4L2.outputType
            f.fmt.pix.width = u32(width)
            f.fmt.pix.height = u32(height)
            f.fmt.pix.pixelformat = format.rawValue
            f.fmt.pix.field = V4L2_FIELD_NONE.rawValue
            try V4L2.call(fd, CV4L2_VIDIOC_S_FMT(), &f, "VIDIOC_S_FMT", path)
            guard f.fmt.pix.pixelformat == format.rawValue, Int(f.fmt.pix.width) == width, Int(f.fmt.pix.height) == height else {
                throw DeviceError(operation: "VIDIOC_S_FMT", errno: EINVAL, path: path,
                                  detail: "wanted \(format) \(width)x\(height), driver set "
                                      + "\(PixelFormat(rawValue: f.fmt.pix.pixelformat)) \(f.fmt.pix.width)x\(f.fmt.pix.height)")
            }
            rowStride = max(Int(f.fmt.pix.bytesperline), width * format.lumaStep)
            sizeImage = max(Int(f.fmt.pix.sizeimage), format.frameBytes(width: width, height: height))

            var rb = v4l2_requestbuffers()
            rb.count = u32(bufferCount)
            rb.type = V4L2.outputType
            rb.memory = V4L2.mmapMemory
            try V4L2.call(fd, CV4L2_VIDIOC_REQBUFS(), &rb, "VIDIOC_REQBUFS", path)
            for i in 0..<Int(rb.count) {
                var b = V4L2.mmapBuffer(V4L2.outputType, index: i)
                try V4L2.call(fd, CV4L2_VIDIOC_QUERYBUF(), &b, "VIDIOC_QUERYBUF", path)
                maps.append(try V4L2.mapWritable(fd, length: Int(b.length), offset: Int(b.m.offset), path: path))
                lengths.append(Int(b.length))
            }
            guard maps.count >= 2 else {
                throw DeviceError(operation: "VIDIOC_REQBUFS", errno: ENOMEM, path: path, detail: "driver granted \(maps.count) buffers")
            }
        } catch {
            for (p, n) in zip(maps, lengths) { Sys.munmap(p, length: n) }
            Sys.closeVideo(fd)
            throw error
        }
        self.path = path
        self.format = format
        self.width = width
        self.height = height
        bytesPerRow = rowStride
        frameBytes = sizeImage
        self.fd = fd
        self.maps = maps
        self.lengths = lengths
        queued = Array(repeating: false, count: maps.count)
    }

    deinit {
        if fd >= 0 {
            var type = Int32(bitPattern: V4L2.outputType)
            _ = try? Sys.ioctl(fd, CV4L2_VIDIOC_STREAMOFF(), &type, op: "VIDIOC_STREAMOFF", path: path)
            for (p, n) in zip(maps, lengths) { Sys.munmap(p, length: n) }
            Sys.closeVideo(fd)
        }
    }

    /// Queues one frame: `fill` writes it into a driver buffer of `frameBytes` bytes
    /// (rows `bytesPerRow` apart), which is valid only during the call. Waits up to
    /// `timeoutMs` for the device to give a buffer back; false when none came.
    public mutating func write(timeoutMs: Int = 1000, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(DeviceError) -> Bool {
        try writePayload(timeoutMs: timeoutMs) { dst in
            fill(dst)
            return dst.count
        }
    }

    /// Queues one compressed frame (MJPEG): `fill` writes it at the start of a driver
    /// buffer of `frameBytes` bytes and returns how many bytes it wrote, which the driver
    /// passes on as the frame's `bytesused`, the payload size a UVC camera reports.
    public mutating func writePayload(timeoutMs: Int = 1000, _ fill: (UnsafeMutableRawBufferPointer) -> Int) throws(DeviceError) -> Bool {
        precondition(fd >= 0, "write after close")
        var slot = queued.firstIndex(of: false)
        let deadline = Sys.monotonicNow() + .milliseconds(Double(timeoutMs))
        while slot == nil {
            var b = V4L2.mmapBuffer(V4L2.outputType)
            if case .processed = try Sys.ioctl(fd, CV4L2_VIDIOC_DQBUF(), &b, op: "VIDIOC_DQBUF", path: path) {
                queued[Int(b.index)] = false
                slot = Int(b.index)
                break
            }
            if Sys.monotonicNow() >= deadline { return false }
            // Why not poll: an output queue signals POLLOUT, and Sys.waitReadable waits
            // for POLLIN; a millisecond nap is fine outside the engine thread.
            usleep(1000)
        }
        let s = slot!
        let capacity = min(frameBytes, lengths[s])
        let used = fill(UnsafeMutableRawBufferPointer(start: maps[s], count: capacity))
        precondition(used >= 0 && used <= capacity, "payload larger than the buffer")
        var b = V4L2.mmapBuffer(V4L2.outputType, index: s)
        b.bytesused = u32(used)
        b.field = V4L2_FIELD_NONE.rawValue
        try V4L2.call(fd, CV4L2_VIDIOC_QBUF(), &b, "VIDIOC_QBUF", path)
        queued[s] = true
        framesWritten += 1
        if !streaming {
            var type = Int32(bitPattern: V4L2.outputType)
            try V4L2.call(fd, CV4L2_VIDIOC_STREAMON(), &type, "VIDIOC_STREAMON", path)
            streaming = true
        }
        return true
    }

    /// Queues a tightly packed frame (rows of `width × lumaStep` bytes; for planar
    /// formats the planes follow each other), copying rows to the driver's stride.
    public mutating func write(frame: UnsafeRawBufferPointer, timeoutMs: Int = 1000) throws(DeviceError) -> Bool {
        let rowBytes = width * format.lumaStep
        let stride = bytesPerRow
        let rows = height
        let rowWise = stride != rowBytes && (format == .gray8 || format == .yuyv)
        return try write(timeoutMs: timeoutMs) { dst in
            if rowWise {
                for y in 0..<rows where (y + 1) * rowBytes <= frame.count {
                    let src = UnsafeRawBufferPointer(rebasing: frame[(y * rowBytes)..<((y + 1) * rowBytes)])
                    UnsafeMutableRawBufferPointer(rebasing: dst[(y * stride)..<(y * stride + rowBytes)]).copyMemory(from: src)
                }
            } else {
                dst.copyMemory(from: UnsafeRawBufferPointer(rebasing: frame.prefix(dst.count)))
            }
        }
    }

    /// Stops streaming, unmaps and closes. Frames still queued may not be shown.
    public mutating func close() {
        guard fd >= 0 else { return }
        var type = Int32(bitPattern: V4L2.outputType)
        _ = try? Sys.ioctl(fd, CV4L2_VIDIOC_STREAMOFF(), &type, op: "VIDIOC_STREAMOFF", path: path)
        for (p, n) in zip(maps, lengths) { Sys.munmap(p, length: n) }
        maps = []
        lengths = []
        Sys.closeVideo(fd)
        fd = -1
        streaming = false
    }
}
