// SPDX-License-Identifier: Apache-2.0
// Athletes, the next run's athlete and the roster.

import Foundation
import Hummingbird
import SQLiteStore

extension WebServer {
    /// Athletes and who runs next: listing needs no PIN; changes do (`PINRequired`).
    func addAthleteRoutes(to router: Router<WebContext>) {
        let s = self
        router.get("/api/athletes") { request, _ in
            // `q`: name or nickname contains, any case.
            let q = (request.uri.queryParameters["q"].map(String.init) ?? "").trimmingCharacters(in: .whitespaces).lowercased()
            do { return try s.json(try s.book.athletes().filter { $0.matches(q) }) } catch { throw apiError(error) }
        }
        router.get("/api/roster") { _, _ in
            do { return try s.json(try s.rosterView()) } catch { throw apiError(error) }
        }
        router.post("/api/athletes") { request, context in
            let athlete = try s.athlete(try await s.body(request, context), id: 0)
            do {
                let a = try s.book.addAthlete(athlete)
                s.hub.bookChanged()
                return try s.json(a, status: .created)
            } catch { throw apiError(error) }
        }
        router.put("/api/athletes/:id") { request, context in
            let id = try s.runID(context)
            let athlete = try s.athlete(try await s.body(request, context), id: id)
            do {
                try s.book.updateAthlete(athlete)
                s.hub.bookChanged()
                return try s.json(athlete)
            } catch { throw apiError(error) }
        }
        router.delete("/api/athletes/:id") { request, context in
            let id = try s.runID(context)
            do {
                try s.book.deleteAthlete(id: id)
                s.hub.bookChanged()
                return Response(status: .noContent)
            } catch { throw apiError(error) }
        }
        router.put("/api/next-athlete") { request, context in
            let body = try await s.body(request, context)
            guard body.keys.contains("athleteId") else {
                throw APIError.invalid("athleteId", "required (an athlete id, or null to clear)")
            }
            let id: Int64?
            if body["athleteId"] is NSNull {
                id = nil
            } else if let v = WebServer.wholeNumber(body["athleteId"]), v >= 1 {
                id = v
            } else {
                throw APIError.invalid("athleteId", "must be a positive whole number or null")
            }
            // Runs that finished before this request belong to the previous assignment.
            s.hub.refresh()
            do {
                try s.book.assignNextRun(athleteID: id)
                s.hub.bookChanged()
                s.hub.refresh()
                return try s.json(["nextAthlete": s.book.nextRunAthlete()])
            } catch { throw apiError(error) }
        }
        // A roster: each timed run hands the next run to the next athlete in it.
        router.put("/api/roster") { request, context in
            let body = try await s.body(request, context)
            guard let list = body["athleteIds"] as? [Any] else {
                throw APIError.invalid("athleteIds", "a list of athlete ids in running order ([] stops the rotation)")
            }
            var ids: [Int64] = []
            for v in list {
                guard let id = Self.wholeNumber(v), id >= 1 else { throw APIError.invalid("athleteIds", "athlete ids are positive whole numbers") }
                ids.append(id)
            }
            do {
                try s.book.setRoster(ids)
                s.hub.bookChanged()
                s.hub.refresh()
                return try s.json(try s.rosterView())
            } catch { throw apiError(error) }
        }
    }
}
