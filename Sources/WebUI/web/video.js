// SPDX-License-Identifier: Apache-2.0
// The delay mode on the page: the delayed view (always the newest due picture), marks,
// sessions, the clip list and the replay player with frame stepping. Uses app.js's helpers.
"use strict";

const video = { archery: null, trimIn: null, trimOut: null, on: false, shown: false, shownTime: "0", pictures: 0, fps: 30, clips: [], playing: null, liveTimer: 0 };

function mb(bytes) { return fmt(bytes / 1048576, 1) + " MB"; }

async function videoStatus() {
  let s;
  // Off (404): the section hides; the settings turn the mode on.
  try { s = await api("GET", "/api/video"); } catch (e) { video.on = false; $("video-section").hidden = true; return null; }
  video.on = true;
  video.fps = s.fps || 30;
  video.archery = s.archery || null;
  $("video-section").hidden = false;
  for (const [id, v] of [["v-delay", s.delaySeconds], ["v-pre", s.preRollSeconds], ["v-post", s.postRollSeconds]]) {
    if (document.activeElement !== $(id)) $(id).value = String(v);
  }
  $("v-status").textContent = s.width + "×" + s.height + " at " + fmt(s.fps, 0) + " fps (" + s.encoder + "), buffer " +
    fmt(s.bufferSeconds, 0) + " s of " + s.bufferSummary + ". " +
    (s.session ? "Session " + s.session + " open" + (s.marksPending ? ", " + s.marksPending + " mark(s) waiting for their last seconds" : "") + ". " : "No session open. ") +
    (s.framesDropped ? s.framesDropped + " frames dropped. " : "") + (s.clipsLost ? s.clipsLost + " marks lost. " : "") +
    (s.tv ? "TV: " + s.tv + ". " : "") +
    (s.problem ? "Problem: " + s.problem : "");
  $("v-storage").textContent = "Clips take " + mb(s.storageBytes) + ".";
  return s;
}

// The newest delayed picture: each request waits for a picture newer than the last one
// shown, so the view never falls behind and never queues.
async function delayedStep() {
  if (!video.shown) return;
  let r = null;
  try { r = await fetch("/api/video/delayed.jpg?after=" + video.shownTime, { cache: "no-store" }); } catch (e) { r = null; }
  if (!video.shown) return;
  if (!r || !r.ok) {
    $("v-caption").textContent = "Delayed: waiting for the first delayed picture…";
    setTimeout(delayedStep, 500);
    return;
  }
  // Kept as text: nanoseconds do not fit a double exactly.
  video.shownTime = r.headers.get("X-Frame-Time-Ns") || "0";
  const url = URL.createObjectURL(await r.blob());
  const img = $("v-delayed");
  const old = img.src;
  img.onload = () => { if (old.startsWith("blob:")) URL.revokeObjectURL(old); video.pictures++; delayedStep(); };
  img.onerror = () => { URL.revokeObjectURL(url); setTimeout(delayedStep, 500); };
  img.src = url;
  $("v-caption").textContent = "Delayed " + $("v-delay").value + " s";
}

async function liveStep() {
  if (!video.shown || !$("v-versus").checked) return;
  try {
    const r = await fetch("/api/camera.jpg", { cache: "no-store" });
    if (r.ok) {
      const old = $("v-live").src;
      $("v-live").src = URL.createObjectURL(await r.blob());
      if (old.startsWith("blob:")) URL.revokeObjectURL(old);
    }
  } catch (e) { /* The next one tries again. */ }
  video.liveTimer = setTimeout(liveStep, 250);
}

function applyTransform() {
  const t = "rotate(" + $("v-rotate").value + "deg)" + ($("v-flip").checked ? " scaleX(-1)" : "");
  for (const id of ["v-delayed", "v-live"]) $(id).style.transform = t;
}

function toggleDelayed() {
  video.shown = !video.shown;
  $("v-show").textContent = video.shown ? "Hide the delayed view" : "Show the delayed view";
  $("v-views").hidden = !video.shown;
  if (video.shown) { delayedStep(); versus(); }
}

function versus() {
  $("v-live-fig").hidden = !$("v-versus").checked;
  clearTimeout(video.liveTimer);
  liveStep();
}

