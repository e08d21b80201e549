// SPDX-License-Identifier: Apache-2.0
// Archery scoring of a delay session: the face drawn from the gate's geometry, one marker at
// a time dragged to where the arrow hit, arrows dragged again to correct them, undo, the
// score sheet, and each arrow's shot played by tapping it. The gate scores (line-cutter
// rule); the page only converts a finger's position to millimetres.
"use strict";

const scorer = { session: null, card: null, drag: null };
// World Archery colours by ring: 1–2 white, 3–4 black, 5–6 blue, 7–8 red, 9–10 gold.
const ringFill = [null, "#fff", "#fff", "#111", "#111", "#1e9ad6", "#1e9ad6", "#e2231a", "#e2231a", "#ffe100", "#ffe100"];
const ringLine = (n) => (n === 3 || n === 4 ? "#fff" : "#000");
// A marker dropped this far below the face (in the tray) is no placement.
const trayShare = 0.3;

function svgEl(tag, attrs) {
  // The face's own namespace (SVG's), read from the page's <svg>.
  const e = document.createElementNS($("sc-face").namespaceURI, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

function scorePath(suffix) { return "/api/video/sessions/" + encodeURIComponent(scorer.session) + "/score" + (suffix || ""); }

async function openScorer(session) {
  scorer.session = session;
  $("sc-title").textContent = "Score session " + session;
  let card = null;
  try { card = await api("GET", scorePath()); } catch (e) { card = null; }  // Not scored yet: choose the face.
  // The card's own choice; else the settings file's ([video] target_face, bow,
  // arrow_diameter_mm, arrows_per_end); else this phone's last choice.
  const chosen = card ? { face: card.face.id, bow: card.bow, arrowDiameter: card.arrowDiameter, arrowsPerEnd: card.arrowsPerEnd }
    : video.archery || JSON.parse(localStorage.getItem("sg-archery") || "{}");
  $("sc-face-pick").value = chosen.face || "wa122";
  $("sc-bow").value = chosen.bow || "recurve";
  $("sc-diameter").value = String(chosen.arrowDiameter || 5.5);
  $("sc-per-end").value = String(chosen.arrowsPerEnd || 6);
  showCard(card);
  if (!$("sc-dialog").open) $("sc-dialog").showModal();
}

async function beginScoring() {
  const body = { face: $("sc-face-pick").value, bow: $("sc-bow").value,
                 arrowDiameter: Number($("sc-diameter").value.replace(",", ".")), arrowsPerEnd: Number($("sc-per-end").value) };
  const card = await control("PUT", scorePath(), body, "Scoring on the " + $("sc-face-pick").selectedOptions[0].textContent + " face.");
  if (!card) return;
  localStorage.setItem("sg-archery", JSON.stringify(body));
  showCard(card);
}

function showCard(card) {
  scorer.card = card;
  $("sc-setup").hidden = !!(card && card.arrows.length);
  $("sc-board").hidden = !card;
  $("sc-close").textContent = card && card.arrows.length ? "Done" : "Skip";
  if (!card) return;
  drawFace(card);
  const n = card.arrows.length + 1;
  const shot = card.shots[n - 1];
  $("sc-next").textContent = "Arrow " + n + (shot ? " (shot " + n + " of " + card.shots.length + ")" : "") +
    ": drag the marker from below the face to where the arrow hit. Drag a placed arrow to correct it; tap it to play its shot.";
  $("sc-shot").hidden = !shot;
  if (shot) $("sc-shot").src = "/api/video/clips/" + shot + ".jpg";
  $("sc-undo").disabled = !card.canUndo;
  const body = $("sc-sheet").querySelector("tbody");
  body.replaceChildren();
  for (const e of card.ends) {
    const tr = el("tr");
    tr.append(el("td", String(e.n)));
    const cells = el("td");
    e.scores.forEach((label, i) => {
      const a = card.arrows[(e.n - 1) * card.arrowsPerEnd + i];
      const s = el("span", label, a.clip ? "shot" : undefined);
      if (a.clip) { s.title = "Play shot " + a.n; s.onclick = () => play(a.clip); }
      cells.append(s, " ");
    });
    tr.append(cells, el("td", String(e.total)), el("td", String(e.running)));
    body.append(tr);
  }
  $("sc-total").textContent = card.arrows.length ?
    "Total " + card.total + " of " + card.maximum + " · 10s " + card.tenCount + " · X " + card.xCount + " · hits " + card.hitCount : "";
}

function drawFace(card) {
  const f = card.face, R = f.drawingRadius, tray = R * trayShare, w = f.ringWidth;
  const svg = $("sc-face");
  svg.setAttribute("viewBox", [-R, -R, 2 * R, 2 * R + tray].join(" "));
  svg.replaceChildren();
  svg.append(svgEl("rect", { x: -R, y: -R, width: 2 * R, height: 2 * R, fill: "#efe9d8" }));
  svg.append(svgEl("rect", { x: -R, y: R, width: 2 * R, height: tray, fill: "#777" }));
  const hint = svgEl("text", { x: -R + tray * 0.15, y: R + tray * 0.6, fill: "#fff", "font-size": tray * 0.28 });
  hint.textContent = "drag from here ↑";
  svg.append(hint);
  for (const spot of f.spots) {
    for (let n = f.lowestRing; n <= 10; n++) {
      svg.append(svgEl("circle", { cx: spot.x, cy: -spot.y, r: (11 - n) * w, fill: ringFill[n], stroke: ringLine(n), "stroke-width": w * 0.03 }));
    }
    svg.append(svgEl("circle", { cx: spot.x, cy: -spot.y, r: f.xRadius, fill: "none", stroke: "#000", "stroke-width": w * 0.02 }));
  }
  for (const a of card.arrows) svg.append(marker(card, a.n, a.x, -a.y, a.score, !!a.clip));
  svg.append(marker(card, 0, 0, R + tray / 2, "", false));
}

// A marker: the shaft at its true size inside a handle big enough for a finger.
function marker(card, n, x, y, label, hasClip) {
  const R = card.face.drawingRadius;
  const g = svgEl("g", { class: "marker", transform: "translate(" + x + " " + y + ")", "data-n": n });
  const handle = Math.max(card.arrowDiameter / 2, R * 0.06);
  g.append(svgEl("circle", { r: handle, fill: n ? "rgba(0,200,83,.35)" : "rgba(255,255,255,.5)", stroke: hasClip ? "#0057ff" : "#00c853", "stroke-width": handle * 0.18 }));
  g.append(svgEl("circle", { r: card.arrowDiameter / 2, fill: "#000", stroke: "#fff", "stroke-width": card.arrowDiameter * 0.15 }));
  const t = svgEl("text", { x: handle * 1.1, y: -handle * 0.4, "font-size": handle * 0.9, "font-weight": 800, fill: "#000", stroke: "#fff", "stroke-width": handle * 0.12, "paint-order": "stroke" });
  t.textContent = n ? n + (label ? " · " + label : "") : "next";
  g.append(t);
  return g;
}

// Page position to face millimetres (x right, y up), through the drawing's own transform.
function faceMillimetres(ev) {
  const svg = $("sc-face");
  const p = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(svg.getScreenCTM().inverse());
  return { x: p.x, y: -p.y, svgY: p.y };
}

function wireScorer() {
  const svg = $("sc-face");
  svg.addEventListener("pointerdown", (ev) => {
    const g = ev.target.closest(".marker");
    if (!g || !scorer.card) return;
    ev.preventDefault();
    svg.setPointerCapture(ev.pointerId);
    scorer.drag = { g, n: Number(g.dataset.n), start: faceMillimetres(ev), moved: 0 };
  });
  svg.addEventListener("pointermove", (ev) => {
    const d = scorer.drag;
    if (!d) return;
    const p = faceMillimetres(ev);
    d.moved = Math.max(d.moved, Math.hypot(p.x - d.start.x, p.y - d.start.y));
    d.g.setAttribute("transform", "translate(" + p.x + " " + p.svgY + ")");
  });
  const drop = async (ev) => {
    const d = scorer.drag;
    if (!d) return;
    scorer.drag = null;
    const card = scorer.card, R = card.face.drawingRadius;
    const p = faceMillimetres(ev);
    const point = { x: p.x, y: p.y };
    const still = d.moved < R * 0.01;
    let next = null;
    if (d.n === 0) {
      if (p.svgY <= R && !still) next = await control("POST", scorePath("/arrows"), point, "Arrow " + (card.arrows.length + 1) + " placed.");
    } else if (still) {
      const a = card.arrows[d.n - 1];
      if (a.clip) play(a.clip);
    } else if (p.svgY <= R) {
      next = await control("PUT", scorePath("/arrows/" + d.n), point, "Arrow " + d.n + " moved.");
    }
    showCard(next || scorer.card);
    if (next) loadClips();
  };
  svg.addEventListener("pointerup", drop);
  svg.addEventListener("pointercancel", () => { scorer.drag = null; showCard(scorer.card); });
  $("sc-begin").onclick = beginScoring;
  $("sc-miss").onclick = async () => {
    const R = scorer.card.face.drawingRadius;
    const next = await control("POST", scorePath("/arrows"), { x: 0.95 * R, y: -0.95 * R }, "Miss recorded.");
    if (next) { showCard(next); loadClips(); }
  };
  $("sc-undo").onclick = async () => {
    const next = await control("POST", scorePath("/undo"), undefined, "Undone.");
    if (next) { showCard(next); loadClips(); }
  };
  $("sc-close").onclick = () => $("sc-dialog").close();
}

window.addEventListener("DOMContentLoaded", wireScorer);
