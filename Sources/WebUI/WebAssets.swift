// SPDX-License-Identifier: Apache-2.0
// The page, its style and its script (Sources/WebUI/web), embedded in the binary at build
// time: the gate serves them offline.

import Foundation
import Hummingbird

/// One embedded file with its strong ETag (FNV-1a 64 of the bytes). Answers
/// `If-None-Match` with 304; `Cache-Control: no-cache` makes phones revalidate, so a
/// new gate version shows at the next load while an unchanged page costs no bytes.
struct WebAsset: Sendable {
    let path: String
    let contentType: String
    let bytes: [UInt8]
    let etag: String

    init(path: String, contentType: String, bytes: [UInt8]) {
        self.path = path
        self.contentType = contentType
        self.bytes = bytes
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        etag = "\"" + String(h, radix: 16) + "\""
    }

    func response(for request: Request) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .eTag: etag, .cacheControl: "no-cache"]
        if let tags = request.headers[.ifNoneMatch], tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag || $0 == "*" }) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The files of `web/`, as SwiftPM embeds them (`.embedInCode` in Package.swift).
enum WebAssets {
    static let all: [WebAsset] = [
        WebAsset(path: "/index.html", contentType: "text/html; charset=utf-8", bytes: PackageResources.index_html),
        WebAsset(path: "/app.css", contentType: "text/css; charset=utf-8", bytes: PackageResources.app_css),
        WebAsset(path: "/app.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.app_js),
        WebAsset(path: "/video.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.video_js),
        WebAsset(path: "/archery.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.archery_js),
        WebAsset(path: "/gps.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.gps_js),
        WebAsset(path: "/ski.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.ski_js),
        WebAsset(path: "/rowing.js", contentType: "text/javascript; charset=utf-8", bytes: PackageResources.rowing_js),
    ]
}
