// SPDX-License-Identifier: Apache-2.0
// The ski track logger on the page: tracking on and off, days with their runs and lifts, a
// run's speed and elevation charts and its route drawn to scale (no map tiles: the gate is
// offline), a run card image to share, and GPX out and in. Uses app.js's helpers and
// gps.js's units.
"use strict";

const ski = { live: null, tracks: [], day: null, run: null, timer: null };

function skiMetric() { return typeof gps === "undefined" || gps.metric; }
function skiSpeed(ms) { return fmt(skiMetric() ? ms * 3.6 : ms / 0.44704, 0) + (skiMetric() ? " km/h" : " mph"); }
function skiHeight(m) { return skiMetric() ? fmt(m, 0) + " m" : fmt(m / 0.3048, 0) + " ft"; }
function skiLength(m) {
  if (skiMetric()) return m >= 1000 ? fmt(m / 1000, 1) + " km" : fmt(m, 0) + " m";
  return fmt(m / 1609.344, 1) + " mi";
}
function skiDuration(s) {
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = Math.floor(s % 60);
  return h ? h + " h " + String(m).padStart(2, "0") + " min" : m + ":" + String(sec).padStart(2, "0");
}
function skiClock(unix) { return new Date(unix * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }
function skiDate(unix) { return new Date(unix * 1000).toLocaleDateString([], { weekday: "short", day: "numeric", month: "short", year: "numeric" }); }
// A track's day: its first fix, else when it was started.
function trackStart(t) { return t.firstNs !== null && t.firstNs !== undefined ? t.firstNs / 1e9 : t.startedWall; }
function trackTitle(t) { return t.name || (t.sport === "snowboard" ? "Snowboard" : "Ski") + " track " + t.id; }

function drawSkiLive() {
  const l = ski.live;
  if (!l) return;
  $("sk-state").replaceChildren(l.recording ? chip("Recording", "ok") : chip("Not tracking", "warn"));
  $("sk-lock").replaceChildren(l.link === "fix" ? chip("GPS fix", "ok") : chip(l.linkDetail, "bad"));
  const parts = [];
  if (l.recording && l.track) parts.push(trackTitle(l.track) + ": " + count(l.track.points + l.pending, "fix", "fixes"));
  if (l.speed !== null && l.speed !== undefined) parts.push(skiSpeed(l.speed));
  if (l.altitude !== null && l.altitude !== undefined) parts.push(skiHeight(l.altitude) + " altitude");
  $("sk-now").textContent = parts.join(" · ");
  $("sk-error").textContent = l.storeError ? "Fixes are not being stored: " + l.storeError : "";
  $("sk-error").hidden = !l.storeError;
  $("sk-toggle").textContent = l.recording ? "Stop tracking" : "Start tracking";
  $("sk-toggle").className = "big " + (l.recording ? "stop" : "go");
  $("sk-sport").disabled = l.recording;
  $("sk-name").disabled = l.recording;
}

async function skiPoll() {
  try { ski.live = await api("GET", "/api/ski"); drawSkiLive(); } catch (e) { /* shown on the next answer */ }
}

async function skiToggle() {
  const on = !(ski.live && ski.live.recording);
  const body = on ? { on: true, sport: $("sk-sport").value, name: $("sk-name").value.trim() } : { on: false };
  const r = await control("POST", "/api/ski/tracking", body, on ? "Tracking: every fix is stored until you stop." : "Tracking stopped.");
  if (r === undefined) return;
  await skiPoll();
  await skiTracks();
}

// Tracks by day, newest first.
async function skiTracks() {
  try { ski.tracks = await api("GET", "/api/ski/tracks"); } catch (e) { return; }
  const list = $("sk-days");
  const items = [];
  let lastDate = "";
  for (const t of ski.tracks) {
    const date = skiDate(trackStart(t));
    if (date !== lastDate) { items.push(el("li", date, "sk-date")); lastDate = date; }
    const li = el("li");
    const b = el("button", trackTitle(t));
    b.onclick = () => skiDay(t.id);
    li.append(b, el("span", " " + (t.sport === "snowboard" ? "snowboard" : "ski") + " · " + count(t.points, "fix", "fixes") +
      (t.source === "gpx" ? " · from GPX" : "") + (t.recording ? " · recording" : ""), "small"));
    items.push(li);
  }
  list.replaceChildren(...items);
  $("sk-none").hidden = ski.tracks.length > 0;
}

function stat(label, value) {
  const d = el("div", undefined, "sk-stat");
  d.append(el("strong", value), el("span", label, "small"));
  return d;
}

// A day's dashboard: totals, time on runs against lifts, the runs and lifts in order.
async function skiDay(id) {
  let d;
  try { d = await api("GET", "/api/ski/tracks/" + id); } catch (e) { say(e.message, true); return; }
  ski.day = d;
  $("sk-run").hidden = true;
  $("sk-day").hidden = false;
  $("sk-day-title").textContent = trackTitle(d.track) + " · " + skiDate(trackStart(d.track));
  $("sk-day-sport").value = d.track.sport;
  $("sk-totals").replaceChildren(
    stat("runs", String(d.runs.length)), stat("vertical", skiHeight(d.vertical)), stat("on runs", skiLength(d.distance)),
    stat("top speed", d.runs.length ? skiSpeed(d.topSpeed) : "—"), stat("lifts", String(d.lifts.length)),
    stat("time on runs", skiDuration(d.secondsOnRuns)), stat("time on lifts", skiDuration(d.secondsOnLifts)),
    stat("tracked", skiDuration(d.seconds)));
  // The day as a bar: runs, lifts and the rest in proportion.
  const bar = $("sk-bar");
  const total = Math.max(1, d.seconds);
  const runPart = 100 * d.secondsOnRuns / total, liftPart = 100 * d.secondsOnLifts / total;
  bar.replaceChildren(Object.assign(el("span", "", "sk-bar-runs"), { title: "runs" }), Object.assign(el("span", "", "sk-bar-lifts"), { title: "lifts" }));
  bar.children[0].style.width = runPart + "%";
  bar.children[1].style.width = liftPart + "%";
  $("sk-bar-note").textContent = "Runs " + fmt(runPart, 0) + " % · lifts " + fmt(liftPart, 0) + " % · stops and the rest " + fmt(Math.max(0, 100 - runPart - liftPart), 0) + " %";
  $("sk-gpx").href = "/api/ski/tracks/" + id + "/gpx";
  const rows = [];
  for (const r of d.runs) {
    const li = el("li");
    const b = el("button", "Run " + r.n);
    b.onclick = () => skiRun(id, r.n);
    li.append(b, el("span", " " + skiClock(r.start) + " · " + skiDuration(r.seconds) + " · " + skiHeight(r.vertical) + " down · " +
      skiLength(r.distance) + " · top " + skiSpeed(r.topSpeed)));
    rows.push(li);
  }
  $("sk-runs").replaceChildren(...rows);
  $("sk-runs-none").hidden = d.runs.length > 0;
  $("sk-runs-none").textContent = "No runs found: a run lasts at least " + fmt(d.minimumRunSeconds, 0) + " s and drops at least " +
    skiHeight(d.minimumRunVertical) + ".";
  $("sk-lifts").replaceChildren(...d.lifts.map((l) => el("li", "Lift " + l.n + " · " + skiClock(l.start) + " · " + skiDuration(l.seconds) + " · " + skiHeight(l.vertical) + " up")));
}

// The SVG namespace as the HTML parser gives it (the page names no outside address).
const SVG = (() => { const t = document.createElement("template"); t.innerHTML = "<svg></svg>"; return t.content.firstChild.namespaceURI; })();
function svg(tag, attrs) { const e = document.createElementNS(SVG, tag); for (const k in attrs) e.setAttribute(k, attrs[k]); return e; }

// A line chart of `ys` against `xs` with its range written beside it.
function chart(box, xs, ys, label, format) {
  const w = 320, h = 120, pad = 4;
  const lo = Math.min(...ys), hi = Math.max(...ys), span = hi - lo || 1, t = xs[xs.length - 1] || 1;
  const pts = xs.map((x, i) => fmt(pad + (w - 2 * pad) * x / t, 1) + "," + fmt(h - pad - (h - 2 * pad) * (ys[i] - lo) / span, 1)).join(" ");
  const s = svg("svg", { viewBox: "0 0 " + w + " " + h, class: "sk-chart", role: "img", "aria-label": label });
  s.append(svg("polyline", { points: pts, fill: "none", stroke: "currentColor", "stroke-width": "2" }));
  box.replaceChildren(el("div", label + ": " + format(lo) + " to " + format(hi), "small"), s);
}

// The route to scale: metres east and north, north up, with a scale bar.
function route(box, samples, topAt) {
  const w = 320, h = 320, pad = 16;
  const xs = samples.map((p) => p.x), ys = samples.map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const k = Math.min((w - 2 * pad) / Math.max(1, x1 - x0), (h - 2 * pad) / Math.max(1, y1 - y0));
  // Centred in the box.
  const ox = pad + ((w - 2 * pad) - (x1 - x0) * k) / 2, oy = pad + ((h - 2 * pad) - (y1 - y0) * k) / 2;
  const px = (p) => [ox + (p.x - x0) * k, h - oy - (p.y - y0) * k];
  const s = svg("svg", { viewBox: "0 0 " + w + " " + h, class: "sk-route", role: "img", "aria-label": "The run's route, north up" });
  s.append(svg("polyline", { points: samples.map((p) => px(p).map((v) => fmt(v, 1)).join(",")).join(" "), fill: "none", stroke: "currentColor", "stroke-width": "3", "stroke-linejoin": "round" }));
  const dot = (p, cls) => { const [x, y] = px(p); s.append(svg("circle", { cx: fmt(x, 1), cy: fmt(y, 1), r: "6", class: cls })); };
  dot(samples[0], "sk-start");
  dot(samples[samples.length - 1], "sk-end");
  const top = samples.reduce((a, b) => (Math.abs(b.t - topAt) < Math.abs(a.t - topAt) ? b : a));
  dot(top, "sk-top");
  // A round length about a quarter of the width.
  const want = (w - 2 * pad) / 4 / k;
  const unit = skiMetric() ? 1 : 0.3048;
  const steps = [10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
  const len = steps.find((v) => v * unit >= want) || 5000;
  const barPx = len * unit * k;
  s.append(svg("line", { x1: pad, y1: h - 4, x2: fmt(pad + barPx, 1), y2: h - 4, stroke: "currentColor", "stroke-width": "3" }));
  const txt = svg("text", { x: fmt(pad + barPx + 6, 1), y: h - 1, class: "sk-scale" });
  txt.textContent = len + (skiMetric() ? " m" : " ft");
  s.append(txt);
  box.replaceChildren(s, el("div", "Green: start · red: end · orange: top speed. North is up.", "small"));
}

async function skiRun(id, n) {
  let r;
  try { r = await api("GET", "/api/ski/tracks/" + id + "/runs/" + n); } catch (e) { say(e.message, true); return; }
  ski.run = r;
  $("sk-run").hidden = false;
  const v = r.run;
  $("sk-run-title").textContent = "Run " + n + " · " + skiClock(v.start) + " · " + trackTitle(ski.day.track);
  $("sk-run-stats").replaceChildren(stat("duration", skiDuration(v.seconds)), stat("vertical", skiHeight(v.vertical)),
    stat("distance", skiLength(v.distance)), stat("top speed", skiSpeed(v.topSpeed)), stat("average", skiSpeed(v.averageSpeed)),
    stat("slope", fmt(v.slope, 0) + "°"));
  $("sk-run-top").textContent = "Top speed " + fmt(v.topAt, 0) + " s in, at " + skiHeight(v.topAltitude) + " (" + fmt(v.topLatitude, 5) + ", " + fmt(v.topLongitude, 5) + ")";
  const ts = r.samples.map((p) => p.t);
  chart($("sk-speed"), ts, r.samples.map((p) => (skiMetric() ? p.speed * 3.6 : p.speed / 0.44704)), "Speed", (x) => fmt(x, 0) + (skiMetric() ? " km/h" : " mph"));
  chart($("sk-elev"), ts, r.samples.map((p) => (skiMetric() ? p.altitude : p.altitude / 0.3048)), "Elevation", (x) => fmt(x, 0) + (skiMetric() ? " m" : " ft"));
  route($("sk-route"), r.samples, v.topAt);
  $("sk-run-gpx").href = "/api/ski/tracks/" + id + "/runs/" + n + "/gpx";
  $("sk-card-box").hidden = true;
  $("sk-run").scrollIntoView({ block: "start" });
}

// The run card: a square picture with the route and the run's numbers, to share.
function skiCard() {
  const r = ski.run;
  if (!r) return;
  const c = document.createElement("canvas");
  c.width = 1080; c.height = 1080;
  const g = c.getContext("2d");
  g.fillStyle = "#0b1d33"; g.fillRect(0, 0, 1080, 1080);
  g.fillStyle = "#ffffff";
  g.font = "bold 64px sans-serif";
  g.fillText("Run " + r.run.n, 60, 110);
  g.font = "36px sans-serif";
  g.fillText(trackTitle(ski.day.track) + " · " + skiDate(r.run.start) + " " + skiClock(r.run.start), 60, 165);
  // The route in the upper right, to scale.
  const xs = r.samples.map((p) => p.x), ys = r.samples.map((p) => p.y);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
  const box = { x: 60, y: 210, w: 960, h: 460 };
  const k = Math.min(box.w / Math.max(1, x1 - x0), box.h / Math.max(1, y1 - y0));
  const ox = box.x + (box.w - (x1 - x0) * k) / 2, oy = box.y + box.h - (box.h - (y1 - y0) * k) / 2;
  g.strokeStyle = "#7fd3ff"; g.lineWidth = 8; g.lineJoin = "round";
  g.beginPath();
  r.samples.forEach((p, i) => { const x = ox + (p.x - x0) * k, y = oy - (p.y - y0) * k; if (i) g.lineTo(x, y); else g.moveTo(x, y); });
  g.stroke();
  const figures = [["Top speed", skiSpeed(r.run.topSpeed)], ["Vertical", skiHeight(r.run.vertical)], ["Distance", skiLength(r.run.distance)],
    ["Time", skiDuration(r.run.seconds)], ["Average", skiSpeed(r.run.averageSpeed)], ["Slope", fmt(r.run.slope, 0) + "°"]];
  figures.forEach(([label, value], i) => {
    const x = 60 + (i % 3) * 330, y = 760 + Math.floor(i / 3) * 150;
    g.fillStyle = "#9fb3c8"; g.font = "32px sans-serif"; g.fillText(label, x, y);
    g.fillStyle = "#ffffff"; g.font = "bold 60px sans-serif"; g.fillText(value, x, y + 66);
  });
  g.fillStyle = "#9fb3c8"; g.font = "28px sans-serif"; g.fillText("SprintGate", 60, 1050);
  c.toBlob((blob) => {
    if (ski.cardURL) URL.revokeObjectURL(ski.cardURL);
    ski.cardURL = URL.createObjectURL(blob);
    ski.cardFile = new File([blob], "run-" + r.run.n + ".png", { type: "image/png" });
    $("sk-card").src = ski.cardURL;
    $("sk-card-save").href = ski.cardURL;
    $("sk-card-save").download = "run-" + r.run.n + ".png";
    $("sk-card-share").hidden = !(navigator.canShare && navigator.canShare({ files: [ski.cardFile] }));
    $("sk-card-box").hidden = false;
  }, "image/png");
}

async function skiImport() {
  const f = $("sk-file").files[0];
  if (!f) { say("Choose a .gpx file first.", true); return; }
  if (!state.pin) { say("Enter the gate's PIN first.", true); $("pin").focus(); return; }
  say("Reading " + f.name + "…");
  const q = "?sport=" + encodeURIComponent($("sk-import-sport").value) + "&name=" + encodeURIComponent(f.name.replace(/\.gpx$/i, ""));
  try {
    const r = await fetch("/api/ski/import" + q, { method: "POST", headers: { "X-Gate-PIN": state.pin, "Content-Type": "application/gpx+xml" }, body: f });
    const data = await r.json().catch(() => null);
    if (!r.ok) {
      if (r.status === 401) setPin("");
      const e = data && data.error ? data.error : { reason: "HTTP " + r.status };
      say((e.field ? e.field + ": " : "") + e.reason, true);
      return;
    }
    say("Imported " + trackTitle(data.track) + ": " + count(data.track.points, "fix", "fixes") +
      (data.skipped ? ", " + data.skipped + " points without a time or elevation left out" : "") +
      (data.speedsFromPositions ? "; the file had no speeds, so they were worked out from the positions" : "") + ".");
    $("sk-file").value = "";
    await skiTracks();
    await skiDay(data.track.id);
  } catch (e) { say("The file could not be sent: " + e.message, true); }
}

window.addEventListener("DOMContentLoaded", async () => {
  // Off (404): a gate without a GPS receiver shows no ski section.
  try { ski.live = await api("GET", "/api/ski"); } catch (e) { return; }
  $("ski-section").hidden = false;
  drawSkiLive();
  await skiTracks();
  $("sk-toggle").onclick = skiToggle;
  $("sk-import").onclick = skiImport;
  $("sk-card-make").onclick = skiCard;
  $("sk-card-share").onclick = async () => {
    try { await navigator.share({ files: [ski.cardFile], title: "Run " + ski.run.run.n }); } catch (e) { /* the phone's sheet was closed */ }
  };
  $("sk-day-close").onclick = () => { $("sk-day").hidden = true; $("sk-run").hidden = true; };
  $("sk-day-sport").onchange = async () => {
    const id = ski.day.track.id;
    if (await control("PUT", "/api/ski/tracks/" + id, { sport: $("sk-day-sport").value }, "Runs found again for " + $("sk-day-sport").value + ".") !== undefined) {
      await skiTracks();
      await skiDay(id);
    }
  };
  $("sk-day-delete").onclick = async () => {
    const t = ski.day.track;
    if (!confirm("Delete " + trackTitle(t) + " and its " + count(t.points, "fix", "fixes") + "?")) return;
    if (await control("DELETE", "/api/ski/tracks/" + t.id, undefined, trackTitle(t) + " deleted.") !== undefined) {
      $("sk-day").hidden = true; $("sk-run").hidden = true;
      await skiTracks();
    }
  };
  // The live line while the page is open: every two seconds.
  ski.timer = setInterval(() => { if (!document.hidden) skiPoll(); }, 2000);
});
