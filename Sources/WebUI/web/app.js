// SprintGate live board: WebSocket updates, controls behind the gate's PIN, history.
"use strict";
const $ = (id) => document.getElementById(id);
const state = { board: null, settings: null, recvAt: 0, nowMonoNs: 0, pin: localStorage.getItem("sg-pin") || "", retry: 500 };

function count(n, one, many) { return n + " " + (n === 1 ? one : many); }
function el(tag, text, cls) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; }
function fmt(v, d) { return (v === null || v === undefined || !isFinite(v)) ? "—" : Number(v).toFixed(d); }
// What an action did, at the bottom of the screen wherever the coach is on the page: a
// confirmation goes after 8 s, an error stays until tapped.
let sayTimer;
function say(text, bad) {
  const m = $("message");
  m.textContent = text;
  m.classList.toggle("bad", !!bad);
  clearTimeout(sayTimer);
  if (!bad) sayTimer = setTimeout(() => { if (m.textContent === text) m.textContent = ""; }, 8000);
}

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
  // Locked, the PIN box is on every tab; unlocked, it waits under Settings.
  $("access").dataset.tab = p ? "settings" : tabs.names.join(" ");
  if (tabs.current) showTab(tabs.current);
}

// The page as an app: a tab bar at the bottom, one tab a screen. Each section names its
// tabs in data-tab; an area's tab (Video, GPS, Ski, Ergs) is offered while its section is on.
// The tab chosen is kept in the address (#history), so a reload or a bookmark opens it.
// Live, Video, GPS and Ergs keep the screen awake where the browser allows it (the Screen
// Wake Lock API needs HTTPS or localhost).
const tabs = { names: ["live", "video", "gps", "ski", "ergs", "history", "athletes", "tools", "settings"],
               chosen: null, current: null, wake: null, awake: false };
const areaTabs = ["gps", "ski", "ergs", "video"];
const awakeTabs = ["live", "video", "gps", "ergs"];

function tabSections(name) {
  return [...document.querySelectorAll("main > section[data-tab]")].filter((s) => s.id !== "access" && s.dataset.tab.split(" ").includes(name));
}
// A board without a camera has no sprint board or history: it opens on its areas, and Live
// (which then only says there is no camera) is offered only when no area is on.
function tabOffered(name) {
  if (name === "live" && state.board && state.board.gate.camera.state === "none" && areaTabs.some(tabOffered)) return false;
  return tabSections(name).some((s) => !s.hidden);
}

// A board without a camera opens on its first area (a car timer on GPS); any other on Live.
function defaultTab() {
  if (state.board && state.board.gate.camera.state === "none") {
    const area = areaTabs.find(tabOffered);
    if (area) return area;
  }
  return "live";
}

function showTab(name, chosen) {
  if (chosen) {
    tabs.chosen = name;
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
  }
  const changed = tabs.current !== name;
  tabs.current = name;
  document.body.dataset.tab = name;
  for (const s of document.querySelectorAll("main > section[data-tab]")) s.classList.toggle("off-tab", !s.dataset.tab.split(" ").includes(name));
  for (const b of document.querySelectorAll("#tabs button")) b.setAttribute("aria-selected", String(b.dataset.tab === name));
  if (changed) { window.scrollTo(0, 0); keepAwake(); }
}

function refreshTabs() {
  for (const b of document.querySelectorAll("#tabs button")) b.hidden = !tabOffered(b.dataset.tab);
  const want = tabs.chosen && tabOffered(tabs.chosen) ? tabs.chosen : defaultTab();
  if (want !== tabs.current) showTab(want);
}

async function keepAwake() {
  const want = awakeTabs.includes(tabs.current) && document.visibilityState === "visible";
  if (want && !tabs.wake && navigator.wakeLock) {
    tabs.wake = "asking";
    try {
      const lock = await navigator.wakeLock.request("screen");
      tabs.wake = lock; tabs.awake = true;
      lock.addEventListener("release", () => { if (tabs.wake === lock) { tabs.wake = null; tabs.awake = false; } });
      if (!awakeTabs.includes(tabs.current)) keepAwake();
    } catch (e) { tabs.wake = null; tabs.awake = false; }
  } else if (!want && tabs.wake && tabs.wake !== "asking") {
    const lock = tabs.wake; tabs.wake = null; tabs.awake = false;
    lock.release().catch(() => {});
  }
}

function wireTabs() {
  for (const b of document.querySelectorAll("#tabs button")) b.onclick = () => showTab(b.dataset.tab, true);
  const fromAddress = () => {
    const n = location.hash.slice(1);
    if (tabs.names.includes(n)) { tabs.chosen = n; refreshTabs(); }
  };
  window.addEventListener("hashchange", fromAddress);
  fromAddress();
  // An area's section turned on or off (its own code sets hidden), or the camera found missing.
  new MutationObserver((changes) => {
    if (changes.some((c) => c.target.parentElement === document.querySelector("main"))) refreshTabs();
  }).observe(document.querySelector("main"), { attributes: true, attributeFilter: ["hidden"], subtree: true });
  document.addEventListener("visibilitychange", keepAwake);
  refreshTabs();
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

// A live feed over a WebSocket at `path`, opened again when it drops (0.5 s doubling to
// 5 s): `onMessage` gets each JSON message but an `{error}` one, `onLost` is told of a drop.
function liveSocket(path, onMessage, onLost) {
  let retry = 500;
  const open = () => {
    const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + path);
    ws.onmessage = (e) => {
      const m = JSON.parse(e.data);
      if (m.error) return;
      retry = 500;
      onMessage(m);
    };
    ws.onclose = () => {
      onLost();
      setTimeout(open, retry);
      retry = Math.min(retry * 2, 5000);
    };
  };
  open();
}

function render() {
  const b = state.board; if (!b) return;
  const g = b.gate;
  // A board without [camera]: the camera gate's parts are left out, and the page says why.
  const noCamera = g.camera.state === "none";
  $("no-camera").hidden = !noCamera;
  for (const s of document.querySelectorAll(".camera-gate")) s.hidden = noCamera;
  $("phase").textContent = g.phase + " · " + g.startType + (g.preset ? " · " + g.preset : "");
  const cp = $("camera-problem"); cp.hidden = !g.camera.problem; cp.textContent = g.camera.problem || "";
  // Who runs next and who just ran, under the clock where the coach looks.
  const last = b.results[0], who = [];
  if (b.nextAthlete) who.push("Next: " + b.nextAthlete.name);
  if (last) who.push("Just ran: " + (last.run.athleteName || "no athlete") + " " + fmt(last.run.seconds, 3) + " s");
  $("who").textContent = who.join(" · ");
  const fs = $("false-start"); fs.hidden = !g.falseStart; fs.textContent = g.falseStart ? "False start: " + g.falseStart : "";
  const chips = $("status-chips"); chips.replaceChildren();
  chips.append(g.gate.ready ? chip("ready", "ok") : chip("no athlete", ""));
  chips.append(g.gate.armed ? chip("armed", "ok") : chip("not armed", "warn"));
  chips.append(g.gate.clear ? chip("clear", "ok") : chip("line occupied", "warn"));
  if (g.gate.shaking) chips.append(chip("shaking", "bad"));
  if (g.gate.tooFar) chips.append(chip("too far", "bad"));
  chips.append(chip("camera " + g.camera.state, g.camera.state === "streaming" ? "ok" : "bad"));
  if (g.camera.exposureWarning) { const c = chip("exposure too long", "bad"); c.title = g.camera.exposureWarning; c.dataset.warning = "exposure"; chips.append(c); }
  $("camera-chips").replaceChildren(...[...chips.children].map((c) => c.cloneNode(true)));
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
  // Start begins a countdown or voice start; the other types start from the athlete or the button.
  $("btn-start").hidden = !["countdown", "voice"].includes(g.startType);
  if (document.activeElement !== $("sel-preset")) $("sel-preset").value = g.preset || "";
  if (document.activeElement !== $("sel-athlete")) $("sel-athlete").value = b.nextAthlete ? String(b.nextAthlete.id) : "";
  const roster = b.roster || [];
  $("roster-line").textContent = roster.length ? "Rotating: " + roster.map((a) => a.name).join(" → ") + (b.nextAthlete ? " · next " + b.nextAthlete.name : "") : "";
}

