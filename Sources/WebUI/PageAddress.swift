// SPDX-License-Identifier: Apache-2.0
// Where the coach's page is: kept in the state directory by the running gate, so that
// `sprintgate status` and the package's install message can say which address to open.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The address and port the page listens on, and the URLs a phone opens it at.
public struct PageAddress: Sendable, Equatable {
    public var host: String
    public var port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    public static let fileName = "web-page"

    /// Keeps the address in `directory` (written when the page starts).
    public func save(directory: String) throws {
        try Data("host=\(host)\nport=\(port)\n".utf8).write(to: URL(fileURLWithPath: directory + "/" + Self.fileName), options: .atomic)
    }

    /// The address the running gate kept, or nil when it has not started its page.
    public static func load(directory: String) -> PageAddress? {
        guard let text = try? String(contentsOfFile: directory + "/" + fileName, encoding: .utf8) else { return nil }
        var host: String?, port: Int?
        for line in text.split(separator: "\n") {
            if line.hasPrefix("host=") { host = String(line.dropFirst(5)) }
            if line.hasPrefix("port=") { port = Int(line.dropFirst(5)) }
        }
        guard let host, let port, (1...65535).contains(port) else { return nil }
        return PageAddress(host: host, port: port)
    }

    /// The URLs a phone on the same network opens the page at: on every address, the
    /// gate's mDNS name (`<hostname>.local`, answered by Avahi where it runs) and then each
    /// IPv4 address in `addresses` (`UDPAddress.interfaceHosts()`); on one address, that
    /// address alone.
    public func urls(hostname: String, addresses: [String]) -> [String] {
        let suffix = port == 80 ? "/" : ":\(port)/"
        if host == "0.0.0.0" || host == "::" || host.isEmpty {
            // mDNS answers the first label of the host name (gate.example.org is gate.local);
            // a name that is no DNS label ("(none)", "localhost") gives no .local address.
            let label = hostname.split(separator: ".").first.map(String.init) ?? ""
            let isLabel = !label.isEmpty && label.count <= 63 && label != "localhost"
                && label.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) && $0.isASCII || $0 == "-" }
            let name = isLabel ? ["http://\(label).local" + suffix] : []
            return name + addresses.map { "http://\($0)" + suffix }
        }
        return ["http://\(host)" + suffix]
    }

    /// The machine's host name.
    public static func hostname() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
