// SPDX-License-Identifier: Apache-2.0
// API errors as JSON: the status, the field at fault and why, so the page can say what to fix.

import Foundation
public import Hummingbird

/// A 4xx/5xx answer with body `{"error":{"field":…,"reason":…}}` (and `retryAfterSeconds`
/// for 429, also sent as the `Retry-After` header).
public struct APIError: Error, HTTPResponseError, Sendable {
    public var status: HTTPResponse.Status
    public var field: String
    public var reason: String
    public var retryAfter: Double?

    public init(_ status: HTTPResponse.Status, field: String, reason: String, retryAfter: Double? = nil) {
        self.status = status
        self.field = field
        self.reason = reason
        self.retryAfter = retryAfter
    }

    static func invalid(_ field: String, _ reason: String) -> APIError { APIError(.badRequest, field: field, reason: reason) }

    struct Body: Codable {
        struct Detail: Codable {
            var field: String
            var reason: String
            var retryAfterSeconds: Int?
        }
        var error: Detail
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let wait = retryAfter.map { Int($0.rounded(.up)) }
        let body = Body(error: .init(field: field, reason: reason, retryAfterSeconds: wait))
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8", .cacheControl: "no-store"]
        if let wait { headers[.retryAfter] = String(wait) }
        let data = (try? JSONEncoder().encode(body)) ?? Data()
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}

extension ResultsBookError {
    var api: APIError {
        switch kind {
        case .notFound: APIError(.notFound, field: field, reason: reason)
        case .conflict: APIError(.conflict, field: field, reason: reason)
        case .invalid: APIError(.badRequest, field: field, reason: reason)
        case .unavailable: APIError(.serviceUnavailable, field: field, reason: reason)
        }
    }
}

/// A book error as its HTTP answer; other errors pass through.
func apiError(_ e: any Error) -> any Error { (e as? ResultsBookError)?.api ?? e }
