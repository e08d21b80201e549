# SPDX-License-Identifier: Apache-2.0
# Browser test of the delay mode over `demo --web --lone-gate --video-delay 2` (real
# video thread, libx264, clips on disk): the delayed view runs the set delay behind the
# gate's clock, the delay changes live, a mark becomes a clip once its post-roll is in,
# the player plays it in Chromium and steps frames with , and ., the download is an MP4
# ffprobe reads, a part trimmed out of it and downloaded, and ticked clips are deleted. The session is scored on the archery face:
# markers dragged with line-cutter cases, a drag and undo, a miss, the sheet, an arrow's
# shot played; the scored session outlives its clips and is then deleted; the delay mode
# is switched off in the settings and on again. Saves
# docs/video.png and docs/archery.png (phone width).
# Usage: browser_video.py PORT CDP_PORT PIN_FILE SCREENSHOT
import base64, json, os, subprocess, sys, tempfile, time, urllib.error, urllib.request
sys.path.insert(0, "scripts")
from cdp import open_tab, open_unlocked, save_settings, tour_tabs, until as until_in, wait_http

port, cdp, pin_file, shot = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
shot_dir = os.path.dirname(shot) or "."
base = f"http://127.0.0.1:{port}"
wait_http(base + "/api/video", 30)
pin = open(pin_file).read().strip()

def get_json(path):
    return json.loads(urllib.request.urlopen(base + path, timeout=5).read())

c = open_unlocked(cdp, base, pin)
def until(expr, what, timeout=15):
    return until_in(c, expr, what, timeout)
def js(expr):
    return c.eval(expr)

until("!document.getElementById('video-section').hidden", "the Delayed video section is not shown on a gate with video")
c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
open_tab(c, "video")
until("tabs.awake", "the Video tab does not keep the screen awake", 5)
until("document.getElementById('v-status').textContent.includes('at these settings')", "the video status does not say how much the buffer holds")
print("ok: video section shown:", js("document.getElementById('v-status').textContent")[:120])

# The delayed view: pictures keep coming, each the frame captured the delay before the
# gate's clock (read from the same server's live message).
js("document.getElementById('v-show').click()")
until("video.pictures >= 10 && document.getElementById('v-delayed').naturalWidth > 0", "the delayed view shows no pictures", 20)
lags = []
for _ in range(8):
    r = urllib.request.urlopen(base + "/api/video/delayed.jpg", timeout=5)
    frame_ns = int(r.headers["X-Frame-Time-Ns"])
    now_ns = json.loads(urllib.request.urlopen(base + "/api/live", timeout=5).read())["nowMonoNs"]
    lags.append((now_ns - frame_ns) / 1e9)
    time.sleep(0.2)
