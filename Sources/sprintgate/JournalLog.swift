// SPDX-License-Identifier: Apache-2.0
// Log lines with their level as a syslog priority when standard error is the journal.

import Logging
#if canImport(Glibc)
import Glibc
#endif

/// Under systemd with `StandardError=journal`, each line starts with `<N>` (the level as a
/// syslog priority), which journald strips and keeps as the entry's PRIORITY, so
/// `journalctl -u sprintgate -p warning` shows warnings and worse. Anywhere else the
/// default handler (timestamped lines on standard error) is used.
struct JournalLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The syslog priority of a level (sd-daemon.h's SD_DEBUG … SD_CRIT).
    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// One journal line: priority, level, label, message, then metadata as sorted
    /// `key=value` pairs (the provider's, the logger's, the call's, later ones winning).
    static func line(level: Logger.Level, label: String, message: Logger.Message, metadata: Logger.Metadata) -> String {
        var text = "<\(priority(level))>\(level) \(label): \(message)"
        for key in metadata.keys.sorted() { text += " \(key)=\(metadata[key]!)" }
        // One entry per line: a newline inside the message would start an entry at info.
        return text.replacingNewlines() + "\n"
    }

    func log(event: LogEvent) {
        var all = metadataProvider?.get() ?? [:]
        all.merge(metadata) { $1 }
        if let extra = event.metadata { all.merge(extra) { $1 } }
        var text = Self.line(level: event.level, label: label, message: event.message, metadata: all)
        text.withUTF8 { _ = write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    /// True when standard error is the journal stream systemd connected (its device and
    /// inode are the ones in `JOURNAL_STREAM`, as sd_journal_stream_fd's documentation says
    /// to check, so a child whose stderr was redirected does not claim it).
    static func standardErrorIsJournal() -> Bool {
        guard let raw = getenv("JOURNAL_STREAM") else { return false }
        let parts = String(cString: raw).split(separator: ":")
        guard parts.count == 2, let dev = UInt64(parts[0]), let ino = UInt64(parts[1]) else { return false }
        var st = stat()
        guard fstat(STDERR_FILENO, &st) == 0 else { return false }
        return UInt64(st.st_dev) == dev && UInt64(st.st_ino) == ino
    }

    /// Installs the handler for every logger when standard error is the journal.
    static func bootstrapIfJournal() {
        guard standardErrorIsJournal() else { return }
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label) }
    }
}

extension String {
    fileprivate func replacingNewlines() -> String {
        guard contains(where: \.isNewline) else { return self }
        return String(map { $0.isNewline ? " " : $0 })
    }
}
