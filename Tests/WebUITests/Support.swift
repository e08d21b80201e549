// SPDX-License-Identifier: Apache-2.0
// Test fixtures: a web server over the SQLite book the daemon uses (on a fresh database in a
// temporary directory), a counting wake-up and a settable clock.

import Foundation
import GateCore
import Hummingbird
import HTTPTypes
import Logging
import SQLiteStore
import Synchronization
@testable import WebUI

final class TestClock: Sendable {
    let seconds = Mutex(1_000_000.0)
    func advance(_ s: Double) { seconds.withLock { $0 += s } }
    var now: Double { seconds.withLock { $0 } }
}

final class WakeCounter: Sendable {
    let count = Atomic<Int>(0)
}

/// A directory removed when the last fixture holding it goes.
final class TemporaryDirectory: Sendable {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "sprintgate-web-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

struct Fixture {
    let server: WebServer
    let bridge: GateBridge
    let book: SQLiteResultsBook
    let directory: TemporaryDirectory
    let clock: TestClock
    let wakes: WakeCounter

    static let pin = "482913"
    static let settings = WebSettings(
        gateName: "Test gate", startTypes: ["flying", "button-release", "countdown", "voice", "in-frame"],
        presets: [
            .init(id: "flying-30m", title: "Flying 30 m", distanceMetres: 30, startType: "flying", solo: false),
            .init(id: "60m", title: "60 m", distanceMetres: 60, startType: "voice", solo: false),
            .init(id: "flying", title: "Flying sprint", distanceMetres: 10, startType: "flying", solo: false, distances: [10, 20, 30]),
        ],
        speedUnit: "m/s", details: ["board": "boards/test.toml"])

    init() {
        let wakes = WakeCounter()
        bridge = GateBridge(wake: { wakes.count.add(1, ordering: .relaxed) })
        // Why try!: a test machine that cannot make a temporary database cannot run these tests.
        directory = try! TemporaryDirectory()
        book = SQLiteResultsBook(store: try! RunStore(directory: directory.path, logger: Logger(label: "test.store")))
        clock = TestClock()
        self.wakes = wakes
        let hub = LiveHub(bridge: bridge, book: book, settings: Self.settings, logger: Logger(label: "test.web"))
        let clock = self.clock
        server = WebServer(hub: hub, pin: GatePIN(value: Self.pin), logger: Logger(label: "test.web"), now: { clock.now })
    }

    func app() -> some ApplicationProtocol {
        Application(router: server.router())
    }

    /// Runs `body` against the routes, keeping the database's directory until it ends.
    func test(_ body: @escaping @Sendable (LoopbackClient) async throws -> Void) async throws {
        try await app().test(.router, body)
        withExtendedLifetime(directory) {}
    }

    func run(_ seconds: Double, preset: String? = "flying-30m", at wall: Double = 1_700_000_000) -> TimedRun {
        TimedRun(seconds: seconds, startType: "flying", preset: preset, distanceMetres: ["flying-30m": 30, "60m": 60][preset ?? ""], wallTime: wall)
    }
}

extension TestResponse {
    var text: String { String(buffer: body) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:] }
    var jsonArray: [[String: Any]] { (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [[String: Any]] ?? [] }
    /// The `error.field` of an API error body.
    var errorField: String? { (json["error"] as? [String: Any])?["field"] as? String }
}

func body(_ s: String) -> ByteBuffer { ByteBuffer(string: s) }
let pinHeader: HTTPFields = [HTTPField.Name("X-Gate-PIN")!: Fixture.pin, .contentType: "application/json"]
let jsonHeader: HTTPFields = [.contentType: "application/json"]
func wrongPIN(_ p: String = "000000") -> HTTPFields { [HTTPField.Name("X-Gate-PIN")!: p] }