# Never early; the median within a few frames of the delay (a single late sample on a
# busy machine is the view thread waiting for a core, not the delay).
median = sorted(lags)[len(lags) // 2]
if min(lags) < 1.95 or not 1.95 <= median <= 2.3 or max(lags) > 3.5:
    raise SystemExit(f"FAIL: the delayed view is not 2 s behind: {lags}")
before = js("video.pictures")
time.sleep(2)
rate = (js("video.pictures") - before) / 2
if rate < 5:
    raise SystemExit(f"FAIL: the delayed view shows {rate} pictures a second")
print(f"ok: the delayed view runs {min(lags):.2f}–{max(lags):.2f} s behind the gate's clock at {rate:.0f} pictures a second")

# The delay and rolls from the form, applied live.
js("document.getElementById('v-delay').value = '3'; document.getElementById('v-pre').value = '1.5'; "
   "document.getElementById('v-post').value = '1'; document.getElementById('v-save').click()")
until("document.getElementById('message').textContent === 'Video settings applied.'", "the video settings were not applied")
s = get_json("/api/video")
if (s["delaySeconds"], s["preRollSeconds"], s["postRollSeconds"]) != (3, 1.5, 1):
    raise SystemExit(f"FAIL: the gate runs {s!r}")
time.sleep(1.5)
lags3 = []
for _ in range(5):
    r = urllib.request.urlopen(base + "/api/video/delayed.jpg", timeout=5)
    lags3.append((json.loads(urllib.request.urlopen(base + "/api/live", timeout=5).read())["nowMonoNs"] - int(r.headers["X-Frame-Time-Ns"])) / 1e9)
    time.sleep(0.2)
lag = sorted(lags3)[2]
if min(lags3) < 2.95 or not 2.95 <= lag <= 3.3:
    raise SystemExit(f"FAIL: after choosing 3 s the view is {lags3} s behind")
# Why wait for the answer: it sets the page's message too, and the mark below must not race
# it, or "Video settings applied." can land after "Marked.".
js("document.getElementById('message').textContent = ''; "
   "document.getElementById('v-delay').value = '2'; document.getElementById('v-save').click()")
until("document.getElementById('message').textContent === 'Video settings applied.'", "the delay of 2 s was not applied")
print(f"ok: delay 3 s applied live ({lag:.2f} s behind), pre-roll 1.5 s, post-roll 1 s")

# A mark, a stopped session, and the clip it makes. The confirmation shows where the coach
# is looking: on screen beside the Mark button, wherever that is on the page.
js("document.getElementById('v-mark').scrollIntoView({block: 'center'}); document.getElementById('v-mark').click()")
until("document.getElementById('message').textContent === 'Marked.'", "the mark was not taken")
box = js("(() => { const r = document.getElementById('message').getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; })()")
if not (0 <= box[0] and box[1] <= box[2]):
    raise SystemExit(f"FAIL: the confirmation of the mark is off screen: {box}")
js("document.getElementById('v-stop').click()")
# After a session the scorer opens on its own; Skip closes it.
until("document.getElementById('sc-dialog').open && !document.getElementById('sc-setup').hidden", "the scorer did not open after the session")
js("document.getElementById('sc-close').click()")
until("!document.getElementById('sc-dialog').open", "Skip did not close the scorer")
print("ok: the scorer opened after the session and was skipped")
until("document.querySelectorAll('#v-clips .clip').length >= 1", "no clip appeared after the mark", 20)
clip = get_json("/api/video/sessions")[0]["clips"][0]
clip["seconds"] = (clip["endNs"] - clip["startNs"]) / 1e9
if not (2.3 <= clip["seconds"] <= 2.6 and clip["kind"] == "mark"):
    raise SystemExit(f"FAIL: the clip is not the 1.5 s before its mark and 1 s after: {clip!r}")
until("(() => { const i = document.querySelector('#v-clips .clip img'); return i && i.complete && i.naturalWidth > 0; })()",
      "the clip's thumbnail did not load")
print(f"ok: a mark made clip {clip['id']}: {clip['seconds']:.2f} s, {clip['frames']} frames, {clip['bytes']} bytes, with its thumbnail")

# The player: Chromium decodes the MP4, steps one frame with '.' and back with ',', speed.
js("document.querySelector('#v-clips .clip button').click()")
until("document.getElementById('v-player').open && document.getElementById('v-video').readyState >= 2",
      "Chromium did not load the clip in the player", 15)
dims = js("[document.getElementById('v-video').videoWidth, document.getElementById('v-video').videoHeight, document.getElementById('v-video').duration]")
if not (dims[0] > 0 and dims[1] > 0 and 2.2 <= dims[2] <= 2.7):
    raise SystemExit(f"FAIL: the player shows {dims!r}")
def key(k):
    c.call("Input.dispatchKeyEvent", type="keyDown", key=k, text=k)
    c.call("Input.dispatchKeyEvent", type="keyUp", key=k)
js("document.getElementById('v-video').currentTime = 1.0")
until("Math.abs(document.getElementById('v-video').currentTime - 1.0) < 0.001", "the player did not seek")
key(".")
until("Math.abs(document.getElementById('v-video').currentTime - (1.0 + 1 / video.fps)) < 0.002", "'.' did not step one frame on")
key(",")
key(",")
until("Math.abs(document.getElementById('v-video').currentTime - (1.0 - 1 / video.fps)) < 0.002", "',' did not step one frame back")
js("document.getElementById('v-speed').value = '0.25'; document.getElementById('v-speed').dispatchEvent(new Event('change'))")
until("document.getElementById('v-video').playbackRate === 0.25", "the speed did not change")
js("document.getElementById('v-play').click()")
until("!document.getElementById('v-video').paused && document.getElementById('v-video').currentTime > 1.0", "the clip does not play", 10)
where = js("document.getElementById('v-where').textContent")
print(f"ok: the player decodes the clip ({dims[0]}×{dims[1]}, {dims[2]:.2f} s), steps frames with . and , and plays at 0.25×: {where}")
# Trim and export: from 0.5 s to 1.5 s of the clip, saved as a part of its own and downloaded.
js("document.getElementById('v-video').pause(); document.getElementById('v-video').currentTime = 0.5")
until("Math.abs(document.getElementById('v-video').currentTime - 0.5) < 0.001", "the player did not seek to 0.5 s")
js("document.getElementById('v-in').click()")
js("document.getElementById('v-video').currentTime = 1.5")
until("Math.abs(document.getElementById('v-video').currentTime - 1.5) < 0.001", "the player did not seek to 1.5 s")
js("document.getElementById('v-out').click()")
until("!document.getElementById('v-trim').disabled", "Save the part is not offered with both ends set")
js("document.getElementById('v-trim').click()")
until("!document.getElementById('v-part').hidden", "the part was not saved", 20)
part_href = js("document.getElementById('v-part').getAttribute('href')")
part = urllib.request.urlopen(base + part_href, timeout=10).read()
with tempfile.NamedTemporaryFile(suffix=".mp4") as f:
    f.write(part); f.flush()
    probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                            "stream=codec_name,nb_read_frames:format=duration", "-of", "csv=p=0", f.name], capture_output=True, text=True).stdout.split()