// The roster: athletes ticked in running order; the gate hands each timed run's successor
// the next run.
const rosterPick = { order: [] };
async function showRoster() {
  let r, all;
  try { [r, all] = await Promise.all([api("GET", "/api/roster"), api("GET", "/api/athletes")]); } catch (e) { say(e.message, true); return; }
  rosterPick.order = r.athletes.map((a) => a.id);
  rosterPick.session = r.sessionAthletes.map((a) => a.id);
  rosterPick.all = all;
  drawRoster();
  $("roster-dialog").showModal();
}
function drawRoster() {
  const ul = $("roster-list"); ul.replaceChildren();
  for (const a of rosterPick.all) {
    const li = el("li"), box = document.createElement("input");
    box.type = "checkbox"; box.checked = rosterPick.order.includes(a.id); box.dataset.athlete = String(a.id);
    box.onchange = () => {
      rosterPick.order = box.checked ? [...rosterPick.order, a.id] : rosterPick.order.filter((id) => id !== a.id);
      drawRoster();
    };
    const at = rosterPick.order.indexOf(a.id);
    li.append(box, el("span", undefined, "swatch " + a.colour), el("strong", a.name), el("span", at >= 0 ? "#" + (at + 1) : "", "small"));
    ul.append(li);
  }
  if (!rosterPick.all.length) ul.append(el("li", "No athletes yet.", "small"));
  $("roster-session").disabled = !rosterPick.session.length;
}
async function saveRoster(ids) {
  const r = await control("PUT", "/api/roster", { athleteIds: ids });
  if (!r) return;
  say(r.athletes.length ? "Rotating through " + r.athletes.map((a) => a.name).join(", ") + "; " + r.athletes[0].name + " runs next." : "Roster stopped.");
  $("roster-dialog").close();
}

function resultItem(v, unit) {
  const r = v.run, li = el("li");
  li.append(el("span", fmt(r.seconds, 3), "t"));
  li.append(el("span", r.athleteName || "—"));
  if (r.preset) li.append(el("span", r.preset, "small"));
  if (v.speed !== null && v.speed !== undefined) li.append(el("span", fmt(v.speed, 2) + " " + unit));
  if (r.splits.length) li.append(el("span", "splits " + r.splits.map((s) => fmt(s, 2)).join(" / "), "small"));
  li.append(...badges(r));
  const d = el("button", "Details"); d.onclick = () => showRun(r.id); li.append(d);
  if (r.hasPhoto) { const a = el("button", "Photo"); a.onclick = () => showPhoto(r.id); li.append(a); }
  for (const g of r.photoGates || []) {
    const a = el("button", g === 0 ? "Start gate" : "Gate " + g);
    a.onclick = () => showGatePhoto(r.id, g); li.append(a);
  }
  return li;
}

// Lists change quickly on a phone: only the newest request of each list is shown. The
// returned function says whether this request is still the newest of `list`.
const requests = {};
function newestRequest(list) {
  const mine = requests[list] = (requests[list] || 0) + 1;
  return () => requests[list] === mine;
}

// PB: the athlete's fastest ever over the course; SB: their fastest this season.
function badges(r) {
  const out = r.personalBest ? [el("span", "PB", "pr")] : r.seasonBest ? [el("span", "SB", "sb")] : [];
  // Placed by hand on the photo finish: the measured time is in the title.
  if (r.measuredSeconds !== null && r.measuredSeconds !== undefined) {
    const c = el("span", "corrected", "fixed"); c.title = "measured " + fmt(r.measuredSeconds, 3) + " s"; out.push(c);
  }
  return out;
}

function course(startType, distance) {
  return startType + (distance ? " " + fmt(distance, distance % 1 ? 1 : 0) + " m" : "");
}

