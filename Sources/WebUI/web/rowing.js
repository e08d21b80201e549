// SPDX-License-Identifier: Apache-2.0
// The rowing hub on the page: a live tile per erg over a WebSocket (athlete, time, distance,
// pace, rate, watts, heart rate, drag factor, the last force curve), stale ergs marked,
// athletes put on ergs, one workout set on every erg, the race view on one distance, a
// wall-screen view, the recorded sessions with their exports, and on a hub with Bluetooth
// the PM5s found by a scan, connected and let go from here. Uses app.js's helpers
// and ski.js's `svg`.
"use strict";

// `latencies`: for each tile that changed, seconds from its erg's notification reaching
// the hub to the tile drawn (the newest 2000), read by the browser test.
const rowing = { live: null, race: false, heard: {}, latencies: [] };

// Seconds as m:ss.t (pace and elapsed time).
function ergClock(s, tenths) {
  if (s === null || s === undefined || !isFinite(s)) return "—";
  const t = tenths ? Math.round(s * 10) / 10 : Math.round(s);
  const m = Math.floor(t / 60), r = t - 60 * m;
  const sec = tenths ? r.toFixed(1).padStart(4, "0") : String(Math.round(r)).padStart(2, "0");
  return m >= 60 ? Math.floor(m / 60) + ":" + String(m % 60).padStart(2, "0") + ":" + sec : m + ":" + sec;
}

// The last drive's force as a line, scaled to its own peak (ski.js's `svg` helper).
function ergCurve(points) {
  const s = svg("svg", { viewBox: "0 0 100 40", preserveAspectRatio: "none", role: "img", "aria-label": "force curve" });
  if (points && points.length > 1) {
    const top = Math.max(...points, 1);
    s.append(svg("polyline", { points: points.map((p, i) => (100 * i / (points.length - 1)).toFixed(1) + "," + (38 - 36 * p / top).toFixed(1)).join(" "),
                               fill: "none", stroke: "currentColor", "stroke-width": "3", "vector-effect": "non-scaling-stroke" }));
  }
  return s;
}

// `device`: another hub's erg (MQTT), shown and not assigned from here.
function ergTile(t, device) {
  const d = el("div", undefined, "erg-tile" + (t.stale ? " stale" : "") + (t.finished ? " finished" : "") + (t.resting ? " resting" : "") +
                                  (device ? " remote" : ""));
  d.id = device ? "erg-" + device + "-" + t.erg : "erg-" + t.erg;
  d.dataset.erg = t.erg;
  const who = el("div", (device ? device + " · " : "") + (t.athlete || (device ? "nobody" : "nobody — tap to assign")), "who");
  if (!device) {
    who.onclick = () => ergAssign(t);
    who.setAttribute("role", "button");
  }
  // In a workout of intervals the elapsed time and distance are the interval's.
  const rowingNow = t.interval ? (t.resting ? "rest after interval " : "interval ") + t.interval : "rowing";
  const state = (!t.connected ? "out of reach" : t.stale ? "nothing heard" : t.finished ? "finished" : rowingNow) +
    (t.gaps ? " · " + count(t.gaps, "gap", "gaps") : "");
  const figs = el("div", undefined, "figs");
  figs.append(el("span", ergClock(t.elapsed, false), "elapsed"), el("span", fmt(t.distance, 0) + " m", "distance"),
              el("span", (t.strokeRate ?? "—") + " spm", "rate"), el("span", (t.power ?? "—") + " W", "watts"),
              el("span", "♥ " + (t.heartRate ?? "—"), "hr"), el("span", "DF " + (t.dragFactor ?? "—"), "df"));
  d.append(el("h3", t.name), who, el("div", ergClock(t.pace, true), "pace"), el("div", "/500 m", "small"), figs,
           ergCurve(t.forceCurve), el("div", state + (t.dropped ? " · " + t.dropped + " dropped" : ""), "state"));
  return d;
}

