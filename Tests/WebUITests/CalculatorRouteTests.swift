// SPDX-License-Identifier: Apache-2.0
// Calculator endpoints: answers from the Calculators module and field-level errors.

import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
@testable import WebUI

@Suite struct CalculatorRouteTests {
    @Test func windAdjustment() async throws {
        try await Fixture().test { client in
            try await client.execute(uri: "/api/calc/wind?event=100m&time=10.05&wind=%2B1.8", method: .get) { r in
                #expect(r.status == .ok)
                let still = try #require(r.json["stillAirTime"] as? Double)
                #expect(still > 10.05, "a tail wind helped, so still air is slower")
                #expect(r.json["legal"] as? Bool == true)
            }
            try await client.execute(uri: "/api/calc/wind?event=100m&time=10.05&wind=%2B2.5", method: .get) { r in
                #expect(r.json["legal"] as? Bool == false)
            }
            for (q, field) in [("event=400m&time=10&wind=0", "event"), ("event=100m&time=fast&wind=0", "time"),
                               ("event=100m&time=10.1&wind=strong", "wind"), ("event=100m&time=10.1&wind=%2B9", "wind"),
                               ("event=100m&wind=0", "time"), ("time=10&wind=0", "event")] {
                try await client.execute(uri: "/api/calc/wind?\(q)", method: .get) { r in
                    #expect(r.status == .badRequest, "\(q)")
                    #expect(r.errorField == field, "\(q): \(r.text)")
                }
            }
        }
    }

    @Test func pointsAndEquivalents() async throws {
        try await Fixture().test { client in
            try await client.execute(uri: "/api/calc/points?event=100m&sex=men&time=9.58", method: .get) { r in
                #expect(r.status == .ok)
                #expect(r.json["points"] as? Int == 1356)
            }
            try await client.execute(uri: "/api/calc/equivalent?from=100m&sex=men&time=10.00&to=200m", method: .get) { r in
                #expect(r.status == .ok)
                let to = try #require(r.json["to"] as? [String: Any])
                let from = try #require(r.json["from"] as? [String: Any])
                #expect((to["points"] as? Int ?? 0) >= (from["points"] as? Int ?? .max))
                #expect((to["time"] as? Double ?? 0) > 19 && (to["time"] as? Double ?? 99) < 21)
            }
            for (q, field) in [("from=100m&sex=x&time=10&to=200m", "sex"), ("from=100m&sex=men&time=10&to=marathon", "to"),
                               ("from=100m&sex=men&time=-3&to=200m", "time")] {
                try await client.execute(uri: "/api/calc/equivalent?\(q)", method: .get) { r in
                    #expect(r.status == .badRequest, "\(q)")
                    #expect(r.errorField == field, "\(q): \(r.text)")
                }
            }
            try await client.execute(uri: "/api/calc/events", method: .get) { r in
                #expect((r.json["wind"] as? [String])?.contains("100m") == true)
            }
        }
    }
}