function when(unixSeconds) {
  const d = new Date(unixSeconds * 1000);
  return d.toLocaleDateString() + " " + d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

function athleteCell(name, colour) {
  const td = el("td");
  if (colour) td.append(el("span", undefined, "swatch " + colour), " ");
  td.append(name || "—");
  return td;
}

// A new personal best shows on every phone for eight seconds, with the best it beat.
function toast(news, unit) {
  const t = $("toast");
  const gain = news.improvementSeconds === null || news.improvementSeconds === undefined
    ? "first time over the course"
    : (news.improvementSeconds < 0.0005 ? "under a millisecond" : fmt(news.improvementSeconds, 3) + " s") + " faster than " + fmt(news.previousBestSeconds, 3) + " s";
  t.textContent = "New PB: " + news.athleteName + " " + fmt(news.seconds, 3) + " s, " + course(news.startType, news.distanceMetres) + " (" + gain + ")";
  t.dataset.run = String(news.runID);
  t.hidden = false;
  clearTimeout(state.toastTimer);
  state.toastTimer = setTimeout(() => { t.hidden = true; }, 8000);
}

// The gate's wall clock. A Pi has no battery clock: offline at a track, it starts with the
// date it had when it was last running, and every run's date and session rest on it. A
// phone has network time, so a phone with the PIN sets an unsynchronised gate's clock as
// soon as the two are more than 5 s apart; a gate a time service (NTP) keeps is left alone.
const clockTolerance = 5000;
function span(ms) {
  const s = Math.abs(ms) / 1000;
  if (s >= 2 * 86400) return Math.round(s / 86400) + " days";
  if (s >= 2 * 3600) return Math.round(s / 3600) + " hours";
  if (s >= 120) return Math.round(s / 60) + " minutes";
  return Math.round(s) + " s";
}
function showClock(c, behindMs) {
  const at = new Date(c.wallMs).toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  let text = "Gate clock " + at + ": ";
  if (c.synchronised) text += "kept by a time service (NTP).";
  else {
    text += "not synchronised";
    if (Math.abs(behindMs) > clockTolerance) text += ", " + span(behindMs) + (behindMs > 0 ? " behind" : " ahead of") + " this phone.";
    else text += c.setFromPhone ? ", set from a phone." : ", within 5 s of this phone.";
    if (!state.pin) text += " Enter the PIN to set it from this phone.";
  }
  $("clock-state").textContent = text;
  $("btn-clock").disabled = c.synchronised || !state.pin;
  $("clock-section").hidden = false;
}
async function checkClock(pressed) {
  let c;
  const t0 = Date.now();
  try { c = await api("GET", "/api/clock"); } catch (e) { $("clock-section").hidden = true; return; }
  // How far the gate's clock is behind this phone's, at the middle of the request.
  const behind = (t0 + Date.now()) / 2 - c.wallMs;
  showClock(c, behind);
  if (c.synchronised || !state.pin || (!pressed && Math.abs(behind) <= clockTolerance)) return;
  try {
    const now = await api("POST", "/api/clock", { wallMs: Date.now() });
    showClock(now, Date.now() - now.wallMs);
    const m = now.moved, movedRuns = m ? m.runs : 0;
    const others = m ? m.gpsRuns + m.skiTracks + m.ergSessions : 0;
    say((Math.abs(behind) > clockTolerance
      ? "Gate clock set from this phone: it was " + span(behind) + (behind > 0 ? " behind." : " ahead.")
      : "Gate clock set from this phone.")
      + (movedRuns || others ? " The dates of " + [movedRuns ? count(movedRuns, "run", "runs") : "", others ? count(others, "other record", "other records") : ""]
        .filter(Boolean).join(" and ") + " stored since the gate started were corrected too." : ""));
  } catch (e) { say("The gate's clock was not set: " + e.message, true); }
}

// Sessions: runs close together in time. Open one to see its runs fastest first.
async function loadSessions() {
  const ul = $("sessions");
  let list;
  try { list = await api("GET", "/api/sessions"); } catch (e) { ul.replaceChildren(el("li", e.message, "small")); return; }
  ul.replaceChildren();
  for (const s of list) {
    const li = el("li"); li.dataset.session = String(s.id);
    li.append(el("strong", s.name || when(s.startedAt)), el("span", count(s.runCount, "run", "runs"), "small"));
    const open = el("button", "Open"); open.onclick = () => showSession(s); li.append(open);
    ul.append(li);
  }
  if (!list.length) ul.append(el("li", "No sessions yet: runs close together in time make one.", "small"));
}

async function showSession(s) {
  state.session = s;
  $("session-title").textContent = "Session of " + (s.name || when(s.startedAt));
  $("s-athlete").value = "";
  await sessionRuns();
  if (!$("session-dialog").open) $("session-dialog").showModal();
}

async function sessionRuns() {
  const s = state.session; if (!s) return;
  const p = new URLSearchParams({ session: String(s.id), sort: "time", limit: "1000" });
  if ($("s-athlete").value) p.set("athlete", $("s-athlete").value);
  const tb = document.querySelector("#session-runs tbody");
  const current = newestRequest("session");
  let rows;
  try { rows = await api("GET", "/api/results?" + p); } catch (e) { say(e.message, true); return; }
  if (!current()) return;
  tb.replaceChildren();
  rows.forEach((v, i) => {
    const r = v.run, tr = el("tr"); tr.dataset.run = String(r.id);
    tr.append(el("td", String(i + 1)), athleteCell(r.athleteName, r.athleteColour), el("td", course(r.startType, r.distanceMetres)));
    const t = el("td", fmt(r.seconds, 3) + " s"); for (const b of badges(r)) t.append(" ", b); tr.append(t);
    const td = el("td"), det = el("button", "Details"); det.onclick = () => showRun(r.id); td.append(det); tr.append(td);
    tb.append(tr);
  });
  if (!rows.length) { const tr = el("tr"), td = el("td", "No runs."); td.colSpan = 5; tr.append(td); tb.append(tr); }
}

// Bests: per athlete and course, the personal best, this season's best, the best before
// the personal best and what it gained.
async function loadBests() {
  const a = $("b-athlete").value, tb = document.querySelector("#bests tbody");
  const current = newestRequest("bests");
  let list;
  try { list = await api("GET", "/api/bests" + (a ? "?athlete=" + a : "")); }
  catch (e) { const tr = el("tr"), td = el("td", e.message); td.colSpan = 7; tr.append(td); tb.replaceChildren(tr); return; }
  if (!current()) return;
  tb.replaceChildren();
  for (const b of list) {
    const tr = el("tr"); tr.dataset.athlete = String(b.athleteID);
    const pb = el("td", fmt(b.personalBest.seconds, 3)); pb.title = when(b.personalBest.startedAt);
    tr.append(athleteCell(b.athleteName, b.athleteColour), el("td", course(b.startType, b.distanceMetres)), pb,
      el("td", b.seasonBest ? fmt(b.seasonBest.seconds, 3) : "—"),
      el("td", b.previousBestSeconds === null || b.previousBestSeconds === undefined ? "first" : fmt(b.previousBestSeconds, 3)),
      el("td", b.improvementSeconds === null || b.improvementSeconds === undefined ? "—" : b.improvementSeconds < 0.0005 ? "< 0.001" : "−" + fmt(b.improvementSeconds, 3)),
      el("td", String(b.runCount)));
    tb.append(tr);
  }
  if (!list.length) { const tr = el("tr"), td = el("td", "No bests yet: give runs to athletes with Next run."); td.colSpan = 7; tr.append(td); tb.append(tr); }
}

async function loadStorage() {
  try {
    const u = await api("GET", "/api/storage");
    $("storage").textContent = fmt(u.bytes / 1048576, 1) + " MB used · " + [count(u.runs, "run", "runs"), count(u.sessions, "session", "sessions"),
      count(u.athletes, "athlete", "athletes"), count(u.images, "image", "images")].join(" · ");
  } catch (e) { $("storage").textContent = e.message; }
}

// After the book changed (a run stored, deleted or cleared): every list reads it again.
function refreshLists() { loadHistory(); loadSessions(); loadBests(); loadStorage(); }

// Placing the finish by hand on the photo finish, like a hairline on a FinishLynx image:
// the composite's columns are instants, `photoScale` says which.
const correction = { run: null, offsetMs: null };
function hairlineAt(offsetMs) {
  const r = correction.run, s = r.photoScale, img = $("photo"), line = $("photo-hairline");
  if (!img.naturalWidth) return;
  const x = s.crossingX + offsetMs / s.millisecondsPerColumn;
  line.style.left = (100 * (x + 0.5) / img.naturalWidth) + "%"; line.hidden = false;
}
function describeCorrection() {
  const r = correction.run, measured = r.measuredSeconds === null || r.measuredSeconds === undefined ? r.seconds : r.measuredSeconds;
  const info = $("correct-info");
  if (correction.offsetMs === null) {
    info.textContent = r.measuredSeconds !== null && r.measuredSeconds !== undefined
      ? "Corrected by hand: " + fmt(r.seconds, 3) + " s; the gate measured " + fmt(measured, 3) + " s."
      : "The gate's time: " + fmt(r.seconds, 3) + " s (the black marks).";
  } else {
    info.textContent = "Finish placed " + (correction.offsetMs >= 0 ? "+" : "") + fmt(correction.offsetMs, 1) + " ms from the gate's: " +
      fmt(measured + correction.offsetMs / 1000, 3) + " s (measured " + fmt(measured, 3) + " s).";
  }
  $("btn-correct").disabled = correction.offsetMs === null;
  $("btn-uncorrect").hidden = r.measuredSeconds === null || r.measuredSeconds === undefined;
}
async function setUpCorrection(id) {
  correction.run = null; correction.offsetMs = null;
  $("correct-box").hidden = true; $("photo-hairline").hidden = true;
  let v;
  try { v = await api("GET", "/api/results/" + id); } catch (e) { return; }
  const r = v.run;
  if (!r.photoScale) return;
  correction.run = r;
  $("correct-box").hidden = false;
  const showCurrent = () => {
    if (r.measuredSeconds !== null && r.measuredSeconds !== undefined) hairlineAt((r.seconds - r.measuredSeconds) * 1000);
  };
  if ($("photo").complete) showCurrent(); else $("photo").addEventListener("load", showCurrent, { once: true });
  describeCorrection();
}
function wirePhotoCorrection() {
  $("photo-frame").onclick = (e) => {
    const r = correction.run; if (!r) return;
    const img = $("photo"), box = img.getBoundingClientRect(), s = r.photoScale;
    const x = Math.min(Math.max((e.clientX - box.left) / box.width * img.naturalWidth - 0.5, s.compositeX), s.compositeX + s.compositeWidth - 1);
    correction.offsetMs = Math.round((x - s.crossingX) * s.millisecondsPerColumn * 10) / 10;
    hairlineAt(correction.offsetMs); describeCorrection();
  };
  $("btn-correct").onclick = async () => {
    const r = correction.run; if (!r || correction.offsetMs === null) return;
    const v = await control("PUT", "/api/results/" + r.id + "/correction", { offsetMs: correction.offsetMs });
    if (!v) return;
    correction.run = Object.assign(v.run, { photoScale: r.photoScale }); correction.offsetMs = null;
    say("Run corrected: " + fmt(v.run.seconds, 3) + " s (the gate measured " + fmt(v.run.measuredSeconds, 3) + " s).");
    describeCorrection(); refreshLists();
  };
  $("btn-uncorrect").onclick = async () => {
    const r = correction.run; if (!r) return;
    const v = await control("DELETE", "/api/results/" + r.id + "/correction");
    if (!v) return;
    correction.run = Object.assign(v.run, { photoScale: r.photoScale }); correction.offsetMs = null;
    $("photo-hairline").hidden = true;
    say("Back to the measured time: " + fmt(v.run.seconds, 3) + " s.");
    describeCorrection(); refreshLists();
  };
}

function showPhoto(id) {
  $("photo").src = "/api/results/" + id + "/photo.jpg";
  setUpCorrection(id);
  const box = $("photo-thumbs"); box.replaceChildren();
  // Up to four frames around the crossing; a missing one is simply left out.
  for (let i = 0; i < 4; i++) {
    const t = document.createElement("img");
    t.alt = "Frame " + (i + 1) + " at the gate"; t.onerror = () => t.remove();
    t.src = "/api/results/" + id + "/thumb/" + i + ".jpg"; box.append(t);
  }
  $("photo-dialog").showModal();
}

function gateName(g, gateCount) {
  if (gateCount <= 1) return "the gate";
  return g === 0 ? "the start gate" : g === gateCount - 1 ? "the finish (gate " + g + ")" : "gate " + g;
}

// A run in full: every gate's time, segment, speed and uncertainty, its images, and the
// frames each gate saw around its crossing, stepped through one by one.
async function showRun(id) {
  let v;
  try { v = await api("GET", "/api/results/" + id); } catch (e) { say(e.message, true); return; }
  const r = v.run, box = $("run-body"), n = r.gateCount || 1;
  box.replaceChildren();
  box.append(el("h2", fmt(r.seconds, 3) + " s" + (r.distanceMetres ? " over " + fmt(r.distanceMetres, 0) + " m" : "")));
  const d = new Date(r.wallTime * 1000);
  box.append(el("p", [r.athleteName || "No athlete", r.preset, r.startType, n > 1 ? n + " gates" : "one gate",
    d.toLocaleDateString() + " " + d.toLocaleTimeString()].filter(Boolean).join(" · "), "small"));
  if (r.measuredSeconds !== null && r.measuredSeconds !== undefined) {
    box.append(el("p", "Finish placed by hand on the photo finish; the gate measured " + fmt(r.measuredSeconds, 3) + " s.", "small"));
  }
  if ((r.legs || []).length) {
    const t = el("table"), head = el("tr");
    for (const h of ["Gate", "Distance", "Time", "Segment", "Speed", "±"]) head.append(el("th", h));
    t.append(el("thead")); t.tHead.append(head);
    const body = el("tbody");
    for (const l of r.legs) {
      const tr = el("tr");
      tr.append(el("td", String(l.gateIndex)), el("td", l.distanceMetres === null || l.distanceMetres === undefined ? "—" : fmt(l.distanceMetres, 1) + " m"),
        el("td", fmt(l.seconds, 3) + " s"), el("td", fmt(l.segmentSeconds, 3) + " s"),
        el("td", l.segmentSpeed === null || l.segmentSpeed === undefined ? "—" : fmt(l.segmentSpeed, 2) + " m/s"), el("td", fmt(l.uncertaintyMs, 2) + " ms"));
      body.append(tr);
    }
    t.append(body); t.id = "run-legs";
    const wrap = el("div", undefined, "scroll-x"); wrap.append(t); box.append(wrap);
  }
  const pics = el("p");
  if (r.hasPhoto) { const a = el("button", "Photo finish"); a.onclick = () => showPhoto(r.id); pics.append(a); }
  for (const g of r.photoGates || []) {
    const a = el("button", "Image of " + gateName(g, n)); a.onclick = () => showGatePhoto(r.id, g); pics.append(a);
  }
  if (pics.childNodes.length) box.append(pics);
  if (v.videos) box.append(runVideos(r, v.videos, v.videoOverlay));
  for (const g of r.frameGates || []) box.append(await frameStrip(r.id, g, n));
  if (!$("run-dialog").open) $("run-dialog").showModal();
}

// A run's videos: the clip the gate kept, and a video filmed on a phone (uploaded here, its
// start frame marked with the frame steps); either downloaded with the run's times drawn
// on it, the parts ticked (at first those the settings file chooses).
function runVideos(r, videos, defaults) {
  const box = el("section", undefined, "run-video"); box.id = "run-video";
  box.append(el("h3", "Video"));
  const status = el("p", "", "small"); status.id = "run-video-status";
  const player = document.createElement("video");
  player.controls = true; player.playsInline = true; player.muted = true; player.preload = "metadata"; player.id = "run-video-player";
  const ticks = el("p", undefined, "small");
  for (const [k, label] of [["time", "Time"], ["splits", "Splits"], ["speed", "Speed"], ["type", "Run type"], ["athlete", "Athlete"]]) {
    const l = el("label"), c = document.createElement("input");
    c.type = "checkbox"; c.checked = !defaults || defaults.includes(k); c.value = k; c.name = "overlay";
    l.append(c, " " + label + " "); ticks.append(l);
  }
  const base = "/api/results/" + r.id + "/videos/";
  const watch = (v) => { player.src = base + v.source; player.dataset.source = v.source; player.hidden = false; };
  // Drawing takes a few seconds; a refusal is shown, not saved as a file.
  async function download(v) {
    const show = [...ticks.querySelectorAll("input:checked")].map((c) => c.value).join(",");
    status.textContent = "Drawing the times on the video…";
    try {
      const res = await fetch(base + v.source + "/drawn?show=" + encodeURIComponent(show));
      if (!res.ok) { const e = await res.json().catch(() => null); throw new Error(e && e.error ? e.error.reason : "HTTP " + res.status); }
      const url = URL.createObjectURL(await res.blob()), a = document.createElement("a");
      a.href = url; a.download = "sprintgate-run-" + r.id + "-times.mp4"; document.body.append(a); a.click(); a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      status.textContent = "Downloaded with the times on it.";
    } catch (e) { status.textContent = e.message; }
  }
  const gate = videos.find((v) => v.source === "gate"), phone = videos.find((v) => v.source === "phone");
  if (!gate && !phone) box.append(el("p", "No video of this run: with video on, the gate keeps a clip of every run. You can add one filmed on a phone.", "small"));
  for (const v of [gate, phone].filter(Boolean)) {
    const row = el("p", undefined, "strip-controls");
    const w = el("button", v.source === "gate" ? "Watch the gate's clip" : "Watch the phone video"); w.onclick = () => watch(v);
    const d = el("button", v.source === "gate" ? "Download with times" : "Download phone video with times");
    d.id = "run-video-download-" + v.source; d.onclick = () => download(v);
    row.append(w, d);
    if (v.source === "gate" && v.truncatedStart)
      row.append(el("span", " Starts " + fmt(v.startSeconds, 2) + " s before the run: video had only just been switched on.", "small"));
    if (v.source === "gate" && v.truncatedEnd)
      row.append(el("span", " Ends early: video was switched off before the clip's last seconds were recorded.", "small"));
    if (v.source === "phone") {
      const fps = v.frames && v.seconds > 0 ? v.frames / v.seconds : 30;
      const back = el("button", "◀ Frame"), fwd = el("button", "Frame ▶"), here = el("button", "The start is here");
      here.id = "run-video-start";
      const stepBy = (k) => { player.pause(); player.currentTime = Math.max(0, player.currentTime + k / fps); };
      back.onclick = () => stepBy(-1); fwd.onclick = () => stepBy(1);
      player.onkeydown = (e) => { if (e.key === ",") { stepBy(-1); e.preventDefault(); } if (e.key === ".") { stepBy(1); e.preventDefault(); } };
      here.onclick = async () => {
        const t = player.dataset.source === "phone" ? player.currentTime : null;
        if (t === null) { watch(v); status.textContent = "Step to the frame where the run starts, then press this again."; return; }
        const res = await control("PUT", base + "phone/start", { seconds: t }, "Start marked at " + fmt(t, 3) + " s of the video.");
        if (res) { v.startSeconds = res.startSeconds; mark.textContent = "Start at " + fmt(res.startSeconds, 3) + " s of the video."; }
      };
      const mark = el("span", v.startSeconds === null || v.startSeconds === undefined ? "Start not marked yet: step to it and press “The start is here”."
        : "Start at " + fmt(v.startSeconds, 3) + " s of the video.", "small");
      // Two taps, as for deleting a session.
      const del = el("button", "Delete phone video", "stop"); del.id = "run-video-delete-phone";
      del.onclick = async () => {
        if (del.textContent !== "Tap again to delete") { del.textContent = "Tap again to delete"; return; }
        if (await control("DELETE", base + "phone", undefined, "Phone video deleted.") !== undefined) await showRun(r.id);
      };
      row.append(back, fwd, here, mark, del);
    }
    box.append(row);
  }
  if (gate || phone) box.append(ticks);
  player.hidden = true;
  box.append(player, status);
  // A phone video: sent as the request's body, the start then marked on it.
  const up = el("p", undefined, "strip-controls"), file = document.createElement("input");
  file.type = "file"; file.accept = "video/*"; file.id = "run-video-file";
  const send = el("button", phone ? "Replace the phone video" : "Add a phone video"); send.id = "run-video-upload";
  send.onclick = async () => {
    if (!state.pin) { say("Enter the gate's PIN first.", true); $("pin").focus(); return; }
    const f = file.files[0];
    if (!f) { status.textContent = "Choose the video first."; return; }
    status.textContent = "Uploading " + fmt(f.size / 1048576, 1) + " MB…";
    try {
      const res = await fetch(base + "phone", { method: "POST", headers: { "X-Gate-PIN": state.pin, "Content-Type": f.type || "application/octet-stream" }, body: f });
      const data = await res.json().catch(() => null);
      if (!res.ok) throw new Error(data && data.error ? data.error.reason : "HTTP " + res.status);
      await showRun(r.id);
      $("run-video-status").textContent = "Uploaded: step to the frame where the run starts and press “The start is here”.";
    } catch (e) { status.textContent = e.message; }
  };
  up.append(file, send);
  box.append(up);
  return box;
}

async function frameStrip(id, gate, gateCount) {
  const box = el("section", undefined, "strip");
  box.dataset.gate = String(gate);
  box.append(el("h3", "Frames at " + gateName(gate, gateCount)));
  let s;
  try { s = await api("GET", "/api/results/" + id + "/gates/" + gate + "/frames"); }
  catch (e) { box.append(el("p", e.message, "small")); return box; }
  const frame = el("div", undefined, "frame"), img = document.createElement("img"), line = el("div", undefined, "gate-line");
  frame.append(img, line);
  const earlier = el("button", "◀ Earlier"), later = el("button", "Later ▶"), label = el("span", "", "frame-label");
  // Start at the first frame at or after the crossing: the one the torso has reached the line in.
  let i = s.frames.findIndex((f) => f.offsetMs >= 0);
  if (i < 0) i = s.frames.length - 1;
  const show = () => {
    const f = s.frames[i];
    img.src = f.url; img.alt = "Frame " + (i + 1) + " at " + gateName(gate, gateCount);
    label.textContent = "Frame " + (i + 1) + " of " + s.frames.length + ", " + (f.offsetMs >= 0 ? "+" : "") + fmt(f.offsetMs, 1) + " ms";
    earlier.disabled = i === 0; later.disabled = i === s.frames.length - 1;
  };
  img.onload = () => { line.style.left = (100 * (s.gateX + 0.5) / img.naturalWidth) + "%"; };
  earlier.onclick = () => { if (i > 0) { i--; show(); } };
  later.onclick = () => { if (i < s.frames.length - 1) { i++; show(); } };
  const controls = el("div", undefined, "strip-controls");
  controls.append(earlier, label, later);
  box.append(frame, controls);
  show();
  return box;
}

function showGatePhoto(id, gate) {
  correction.run = null; $("correct-box").hidden = true; $("photo-hairline").hidden = true;
  $("photo").src = "/api/results/" + id + "/gates/" + gate + ".jpg";
  $("photo-thumbs").replaceChildren();
  $("photo-dialog").showModal();
}

// The camera view: a picture every quarter second while shown, the gate line drawn over
// it where the detector has it; the gate copies frames only while somebody watches.
const cameraView = { timer: 0, shown: false, frames: 0, line: false, info: null, dragging: false, bodiesSeen: 0 };
// The bodies the detector saw in the picture's frame, as boxes over it.
function drawBodies(bodies) {
  const box = $("camera-bodies"), c = cameraView.info;
  box.replaceChildren();
  if (!c) return;
  for (const b of bodies) {
    const d = el("div", undefined, "body-box " + b.kind);
    d.style.left = (100 * b.left / c.frameWidth) + "%"; d.style.width = (100 * (b.right - b.left) / c.frameWidth) + "%";
    d.style.top = (100 * b.top / c.frameHeight) + "%"; d.style.height = (100 * (b.bottom - b.top) / c.frameHeight) + "%";
    d.title = b.kind === "person" ? "a body the gate would time" : b.kind === "small" ? "too small to time: too far from the camera?" : "a vehicle: never timed";
    box.append(d);
  }
  cameraView.bodiesSeen = Math.max(cameraView.bodiesSeen, bodies.length);
}
async function cameraStep() {
  if (!cameraView.shown) return;
  let r = null;
  try { r = await fetch("/api/camera.jpg", { cache: "no-store" }); } catch (e) { r = null; }
  if (!cameraView.shown) return;
  if (!r || !r.ok) {
    $("camera-note").textContent = "No picture from the camera yet; trying again.";
    cameraView.timer = setTimeout(cameraStep, 1000);
    return;
  }
  const bodies = (r.headers.get("X-Bodies") || "").split(";").filter(Boolean).map((s) => {
    const [left, top, right, bottom, kind] = s.split(",");
    return { left: Number(left), top: Number(top), right: Number(right), bottom: Number(bottom), kind };
  });
  const url = URL.createObjectURL(await r.blob());
  const img = $("camera-view");
  const next = new Image();
  next.onload = async () => {
    next.id = "camera-view"; next.alt = img.alt; img.replaceWith(next); cameraView.frames++;
    if (img.src.startsWith("blob:")) URL.revokeObjectURL(img.src);
    drawBodies(bodies);
    if (!cameraView.line) {
      try {
        const c = await api("GET", "/api/camera");
        cameraView.info = c;
        if (!cameraView.dragging) $("camera-line").style.left = (100 * (c.gateX + 0.5) / c.frameWidth) + "%";
        cameraView.line = true;
      } catch (e) { /* The next picture tries again. */ }
    }
    const g = state.board ? state.board.gate.camera : null;
    $("camera-note").textContent = "Live, " + next.naturalWidth + "×" + next.naturalHeight + "; the red line is the gate." +
      (g && g.exposureWarning ? " The " + g.exposureWarning + "." : "");
    cameraView.timer = setTimeout(cameraStep, 250);
  };
  next.onerror = () => {
    URL.revokeObjectURL(url);
    $("camera-note").textContent = "The camera's picture could not be shown; trying again.";
    cameraView.timer = setTimeout(cameraStep, 1000);
  };
  next.src = url;
}
async function toggleCamera() {
  cameraView.shown = !cameraView.shown;
  $("btn-camera").textContent = cameraView.shown ? "Hide the camera" : "Show the camera";
  $("camera-box").hidden = !cameraView.shown;
  clearTimeout(cameraView.timer);
  if (!cameraView.shown) { $("camera-note").textContent = ""; return; }
  $("camera-note").textContent = "Asking the gate for pictures…";
  cameraStep();
}

// Drag the gate line on the camera view (with the PIN): let go, and the gate moves its
// line there between runs and keeps it for the next start.
function wireGateLineDrag() {
  const box = $("camera-box"), line = $("camera-line");
  const fraction = (e) => { const r = box.getBoundingClientRect(); return Math.min(Math.max((e.clientX - r.left) / r.width, 0), 0.9999); };
  box.onpointerdown = (e) => {
    if (!cameraView.info) return;
    if (!state.pin) { say("Enter the gate's PIN to move the gate line.", true); return; }
    cameraView.dragging = true; line.style.left = (100 * fraction(e)) + "%"; e.preventDefault();
    try { box.setPointerCapture(e.pointerId); } catch (err) { /* The drag still follows the box. */ }
  };
  box.onpointermove = (e) => { if (cameraView.dragging) line.style.left = (100 * fraction(e)) + "%"; };
  box.onpointerup = async (e) => {
    if (!cameraView.dragging) return;
    const w = cameraView.info.frameWidth;
    const x = Math.max(0, Math.min(w - 1, Math.round((fraction(e) * w - 0.5) * 2) / 2));
    await control("PUT", "/api/gate-line", { x }, "Gate line moved to x " + x + " of " + w + "; the gate learns the background again.");
    cameraView.dragging = false; cameraView.line = false;
  };
  box.onpointercancel = () => { cameraView.dragging = false; cameraView.line = false; };
}

function connect() {
  const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/api/ws");
  ws.onopen = () => { state.retry = 500; const l = $("link"); l.textContent = "live"; l.className = "chip ok"; };
  ws.onmessage = (ev) => {
    const m = JSON.parse(ev.data);
    const changedAthletes = !state.board || JSON.stringify(state.board.nextAthlete) !== JSON.stringify(m.board.nextAthlete);
    const changedBook = state.board && state.board.bookVersion !== m.board.bookVersion;
    const changedSettings = state.board && state.board.gate.settingsVersion !== m.board.gate.settingsVersion;
    const news = m.board.newBest;
    // The first message sets what this phone has seen; only bests after it are news.
    if (state.bestSeen === undefined) state.bestSeen = Math.max(0, ...m.board.results.map((v) => v.run.id));
    else if (news && news.runID > state.bestSeen) { state.bestSeen = news.runID; toast(news, m.board.speedUnit); }
    state.board = m.board; state.nowMonoNs = m.nowMonoNs; state.recvAt = performance.now();
    document.body.dataset.version = String(m.board.version);
    render();
    // Another phone (or the gate) changed the book: lists and menus are read again.
    if (changedAthletes || changedBook) loadAthletes();
    if (changedBook) refreshLists();
    // Another phone saved settings: every form shows what the gate runs now.
    if (changedSettings) loadSettings().catch(() => {});
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
  const hs = $("h-start"); hs.replaceChildren(new Option("Any start", "")); for (const t of s.startTypes) hs.append(new Option(t, t));
  const hd = $("h-distance"); hd.replaceChildren(new Option("Any distance", ""));
  const distances = [...new Set(s.presets.flatMap((p) => [p.distanceMetres, ...(p.distances || [])]).filter((d) => d))].sort((a, b) => a - b);
  for (const d of distances) hd.append(new Option(fmt(d, d % 1 ? 1 : 0) + " m", String(d)));
  const tb = document.querySelector("#settings tbody"); tb.replaceChildren();
  const rows = Object.entries(s.details).sort(); rows.unshift(["speed unit", s.speedUnit]);
  for (const [k, v] of rows) { const tr = el("tr"); tr.append(el("th", k), el("td", v)); tb.append(tr); }
  fillSettingsForm(s);
}

// The settings form: what the loop runs now; saved with the PIN, applied between runs and
// kept for the next start.
function fillSettingsForm(s) {
  const e = s.editable; if (!e) return;
  const sp = $("set-preset"); sp.replaceChildren(new Option("— none —", "")); for (const p of s.presets) sp.append(new Option(p.title, p.id));
  const st = $("set-start"); st.replaceChildren(); for (const t of s.startTypes) st.append(new Option(t, t));
  sp.value = e.preset || ""; fillDistances(e.distance); st.value = e.startType; $("set-sound").value = e.startSound;
  $("set-marks-min").value = e.marksPause.min; $("set-marks-max").value = e.marksPause.max;
  $("set-set-min").value = e.setPause.min; $("set-set-max").value = e.setPause.max;
  $("set-led").checked = e.crossingLED; $("set-buzzer").checked = e.buzzer; $("set-beep").checked = e.crossingSound; $("set-spoken").checked = e.spokenTime;
  $("set-rearm").checked = e.rearm !== false;
  // The frame rates this camera offers (30, 60, 90, 120 until it says), and the one kept.
  const rates = (s.frameRates && s.frameRates.length ? s.frameRates : [30, 60, 90, 120]).slice();
  if (e.fps && !rates.includes(e.fps)) rates.push(e.fps);
  $("set-fps").replaceChildren(...rates.sort((a, b) => a - b).map((r) => new Option(String(r), String(r))));
  $("set-unit").value = e.speedUnit; $("set-fps").value = String(e.fps); $("set-body").value = String(Math.round(e.minHeight * 1000) / 10);
  // A gate that can run the delay mode says whether it does.
  $("set-video-row").hidden = e.delayedVideo === undefined || e.delayedVideo === null;
  $("set-video").checked = !!e.delayedVideo;
  $("set-note").textContent = s.runningFPS && e.fps !== s.runningFPS
    ? "The camera runs at " + s.runningFPS + " fps, not " + e.fps + ": it changes as the camera reopens, between runs. "
      + "If it stays, the camera does not offer " + e.fps + " fps, or the gate slowed it while hot (see the log)." : "";
}

// The distances the chosen preset offers (the flying sprint's 10, 20 or 30 m); hidden for
// a preset with its own distance only.
function presetDistances() {
  const p = state.settings && state.settings.presets.find((x) => x.id === $("set-preset").value);
  return p && p.distances ? p.distances : [];
}
function fillDistances(chosen) {
  const list = presetDistances(), sd = $("set-distance");
  sd.replaceChildren(); for (const d of list) sd.append(new Option(fmt(d, d % 1 ? 1 : 0) + " m", String(d)));
  if (chosen !== undefined && chosen !== null && list.includes(chosen)) sd.value = String(chosen);
  $("set-distance-label").hidden = !list.length;
}

function settingsFromForm() {
  const num = (id) => Number($(id).value.trim());
  return { preset: $("set-preset").value || undefined, distance: presetDistances().length ? Number($("set-distance").value) : undefined,
    startType: $("set-start").value, startSound: $("set-sound").value,
    marksPause: { min: num("set-marks-min"), max: num("set-marks-max") }, setPause: { min: num("set-set-min"), max: num("set-set-max") },
    crossingLED: $("set-led").checked, buzzer: $("set-buzzer").checked, crossingSound: $("set-beep").checked, spokenTime: $("set-spoken").checked,
    rearm: $("set-rearm").checked, speedUnit: $("set-unit").value, fps: Number($("set-fps").value), minHeight: num("set-body") / 100,
    delayedVideo: $("set-video-row").hidden ? undefined : $("set-video").checked };
}

// The same value whatever the order of its keys.
function canon(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
}

// Sends only what differs from what the gate runs, then waits until the gate shows it.
async function saveSettings(ev) {
  ev.preventDefault();
  const current = state.settings && state.settings.editable, wanted = settingsFromForm(), change = {};
  for (const k of Object.keys(wanted)) {
    if (wanted[k] === undefined) continue;
    if (!current || canon(wanted[k]) !== canon(current[k])) change[k] = wanted[k];
  }
  if (!Object.keys(change).length) { $("set-note").textContent = "Nothing changed."; return; }
  const r = await control("PUT", "/api/settings", change);
  if (!r) { $("set-note").textContent = $("message").textContent; return; }
  for (let i = 0; i < 20; i++) {
    await new Promise((done) => setTimeout(done, 150));
    const s = await api("GET", "/api/settings").catch(() => null);
    if (s && Object.keys(change).every((k) => canon(s.editable[k]) === canon(change[k]))) {
      await loadSettings();
      say("Settings saved and applied.");
      return;
    }
  }
  say("The gate has not applied the settings yet: a run may have started. Save again after it.", true);
}

const athleteColours = ["red", "orange", "yellow", "green", "blue", "purple", "pink", "gray"];

// The athletes list: colour, name, nickname, age and gender, found by name or nickname;
// edit and delete with the PIN.
async function showAthletes() {
  const q = $("a-q").value.trim();
  let list;
  try { list = await api("GET", "/api/athletes" + (q ? "?q=" + encodeURIComponent(q) : "")); } catch (e) { say(e.message, true); return; }
  const ul = $("athletes"); ul.replaceChildren();
  for (const a of list) {
    const li = el("li"); li.dataset.athlete = String(a.id);
    li.append(el("span", undefined, "swatch " + a.colour), el("strong", a.name));
    if (a.nickname) li.append(el("span", "“" + a.nickname + "”", "small"));
    const facts = [];
    if (a.birthdate) {
      const b = new Date(a.birthdate + "T12:00:00"), now = new Date();
      let age = now.getFullYear() - b.getFullYear();
      if (now.getMonth() < b.getMonth() || (now.getMonth() === b.getMonth() && now.getDate() < b.getDate())) age--;
      facts.push(age + " years");
    }
    if (a.gender !== "unspecified") facts.push(a.gender);
    if (facts.length) li.append(el("span", facts.join(", "), "small"));
    const edit = el("button", "Edit"); edit.onclick = () => editAthlete(a); li.append(edit);
    const del = el("button", "Delete"); del.onclick = async () => {
      if (!confirm("Delete " + a.name + "? Their runs stay, without a name.")) return;
      await control("DELETE", "/api/athletes/" + a.id, undefined, "Deleted " + a.name + ".");
      await loadAthletes();
    };
    li.append(del); ul.append(li);
  }
  if (!list.length) ul.append(el("li", q ? "Nobody matches." : "No athletes yet.", "small"));
}

function editAthlete(a) {
  if (!state.pin) { say("Enter the gate's PIN first.", true); $("pin").focus(); return; }
  const d = $("athlete-dialog");
  $("athlete-title").textContent = a ? "Edit " + a.name : "New athlete";
  $("a-name").value = a ? a.name : ""; $("a-nickname").value = a && a.nickname ? a.nickname : "";
  $("a-colour").value = a ? a.colour : "blue"; $("a-birthdate").value = a && a.birthdate ? a.birthdate : "";
  $("a-gender").value = a ? a.gender : "unspecified";
  d.onclose = async () => {
    if (d.returnValue !== "save") return;
    const body = { name: $("a-name").value, nickname: $("a-nickname").value || null, colour: $("a-colour").value,
      birthdate: $("a-birthdate").value || null, gender: $("a-gender").value };
    const done = a ? await control("PUT", "/api/athletes/" + a.id, body, "Saved " + body.name + ".")
      : await control("POST", "/api/athletes", body, "Added " + body.name + ".");
    if (done) await loadAthletes();
  };
  d.returnValue = ""; d.showModal();
}

async function loadAthletes() {
  showAthletes();
  const list = await api("GET", "/api/athletes").catch(() => []);
  const first = { "sel-athlete": "— nobody —", "h-athlete": "All athletes", "b-athlete": "All athletes", "s-athlete": "Everyone" };
  for (const id of Object.keys(first)) {
    const sel = $(id), keep = sel.value; sel.replaceChildren(new Option(first[id], ""));
    for (const a of list) sel.append(new Option(a.name, String(a.id)));
    sel.value = keep;
  }
  if (state.board && state.board.nextAthlete) $("sel-athlete").value = String(state.board.nextAthlete.id);
}

// Local midnight of a date input's value (YYYY-MM-DD), Unix seconds.
function localDay(value) { const [y, m, d] = value.split("-").map(Number); return new Date(y, m - 1, d).getTime() / 1000; }

function historyParams() {
  const p = new URLSearchParams();
  if ($("h-q").value.trim()) p.set("q", $("h-q").value.trim());
  if ($("h-athlete").value) p.set("athlete", $("h-athlete").value);
  if ($("h-preset").value) p.set("preset", $("h-preset").value);
  if ($("h-start").value) p.set("startType", $("h-start").value);
  if ($("h-distance").value) p.set("distance", $("h-distance").value);
  if ($("h-gates").value) p.set("gates", $("h-gates").value);
  const period = $("h-period").value, now = new Date();
  if (period === "week") {
    // Weeks start on Monday.
    const monday = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (now.getDay() + 6) % 7);
    p.set("from", String(monday.getTime() / 1000));
  } else if (period === "month") {
    p.set("from", String(new Date(now.getFullYear(), now.getMonth(), 1).getTime() / 1000));
  } else if (period === "range") {
    if ($("h-from").value) p.set("from", String(localDay($("h-from").value)));
    if ($("h-to").value) p.set("to", String(localDay($("h-to").value) + 86399.999));
  }
  const sort = $("h-sort").value;
  if (sort === "oldest") { p.set("sort", "date"); p.set("order", "asc"); } else p.set("sort", sort);
  return p;
}

async function loadHistory() {
  const p = historyParams();
  $("dl-csv").href = "/api/export.csv?" + p; $("dl-json").href = "/api/export.json?" + p;
  let rows;
  const tb = document.querySelector("#history tbody");
  const current = newestRequest("history");
  // A page of runs at a time, so the tab stays a few screens tall on a day of many runs.
  const shown = state.historyShown || historyPage, page = new URLSearchParams(p);
  page.set("limit", String(shown + 1));
  try { rows = await api("GET", "/api/results?" + page); }
  catch (e) {
    if (!current()) return;
    const tr = el("tr"), td = el("td", e.message); td.colSpan = 6; tr.append(td); tb.replaceChildren(tr); return;
  }
  if (!current()) return;
  tb.replaceChildren();
  const unit = state.settings ? state.settings.speedUnit : "";
  const more = rows.length > shown;
  for (const v of rows.slice(0, shown)) {
    const r = v.run, tr = el("tr");
    tr.dataset.run = String(r.id);
    const d = new Date(r.wallTime * 1000);
    tr.append(el("td", d.toLocaleDateString() + " " + d.toLocaleTimeString()), athleteCell(r.athleteName, r.athleteColour),
      el("td", r.preset || course(r.startType, r.distanceMetres)));
    const t = el("td", fmt(r.seconds, 3)); for (const b of badges(r)) t.append(" ", b); tr.append(t);
    tr.append(el("td", v.speed === null || v.speed === undefined ? "—" : fmt(v.speed, 2) + " " + unit));
    const td = el("td");
    const det = el("button", "Details"); det.onclick = () => showRun(r.id); td.append(det);
    if (r.hasPhoto) { const ph = el("button", "Photo"); ph.onclick = () => showPhoto(r.id); td.append(ph); }
    const del = el("button", "Delete"); del.onclick = async () => {
      if (!confirm("Delete the " + fmt(r.seconds, 3) + " s run?")) return;
      await control("DELETE", "/api/results/" + r.id, undefined, "Deleted."); refreshLists();
    };
    td.append(del); tr.append(td); tb.append(tr);
  }
  if (!rows.length) { const tr = el("tr"); const td = el("td", "No runs match."); td.colSpan = 6; tr.append(td); tb.append(tr); }
  if (more) {
    const tr = el("tr"), td = el("td"), b = el("button", "Show " + historyPage + " more"); b.id = "h-more";
    b.onclick = () => { state.historyShown = shown + historyPage; loadHistory(); };
    td.colSpan = 6; td.append(b); tr.append(td); tb.append(tr);
  }
}
const historyPage = 10;
// Another filter starts again from its newest page.
function newHistory() { state.historyShown = historyPage; loadHistory(); }

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
  $("btn-camera").onclick = toggleCamera; wireGateLineDrag(); wirePhotoCorrection();
  $("btn-start").onclick = () => control("POST", "/api/start", undefined, "Starting.");
  $("btn-pause").onclick = () => control("POST", "/api/pause", undefined, "Gates paused: crossings are not timed.");
  $("btn-resume").onclick = () => control("POST", "/api/resume", undefined, "Gates timing again.");
  $("btn-reset").onclick = () => {
    // Reset stops a run in progress untimed: ask first; between runs it asks nothing.
    const phase = state.board ? state.board.gate.phase : "";
    if (["holding", "starting", "in-frame", "running"].includes(phase) && !confirm("A run is in progress: reset stops it, untimed. Reset?")) return;
    control("POST", "/api/reset", undefined, "Reset.");
  };
  // The quick menus change the same settings as the form: applied and kept.
  $("sel-start").onchange = (e) => control("PUT", "/api/settings", { startType: e.target.value }, "Start type set.");
  $("sel-preset").onchange = (e) => { if (e.target.value) control("PUT", "/api/settings", { preset: e.target.value }, "Preset set."); };
  $("settings-form").onsubmit = saveSettings;
  $("set-preset").onchange = () => fillDistances();
  $("sel-athlete").onchange = (e) => control("PUT", "/api/next-athlete", { athleteId: e.target.value ? Number(e.target.value) : null }, "Next run assigned.");
  $("btn-add-athlete").onclick = () => editAthlete(null);
  $("btn-roster").onclick = showRoster;
  $("roster-session").onclick = () => { rosterPick.order = [...rosterPick.session]; drawRoster(); };
  $("roster-start").onclick = () => {
    if (!rosterPick.order.length) { say("Tick the athletes of the roster first.", true); return; }
    saveRoster(rosterPick.order);
  };
  $("roster-stop").onclick = () => saveRoster([]);
  $("btn-new-athlete").onclick = () => editAthlete(null);
  for (const c of athleteColours) $("a-colour").append(new Option(c, c));
  $("a-q").oninput = () => showAthletes();
  $("btn-pin").onclick = async () => {
    const p = $("pin").value.trim();
    try { state.pin = ""; await api("POST", "/api/pin", { pin: p }); setPin(p); say("Unlocked."); $("pin").value = ""; checkClock(false); }
    catch (e) { say(e.message, true); }
  };
  $("btn-clock").onclick = () => checkClock(true);
  $("h-go").onclick = newHistory;
  $("h-q").onkeydown = (e) => { if (e.key === "Enter") newHistory(); };
  for (const id of ["h-athlete", "h-preset", "h-start", "h-distance", "h-gates", "h-sort", "h-from", "h-to"]) $(id).onchange = newHistory;
  $("h-period").onchange = () => { $("h-range").hidden = $("h-period").value !== "range"; newHistory(); };
  $("b-athlete").onchange = loadBests;
  $("s-athlete").onchange = sessionRuns;
  $("s-delete").onclick = async () => {
    const s = state.session;
    if (!s || !confirm("Delete this session and its " + s.runCount + " runs? Bests are worked out again without them.")) return;
    const r = await control("DELETE", "/api/sessions/" + s.id, undefined, "Session deleted.");
    if (r) { say("Session deleted with its " + count(r.deletedRuns, "run", "runs") + "."); $("session-dialog").close(); refreshLists(); }
  };
  $("btn-clear-all").onclick = async () => {
    if (!state.pin) { say("Enter the gate's PIN first.", true); $("pin").focus(); return; }
    if (!confirm("Delete every run, session, image, athlete and best on this gate, its GPS runs, ski days, erg sessions " +
                 "and video sessions? This cannot be undone.")) return;
    const r = await control("POST", "/api/clear-all", { confirm: "clear all" }, "Cleared.");
    if (r) {
      say("Cleared: " + count(r.deletedRuns, "run", "runs") + " and " + count(r.deletedVideoSessions, "video session", "video sessions") + " deleted.");
      refreshLists(); loadAthletes();
    }
  };
}


