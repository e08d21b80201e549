# SPDX-License-Identifier: Apache-2.0
# Browser test of run videos over `demo --web --lone-gate --video-delay 2` (real video
# thread, runs stored in SQLite): a run timed with video on has the gate's clip from its
# pre-roll to its post-roll; the run's page downloads it with the times drawn on it, and
# the MP4 decodes (ffprobe) with the running clock before the finish and the run's time
# in yellow after it. Then a phone video (portrait, with sound, stored sideways with a
# display matrix as phones do) is chosen in the page's file input and uploaded, its start
# frame stepped to with the frame buttons and marked, and it downloads upright with the
# same overlay. A file that is not a video is refused with what to do; the phone video is
# deleted from the page and the run with its videos.
# Usage: browser_run_video.py PORT CDP_PORT PIN_FILE
import json, os, shutil, subprocess, sys, tempfile, time, urllib.error, urllib.request
sys.path.insert(0, "scripts")
from cdp import open_unlocked, until as until_in, wait_http

port, cdp, pin_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
base = f"http://127.0.0.1:{port}"
wait_http(base + "/api/results", 30)
pin = open(pin_file).read().strip()
work = tempfile.mkdtemp(prefix="sprintgate-run-video-")

def get_json(path):
    return json.loads(urllib.request.urlopen(base + path, timeout=10).read())

def probe(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                          "stream=codec_name,width,height,nb_read_frames", "-of", "csv=p=0", path],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"FAIL: ffprobe cannot read {path}: {out.stderr}")
    return out.stdout.strip()

