// SPDX-License-Identifier: Apache-2.0
// The tables and keys each kind of settings file accepts: the lists the decoders check against.

public import GateCore

/// The tables of one kind of settings file and the keys each of them accepts.
///
/// The decoders reject keys and tables with these lists, so a key is accepted exactly when
/// it is listed here; `docs/configuration.md` documents the same keys, and a test compares
/// the two.
public struct KnownKeys: Sendable, Hashable {
    /// One table and its keys.
    public struct Table: Sendable, Hashable {
        /// The table's dotted name as written between brackets, e.g. `camera`; `gpio.<role>`
        /// stands for every `[gpio.<role>]` table. Empty for the keys at the top of the file,
        /// outside any table.
        public let name: String
        /// The keys, in the order error messages list them.
        public let keys: [String]

        init(_ name: String, _ keys: [String]) {
            self.name = name
            self.keys = keys
        }
    }

    /// The tables, in the order error messages list them.
    public let tables: [Table]

    /// The keys of each table by the table's name ("" for the top of the file).
    public var keysByTable: [String: Set<String>] {
        var byName: [String: Set<String>] = [:]
        for table in tables { byName[table.name, default: []].formUnion(table.keys) }
        return byName
    }

    /// The tables at the top of the file in order (`gpio` for `gpio.<role>`), as the
    /// top-level check allows them.
    var topLevelTables: [String] {
        var names: [String] = []
        for table in tables where !table.name.isEmpty {
            let top = String(table.name.prefix { $0 != "." })
            if !names.contains(top) { names.append(top) }
        }
        return names
    }

    /// The keys of the table called `name`; none for a table with no keys of its own (the
    /// top of a board file).
    func keys(_ name: String) -> [String] {
        tables.first { $0.name == name }?.keys ?? []
    }
}

extension BoardConfig {
    /// The tables and keys a board file (`boards/*.toml`) accepts. `debounce_ms` is accepted
    /// in the tables of input roles only (`gpio.start-button`).
    public static let knownKeys = KnownKeys(tables: [
        .init("board", ["name", "thermal_zone", "video_encoder"]),
        .init("camera", ["device", "format", "width", "height", "fps", "exposure_us"]),
        .init("audio", ["device"]),
        .init("gpio.<role>", ["chip", "line", "active_low", "bias", "debounce_ms"]),
        .init("peer", ["group"]),
        .init("gps_receiver", ["device", "baud"]),
    ])
}

extension GateSettings {
    /// The tables and keys the gate settings file (`/etc/sprintgate/gate.toml`) accepts.
    public static let knownKeys = KnownKeys(tables: [
        .init("", ["board", "state_dir"]),
        .init("gate", ["gate_x", "preset", "distance_m", "start_type", "solo", "speed_unit", "rearm", "rearm_s"]),
        .init("start", ["marks_pause_s", "set_pause_s", "start_sound"]),
        .init("feedback", ["crossing_led", "buzzer", "crossing_sound", "spoken_time"]),
        .init("detector", ["subject", "min_height", "min_velocity", "motion_threshold", "row_time_us"]),
        .init("camera", ["fps", "exposure_us"]),
        .init("peers", ["pairing_code", "role", "port", "host"]),
        .init("video", [
            "enabled", "delay_s", "pre_roll_s", "post_roll_s", "encoder", "bitrate_kbps", "memory_mb", "mark_button",
            "clickers", "target_face", "bow", "arrow_diameter_mm", "arrows_per_end", "overlay", "tv", "tv_rotate",
            "tv_flip", "tv_versus",
        ]),
        .init("gps", ["host", "port", "rate_hz", "accuracy_m", "rollout", "set_rate"]),
        .init("ski", [
            "min_run_s", "min_vertical_m", "longest_pause_s", "snowboard_min_run_s", "snowboard_min_vertical_m",
            "snowboard_longest_pause_s", "button", "sport",
        ]),
        .init("mqtt", ["host", "port", "device"]),
        .init("rowing", ["controller", "ergs", "sample_rate_ms"]),
    ])
}
