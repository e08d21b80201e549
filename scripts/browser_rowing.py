# SPDX-License-Identifier: Apache-2.0
# Browser test of the rowing hub over `demo --web --lone-gate --rowing 8 --rowing-speed S`:
# eight synthetic PM5s row 2000 m pieces into the hub (erg 2 sends every 37th stroke cut
# short, erg 3 goes out of reach for a while). The page's grid fills with eight tiles that
# update as the ergs row; erg 3's tile is shown stale while it is out of reach and its gap
# is counted; the race view orders the ergs by distance. An athlete is put on erg 1 from
# its tile, and "500 m" is set on all ergs from the page with the PIN: the hub writes the
# workout as CSAFE frames, each synthetic erg reads them back and rows 500 m. Erg 1's
# finished session is listed under the athlete with the workout's name and 500 m, its CSV
# and TCX exports are read. Then 2 × 100 m with rests is set: erg 1's tile shows each
# interval and the rest, and its session is one with strokes in both intervals. The
# wall-screen view is shown last. Prints how long a
# notification took from the hub to its tile (p50, p99) and saves docs/rowing.png.
# With --latency SECONDS it only watches the board that long and prints that figure (the
# benchmark: scripts/rowing-latency).
# Usage: browser_rowing.py PORT CDP_PORT PIN_FILE SCREENSHOT_DIR [--latency SECONDS]
import base64, json, sys, time, urllib.parse, urllib.request
sys.path.insert(0, "scripts")
from cdp import fail_on_errors, open_tab, open_unlocked, tap, tour_tabs, wait_http, watch_errors

