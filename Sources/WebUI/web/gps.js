// SPDX-License-Identifier: Apache-2.0
// The GPS acceleration timer on the page: the receiver's lock, live speed and the timer's
// state over a WebSocket at the receiver's rate, milestones filling in as they are passed,
// and an in-car view (dark, full screen, large numbers). Uses app.js's helpers.
"use strict";

const gps = { on: false, live: null, metric: localStorage.getItem("sg-gps-units") === "metric" };

const GPS_STATES = {
  acquiring: ["Acquiring", "bad"], ready: ["Ready", "warn"], armed: ["Armed: launch when ready", "ok"],
  running: ["Running", "ok"], complete: ["Complete", "ok"], voided: ["Voided", "bad"],
};

function gpsSpeed(ms) { return ms === null || ms === undefined ? null : (gps.metric ? ms * 3.6 : ms / 0.44704); }
function gpsUnit() { return gps.metric ? "km/h" : "mph"; }
function gpsDistance(m) { return gps.metric ? fmt(m, 0) + " m" : fmt(m / 0.3048, 0) + " ft"; }

// The lock: words and a colour, never colour alone.
function gpsLock(l) {
  if (l.link !== "fix") return chip(l.linkDetail, "bad");
  const parts = [(l.mode === 3 ? "3D" : "2D") + " fix"];
  if (l.satellitesUsed !== null && l.satellitesUsed !== undefined) parts.push(l.satellitesUsed + " sats");
  if (l.accuracy !== null && l.accuracy !== undefined) parts.push("±" + fmt(l.accuracy, 0) + " m");
  if (l.rate) parts.push(fmt(l.rate, l.rate < 2 ? 1 : 0) + " Hz");
  const good = l.accuracy === null || l.accuracy === undefined || l.accuracy <= l.accuracyGate;
  return chip(parts.join(" · "), good && !l.rateWarning ? "ok" : "warn");
}

function gpsMilestoneRow(m) {
  const tr = el("tr");
  const t = el("td", fmt(m.seconds, 2) + " s", "t");
  t.append(el("span", " ±" + fmt(m.uncertainty, 2), "small unc"));
  tr.append(el("td", m.name), t,
            el("td", fmt(gpsSpeed(m.trapSpeed !== null && m.trapSpeed !== undefined ? m.trapSpeed : m.speed), 1) + " " + gpsUnit() + (m.trapSpeed ? " trap" : "")));
  return tr;
}

function gpsRunItem(r) {
  const li = el("li");
  const del = el("button", "Delete", "stop small-button");
  del.onclick = async () => {
    if (!confirm("Delete this run?")) return;
    if (await control("DELETE", "/api/gps/runs/" + r.id, undefined, "Run deleted.") !== undefined) gpsHistory();
  };
  if (r.vehicleName) li.append(el("span", r.vehicleName + " · "));
  if (r.voided) {
    li.append(el("span", when(r.wallTime) + " "), el("strong", "voided: " + r.voided));
    if (r.id) li.append(" ", del);
    return li;
  }
  const best = r.milestones.find((m) => m.name === (gps.metric ? "0-100 km/h" : "0-60 mph")) || r.milestones[0];
  const quarter = r.milestones.find((m) => m.name === "1/4 mile");
  li.append(el("span", when(r.wallTime) + " "),
            el("strong", best ? best.name + " " + fmt(best.seconds, 2) + " s" : "no milestone"),
            el("span", (quarter ? " · 1/4 mile " + fmt(quarter.seconds, 2) + " s" : "") +
                       " · top " + fmt(gpsSpeed(r.topSpeed), 1) + " " + gpsUnit() + (r.rollout ? " · rollout" : "")));
  if (r.id) li.append(" ", del);
  return li;
}

// The runs, filtered and sorted as chosen; read again when a run finishes or is deleted.
async function gpsHistory() {
  const v = $("g-h-vehicle").value, sort = $("g-h-sort").value;
  const q = "?sort=" + encodeURIComponent(sort) + (v ? "&vehicle=" + v : "");
  $("g-csv").href = "/api/gps/export.csv" + q;
  $("g-json").href = "/api/gps/export.json" + q;
  let runs;
  try { runs = await api("GET", "/api/gps/runs" + q + "&limit=50"); } catch (e) { runs = gps.live ? gps.live.runs : []; }
  gps.history = runs;
  $("g-runs").replaceChildren(...runs.map(gpsRunItem));
}

function vehicleLine(gv) {
  const v = gv.vehicle;
  const what = [v.year, v.make, v.model, v.trim].filter((x) => x).join(" ");
  const best = gv.bests[gps.metric ? "0-100 km/h" : "0-60 mph"], quarter = gv.bests["1/4 mile"];
  return (what ? what + " · " : "") + count(gv.runs, "run", "runs") +
    (best ? " · best " + (gps.metric ? "0-100 km/h " : "0-60 mph ") + fmt(best, 2) + " s" : "") + (quarter ? " · 1/4 mile " + fmt(quarter, 2) + " s" : "");
}