part_frames = int(probe[0].split(",")[1]) if probe and "," in probe[0] else -1
# The frames the clip shows from 0.5 s to 1.5 s (within half a frame), read from its own
# packets: the demo's camera delivers what this busy machine keeps up with, so the clip
# may have gaps.
source = urllib.request.urlopen(base + f"/api/video/clips/{clip['id']}.mp4", timeout=10).read()
with tempfile.NamedTemporaryFile(suffix=".mp4") as f:
    f.write(source); f.flush()
    times = [float(t) for t in subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time",
                                               "-of", "csv=p=0", f.name], capture_output=True, text=True).stdout.split()]
half = 0.5 / 60
expected = sum(1 for t in times if 0.5 - half <= t <= 1.5 + half)
if not (probe and probe[0].startswith("h264,") and part_frames == expected and expected > 0):
    raise SystemExit(f"FAIL: ffprobe reads the part as {probe!r}, not h264 with the clip's {expected} frames from 0.5 s to 1.5 s")
js("document.getElementById('v-close').click()")
until("[...document.querySelectorAll('#v-clips .clip span')].some(s => s.textContent.startsWith('Part '))", "the part is not in the clip list")
print(f"ok: 0.5–1.5 s trimmed out of the clip and downloaded: ffprobe {probe}")

# The download is an MP4 FFmpeg reads whole.
href = js("document.getElementById('v-download').getAttribute('href')")
data = urllib.request.urlopen(base + href, timeout=10).read()
with tempfile.NamedTemporaryFile(suffix=".mp4") as f:
    f.write(data); f.flush()
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=codec_name,nb_read_frames", "-of", "csv=p=0", f.name], capture_output=True, text=True).stdout.strip()
if out != f"h264,{clip['frames']}":
    raise SystemExit(f"FAIL: ffprobe reads the download as {out!r}, not h264 with {clip['frames']} frames")
print(f"ok: the download is an MP4 of {len(data)} bytes; ffprobe: {out}")

# Archery scoring of the session, from its Score button: the 40 cm face, a 5.5 mm shaft.
# Markers are dragged with the mouse (pointer events), positions are turned into
# millimetres by the page and scored by the gate.
session_id = clip["session"]
js("document.querySelector('#v-clips .v-session button').click()")
until("document.getElementById('sc-dialog').open && !document.getElementById('sc-setup').hidden", "the Score button did not open the scorer")
js("document.getElementById('sc-face-pick').value = 'wa40'; document.getElementById('sc-bow').value = 'recurve'; "
   "document.getElementById('sc-diameter').value = '5.5'; document.getElementById('sc-per-end').value = '3'; "
   "document.getElementById('sc-begin').click()")