// Calculators (read-only, no PIN): wind adjustment, equivalent performances on the
// scoring tables (men's and women's events), the flying sprint converter, the 100 m
// predictor and lane staggers with a lane draw.
window.SprintGateCalc = async function () {
  const box = $("calc");
  let ev;
  try { ev = await api("GET", "/api/calc/events"); } catch (e) { box.textContent = "Calculators unavailable: " + e.message; return; }
  function form(id, title, fields, path, show) {
    const f = el("form", undefined, "calc-form"); f.id = id; f.append(el("strong", title));
    const row = el("div", undefined, "row"), inputs = {};
    for (const [name, label, opts, value] of fields) {
      const l = el("label", label);
      const i = opts ? document.createElement("select") : document.createElement("input");
      if (opts) for (const o of opts) i.append(new Option(o, o)); else { i.size = 6; i.inputMode = "decimal"; }
      if (value) i.value = value;
      i.name = name; inputs[name] = i; l.append(i); row.append(l);
    }
    const out = el("div", "", "small calc-out"), go = el("button", "Calculate"); go.type = "submit"; row.append(go);
    f.append(row, out);
    f.onsubmit = async (e) => {
      e.preventDefault();
      const p = new URLSearchParams(); for (const k in inputs) p.set(k, inputs[k].value.trim());
      try { out.classList.remove("bad"); const r = show(await api("GET", path + "?" + p)); out.replaceChildren(r); }
      catch (err) { out.classList.add("bad"); out.textContent = err.message; }
    };
    box.append(f);
    return inputs;
  }
  form("calc-wind", "Wind adjustment", [["event", "Event", ev.wind], ["time", "Time s", null, ""], ["wind", "Wind m/s", null, "+0.0"]], "/api/calc/wind",
    (r) => "Still air: " + fmt(r.stillAirTime, 2) + " s · at +2.0: " + fmt(r.atLegalLimit, 2) + " s · " + (r.legal ? "legal wind" : "wind-assisted"));
  const eq = form("calc-equivalent", "Equivalent performance", [["sex", "Sex", Object.keys(ev.scored)], ["from", "From", ev.scored.men], ["time", "Time s", null, ""], ["to", "To", ev.scored.men]], "/api/calc/equivalent",
    (r) => r.from.time.toFixed(2) + " s " + r.from.event + " = " + r.from.points + " points = " + r.to.time.toFixed(2) + " s " + r.to.event);
  // The events follow the sex chosen: the women's tables have the 100 m hurdles, the men's the 110 m.
  eq.sex.onchange = () => {
    for (const k of ["from", "to"]) {
      const keep = eq[k].value;
      eq[k].replaceChildren(...ev.scored[eq.sex.value].map((o) => new Option(o, o)));
      if (ev.scored[eq.sex.value].includes(keep)) eq[k].value = keep;
    }
  };
  eq.to.value = "200m";
  const distances = ev.flyingDistances.map((d) => String(d));
  const fly = form("calc-flying", "Flying sprint", [["distance", "Flying m", distances, "30"], ["time", "Time s", null, ""]], "/api/calc/flying",
    (r) => fmt(r.metresPerSecond, 2) + " m/s · " + fmt(r.kilometresPerHour, 1) + " km/h · " + fmt(r.milesPerHour, 1) + " mph\n" +
      r.equivalents.map((q) => "flying " + (q.distance === 36.576 ? "40 yd" : fmt(q.distance, 0) + " m") + ": " + fmt(q.time, 2) + " s").join(" · "));
  fly.distance.value = "30";
  form("calc-predict", "100 m predictor", [["thirty", "30 m blocks s", null, ""], ["flyingTen", "Flying 10 m s", null, ""]], "/api/calc/predict100",
    (r) => "Predicted 100 m: " + fmt(r.hundred, 2) + " s (30 m " + fmt(r.thirty, 2) + " s + 70 m " + fmt(r.lastSeventy, 2) + " s; top speed " +
      fmt(r.topSpeed, 2) + " m/s, the last 70 m " + fmt((r.speedEndurance - 1) * 100, 1) + " % slower than at top speed)");
  form("calc-stagger", "Lane stagger", [["event", "Event", ev.staggered, "400m"], ["lanes", "Lanes", null, "8"]], "/api/calc/stagger", (r) => {
    // With athletes on the gate, draw them at random into the lanes.
    const names = [...$("sel-athlete").options].filter((o) => o.value).map((o) => o.textContent);
    for (let i = names.length - 1; i > 0; i--) { const j = Math.floor(Math.random() * (i + 1)); [names[i], names[j]] = [names[j], names[i]]; }
    const t = el("table"), head = el("tr");
    for (const h of ["Lane", "Stagger", names.length ? "Drawn" : ""]) head.append(el("th", h));
    t.append(el("thead")); t.tHead.append(head);
    const body = el("tbody");
    for (const l of r.lanes) {
      const tr = el("tr"); tr.append(el("td", String(l.lane)), el("td", fmt(l.stagger, 2) + " m"), el("td", names[l.lane - 1] || ""));
      body.append(tr);
    }
    t.append(body);
    return t;
  });
};

