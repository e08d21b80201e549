// SPDX-License-Identifier: Apache-2.0
// Errors from FFmpeg's libraries, with its own words for them.

import CFFmpeg

/// A failed FFmpeg call: what we were doing, FFmpeg's error code and its message.
public struct FFmpegError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the gate was doing, e.g. "opening the H.264 encoder libx264".
    public let operation: String
    /// FFmpeg's negative error code (0 when the failure was ours, not a call's).
    public let code: Int32
    /// FFmpeg's text for `code`, or our own.
    public let message: String

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
        message = Self.text(code)
    }

    public init(_ operation: String, message: String) {
        self.operation = operation
        code = 0
        self.message = message
    }

    /// True when the disk the file was written to is full.
    public var isDiskFull: Bool { code == sprintgate_averror_enospc() }

    public var description: String { "\(operation): \(message)" }

    static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        if av_strerror(code, &buffer, buffer.count) < 0 { return "error \(code)" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Throws when an FFmpeg call returned a negative code.
    @discardableResult
    static func check(_ code: Int32, _ operation: @autoclosure () -> String) throws(FFmpegError) -> Int32 {
        if code < 0 { throw FFmpegError(operation(), code: code) }
        return code
    }
}

/// FFmpeg's libraries log to standard error by default; the gate reports their errors
/// through its own messages instead.
enum FFmpegLog {
    static let quiet: Void = { av_log_set_level(AV_LOG_QUIET) }()
}