until("!document.getElementById('sc-board').hidden && document.querySelectorAll('#sc-face .marker').length === 1", "the 40 cm face was not drawn")
px_per_mm = js("document.getElementById('sc-face').getScreenCTM().a")
def client_xy(x_mm, y_mm):
    return js(f"(() => {{ const p = new DOMPoint({x_mm}, {-y_mm}).matrixTransform(document.getElementById('sc-face').getScreenCTM()); return [p.x, p.y]; }})()")
def marker_xy(n):
    return js(f"(() => {{ const r = document.querySelector('#sc-face .marker[data-n=\"{n}\"] circle').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()")
def drag(frm, to, steps=8):
    c.call("Input.dispatchMouseEvent", type="mouseMoved", x=frm[0], y=frm[1])
    c.call("Input.dispatchMouseEvent", type="mousePressed", x=frm[0], y=frm[1], button="left", buttons=1, clickCount=1)
    for i in range(1, steps + 1):
        c.call("Input.dispatchMouseEvent", type="mouseMoved", x=frm[0] + (to[0] - frm[0]) * i / steps,
               y=frm[1] + (to[1] - frm[1]) * i / steps, button="left", buttons=1)
    c.call("Input.dispatchMouseEvent", type="mouseReleased", x=to[0], y=to[1], button="left", buttons=0, clickCount=1)
def card():
    return get_json(f"/api/video/sessions/{session_id}/score")
# Three arrows: the centre; a line cutter, centred 1.4 mm outside the 10 ring's line (20 mm)
# so its shaft (2.75 mm radius) still cuts it, scoring 10; one clear of the line, 9.
placed = [((0, 0), "X"), ((21.4, 0), "10"), ((0, -24.2), "9")]
for i, ((x, y), label) in enumerate(placed):
    drag(marker_xy(0), client_xy(x, y))
    until(f"document.querySelectorAll('#sc-face .marker').length === {i + 2}", f"arrow {i + 1} was not placed", 10)
    a = card()["arrows"][i]
    err_px = ((a["x"] - x) ** 2 + (a["y"] - y) ** 2) ** 0.5 * px_per_mm
    if err_px > 0.75 or a["score"] != label:
        raise SystemExit(f"FAIL: arrow {i + 1} dragged to ({x}, {y}) mm is stored at ({a['x']:.2f}, {a['y']:.2f}) ({err_px:.2f} px off) scoring {a['score']}, not {label}")
print(f"ok: three markers dragged onto the 40 cm face ({px_per_mm:.2f} px/mm): X, a line cutter 1.4 mm outside the 10 line scoring 10, and a 9")
# Drag arrow 3 to the centre, undo it back, and record a miss.
drag(marker_xy(3), client_xy(0, -5))
until("document.querySelector('#sc-face .marker[data-n=\"3\"] text').textContent === '3 · X'", "dragging arrow 3 did not rescore it")
js("document.getElementById('sc-undo').click()")
until("document.querySelector('#sc-face .marker[data-n=\"3\"] text').textContent === '3 · 9'", "undo did not put arrow 3 back")
js("document.getElementById('sc-miss').click()")
until("document.querySelectorAll('#sc-face .marker').length === 5", "the miss was not recorded")
sc = card()
sheet = [e["scores"] for e in sc["ends"]]
if sheet != [["X", "10", "9"], ["M"]] or sc["total"] != 29 or sc["maximum"] != 40:
    raise SystemExit(f"FAIL: the sheet is {sheet}, total {sc['total']} of {sc['maximum']}")
rows = js("[...document.querySelectorAll('#sc-sheet tbody tr')].map(r => [...r.cells].map(c => c.textContent.trim()).join(' '))")
if rows != ["1 X 10 9 29 29", "2 M 0 29"]:
    raise SystemExit(f"FAIL: the page's sheet reads {rows}")
total_text = js("document.getElementById('sc-total').textContent")
print(f"ok: arrow 3 dragged to X and undone to 9, a miss recorded; sheet {rows}, {total_text}")
# Tapping arrow 1 plays its shot: the session's first marked clip.
arrow_clip = sc["arrows"][0]["clip"]
if arrow_clip != clip["id"]:
    raise SystemExit(f"FAIL: arrow 1 is linked to {arrow_clip!r}, not the session's first clip {clip['id']}")