function ergPlace(p, lead) {
  const li = el("li");
  li.dataset.erg = p.device ? p.device + "/" + p.erg : p.erg;
  const lane = el("div", undefined, "lane");
  const boat = el("div", undefined, "boat");
  boat.style.left = "calc(" + (lead > 0 ? 100 * p.distance / lead : 0).toFixed(1) + "% - .8rem)";
  lane.append(boat);
  const name = p.device ? null : rowing.live.board.tiles.find((t) => t.erg === p.erg);
  lane.title = (p.athlete || (name ? name.name : "erg " + p.erg));
  li.append(el("span", String(p.place)), lane, el("span", p.place === 1 ? fmt(p.distance, 0) + " m" : "−" + fmt(p.behind, 0) + " m"));
  const label = el("div", (p.athlete || (name ? name.name : "erg " + p.erg)), "small");
  label.style.gridColumn = "2 / 4";
  li.append(label);
  return li;
}

// `device`: a session another hub finished (no exports here: they are on that hub).
function sessionItem(s, device) {
  const li = el("li");
  const sum = s.summary;
  li.append(el("span", when(s.startedWall) + " "), el("strong", (device ? device + " · " : "") + (s.athlete || s.erg) + " "),
            el("span", (s.workout ? s.workout + " · " : "") + fmt(s.distance, 0) + " m · " + count(s.strokes, "stroke", "strokes") +
                       (sum ? " · " + ergClock(sum.elapsed, true) + " · " + ergClock(sum.averagePace, true) + "/500 m · " + sum.averageStrokeRate + " spm" +
                              (sum.averagePower ? " · " + fmt(sum.averagePower, 0) + " W (max " + sum.maximumPower + ")" : "") +
                              " · DF " + sum.averageDragFactor + (sum.fromRecord ? " (the PM5 sent no summary: figures from the record)" : "")
                            : " · not finished")));
  if (device) return li;
  for (const f of ["csv", "json", "tcx"]) {
    const a = el("a", f.toUpperCase(), "button small-button");
    a.href = "/api/rowing/sessions/" + s.id + "/export." + f;
    li.append(" ", a);
  }
  return li;
}

function drawRowing() {
  const l = rowing.live;
  if (!l) return;
  $("r-source").replaceChildren(chip(l.source + (l.sourceProblem ? ": " + l.sourceProblem : ""), l.sourceProblem ? "bad" : "ok"),
                                chip(count(l.board.tiles.filter((t) => t.connected).length, "erg connected", "ergs connected"), "ok"));
  drawPM5s(l.bluetooth);
  $("r-store").replaceChildren(l.storeError ? chip("not stored: " + l.storeError, "bad") : el("span", l.pending ? l.pending + " strokes to store" : "all strokes stored", "small"));
  const taken = l.programmed.filter((p) => p.accepted).length;
  $("r-workout").textContent = l.workout ? "Set: " + l.workout + " on " + taken + " of " + l.programmed.length + " ergs" +
    l.programmed.filter((p) => !p.accepted).map((p) => " · " + p.name + ": " + p.problem).join("") : "";
  $("r-grid").hidden = rowing.race;
  $("r-race").hidden = !rowing.race;
  $("r-view").textContent = rowing.race ? "Tiles" : "Race view";
  if (rowing.race) {
    // The boathouse's other ergs race too: every erg that has started, furthest first.
    const all = l.board.race.map((p) => Object.assign({}, p))
      .concat((l.boathouse || []).filter((b) => (b.tile.workoutDistance ?? b.tile.distance) > 0)
        .map((b) => ({ erg: b.tile.erg, device: b.device, athlete: b.tile.athlete || b.device + " · " + b.tile.name,
                       distance: b.tile.workoutDistance ?? b.tile.distance })))
      .sort((a, b) => b.distance - a.distance);
    const lead = all.length ? all[0].distance : 0;
    all.forEach((p, i) => { p.place = i + 1; p.behind = lead - p.distance; });
    $("r-race").replaceChildren(...all.map((p) => ergPlace(p, lead)));
  } else {
    $("r-grid").replaceChildren(...l.board.tiles.map((t) => ergTile(t)), ...(l.boathouse || []).map((b) => ergTile(b.tile, b.device)));
  }
  const all = l.sessions.map((s) => [s, null]).concat((l.boathouseSessions || []).map((b) => [b.session, b.device]))
    .sort((a, b) => b[0].startedWall - a[0].startedWall);
  // The newest five, and five more a tap: a day of pieces keeps the tab a few screens tall.
  const shown = rowing.sessionsShown || 5;
  const ids = shown + ":" + all.map(([s, d]) => (d || "") + "/" + s.id).join(",");
  if (ids !== rowing.sessionIds && !rowing.filtered) {
    rowing.sessionIds = ids;
    const items = all.slice(0, shown).map(([s, d]) => sessionItem(s, d));
    if (all.length > shown) {
      const li = el("li"), more = el("button", "Show 5 more"); more.id = "r-more";
      more.onclick = () => { rowing.sessionsShown = shown + 5; drawRowing(); };
      li.append(more); items.push(li);
    }
    $("r-sessions").replaceChildren(...items);
  }
}

