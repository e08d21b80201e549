// SPDX-License-Identifier: Apache-2.0
// What an encoder or decoder allocates from libavcodec, freed in one place, and packets
// filled from the ring's bytes.

import CFFmpeg

/// A codec context with its reusable frame and packet. Freed once: a failed init frees,
/// then the owner's deinit runs too.
struct CodecHandles {
    let context: UnsafeMutablePointer<AVCodecContext>
    let frame: UnsafeMutablePointer<AVFrame>
    let packet: UnsafeMutablePointer<AVPacket>
    private(set) var freed = false

    init(context: UnsafeMutablePointer<AVCodecContext>, frame: UnsafeMutablePointer<AVFrame>, packet: UnsafeMutablePointer<AVPacket>) {
        self.context = context
        self.frame = frame
        self.packet = packet
    }

    mutating func free() {
        guard !freed else { return }
        freed = true
        var c: UnsafeMutablePointer<AVCodecContext>? = context
        avcodec_free_context(&c)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }
}

extension UnsafeMutablePointer where Pointee == AVPacket {
    /// Makes this packet a copy of `bytes` (with libavcodec's padding) at `pts`, and a
    /// keyframe when `keyframe`.
    func fill(_ bytes: UnsafeRawBufferPointer, pts: Int64, keyframe: Bool, operation: @autoclosure () -> String) throws(FFmpegError) {
        av_packet_unref(self)
        try FFmpegError.check(av_new_packet(self, Int32(bytes.count)), operation())
        if let src = bytes.baseAddress, bytes.count > 0 {
            pointee.data.update(from: src.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        pointee.pts = pts
        pointee.dts = pts
        if keyframe { pointee.flags |= AV_PKT_FLAG_KEY }
    }
}