xy = marker_xy(1)
drag(xy, xy, steps=1)
until(f"document.getElementById('v-player').open && video.playing === {json.dumps(arrow_clip)}", "tapping arrow 1 did not play its shot")
js("document.getElementById('v-close').click()")
js("window.scrollTo(0, 0)")
time.sleep(0.3)
img = c.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
open(shot_dir + "/archery.png", "wb").write(base64.b64decode(img["data"]))
js("document.getElementById('sc-close').click()")
until("document.querySelector('#v-clips .v-session h4').textContent.includes('score 29 of 40')", "the session list does not show the score")
listed = js("document.querySelector('#v-clips .v-session h4').textContent")
print(f"ok: tapping arrow 1 played clip {arrow_clip}; the session list shows {listed!r}")

# Quick save, then the screenshot, then delete both ticked clips.
js("document.getElementById('v-quick').click()")
until("[...document.querySelectorAll('#v-clips .clip span')].some(s => s.textContent.startsWith('Buffer '))", "the buffer was not saved as a clip", 20)
js("window.scrollTo(0, document.getElementById('video-section').offsetTop)")
time.sleep(0.5)
img = c.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
open(shot, "wb").write(base64.b64decode(img["data"]))
heights = tour_tabs(c, shot_dir + "/screenshots", only=["video"])
print(f"ok: the Video tab by touch, {heights['video']} phone screens tall; docs/screenshots/video.png")
c.call("Emulation.setDeviceMetricsOverride", width=412, height=1500, deviceScaleFactor=2, mobile=True)
js("document.querySelectorAll('#v-clips input[type=checkbox]').forEach(t => { t.checked = true; t.dispatchEvent(new Event('change')); })")
until("!document.getElementById('v-delete').disabled", "ticking clips did not offer Delete")
js("document.getElementById('v-delete').click()")
until("document.querySelectorAll('#v-clips .clip').length === 0", "the ticked clips were not deleted", 10)
left = sum(len(s["clips"]) for s in get_json("/api/video/sessions"))
if left:
    raise SystemExit(f"FAIL: {left} clips are still listed after deleting them")
print(f"ok: the buffer saved as a clip; every clip ticked and deleted; screenshot {shot}")
# The scored session outlives its clips; Delete session (two taps) removes it with its score.
if session_id not in [x["id"] for x in get_json("/api/video/sessions")]:
    raise SystemExit("FAIL: the scored session went with its clips")
delete = f"[...document.querySelectorAll('#v-clips .v-session')].find(d => d.textContent.includes('score 29')).querySelector('button.stop')"
until(f"!!({delete})", "the scored session offers no Delete session")
js(delete + ".click()")
until(delete + ".textContent === 'Tap again to delete'", "the first tap did not ask for a second")
js(delete + ".click()")
until(f"!document.getElementById('v-clips').textContent.includes('score 29')", "the session was not deleted from the list", 10)
if session_id in [x["id"] for x in get_json("/api/video/sessions")]:
    raise SystemExit("FAIL: the deleted session is still listed")
print(f"ok: the scored session {session_id} was kept without clips, then deleted whole")

# The delay mode switched off in the settings and on again: the section goes and comes back.
until("!document.getElementById('set-video-row').hidden && document.getElementById('set-video').checked",
      "the settings do not show the delay mode as on")
js("document.getElementById('set-video').checked = false")
if (said := save_settings(c)) != "Settings saved and applied.":
    raise SystemExit(f"FAIL: turning the delay mode off was not applied: {said!r}")
until("document.getElementById('video-section').hidden", "the Delayed video section stayed after the mode was turned off", 10)
if get_json("/api/settings")["editable"].get("delayedVideo") is not False:
    raise SystemExit("FAIL: the gate still says the delay mode is on")
try:
    urllib.request.urlopen(base + "/api/video", timeout=5)
    raise SystemExit("FAIL: /api/video answers with the mode off")
except urllib.error.HTTPError as e:
    if e.code != 404:
        raise SystemExit(f"FAIL: /api/video answered {e.code} with the mode off")
js("document.getElementById('set-video').checked = true")
if (said := save_settings(c)) != "Settings saved and applied.":
    raise SystemExit(f"FAIL: turning the delay mode on was not applied: {said!r}")
until("!document.getElementById('video-section').hidden && document.getElementById('v-status').textContent.includes('at these settings')",
      "the Delayed video section did not come back", 15)
print("ok: the delay mode switched off in the settings (section gone, /api/video 404) and on again")