// Each cell of a card table gets its column's name (shown before the value on a phone).
function labelCards(table) {
  const names = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
  for (const tr of table.querySelectorAll("tbody tr")) {
    // A message across the row ("No runs.") has no column.
    [...tr.children].forEach((td, i) => { if (td.colSpan === 1 && names[i] && td.dataset.label !== names[i]) td.dataset.label = names[i]; });
  }
}

window.addEventListener("DOMContentLoaded", () => {
  $("message").onclick = () => { $("message").textContent = ""; };
  $("toast").onclick = () => { $("toast").hidden = true; };
  for (const t of document.querySelectorAll("table.cards")) {
    labelCards(t);
    new MutationObserver(() => labelCards(t)).observe(t.querySelector("tbody"), { childList: true, subtree: true });
  }
});

window.addEventListener("DOMContentLoaded", async () => {
  wireTabs(); wire(); setPin(state.pin);
  // A PIN this phone kept from before is checked: another gate at the same address, or a
  // PIN changed since, asks for it again (a wrong one answers 401, which clears it).
  const pinChecked = state.pin ? api("POST", "/api/pin", { pin: state.pin }).catch(() => {}) : Promise.resolve();
  pinChecked.then(() => checkClock(false));
  try { await loadSettings(); } catch (e) { say("Cannot load settings: " + e.message, true); }
  await loadAthletes(); refreshLists(); connect(); requestAnimationFrame(runClock);
  if (window.SprintGateCalc) window.SprintGateCalc();
});
