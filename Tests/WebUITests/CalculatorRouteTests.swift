// SPDX-License-Identifier: Apache-2.0
// Calculator endpoints: answers from the Calculators module and field-level errors.

import Foundation
import HTTPTypes
import Hummingbird
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
            try await client.execute(uri: "/api/calc/flying?distance=30&time=3.00", method: .get) { r in
                #expect(r.json["metresPerSecond"] as? Double == 10)
                #expect((r.json["equivalents"] as? [[String: Any]])?.first?["time"] as? Double == 1)
            }
            try await client.execute(uri: "/api/calc/predict100?thirty=3.78&flyingTen=0.81", method: .get) { r in
                #expect(abs((r.json["hundred"] as? Double ?? 0) - 9.58) < 0.005)
            }
            try await client.execute(uri: "/api/calc/stagger?event=400m&lanes=8", method: .get) { r in
                let lanes = r.json["lanes"] as? [[String: Any]] ?? []
                #expect(lanes.count == 8)
                #expect(abs((lanes.last?["stagger"] as? Double ?? 0) - 53.03) < 0.005)
            }
            for (path, field) in [("flying?distance=0&time=3", "distance"), ("flying?distance=30&time=1", "time"),
                                  ("flying?distance=x&time=3", "distance"), ("predict100?thirty=2&flyingTen=1", "thirty"),
                                  ("predict100?thirty=4.3&flyingTen=1.5", "flyingTen"), ("stagger?event=100m&lanes=8", "event"),
                                  ("stagger?event=400m&lanes=12", "lanes")] {
                try await client.execute(uri: "/api/calc/\(path)", method: .get) { r in
                    #expect(r.status == .badRequest, "\(path)")
                    #expect(r.errorField == field, "\(path): \(r.text)")
                }
            }
            try await client.execute(uri: "/api/calc/events", method: .get) { r in
                #expect((r.json["wind"] as? [String])?.contains("100m") == true)
                // Women's events are there to choose: the 100 m hurdles are theirs.
                #expect(((r.json["scored"] as? [String: Any])?["women"] as? [String])?.contains("100mH") == true)
                #expect(r.json["staggered"] as? [String] == ["200m", "400m", "4x400m"])
            }
            try await client.execute(uri: "/api/calc/equivalent?from=100mH&sex=women&time=12.50&to=60mH", method: .get) { r in
                #expect(r.status == .ok, "\(r.text)")
                #expect(((r.json["to"] as? [String: Any])?["sex"] as? String) == "women")
            }
        }
    }
}