// The hub's PM5s: those it keeps connected (by erg), then those the last scan found.
function drawPM5s(b) {
  $("r-bt").hidden = !b;
  if (!b) return;
  const picked = new Map(b.picked.map((p) => [p.address, p]));
  const full = b.picked.length >= b.limit;
  $("r-scan").disabled = b.scanning;
  $("r-scan").textContent = b.scanning ? "Finding PM5s…" : "Find PM5s";
  $("r-scan-state").replaceChildren(b.scanProblem ? chip(b.scanProblem, "bad") :
    el("span", b.scanning ? "Listening on " + b.controller + (b.sharedScan ? " (to bluetoothd's discovery)" : "") + ": put each PM5 in its Connect screen." :
      count(b.picked.length, "PM5", "PM5s") + " of " + b.limit + " on " + b.controller +
      (b.found.length ? "; the last scan found " + count(b.found.length, "PM5", "PM5s") + (b.others ? " and " + count(b.others, "other device", "other devices") : "") : "")));
  const rows = b.picked.map((p) => {
    const li = el("li");
    li.append(el("strong", "Erg " + p.erg), el("span", p.name + " · " + p.address, "small"));
    if (p.fromSettings) li.append(el("span", "in the settings file", "small"));
    else {
      const go = el("button", "Let go");
      go.onclick = () => control("DELETE", "/api/rowing/pm5s/" + p.erg, undefined, p.name + " let go.");
      li.append(go);
    }
    return li;
  });
  for (const f of b.found) {
    if (picked.has(f.address)) continue;
    const li = el("li");
    li.append(el("strong", f.name || "PM5"), el("span", f.address + (f.rssi !== null && f.rssi !== undefined ? " · " + f.rssi + " dBm" : ""), "small"));
    const add = el("button", "Connect", "go");
    add.disabled = full;
    add.title = full ? "This adapter has as many PM5s as it takes: let one go first." : "";
    add.onclick = async () => {
      const r = await control("POST", "/api/rowing/pm5s", { address: f.address });
      if (r) say((f.name || f.address) + " is erg " + r.erg + ".");
    };
    li.append(add);
    rows.push(li);
  }
  $("r-pm5s").replaceChildren(...rows);
}

async function ergAssign(t) {
  const name = prompt("Athlete on " + t.name + " (empty: nobody)", t.athlete || "");
  if (name === null) return;
  await control("PUT", "/api/rowing/ergs/" + t.erg, { athlete: name.trim() }, name.trim() ? name.trim() + " is on " + t.name + "." : t.name + " has nobody.");
}