async function mark() {
  const r = await control("POST", "/api/video/mark", undefined, "Marked.");
  if (r) { navigator.vibrate && navigator.vibrate(80); videoStatus(); }
}

async function saveVideoSettings() {
  const n = (id) => Number($(id).value.replace(",", "."));
  const r = await control("PUT", "/api/video/settings", { delay: n("v-delay"), preRoll: n("v-pre"), postRoll: n("v-post") }, "Video settings applied.");
  if (r) videoStatus();
}

async function loadClips() {
  let sessions;
  try { sessions = await api("GET", "/api/video/sessions"); } catch (e) { return; }
  const box = $("v-clips");
  box.replaceChildren();
  video.clips = [];
  for (const s of sessions) {
    const head = el("div", undefined, "v-session");
    const started = new Date(s.startedAt * 1000);
    const score = s.score ? " · score " + s.score.total + " of " + s.score.maximum + " (" + s.score.arrows.length + " arrows, " + s.score.face.title + ")" : "";
    head.append(el("h4", started.toLocaleDateString() + " " + started.toLocaleTimeString() + (s.endedAt ? "" : " (open)") + " · " +
      s.clips.length + " clip(s) · delay " + fmt(s.delaySeconds, 0) + " s" + score));
    const scoreButton = el("button", s.score ? "Score sheet" : "Score");
    scoreButton.onclick = () => openScorer(s.id);
    head.append(scoreButton);
    if (s.endedAt) {
      // Deleting a whole session takes a second tap within 3 s.
      const del = el("button", "Delete session", "stop");
      del.onclick = async () => {
        if (!del.dataset.armed) {
          del.dataset.armed = "1";
          del.textContent = "Tap again to delete";
          setTimeout(() => { delete del.dataset.armed; del.textContent = "Delete session"; }, 3000);
          return;
        }
        if (await control("DELETE", "/api/video/sessions/" + encodeURIComponent(s.id), undefined, "Session deleted.") !== undefined) {
          loadClips();
          videoStatus();
        }
      };
      head.append(del);
    }
    box.append(head);
    for (const c of s.clips) {
      video.clips.push(c);
      const row = el("div", undefined, "clip");
      const tick = el("input"); tick.type = "checkbox"; tick.value = c.id; tick.setAttribute("aria-label", "Tick clip " + c.index);
      tick.onchange = () => { $("v-delete").disabled = !box.querySelector("input:checked"); };
      const img = el("img"); img.src = "/api/video/clips/" + c.id + ".jpg"; img.alt = "Clip " + c.index;
      img.onclick = () => play(c.id);
      const text = el("span", ({ buffer: "Buffer ", trim: "Part " }[c.kind] || "Clip ") + c.index + " · " + fmt((c.endNs - c.startNs) / 1e9, 1) + " s · " + mb(c.bytes) +
        (c.truncatedStart ? " · start cut by the buffer" : "") + (c.truncatedEnd ? " · end cut: video went off" : ""));
      const open = el("button", "Play"); open.onclick = () => play(c.id);
      row.append(tick, img, text, open);
      box.append(row);
    }
  }
  $("v-delete").disabled = true;
}

async function deleteTicked() {
  const ids = [...$("v-clips").querySelectorAll("input:checked")].map((t) => t.value);
  if (!ids.length) return;
  const r = await control("DELETE", "/api/video/clips", { ids }, "Deleted " + ids.length + " clip(s).");
  if (r) { loadClips(); videoStatus(); }
}

// The replay player: speed, frame steps (also , and .), scrubber, previous and next clip.
function play(id) {
  video.playing = id;
  const v = $("v-video");
  v.src = "/api/video/clips/" + id + ".mp4";
  v.playbackRate = Number($("v-speed").value);
  $("v-download").href = "/api/video/clips/" + id + ".mp4?download=1";
  $("v-play").textContent = "Play";
  video.trimIn = video.trimOut = null;
  $("v-part").hidden = true;
  showRange();
  const d = $("v-player");
  if (!d.open) d.showModal();
  where();
}
function step(frames) {
  const v = $("v-video");
  v.pause();
  $("v-play").textContent = "Play";
  v.currentTime = Math.max(0, Math.min(v.duration || 0, v.currentTime + frames / video.fps));
}
function neighbour(delta) {
  const i = video.clips.findIndex((c) => c.id === video.playing);
  const c = video.clips[i + delta];
  if (c) play(c.id);
}
function where() {
  const v = $("v-video");
  const frame = Math.round(v.currentTime * video.fps);
  $("v-where").textContent = "Clip " + video.playing + " · " + fmt(v.currentTime, 3) + " s · frame " + frame + " · " + v.playbackRate + "×";
  if (v.duration) $("v-scrub").value = String(Math.round(1000 * v.currentTime / v.duration));
}