async function gpsGarage() {
  let g;
  try { g = await api("GET", "/api/gps/garage"); } catch (e) { $("g-vehicle").disabled = true; return null; }
  gps.garage = g;
  for (const [id, none] of [["g-vehicle", "— none —"], ["g-h-vehicle", "Every vehicle"]]) {
    const sel = $(id), keep = id === "g-vehicle" ? String(g.activeID || "") : sel.value;
    sel.replaceChildren(el("option", none), ...g.vehicles.map((gv) => el("option", gv.vehicle.name)));
    sel.options[0].value = "";
    g.vehicles.forEach((gv, i) => { sel.options[i + 1].value = String(gv.vehicle.id); });
    sel.value = keep;
  }
  $("garage-list").replaceChildren(...g.vehicles.map((gv) => {
    const li = el("li");
    const v = gv.vehicle;
    const edit = el("button", "Edit");
    edit.onclick = () => vehicleForm(v);
    const def = el("button", gv.vehicle.id === g.defaultID ? "Default" : "Make default");
    def.disabled = gv.vehicle.id === g.defaultID;
    def.onclick = async () => { if (await control("PUT", "/api/gps/default", { id: v.id }, v.name + " is the default.") !== undefined) gpsGarage(); };
    const del = el("button", "Delete", "stop");
    del.onclick = async () => {
      if (!confirm("Delete " + v.name + "? Its runs stay, under its name.")) return;
      if (await control("DELETE", "/api/gps/vehicles/" + v.id, undefined, v.name + " deleted.") !== undefined) { gpsGarage(); gpsHistory(); }
    };
    if (gv.hasPhoto) {
      const img = el("img", undefined, "vehicle-photo");
      img.src = "/api/gps/vehicles/" + v.id + "/photo?v=" + (gps.photoVersion || 0);
      img.alt = v.name;
      li.append(img);
    }
    li.append(el("strong", v.name), el("div", vehicleLine(gv), "small"), el("div", v.notes || "", "small"));
    const row = el("div", undefined, "row");
    row.append(edit, def, del);
    li.append(row);
    return li;
  }));
  return g;
}

function vehicleForm(v) {
  gps.editing = v ? v.id : null;
  $("veh-photo").value = "";
  const gv = v && gps.garage ? gps.garage.vehicles.find((x) => x.vehicle.id === v.id) : null;
  $("veh-photo-now").hidden = !(gv && gv.hasPhoto);
  $("veh-photo-remove").hidden = !(gv && gv.hasPhoto);
  if (gv && gv.hasPhoto) $("veh-photo-now").src = "/api/gps/vehicles/" + v.id + "/photo?v=" + (gps.photoVersion || 0);
  $("vehicle-title").textContent = v ? "Edit " + v.name : "New vehicle";
  for (const k of ["name", "make", "model", "trim", "colour", "notes"]) $("veh-" + k).value = v ? v[k] || "" : "";
  $("veh-year").value = v && v.year ? String(v.year) : "";
  $("veh-name").focus();
}

async function saveVehicle() {
  const body = {};
  for (const k of ["name", "make", "model", "trim", "colour", "notes"]) body[k] = $("veh-" + k).value.trim();
  const year = $("veh-year").value.trim();
  if (year && !/^[0-9]{4}$/.test(year)) { say("Year: four digits, e.g. 2019", true); return; }
  body.year = year ? Number(year) : null;
  const r = gps.editing
    ? await control("PUT", "/api/gps/vehicles/" + gps.editing, body, body.name + " saved.")
    : await control("POST", "/api/gps/vehicles", body, body.name + " added to the garage.");
  if (r === undefined) return;
  const file = $("veh-photo").files[0];
  if (file) await sendVehiclePhoto(gps.editing || r.id, file, body.name);
  vehicleForm(null);
  await gpsGarage();
}

// A phone's photo scaled to at most 800 pixels and sent as JPEG (about 100 kB).
async function sendVehiclePhoto(id, file, name) {
  let bitmap;
  try { bitmap = await createImageBitmap(file); } catch (e) { say("Photo: that file is not a picture the browser can read.", true); return; }
  const k = Math.min(1, 800 / Math.max(bitmap.width, bitmap.height));
  const c = document.createElement("canvas");
  c.width = Math.max(1, Math.round(bitmap.width * k)); c.height = Math.max(1, Math.round(bitmap.height * k));
  c.getContext("2d").drawImage(bitmap, 0, 0, c.width, c.height);
  const blob = await new Promise((done) => c.toBlob(done, "image/jpeg", 0.85));
  try {
    const r = await fetch("/api/gps/vehicles/" + id + "/photo", { method: "PUT", headers: { "X-Gate-PIN": state.pin, "Content-Type": "image/jpeg" }, body: blob });
    if (!r.ok) {
      const data = await r.json().catch(() => null);
      say("Photo: " + (data && data.error ? data.error.reason : "HTTP " + r.status), true);
      return;
    }
    gps.photoVersion = (gps.photoVersion || 0) + 1;
    say(name + " saved with its photo.");
  } catch (e) { say("Photo: " + e.message, true); }
}