port, cdp, pin_file, shot_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
watch = float(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--latency" else None
base = f"http://127.0.0.1:{port}"


def get(path):
    return urllib.request.urlopen(base + path, timeout=10).read()


wait_http(base + "/api/rowing", 30)
c = open_unlocked(cdp, base, open(pin_file).read().strip())
c.call("Emulation.setDeviceMetricsOverride", width=412, height=900, deviceScaleFactor=2, mobile=True)


js = c.eval
until = watch_errors(c)
until("!document.getElementById('rowing-section').hidden", "the ergs' section is not shown on a hub")
# The hub's own tab, opened from the bar with a finger.
c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
open_tab(c, "ergs")
until("document.querySelectorAll('#r-grid .erg-tile').length === 8", "the grid did not fill with 8 tiles")
print("ok: 8 tiles on the board:", js("document.getElementById('r-source').innerText"))


def latency(what):
    lat = sorted(js("rowing.latencies"))
    if len(lat) < 200:
        raise SystemExit(f"FAIL: only {len(lat)} tile updates measured")
    p50, p99 = lat[len(lat) // 2], lat[int(len(lat) * 0.99)]
    print(f"ok: notification to tile over {len(lat)} updates ({what}): p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms")


if watch:
    time.sleep(watch)
    latency("8 ergs, the latest 2000 tile changes")
    sys.exit(0)

# Each tile updates as its erg rows.
def distances():
    return js("[...document.querySelectorAll('#r-grid .erg-tile .distance')].map(e => parseFloat(e.textContent) || 0)")
first = distances()
js(f"window.firstDistances = {json.dumps(first)}")
until("[...document.querySelectorAll('#r-grid .erg-tile .distance')].every((e, i) => (parseFloat(e.textContent) || 0) > firstDistances[i])",
      f"not every tile's distance grew from {first}", 15)
print("ok: every tile updates:", first, "then", distances())
for k in ["pace", "rate", "watts", "hr", "df"]:
    v = js(f"document.querySelector('#erg-1 .{k}').textContent")
    if "—" in v:
        raise SystemExit(f"FAIL: erg 1's {k} is not shown: {v!r}")
until("!!document.querySelector('#erg-1 polyline')", "erg 1's force curve is not drawn")

# Erg 3 goes out of reach mid-piece: its tile is marked stale, and its gap counted after.
js("window.sawStale = !!document.querySelector('#erg-3.stale'); new MutationObserver(() => { "
   "if (document.querySelector('#erg-3.stale')) window.sawStale = true }).observe(document.getElementById('r-grid'), {childList: true, subtree: true})")
until("window.sawStale", "erg 3 was never shown stale while out of reach", 60)
until("document.querySelector('#erg-3 .state') && /1 gap/.test(document.querySelector('#erg-3 .state').textContent) && "
      "!document.querySelector('#erg-3.stale')", "erg 3 did not come back with its gap counted", 30)
print("ok: erg 3 shown stale while out of reach, then back:", js("document.querySelector('#erg-3 .state').textContent"))
until("/dropped/.test(document.querySelector('#erg-2 .state').textContent)", "erg 2's malformed stroke data is not counted", 60)

# The race view: furthest first.
js("document.getElementById('r-view').click()")
until("document.querySelectorAll('#r-race li').length === 8", "the race view does not show 8 ergs")
# Erg 3's tile comes back on its reconnection, and its distance with its next status (a tenth
# of a second later); until then the race view places it by the distance it last reported.
race = "[...document.querySelectorAll('#r-race li')].map(li => Number(li.dataset.erg))"
try:
    until(f"{race}.every((e, i, a) => i === 0 || a[i - 1] < e)", "", 10)
except SystemExit:
    raise SystemExit(f"FAIL: the race order is {js(race)}; erg 1 rows fastest, then 2, ...")
order = js(race)
print("ok: race view in order:", order)
js("document.getElementById('r-view').click()")

# An athlete on erg 1, from its tile (the page asks for the name).
js("window.prompt = () => 'Ada Lovelace'; document.querySelector('#erg-1 .who').click()")
until("document.querySelector('#erg-1 .who').textContent === 'Ada Lovelace'", "the athlete did not appear on erg 1's tile")
print("ok: Ada Lovelace on erg 1")

# 500 m on all ergs from the page. Every erg is mid-piece: the page asks first, and a "no"
# sets nothing.
before = js("document.getElementById('r-workout').textContent")
js("window.asked = []; window.confirm = (m) => { asked.push(m); return false };"
   "document.getElementById('r-kind').value = 'distance'; document.getElementById('r-kind').dispatchEvent(new Event('change'));"
   "document.getElementById('r-amount').value = '500'; document.getElementById('r-set').click()")
time.sleep(1)
asked = js("window.asked")
if len(asked) != 1 or "ergs are rowing a piece" not in asked[0]:
    raise SystemExit(f"FAIL: setting a workout over pieces in progress asked {asked}")
if js("document.getElementById('r-workout').textContent") != before:
    raise SystemExit("FAIL: a workout was set though the coach said no")
print("ok: asked before ending the pieces in progress:", asked[0])
js("window.confirm = (m) => { asked.push(m); return true }; document.getElementById('r-set').click()")
until("/Set: 500 m on 8 of 8 ergs/.test(document.getElementById('r-workout').textContent)", "the workout was not taken by all 8 ergs")
print("ok:", js("document.getElementById('r-workout').textContent"))
until("parseFloat(document.querySelector('#erg-1 .distance').textContent) < 200", "erg 1 did not start the new piece", 15)
until("!!document.querySelector('#erg-1.finished') && parseFloat(document.querySelector('#erg-1 .distance').textContent) === 500",
      "erg 1 did not finish 500 m", 60)
print("ok: erg 1 rowed the 500 m set from the page")

# Erg 1's session, stored under the athlete with the workout's name, found on the page by her name.
js("document.getElementById('r-h-athlete').value = 'Ada Lovelace'")
# (Show is pressed again until the session is stored: each look shows the last press's answer.)
until("(() => { document.getElementById('r-h-go').click(); return true; })() && [...document.querySelectorAll('#r-sessions li')].some(li => /Ada Lovelace/.test(li.textContent) && /500 m ·/.test(li.textContent) && !/not finished/.test(li.textContent))",
      "erg 1's finished session is not listed", 20)
js("document.getElementById('r-h-athlete').value = ''; document.getElementById('r-h-go').click()")
sessions = json.loads(get("/api/rowing/sessions?athlete=" + urllib.parse.quote("Ada Lovelace")))
done = [s for s in sessions if s["workout"] == "500 m" and s.get("summary")]
if len(done) != 1 or abs(done[0]["summary"]["distance"] - 500) > 0.01:
    raise SystemExit(f"FAIL: Ada Lovelace's sessions: {sessions}")
s = done[0]
detail = json.loads(get(f"/api/rowing/sessions/{s['id']}"))
counts = [st["stroke"] for st in detail["strokes"]]
if counts != list(range(1, len(counts) + 1)) or len(counts) != s["strokes"]:
    raise SystemExit(f"FAIL: the session's strokes are not 1..n once each: {counts}")
csv = get(f"/api/rowing/sessions/{s['id']}/export.csv").decode()
tcx = get(f"/api/rowing/sessions/{s['id']}/export.tcx").decode()
if csv.count("\n") < len(counts) or "<TrainingCenterDatabase" not in tcx:
    raise SystemExit("FAIL: the session's exports are incomplete")
print(f"ok: session {s['id']}: {s['strokes']} strokes, {s['summary']['distance']} m, average {s['summary']['averagePace']} s/500 m; CSV and TCX read")
# The 2000 m pieces cut short by the new workout are kept, not finished.
cut = [x for x in json.loads(get("/api/rowing/sessions")) if x["workout"] == "" and not x.get("summary")]
if len(cut) < 8:
    raise SystemExit(f"FAIL: {len(cut)} cut-short 2000 m pieces stored, 8 expected")

# Intervals from the page: 2 × 100 m with 30 s rest. Erg 1's tile shows the interval and
# the rest; its session is one, with strokes in both intervals.
js("document.getElementById('r-kind').value = 'intervals'; document.getElementById('r-kind').dispatchEvent(new Event('change'));"
   "document.getElementById('r-amount').value = '100'; document.getElementById('r-count').value = '2';"
   "document.getElementById('r-rest').value = '30'; document.getElementById('r-set').click()")
until("/Set: 2 × 100 m .* on 8 of 8 ergs/.test(document.getElementById('r-workout').textContent)", "the intervals were not taken by all 8 ergs")
workout = js("document.getElementById('r-workout').textContent")
until("/^interval 1/.test(document.querySelector('#erg-1 .state').textContent)", "erg 1's tile does not show interval 1", 15)
until("/^rest after interval 1/.test(document.querySelector('#erg-1 .state').textContent) && !!document.querySelector('#erg-1.resting')",
      "erg 1's tile does not show its rest", 30)
until("/^interval 2/.test(document.querySelector('#erg-1 .state').textContent)", "erg 1's tile does not show interval 2", 30)
until("!!document.querySelector('#erg-1.finished')", "erg 1 did not finish its intervals", 60)
name = workout.split("Set: ", 1)[1].split(" on 8 of", 1)[0]
def intervals_done():
    got = [x for x in json.loads(get("/api/rowing/sessions?athlete=" + urllib.parse.quote("Ada Lovelace"))) if x["workout"] == name]
    return got if got and got[0].get("summary") else None
deadline = time.time() + 20
while not intervals_done() and time.time() < deadline:
    time.sleep(0.3)
got = intervals_done()
if not got or len(got) != 1 or abs(got[0]["summary"]["distance"] - 200) > 0.01:
    raise SystemExit(f"FAIL: erg 1's intervals are not one finished session of 200 m: {got}")
detail = json.loads(get(f"/api/rowing/sessions/{got[0]['id']}"))
if sorted({st["interval"] for st in detail["strokes"]}) != [1, 2]:
    raise SystemExit(f"FAIL: the intervals' strokes are not in intervals 1 and 2: {[st['interval'] for st in detail['strokes']]}")
print(f"ok: {name} set from the page; erg 1's tile showed each interval and the rest; one session of {got[0]['strokes']} strokes in 2 intervals")

# Notification to tile: what the page measured (the ergs row faster than real time here).
latency("8 ergs rowing faster than real time")

# The Ergs tab on a phone, 360 x 800 and at 1280 x 800: nothing sideways, 44 px targets.
heights = tour_tabs(c, f"{shot_dir}/screenshots", only=["ergs"])
n_sessions = len(json.loads(get("/api/rowing/sessions")))
listed = js("document.querySelectorAll('#r-sessions li:not(:has(#r-more))').length")
if n_sessions <= 5:
    raise SystemExit(f"FAIL: only {n_sessions} erg sessions stored to page through")
if listed != 5 or not js("!!document.getElementById('r-more')"):
    raise SystemExit(f"FAIL: {listed} of {n_sessions} erg sessions listed at first, or no Show more")
tap(c, "#r-more")
until(f"document.querySelectorAll('#r-sessions li:not(:has(#r-more))').length === {min(10, n_sessions)}", "Show 5 more did not list the next five")
print(f"ok: the Ergs tab by touch, {heights['ergs']} phone screens tall with {n_sessions} sessions stored (5 listed, then 5 more); "
      "docs/screenshots/ergs.png")
# The wall screen: only the tiles.
js("document.getElementById('r-wall').click()")
until("getComputedStyle(document.querySelector('header')).display === 'none' && document.getElementById('r-grid').offsetHeight > 0",
      "the wall screen does not show the tiles alone")
c.call("Emulation.setDeviceMetricsOverride", width=1280, height=720, deviceScaleFactor=1, mobile=False)
time.sleep(0.5)
img = c.call("Page.captureScreenshot", format="png")
open(f"{shot_dir}/rowing.png", "wb").write(base64.b64decode(img["data"]))
js("document.getElementById('r-wall').click()")
fail_on_errors(c)
print("ok: wall screen; docs/rowing.png saved")
