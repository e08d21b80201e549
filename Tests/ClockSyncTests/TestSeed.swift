// SPDX-License-Identifier: Apache-2.0
// The seed of the randomised tests: printed, and taken from SPRINTGATE_TEST_SEED when set.

import ClockSync
import Glibc

/// The seed for randomised tests: `SPRINTGATE_TEST_SEED` when set (to reproduce a failure),
/// otherwise a fresh one. Printed with the test's name so a failure can be replayed.
func testSeed(_ name: String) -> UInt64 {
    let seed: UInt64
    if let raw = getenv("SPRINTGATE_TEST_SEED"), let v = UInt64(String(cString: raw)) {
        seed = v
    } else {
        var system = SystemRandomNumberGenerator()
        seed = system.next() >> 16  // short enough to type
    }
    print("\(name): seed \(seed) (SPRINTGATE_TEST_SEED=\(seed) reproduces)")
    return seed
}
