// SPDX-License-Identifier: Apache-2.0
// Reads a small UTF-8 text file through the C library, without Foundation.

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The whole of the UTF-8 file at `path`; errors name the file as `path`.
func readTextFile(_ path: String) throws(ConfigError) -> String {
    func failure(_ message: String) -> ConfigError {
        ConfigError(code: .unreadable, file: path, keyPath: "", message: message)
    }
    guard let file = fopen(path, "rb") else {
        throw failure("cannot open: \(String(cString: strerror(errno)))")
    }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, file) }
        bytes.append(contentsOf: chunk[0..<count])
        if count < chunk.count { break }
    }
    guard ferror(file) == 0 else { throw failure("cannot read: \(String(cString: strerror(errno)))") }
    guard let text = String(validating: bytes, as: UTF8.self) else { throw failure("is not UTF-8 text") }
    return text
}