function workoutBody() {
  const kind = $("r-kind").value, n = Number($("r-amount").value);
  if (kind === "justRow") return { kind };
  if (kind === "distance") return { kind, metres: n };
  if (kind === "time") return { kind, seconds: n };
  const one = $("r-amount-label").dataset.unit === "s" ? { seconds: n } : { metres: n };
  return { kind, intervals: Array.from({ length: Number($("r-count").value) }, () => Object.assign({ rest: Number($("r-rest").value) }, one)) };
}

function workoutForm() {
  const kind = $("r-kind").value;
  $("r-count-label").hidden = $("r-rest-label").hidden = kind !== "intervals";
  $("r-amount-label").hidden = kind === "justRow";
  const seconds = kind === "time";
  $("r-amount-label").dataset.unit = seconds ? "s" : "m";
  $("r-amount-label").firstChild.textContent = seconds ? "Seconds " : "Metres ";
}

async function sessionHistory() {
  const a = $("r-h-athlete").value.trim();
  rowing.filtered = a !== "";
  if (!rowing.filtered) { rowing.sessionIds = null; drawRowing(); return; }
  try {
    const list = await api("GET", "/api/rowing/sessions?athlete=" + encodeURIComponent(a));
    $("r-sessions").replaceChildren(...list.map((x) => sessionItem(x)));
    if (!list.length) $("r-sessions").replaceChildren(el("li", "No sessions for " + a + "."));
  } catch (e) { say(e.message, true); }
}

// Each message drawn; for each tile that changed, how long since its erg's notification.
function rowingMessage(m) {
  rowing.live = m;
  drawRowing();
  const drawn = Date.now() / 1000;
  for (const t of m.board.tiles) {
    if (t.heardAgo === null || t.heardAgo === undefined) continue;
    const at = m.wall - t.heardAgo;
    if (rowing.heard[t.erg] === undefined || at - rowing.heard[t.erg] > 0.0005) {
      if (rowing.heard[t.erg] !== undefined) rowing.latencies.push(drawn - at);
      rowing.heard[t.erg] = at;
    }
  }
  if (rowing.latencies.length > 2000) rowing.latencies.splice(0, rowing.latencies.length - 2000);
}

window.addEventListener("DOMContentLoaded", async () => {
  let first;
  // Off (404): a gate without a rowing hub shows no ergs.
  try { first = await api("GET", "/api/rowing"); } catch (e) { return; }
  rowing.live = first;
  $("rowing-section").hidden = false;
  drawRowing();
  $("r-kind").onchange = workoutForm;
  workoutForm();
  $("r-set").onclick = async () => {
    // A new workout ends the piece an erg is rowing: ask first (a second press would cut every piece short).
    const mid = (rowing.live ? rowing.live.board.tiles : []).filter((t) => t.connected && !t.finished && (t.distance > 0 || t.elapsed > 0));
    if (mid.length && !confirm(count(mid.length, "erg is", "ergs are") + " rowing a piece; the new workout ends it there. Set it anyway?")) return;
    const r = await control("POST", "/api/rowing/workout", workoutBody());
    if (r) say("Set on " + r.filter((p) => p.accepted).length + " of " + r.length + " ergs" +
               r.filter((p) => !p.accepted).map((p) => "; " + p.name + ": " + p.problem).join(""), r.some((p) => !p.accepted));
  };
  $("r-view").onclick = () => { rowing.race = !rowing.race; drawRowing(); };
  $("r-wall").onclick = () => {
    const on = !document.body.classList.contains("wall");
    document.body.classList.toggle("wall", on);
    $("r-wall").textContent = on ? "Leave the wall screen" : "Wall screen";
  };
  $("r-h-go").onclick = sessionHistory;
  $("r-scan").onclick = () => control("POST", "/api/rowing/scan", undefined, "Finding PM5s for 20 s.");
  liveSocket("/api/rowing/ws", rowingMessage, () => $("r-source").replaceChildren(chip("page not connected to the hub", "bad")));
});
