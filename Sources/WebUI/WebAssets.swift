// SPDX-License-Identifier: Apache-2.0
// The page, its style and its script, embedded in the binary: the gate serves them offline.

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

    init(path: String, contentType: String, text: String) {
        self.path = path
        self.contentType = contentType
        bytes = Array(text.utf8)
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

enum WebAssets {
    static let all: [WebAsset] = [
        WebAsset(path: "/index.html", contentType: "text/html; charset=utf-8", text: indexHTML),
        WebAsset(path: "/app.css", contentType: "text/css; charset=utf-8", text: appCSS),
        WebAsset(path: "/app.js", contentType: "text/javascript; charset=utf-8", text: appJS),
    ]

    static let indexHTML = ##"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="theme-color" content="#000000">
<title>SprintGate</title>
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<header>
  <h1 id="gate-name">SprintGate</h1>
  <span id="link" class="chip bad">offline</span>
</header>
<main>
<section id="board" aria-live="polite">
  <div id="phase" class="phase">—</div>
  <div id="timer" class="timer">0.00</div>
  <div id="false-start" class="alert" hidden></div>
  <div id="status-chips" class="chips"></div>
  <div id="camera" class="small"></div>
  <ol id="laps" class="laps"></ol>
</section>

<section id="controls">
  <div class="row">
    <button id="btn-arm" class="big go">Arm</button>
    <button id="btn-start" class="big">Start</button>
    <button id="btn-reset" class="big stop">Reset</button>
  </div>
  <div class="row">
    <label>Start <select id="sel-start"></select></label>
    <label>Preset <select id="sel-preset"></select></label>
  </div>
  <div class="row">
    <label>Next run <select id="sel-athlete"><option value="">— nobody —</option></select></label>
    <button id="btn-add-athlete">+ Athlete</button>
  </div>
  <div id="pin-box" class="row">
    <label>PIN <input id="pin" inputmode="numeric" autocomplete="off" maxlength="6" size="6" pattern="[0-9]*"></label>
    <button id="btn-pin">Unlock</button>
    <span id="pin-state" class="small"></span>
  </div>
  <div id="message" class="small" role="status"></div>
</section>

<section>
  <h2>Last results</h2>
  <ol id="results" class="results"></ol>
</section>

<section>
  <h2>Crossings</h2>
  <ol id="crossings" class="plain"></ol>
</section>

<section>
  <h2>Gates</h2>
  <table id="peers"><thead><tr><th>Gate</th><th>Role</th><th>State</th><th>Offset</th><th>±</th><th>Seen</th></tr></thead><tbody></tbody></table>
  <div id="peer-edit" hidden>
    <label>Gate <select id="peer-gate"></select></label>
    <label>Role <select id="peer-role"><option>start</option><option>lap</option><option>finish</option><option>control</option></select></label>
    <label>Distance <input id="peer-distance" type="number" min="0" max="10000" step="0.01" inputmode="decimal" style="width:6em"> m</label>
    <button id="btn-peer">Set</button>
    <button id="btn-pause">Pause gates</button>
    <button id="btn-resume">Resume gates</button>
  </div>
  <p id="no-peers" class="small">This gate runs alone.</p>
</section>

<section>
  <h2>History</h2>
  <div class="row">
    <input id="h-q" type="search" placeholder="Search name or preset" maxlength="64">
    <select id="h-athlete"><option value="">All athletes</option></select>
    <select id="h-preset"><option value="">All presets</option></select>
  </div>
  <div class="row">
    <select id="h-sort"><option value="date">Newest</option><option value="time">Fastest</option><option value="athlete">Name</option></select>
    <button id="h-go">Show</button>
    <a id="dl-csv" class="button" href="/api/export.csv">CSV</a>
    <a id="dl-json" class="button" href="/api/export.json">JSON</a>
  </div>
  <table id="history"><thead><tr><th>When</th><th>Athlete</th><th>Preset</th><th>Time</th><th>Speed</th><th></th></tr></thead><tbody></tbody></table>
</section>

<section id="calc-section">
  <h2>Calculators</h2>
  <div id="calc"></div>
</section>

<section>
  <h2>Settings</h2>
  <table id="settings"><tbody></tbody></table>
</section>

<dialog id="photo-dialog"><img id="photo" alt="Photo-finish image"><div id="photo-thumbs" class="thumbs"></div><form method="dialog"><button class="big">Close</button></form></dialog>
</main>
</body>
</html>
"""##

    static let appCSS = ##"""
/* Phone-first, high contrast for sunlight, large touch targets. No external fonts. */
:root { --fg: #000; --bg: #fff; --go: #0a6b1f; --stop: #a30000; --warn: #8a5a00; --muted: #444; }
* { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; font-size: 18px; }
body { margin: 0; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; align-items: center; padding: .5rem .8rem; background: #000; color: #fff; }
h1 { font-size: 1.2rem; margin: 0; }
h2 { font-size: 1.1rem; margin: .2rem 0 .5rem; border-bottom: 3px solid #000; }
main { max-width: 48rem; margin: 0 auto; padding: .5rem; }
section { margin: 0 0 1.2rem; }
.phase { font-size: 1.3rem; font-weight: 800; text-transform: uppercase; letter-spacing: .05em; }
.timer { font-size: 4.6rem; font-weight: 900; font-variant-numeric: tabular-nums; line-height: 1.05; }
.alert { background: var(--stop); color: #fff; font-weight: 800; padding: .4rem .6rem; }
.chips { display: flex; flex-wrap: wrap; gap: .3rem; margin: .4rem 0; }
.chip { display: inline-block; padding: .25rem .55rem; border: 2px solid #000; font-weight: 700; border-radius: .3rem; }
.chip.ok { background: var(--go); color: #fff; border-color: var(--go); }
.chip.bad { background: var(--stop); color: #fff; border-color: var(--stop); }
.chip.warn { background: var(--warn); color: #fff; border-color: var(--warn); }
.small { font-size: .9rem; color: var(--muted); }
.row { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .4rem 0; }
button, .button, select, input { font: inherit; min-height: 3rem; padding: .4rem .8rem; border: 2px solid #000; border-radius: .4rem; background: #fff; color: #000; }
.button { display: inline-flex; align-items: center; text-decoration: none; font-weight: 700; }
button.big { flex: 1; font-size: 1.3rem; font-weight: 800; min-height: 3.6rem; }
button.go { background: var(--go); color: #fff; border-color: var(--go); }
button.stop { background: var(--stop); color: #fff; border-color: var(--stop); }
button:disabled { opacity: .45; }
label { font-weight: 700; display: flex; gap: .4rem; align-items: center; }
ol { padding-left: 0; list-style: none; margin: 0; }
.results li { display: flex; flex-wrap: wrap; align-items: baseline; gap: .6rem; padding: .4rem 0; border-bottom: 1px solid #999; }
.results .t { font-size: 1.8rem; font-weight: 900; font-variant-numeric: tabular-nums; }
.pr { background: #ffd400; color: #000; font-weight: 900; padding: 0 .4rem; border: 2px solid #000; }
.laps li, .plain li { font-variant-numeric: tabular-nums; padding: .15rem 0; }
table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: .35rem .3rem; border-bottom: 1px solid #999; }
dialog { max-width: 100vw; padding: .5rem; }
dialog img { max-width: 100%; display: block; image-rendering: pixelated; }
.thumbs { display: flex; gap: .25rem; flex-wrap: wrap; margin: .25rem 0; }
.thumbs img { max-width: 24%; display: inline-block; }
.calc-form { border: 2px solid #000; padding: .5rem; margin-bottom: .6rem; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #fff; --bg: #000; --muted: #ccc; }
  button, .button, select, input { background: #000; color: #fff; border-color: #fff; }
  h2 { border-color: #fff; } .chip { border-color: #fff; }
}
"""##

    static let appJS = ##"""
// SprintGate live board: WebSocket updates, controls behind the gate's PIN, history.
"use strict";
const $ = (id) => document.getElementById(id);
const state = { board: null, settings: null, recvAt: 0, nowMonoNs: 0, pin: localStorage.getItem("sg-pin") || "", retry: 500 };

function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function fmt(v, d) { return (v === null || v === undefined || !isFinite(v)) ? "—" : Number(v).toFixed(d); }
function say(text, bad) { const m = $("message"); m.textContent = text; m.style.color = bad ? "var(--stop)" : ""; }

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (state.pin) headers["X-Gate-PIN"] = state.pin;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (r.status === 204) return null;
  const data = await r.json().catch(() => null);
  if (!r.ok) {
    const e = data && data.error ? data.error : { field: "", reason: "HTTP " + r.status };
    if (r.status === 401) { setPin(""); }
    throw new Error((e.field ? e.field + ": " : "") + e.reason + (e.retryAfterSeconds ? " (" + e.retryAfterSeconds + " s)" : ""));
  }
  return data;
}

function setPin(p) {
  state.pin = p;
  if (p) localStorage.setItem("sg-pin", p); else localStorage.removeItem("sg-pin");
  $("pin-state").textContent = p ? "unlocked" : "locked: enter the PIN from `sprintgate status`";
  $("pin-box").hidden = false;
}

async function control(method, path, body, done) {
  if (!state.pin) { say("Enter the gate's PIN first.", true); $("pin").focus(); return; }
  try { const r = await api(method, path, body); say(done || "OK"); return r; }
  catch (e) { say(e.message, true); }
}

function runClock() {
  const b = state.board;
  let text = "0.00";
  if (b) {
    const g = b.gate;
    if (g.phase === "running" && g.runStartMonoNs !== null && g.runStartMonoNs !== undefined) {
      const s = (state.nowMonoNs - g.runStartMonoNs) / 1e9 + (performance.now() - state.recvAt) / 1000;
      text = fmt(Math.max(0, s), 2);
    } else if (b.results.length && g.phase === "finished") {
      text = fmt(b.results[0].run.seconds, 3);
    } else if (g.laps.length) {
      text = fmt(g.laps[g.laps.length - 1].splitSeconds, 3);
    }
  }
  $("timer").textContent = text;
  requestAnimationFrame(runClock);
}

function chip(text, cls) { return el("span", text, "chip " + cls); }

function render() {
  const b = state.board; if (!b) return;
  const g = b.gate;
  $("phase").textContent = g.phase + " · " + g.startType + (g.preset ? " · " + g.preset : "");
  const fs = $("false-start"); fs.hidden = !g.falseStart; fs.textContent = g.falseStart ? "False start: " + g.falseStart : "";
  const chips = $("status-chips"); chips.replaceChildren();
  chips.append(g.gate.ready ? chip("ready", "ok") : chip("no athlete", ""));
  chips.append(g.gate.armed ? chip("armed", "ok") : chip("not armed", "warn"));
  chips.append(g.gate.clear ? chip("clear", "ok") : chip("line occupied", "warn"));
  if (g.gate.shaking) chips.append(chip("shaking", "bad"));
  if (g.gate.tooFar) chips.append(chip("too far", "bad"));
  chips.append(chip("camera " + g.camera.state, g.camera.state === "streaming" ? "ok" : "bad"));
  $("camera").textContent = (g.camera.mode || "no camera mode") + " · " + fmt(g.camera.fps, 1) + " fps · " +
    g.camera.frames + " frames · " + g.camera.dropped + " dropped · p99 " + fmt(g.camera.latencyP99Ms, 1) + " ms";
  const laps = $("laps"); laps.replaceChildren();
  for (const l of g.laps) laps.append(el("li", "Lap " + l.number + ": " + fmt(l.lapSeconds, 3) + " s  (split " + fmt(l.splitSeconds, 3) + " s)"));
  const res = $("results"); res.replaceChildren();
  for (const v of b.results) res.append(resultItem(v, b.speedUnit));
  if (!b.results.length) res.append(el("li", "No runs yet.", "small"));
  const cr = $("crossings"); cr.replaceChildren();
  for (const c of g.crossings) cr.append(el("li", "#" + c.number + " " + (c.direction === "leftToRight" ? "→" : "←") + " ±" + fmt(c.uncertaintyMs, 1) + " ms, " + fmt((state.nowMonoNs - c.atMonoNs) / 1e9, 1) + " s ago"));
  const pb = document.querySelector("#peers tbody"); pb.replaceChildren();
  for (const p of g.peers) {
    const tr = el("tr");
    const role = p.distanceMetres === null || p.distanceMetres === undefined ? p.role : p.role + " · " + fmt(p.distanceMetres, 1) + " m";
    for (const t of [p.name, role, p.state, fmt(p.offsetMicroseconds, 0) + " µs", fmt(p.uncertaintyMicroseconds, 0) + " µs", fmt(p.lastSeenSecondsAgo, 1) + " s"]) tr.append(el("td", t));
    pb.append(tr);
  }
  $("no-peers").hidden = g.peers.length > 0;
  const editable = g.peers.filter(p => p.gateID !== null && p.gateID !== undefined);
  $("peer-edit").hidden = editable.length === 0;
  if (document.activeElement !== $("peer-gate")) {
    const chosen = $("peer-gate").value;
    $("peer-gate").replaceChildren(...editable.map(p => { const o = el("option", p.name); o.value = String(p.gateID); return o; }));
    if (editable.some(p => String(p.gateID) === chosen)) $("peer-gate").value = chosen;
  }
  const running = ["running", "starting", "holding", "in-frame"].includes(g.phase);
  $("sel-start").disabled = running; $("sel-preset").disabled = running;
  if (document.activeElement !== $("sel-start")) $("sel-start").value = g.startType;
  if (document.activeElement !== $("sel-preset")) $("sel-preset").value = g.preset || "";
  if (document.activeElement !== $("sel-athlete")) $("sel-athlete").value = b.nextAthlete ? String(b.nextAthlete.id) : "";
}

function resultItem(v, unit) {
  const r = v.run, li = el("li");
  li.append(el("span", fmt(r.seconds, 3), "t"));
  li.append(el("span", r.athleteName || "—"));
  if (r.preset) li.append(el("span", r.preset, "small"));
  if (v.speed !== null && v.speed !== undefined) li.append(el("span", fmt(v.speed, 2) + " " + unit));
  if (r.splits.length) li.append(el("span", "splits " + r.splits.map((s) => fmt(s, 2)).join(" / "), "small"));
  if (r.personalBest) li.append(el("span", "PR", "pr"));
  if (r.hasPhoto) { const a = el("button", "Photo"); a.onclick = () => showPhoto(r.id); li.append(a); }
  for (const g of r.photoGates || []) {
    const a = el("button", g === 0 ? "Start gate" : "Gate " + g);
    a.onclick = () => showGatePhoto(r.id, g); li.append(a);
  }
  return li;
}

function showPhoto(id) {
  $("photo").src = "/api/results/" + id + "/photo.jpg";
  const box = $("photo-thumbs"); box.replaceChildren();
  // Up to four frames around the crossing; a missing one is simply left out.
  for (let i = 0; i < 4; i++) {
    const t = document.createElement("img");
    t.alt = "Frame " + (i + 1) + " at the gate"; t.onerror = () => t.remove();
    t.src = "/api/results/" + id + "/thumb/" + i + ".jpg"; box.append(t);
  }
  $("photo-dialog").showModal();
}

function showGatePhoto(id, gate) {
  $("photo").src = "/api/results/" + id + "/gates/" + gate + ".jpg";
  $("photo-thumbs").replaceChildren();
  $("photo-dialog").showModal();
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/ws");
  ws.onopen = () => { state.retry = 500; const l = $("link"); l.textContent = "live"; l.className = "chip ok"; };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    const changedAthletes = !state.board || JSON.stringify(state.board.nextAthlete) !== JSON.stringify(m.board.nextAthlete);
    state.board = m.board; state.nowMonoNs = m.nowMonoNs; state.recvAt = performance.now();
    document.body.dataset.version = String(m.board.version);
    render();
    if (changedAthletes) loadAthletes();
  };
  ws.onclose = () => {
    const l = $("link"); l.textContent = "reconnecting"; l.className = "chip bad";
    setTimeout(connect, state.retry); state.retry = Math.min(state.retry * 2, 8000);
  };
}

async function loadSettings() {
  const s = await api("GET", "/api/settings"); state.settings = s;
  $("gate-name").textContent = s.gateName; document.title = s.gateName;
  const st = $("sel-start"); st.replaceChildren(); for (const t of s.startTypes) st.append(new Option(t, t));
  const ps = $("sel-preset"), hp = $("h-preset"); ps.replaceChildren(new Option("— none —", "")); hp.replaceChildren(new Option("All presets", ""));
  for (const p of s.presets) { ps.append(new Option(p.title, p.id)); hp.append(new Option(p.title, p.id)); }
  const tb = document.querySelector("#settings tbody"); tb.replaceChildren();
  const rows = Object.entries(s.details).sort(); rows.unshift(["speed unit", s.speedUnit]);
  for (const [k, v] of rows) { const tr = el("tr"); tr.append(el("th", k), el("td", v)); tb.append(tr); }
}

async function loadAthletes() {
  const list = await api("GET", "/api/athletes").catch(() => []);
  for (const id of ["sel-athlete", "h-athlete"]) {
    const sel = $(id), keep = sel.value; sel.replaceChildren(new Option(id === "h-athlete" ? "All athletes" : "— nobody —", ""));
    for (const a of list) sel.append(new Option(a.name, String(a.id)));
    sel.value = keep;
  }
  if (state.board && state.board.nextAthlete) $("sel-athlete").value = String(state.board.nextAthlete.id);
}

function historyParams() {
  const p = new URLSearchParams();
  if ($("h-q").value.trim()) p.set("q", $("h-q").value.trim());
  if ($("h-athlete").value) p.set("athlete", $("h-athlete").value);
  if ($("h-preset").value) p.set("preset", $("h-preset").value);
  p.set("sort", $("h-sort").value);
  return p;
}

async function loadHistory() {
  const p = historyParams();
  $("dl-csv").href = "/api/export.csv?" + p; $("dl-json").href = "/api/export.json?" + p;
  let rows;
  try { rows = await api("GET", "/api/results?" + p); } catch (e) { say(e.message, true); return; }
  const tb = document.querySelector("#history tbody"); tb.replaceChildren();
  const unit = state.settings ? state.settings.speedUnit : "";
  for (const v of rows) {
    const r = v.run, tr = el("tr");
    const d = new Date(r.wallTime * 1000);
    tr.append(el("td", d.toLocaleDateString() + " " + d.toLocaleTimeString()), el("td", r.athleteName || "—"), el("td", r.preset || r.startType));
    const t = el("td", fmt(r.seconds, 3)); if (r.personalBest) t.append(" ", el("span", "PR", "pr")); tr.append(t);
    tr.append(el("td", v.speed === null || v.speed === undefined ? "—" : fmt(v.speed, 2) + " " + unit));
    const td = el("td");
    if (r.hasPhoto) { const ph = el("button", "Photo"); ph.onclick = () => showPhoto(r.id); td.append(ph); }
    const del = el("button", "Delete"); del.onclick = async () => {
      if (!confirm("Delete the " + fmt(r.seconds, 3) + " s run?")) return;
      await control("DELETE", "/api/results/" + r.id, undefined, "Deleted."); loadHistory();
    };
    td.append(del); tr.append(td); tb.append(tr);
  }
  if (!rows.length) { const tr = el("tr"); const td = el("td", "No runs match."); td.colSpan = 6; tr.append(td); tb.append(tr); }
}

function wire() {
  $("btn-arm").onclick = () => control("POST", "/api/arm", undefined, "Armed.");
  $("peer-gate").onchange = () => {
    const p = (state.board ? state.board.gate.peers : []).find(p => String(p.gateID) === $("peer-gate").value);
    if (p) { $("peer-role").value = p.role; $("peer-distance").value = p.distanceMetres; }
  };
  $("btn-peer").onclick = () => {
    const d = Number($("peer-distance").value);
    if ($("peer-distance").value === "" || !isFinite(d)) { say("Distance: metres from the start line.", true); return; }
    control("PUT", "/api/peers/" + $("peer-gate").value, { role: $("peer-role").value, distance: d }, "Gate role sent to the race.");
  };
  $("btn-start").onclick = () => control("POST", "/api/start", undefined, "Starting.");
  $("btn-pause").onclick = () => control("POST", "/api/pause", undefined, "Gates paused: crossings are not timed.");
  $("btn-resume").onclick = () => control("POST", "/api/resume", undefined, "Gates timing again.");
  $("btn-reset").onclick = () => control("POST", "/api/reset", undefined, "Reset.");
  $("sel-start").onchange = (e) => control("PUT", "/api/config", { startType: e.target.value }, "Start type set.");
  $("sel-preset").onchange = (e) => { if (e.target.value) control("PUT", "/api/config", { preset: e.target.value }, "Preset set."); };
  $("sel-athlete").onchange = (e) => control("PUT", "/api/next-athlete", { athleteId: e.target.value ? Number(e.target.value) : null }, "Next run assigned.");
  $("btn-add-athlete").onclick = async () => {
    const name = prompt("Athlete's name"); if (!name) return;
    const a = await control("POST", "/api/athletes", { name }, "Added " + name + ".");
    if (a) { await loadAthletes(); }
  };
  $("btn-pin").onclick = async () => {
    const p = $("pin").value.trim();
    try { state.pin = ""; await api("POST", "/api/pin", { pin: p }); setPin(p); say("Unlocked."); $("pin").value = ""; }
    catch (e) { say(e.message, true); }
  };
  $("h-go").onclick = loadHistory;
  $("h-q").onkeydown = (e) => { if (e.key === "Enter") loadHistory(); };
}


// Calculators: wind adjustment and equivalent performances (read-only, no PIN).
window.SprintGateCalc = async function () {
  const box = $("calc");
  let ev;
  try { ev = await api("GET", "/api/calc/events"); } catch (e) { box.textContent = "Calculators unavailable: " + e.message; return; }
  function form(title, fields, path, show) {
    const f = el("form", undefined, "calc-form"); f.append(el("strong", title));
    const row = el("div", undefined, "row"), inputs = {};
    for (const [name, label, opts, value] of fields) {
      const l = el("label", label);
      const i = opts ? document.createElement("select") : document.createElement("input");
      if (opts) for (const o of opts) i.append(new Option(o, o)); else { i.size = 6; i.inputMode = "decimal"; }
      if (value) i.value = value;
      inputs[name] = i; l.append(i); row.append(l);
    }
    const out = el("div", "", "small"), go = el("button", "Calculate"); go.type = "submit"; row.append(go);
    f.append(row, out);
    f.onsubmit = async (e) => {
      e.preventDefault();
      const p = new URLSearchParams(); for (const k in inputs) p.set(k, inputs[k].value.trim());
      try { out.style.color = ""; out.textContent = show(await api("GET", path + "?" + p)); }
      catch (err) { out.style.color = "var(--stop)"; out.textContent = err.message; }
    };
    box.append(f);
  }
  form("Wind adjustment", [["event", "Event", ev.wind], ["time", "Time s", null, ""], ["wind", "Wind m/s", null, "+0.0"]], "/api/calc/wind",
    (r) => "Still air: " + fmt(r.stillAirTime, 2) + " s · at +2.0: " + fmt(r.atLegalLimit, 2) + " s · " + (r.legal ? "legal wind" : "wind-assisted"));
  form("Equivalent performance", [["sex", "Sex", Object.keys(ev.scored)], ["from", "From", ev.scored.men], ["time", "Time s", null, ""], ["to", "To", ev.scored.men]], "/api/calc/equivalent",
    (r) => r.from.time.toFixed(2) + " s " + r.from.event + " = " + r.from.points + " points = " + r.to.time.toFixed(2) + " s " + r.to.event);
};

window.addEventListener("DOMContentLoaded", async () => {
  wire(); setPin(state.pin);
  try { await loadSettings(); } catch (e) { say("Cannot load settings: " + e.message, true); }
  await loadAthletes(); loadHistory(); connect(); requestAnimationFrame(runClock);
  if (window.SprintGateCalc) window.SprintGateCalc();
});
"""##
}
