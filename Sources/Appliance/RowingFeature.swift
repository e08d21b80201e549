// SPDX-License-Identifier: Apache-2.0
// The rowing area: the hub of ergs, over Bluetooth or synthetic, on the page and over MQTT.

public import GateConfig
public import GateCore
public import GateDaemon
import LinuxHardware
public import Logging
public import SQLiteStore
public import WebUI

/// `[rowing]`: PM5s over Bluetooth on threads of their own (or, in the demo, synthetic
/// ergs), their sessions in the results database, the coach's board on the page; with
/// `[mqtt]` the boathouse's other hubs' ergs too.
public final class RowingFeature: Feature {
    public let name = "rowing"
    public let hub: RowingHub
    private let bluetooth: BluetoothRowing?
    private let synthetic: SyntheticErgs?
    private let mqtt: RowingMQTT?
    private let web: WebGate?

    /// PM5s over BlueZ, as `[rowing]` lists them and as picked on the page.
    public init(settings: RowingSettings, store: RunStore?, stateDirectory: String, web: WebGate?, mqtt: MQTTResults?) {
        let link = BluetoothRowing(settings: settings, store: store, stateDirectory: stateDirectory,
                                   logger: Logger(label: "sprintgate.rowing"), clock: { Sys.monotonicNow().seconds })
        bluetooth = link
        synthetic = nil
        hub = link.hub
        self.web = web
        self.mqtt = mqtt.map { RowingMQTT(results: $0, hub: link.hub, logger: Logger(label: "sprintgate.mqtt")) }
    }

    /// `count` synthetic PM5s rowing `speed` times faster than real time (the demo).
    public init(syntheticErgs count: Int, speed: Double, store: RunStore?, web: WebGate?, mqtt: MQTTResults?) {
        let clock: @Sendable () -> Double = { Sys.monotonicNow().seconds }
        let hub = RowingHub(store: store, control: nil, source: "synthetic ergs (demo)", logger: Logger(label: "sprintgate.rowing"),
                            clock: clock)
        let ergs = SyntheticErgs(count: count, speed: speed, clock: clock) { hub.apply($0) }
        hub.setControl(ergs)
        for e in 1...count { hub.add(erg: e, name: SyntheticErgs.name(e)) }
        self.hub = hub
        bluetooth = nil
        synthetic = ergs
        self.web = web
        self.mqtt = mqtt.map { RowingMQTT(results: $0, hub: hub, logger: Logger(label: "sprintgate.mqtt")) }
    }

    public func start() {
        if let bluetooth {
            bluetooth.start()
        } else {
            hub.start()
            synthetic?.start()
        }
        web?.bridge.rowing.connect(hub)
        mqtt?.start()
    }

    public func stop() {
        synthetic?.stop()
        if let bluetooth { bluetooth.stop() } else { hub.stop() }
        mqtt?.stop()
    }
}

/// `[mqtt]`: every stored run published to the broker from an outbox under the state
/// directory; the link keeps trying while the broker is away.
public final class MQTTFeature: Feature {
    public let name = "mqtt"
    public let results: MQTTResults

    /// Throws when the outbox cannot be opened or libmosquitto refuses the settings.
    public init(settings: MQTTSettings, stateDirectory: String, commits: CommitRelay) throws {
        results = try MQTTResults(settings: settings, outboxDirectory: stateDirectory + "/mqtt-outbox",
                                  logger: Logger(label: "sprintgate.mqtt"))
        results.attach(to: commits)
    }

    public func start() {}

    public func stop() { results.stop() }
}