function drawGPS() {
  const l = gps.live;
  if (!l) return;
  const [word, cls] = GPS_STATES[l.state] || [l.state, "warn"];
  $("g-state").replaceChildren(chip(word, cls));
  $("g-state-detail").textContent = l.stateDetail;
  $("g-lock").replaceChildren(gpsLock(l));
  $("g-rate").textContent = l.rateWarning || "";
  $("g-rate").hidden = !l.rateWarning;
  $("g-speed").textContent = fmt(gpsSpeed(l.speed), 0);
  $("g-unit").textContent = gpsUnit();
  const running = l.state === "running";
  $("g-elapsed").textContent = running ? fmt(l.elapsed, 1) + " s · " + gpsDistance(l.distance) : "";
  // Milestones of the run in progress, else of the last run.
  const shown = running ? l.milestones : (l.last ? l.last.milestones : []);
  $("g-milestones").querySelector("tbody").replaceChildren(...shown.map(gpsMilestoneRow));
  $("g-milestones").hidden = shown.length === 0;
  $("g-void").textContent = !running && l.last && l.last.voided ? "Last run voided: " + l.last.voided : "";
  if (l.last && !running) {
    $("g-top").textContent = "Top speed " + fmt(gpsSpeed(l.last.topSpeed), 1) + " " + gpsUnit() + " at " + fmt(l.last.topSpeedSeconds, 1) +
      " s · " + gpsDistance(l.last.distance) + " · " + fmt(l.last.fixRate, 0) + " fixes/s";
  } else {
    $("g-top").textContent = "";
  }
  // A new or deleted run: the list is read again.
  const runsKey = l.runs.map((r) => r.id).join(",");
  if (runsKey !== gps.runsKey) { gps.runsKey = runsKey; gpsHistory(); }
  $("g-vehicle").disabled = running || !gps.garage;
  if (document.activeElement !== $("g-vehicle") && gps.garage) {
    const active = gps.garage.vehicles.find((gv) => gv.vehicle.name === l.activeVehicle);
    $("g-vehicle").value = active ? String(active.vehicle.id) : "";
  }
  $("g-units").textContent = gps.metric ? "Units: metric" : "Units: imperial";
}

function gpsConnect() {
  liveSocket("/api/gps/ws", (m) => { gps.live = m; drawGPS(); },
             () => $("g-lock").replaceChildren(chip("page not connected to the gate", "bad")));
}

// The in-car view: full screen where the phone allows, and the screen kept on.
async function gpsInCar(on) {
  document.body.classList.toggle("in-car", on);
  $("g-car").textContent = on ? "Leave the in-car view" : "In-car view";
  try {
    if (on && document.documentElement.requestFullscreen && !document.fullscreenElement) await document.documentElement.requestFullscreen();
    if (!on && document.fullscreenElement) await document.exitFullscreen();
  } catch (e) { /* a page not allowed full screen keeps the dark view */ }
  try {
    if (on && navigator.wakeLock) gps.wake = await navigator.wakeLock.request("screen");
    if (!on && gps.wake) { gps.wake.release(); gps.wake = null; }
  } catch (e) { gps.wake = null; }
}

window.addEventListener("DOMContentLoaded", async () => {
  let first;
  // Off (404): a gate without [gps] shows no GPS section.
  try { first = await api("GET", "/api/gps"); } catch (e) { return; }
  gps.on = true;
  gps.live = first;
  $("gps-section").hidden = false;
  await gpsGarage();
  drawGPS();
  $("g-vehicle").onchange = async () => {
    const id = $("g-vehicle").value;
    await control("PUT", "/api/gps/active", { id: id ? Number(id) : null }, "Runs now go to " + (id ? $("g-vehicle").selectedOptions[0].textContent : "no vehicle") + ".");
    await gpsGarage();
  };
  $("g-h-vehicle").onchange = gpsHistory;
  $("g-h-sort").onchange = gpsHistory;
  $("g-garage").onclick = async () => { await gpsGarage(); vehicleForm(null); $("garage-dialog").showModal(); };
  $("vehicle-form").addEventListener("submit", (e) => {
    if (e.submitter && e.submitter.value === "new") { e.preventDefault(); vehicleForm(null); return; }
    e.preventDefault();
    saveVehicle();
  });
  $("veh-photo-remove").onclick = async () => {
    const id = gps.editing;
    if (id && await control("DELETE", "/api/gps/vehicles/" + id + "/photo", undefined, "Photo removed.") !== undefined) {
      gps.photoVersion = (gps.photoVersion || 0) + 1;
      await gpsGarage();
      vehicleForm(gps.garage.vehicles.find((x) => x.vehicle.id === id).vehicle);
    }
  };
  $("g-car").onclick = () => gpsInCar(!document.body.classList.contains("in-car"));
  $("g-units").onclick = () => {
    gps.metric = !gps.metric;
    localStorage.setItem("sg-gps-units", gps.metric ? "metric" : "imperial");
    drawGPS();
  };
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && document.body.classList.contains("in-car")) gpsInCar(false);
  });
  gpsConnect();
});