// Trim and export: the part between "Start here" and "End here" saved as a clip of its own
// (cut by the gate without re-encoding), then downloaded.
function showRange() {
  const r = (t) => t === null ? "—" : fmt(t, 3) + " s";
  $("v-range").textContent = "Part: " + r(video.trimIn) + " to " + r(video.trimOut);
  $("v-trim").disabled = !(video.trimIn !== null && video.trimOut !== null && video.trimOut > video.trimIn);
}
async function saveTrim() {
  const r = await control("POST", "/api/video/clips/" + video.playing + "/trim", { from: video.trimIn, to: video.trimOut },
    "Part saved.");
  if (!r) return;
  say("Part saved as clip " + r.index + " (" + fmt((r.endNs - r.startNs) / 1e9, 2) + " s, " + r.frames + " frames).");
  $("v-part").href = "/api/video/clips/" + r.id + ".mp4?download=1";
  $("v-part").hidden = false;
  loadClips();
  videoStatus();
}

function wireVideo() {
  $("v-show").onclick = toggleDelayed;
  $("v-mark").onclick = mark;
  $("v-save").onclick = saveVideoSettings;
  $("v-versus").onchange = versus;
  $("v-flip").onchange = applyTransform;
  $("v-rotate").onchange = applyTransform;
  $("v-start").onclick = async () => { if (await control("POST", "/api/video/session/start", undefined, "Session started.")) videoStatus(); };
  // After a session the scorer opens for it (Skip closes it).
  $("v-stop").onclick = async () => {
    // The answer is the status as the stop was taken: the session it closes.
    const r = await control("POST", "/api/video/session/stop", undefined, "Session stopped; its clips follow.");
    if (!r) return;
    videoStatus();
    if (r.session) openScorer(r.session);
  };
  $("v-quick").onclick = async () => { if (await control("POST", "/api/video/quick-save", undefined, "Saving the buffer.")) videoStatus(); };
  $("v-delete").onclick = deleteTicked;
  const v = $("v-video");
  $("v-play").onclick = () => {
    if (v.paused) { v.play(); $("v-play").textContent = "Pause"; } else { v.pause(); $("v-play").textContent = "Play"; }
  };
  $("v-back").onclick = () => step(-1);
  $("v-fwd").onclick = () => step(1);
  $("v-prev").onclick = () => neighbour(-1);
  $("v-next").onclick = () => neighbour(1);
  $("v-speed").onchange = () => { v.playbackRate = Number($("v-speed").value); where(); };
  $("v-scrub").oninput = () => { if (v.duration) { v.pause(); v.currentTime = v.duration * Number($("v-scrub").value) / 1000; } };
  v.ontimeupdate = where;
  v.onseeked = where;
  v.onended = () => { $("v-play").textContent = "Play"; };
  $("v-close").onclick = () => { v.pause(); $("v-player").close(); };
  $("v-in").onclick = () => { video.trimIn = v.currentTime; showRange(); };
  $("v-out").onclick = () => { video.trimOut = v.currentTime; showRange(); };
  $("v-trim").onclick = saveTrim;
  document.addEventListener("keydown", (e) => {
    if (!$("v-player").open) return;
    if (e.key === ",") { step(-1); e.preventDefault(); }
    if (e.key === ".") { step(1); e.preventDefault(); }
    if (e.key === " ") { $("v-play").click(); e.preventDefault(); }
  });
}

window.addEventListener("DOMContentLoaded", async () => {
  wireVideo();
  // The section shows while the delay mode runs (it can be switched in the settings); the
  // list is drawn again only when clips were saved or deleted, so ticks survive.
  let listed = "";
  const poll = async () => {
    const s = await videoStatus();
    const key = s ? s.clipsSaved + "/" + s.storageBytes + "/" + s.session : "";
    if (s && key !== listed) loadClips();
    listed = key;
  };
  await poll();
  setInterval(poll, 2000);
});