def yellow_pixels(path, t, w, h):
    """Pixels of the drawn time's yellow (#ffd34d) in the lower-left quarter of the frame at `t` s."""
    raw = subprocess.run(["ffmpeg", "-v", "error", "-ss", f"{t:.3f}", "-i", path, "-frames:v", "1", "-f", "rawvideo",
                          "-pix_fmt", "rgb24", "-"], capture_output=True).stdout
    if len(raw) != w * h * 3:
        raise SystemExit(f"FAIL: no frame at {t} s of {path}")
    n = 0
    for y in range(h // 2, h):
        row = raw[y * w * 3:(y * w + w // 2) * 3]
        for x in range(0, len(row), 3):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if r > 200 and 170 < g < 240 and b < 140:
                n += 1
    return n

# A run the gate timed with video on, its clip kept. A run started within a pre-roll of the
# mode being switched on (the previous script switches it off and on) has a clip marked
# truncatedStart, as the ring held less than the pre-roll: the next run's is whole. A run
# still in its post-roll when the mode went off was cut with what the ring held then: only
# clips saved since this script began (the mode on throughout) are taken.
began = time.time()
deadline, run, clip = time.time() + 60, None, None
while time.time() < deadline and clip is None:
    for v in get_json("/api/results"):
        d = get_json(f"/api/results/{v['run']['id']}")
        gate = [x for x in d.get("videos") or [] if x["source"] == "gate" and not x.get("truncatedStart") and x["savedAt"] >= began]
        if gate and d["run"]["seconds"] > 0:
            run, clip = d["run"], gate[0]
            break
    time.sleep(1)
if clip is None:
    raise SystemExit("FAIL: no run timed with video on has a clip")
# (The rolls may have been changed on the page since the run: the clip is checked against
# the range they take, 0.5 to 2 s here, not today's values.)
start, after = clip["startSeconds"], clip["seconds"] - clip["startSeconds"] - run["seconds"]
if not (0.45 <= start <= 2.05 and 0.45 <= after <= 2.05):
    raise SystemExit(f"FAIL: run {run['id']}'s clip does not span a pre-roll before its start and a post-roll after its finish: {clip}")
print(f"ok: run {run['id']} ({run['seconds']:.3f} s) has the gate's clip: start at {clip['startSeconds']:.3f} s, "
      f"{clip['seconds']:.2f} s long, {clip['frames']} frames")

c = open_unlocked(cdp, base, pin)
def until(expr, what, timeout=15):
    return until_in(c, expr, what, timeout)
def js(expr):
    return c.eval(expr)

js(f"showRun({run['id']})")
until("!!document.getElementById('run-video-download-gate')", "the run's page offers no download with times")
def download(source):
    """Presses the page's download with times for `source`, waits for it, and saves the same
    drawn file (made once, so the same bytes) for ffprobe."""
    js(f"document.getElementById('run-video-download-{source}').click()")
    until("document.getElementById('run-video-status').textContent === 'Downloaded with the times on it.'",
          f"the {source} video with times did not download", 60)
    path = os.path.join(work, f"{source}-drawn.mp4")
    with open(path, "wb") as f:
        f.write(urllib.request.urlopen(base + f"/api/results/{run['id']}/videos/{source}/drawn", timeout=60).read())
    return path

ticked = js("[...document.querySelectorAll('#run-video input[name=overlay]:checked')].map(c => c.value).join(',')")
if ticked != "time,splits,speed,type,athlete":
    raise SystemExit(f"FAIL: the parts ticked at first are {ticked!r}, not the gate's defaults (all)")
drawn = download("gate")
w, h = clip["width"], clip["height"]
got = probe(drawn)
if got != f"h264,{w},{h},{clip['frames']}":
    raise SystemExit(f"FAIL: the drawn clip is {got}, expected h264,{w},{h},{clip['frames']}")
finish = clip["startSeconds"] + run["seconds"]
before, after = yellow_pixels(drawn, finish - 0.15, w, h), yellow_pixels(drawn, min(clip["seconds"] - 0.05, finish + 0.3), w, h)
if before > 20 or after < 150:
    raise SystemExit(f"FAIL: the run's time in yellow is not drawn from the finish on ({before} yellow pixels before, {after} after)")
print(f"ok: downloaded with times from the page: {got} (ffprobe), the run's time drawn from the finish "
      f"({before} → {after} yellow pixels)")

# A phone's video: portrait, stored sideways with a display matrix, with sound.
# (FFmpeg writes the display matrix when copying, not when encoding: two steps.)
phone, flat = os.path.join(work, "phone.mp4"), os.path.join(work, "flat.mp4")
subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=640x360:rate=30", "-f", "lavfi", "-i", "sine=frequency=440",
                "-t", "4", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", flat], check=True)
subprocess.run(["ffmpeg", "-v", "error", "-i", flat, "-c", "copy", "-metadata:s:v:0", "rotate=90", phone], check=True)
doc = c.call("DOM.getDocument")["root"]["nodeId"]
node = c.call("DOM.querySelector", nodeId=doc, selector="#run-video-file")["nodeId"]
c.call("DOM.setFileInputFiles", files=[phone], nodeId=node)
js("document.getElementById('run-video-upload').click()")
until("document.getElementById('run-video-status').textContent.startsWith('Uploaded')", "the phone video was not uploaded", 30)
videos = get_json(f"/api/results/{run['id']}")["videos"]
rec = [x for x in videos if x["source"] == "phone"]
if not rec or (rec[0]["width"], rec[0]["height"]) != (360, 640) or rec[0].get("startSeconds") is not None:
    raise SystemExit(f"FAIL: the uploaded video is recorded as {rec}")
# Not marked yet: the download says what to do.
try:
    urllib.request.urlopen(base + f"/api/results/{run['id']}/videos/phone/drawn", timeout=30)
    raise SystemExit("FAIL: an unmarked phone video was drawn")
except urllib.error.HTTPError as e:
    reason = json.loads(e.read())["error"]["reason"]
    if e.code != 409 or "mark the frame where" not in reason:
        raise SystemExit(f"FAIL: an unmarked phone video answered {e.code}: {reason}")
# Watch it, step to 1 s with the frame buttons, and mark the start there.
js("[...document.querySelectorAll('#run-video button')].find(b => b.textContent === 'Watch the phone video').click()")
until("document.getElementById('run-video-player').readyState >= 1", "the phone video does not load in the player", 20)
js("document.getElementById('run-video-player').currentTime = 0.9")
until("Math.abs(document.getElementById('run-video-player').currentTime - 0.9) < 0.01", "the player did not seek")
for _ in range(3):
    js("[...document.querySelectorAll('#run-video button')].find(b => b.textContent === 'Frame ▶').click()")
until("Math.abs(document.getElementById('run-video-player').currentTime - 1.0) < 0.01", "three frame steps did not reach 1.0 s")
js("document.getElementById('run-video-start').click()")
until("document.getElementById('run-video').textContent.includes('Start at 1.000 s of the video.')", "the start was not marked at 1.000 s")
phone_drawn = download("phone")
got = probe(phone_drawn)
codec, pw, ph, frames = got.split(",")
# Upright (portrait), from 3 s before the start (the video's own start) to 3 s after the finish.
expected_frames = round(min(4.0, 1.0 + run["seconds"] + 3.0) * 30)
if (codec, pw, ph) != ("h264", "360", "640") or abs(int(frames) - expected_frames) > 2:
    raise SystemExit(f"FAIL: the phone video with times is {got}, expected h264,360,640,~{expected_frames}")
# (The test picture has yellow of its own: count what the overlay adds, FFmpeg turning the
# original upright for the comparison.)
t_after = min(3.9, 1.0 + run["seconds"] + 0.3)
after = yellow_pixels(phone_drawn, t_after, 360, 640) - yellow_pixels(phone, t_after, 360, 640)
if after < 100:
    raise SystemExit(f"FAIL: the run's time is not drawn on the phone video after the finish ({after} yellow pixels added)")
print(f"ok: a portrait phone video uploaded from the page, its start stepped to and marked at 1.000 s, "
      f"downloaded upright with the times: {got} (ffprobe), {after} yellow pixels added after the finish")

# Not a video: refused, with what to do; the phone video already there stays.
req = urllib.request.Request(base + f"/api/results/{run['id']}/videos/phone", data=b"lane 4, 10.93\n" * 100, method="POST",
                             headers={"X-Gate-PIN": pin, "Content-Type": "video/mp4"})
try:
    urllib.request.urlopen(req, timeout=30)
    raise SystemExit("FAIL: a text file was taken as a video")
except urllib.error.HTTPError as e:
    reason = json.loads(e.read())["error"]["reason"]
    if e.code != 400 or "not a video" not in reason:
        raise SystemExit(f"FAIL: a text upload answered {e.code}: {reason}")
if not [x for x in get_json(f"/api/results/{run['id']}")["videos"] if x["source"] == "phone"]:
    raise SystemExit("FAIL: a refused upload removed the phone video")
print(f"ok: a text file uploaded as a video is refused: {reason}")

# The phone video deleted from the page (two taps); the gate's clip stays.
js("document.getElementById('run-video-delete-phone').click()")
until("document.getElementById('run-video-delete-phone').textContent === 'Tap again to delete'", "the first tap did not ask for a second")
js("document.getElementById('run-video-delete-phone').click()")
until("!document.getElementById('run-video-delete-phone') && !!document.getElementById('run-video-download-gate')",
      "the phone video was not deleted from the run's page")
if [x["source"] for x in get_json(f"/api/results/{run['id']}")["videos"]] != ["gate"]:
    raise SystemExit("FAIL: the gate still lists the deleted phone video, or lost the gate's clip")
print("ok: the phone video deleted from the run's page with two taps; the gate's clip stays")

# Deleting the run deletes its videos: a later run given the same id never shows them.
req = urllib.request.Request(base + f"/api/results/{run['id']}", method="DELETE", headers={"X-Gate-PIN": pin})
urllib.request.urlopen(req, timeout=10)
for source in ("gate", "phone"):
    try:
        urllib.request.urlopen(base + f"/api/results/{run['id']}/videos/{source}", timeout=10)
        raise SystemExit(f"FAIL: run {run['id']}'s {source} video outlived the run")
    except urllib.error.HTTPError as e:
        if e.code != 404:
            raise SystemExit(f"FAIL: a deleted run's {source} video answered {e.code}")
print(f"ok: deleting run {run['id']} deleted its gate and phone videos")
shutil.rmtree(work, ignore_errors=True)
