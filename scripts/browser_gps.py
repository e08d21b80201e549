# SPDX-License-Identifier: Apache-2.0
# Browser test of the GPS acceleration timer over `demo --web --lone-gate --gps PORT`: a
# real gpsd, started and fed by scripts/gps/fake-feed (gpsfake's own library), plays a
# noise-free standing start at 10 Hz (Tests/GPSReplays/drives/standing-start-10hz.nmea).
# The page's GPS section says gpsd has no receiver before the feed, then shows the 3D fix,
# the timer armed, running (live speed, elapsed time and distance, milestones filling in)
# and complete, the milestones matching the API's and the drive's truth; the in-car view
# hides the rest of the page; the units switch. Saves docs/gps.png and docs/gps-in-car.png
# (360 x 800), and docs/gps-garage.png (the garage with the vehicle). The garage: a vehicle added in the page's form with the PIN becomes the
# default and active one, the run is stored under it, the garage shows its run count and
# best, the runs list sorts by a milestone, and the run is deleted from the page.
# The vehicle's photo is chosen in the form and shown in the garage, scaled to 800 pixels.
# Usage: browser_gps.py PORT CDP_PORT GPS_PORT SCREENSHOT_DIR PIN_FILE
import base64, json, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, "scripts")
from cdp import gps_feed, open_page, open_tab, play, stop_feed, tour_tabs, until as until_in, wait_http

port, cdp, gps_port, shot_dir, pin_file = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
base = f"http://127.0.0.1:{port}"
drive = "Tests/GPSReplays/drives/standing-start-10hz.nmea"
# The drive's truth, from its header.
truth = {}
for line in open(drive):
    if line.startswith("# 0-60 mph"):
        parts = line[2:].split(",")
        truth["0-60 mph"] = float(parts[0].split()[2])
        truth["1/4 mile"] = float(parts[1].split()[2])

feed = gps_feed(gps_port, drive, 0.01)
try:
    wait_http(base + "/api/gps", 30)
    c = open_page(cdp, base + "/")
    c.call("Emulation.setDeviceMetricsOverride", width=360, height=800, deviceScaleFactor=2, mobile=True)

    def until(expr, what, timeout=20):
        return until_in(c, expr, what, timeout)

    def js(expr):
        return c.eval(expr)

    def shoot(name):
        js("window.scrollTo(0, document.getElementById('gps-section').offsetTop)")
        time.sleep(0.3)
        img = c.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        open(f"{shot_dir}/{name}", "wb").write(base64.b64decode(img["data"]))

    until("!document.getElementById('gps-section').hidden", "the GPS section is not shown on a gate with [gps]")
    c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
    open_tab(c, "gps")
    until("document.getElementById('g-lock').textContent.includes('plug the GPS receiver in')",
          "the page does not say gpsd has no receiver")
    print("ok: before the feed the page says:", js("document.getElementById('g-lock').textContent"))
    # The garage: a vehicle added in the form with the PIN.
    pin = open(pin_file).read().strip()
    js(f"document.getElementById('pin').value = '{pin}'; document.getElementById('btn-pin').click()")
    until("document.getElementById('pin-state').textContent === 'unlocked'", "the PIN was not accepted")
    js("document.getElementById('g-garage').click()")
    until("document.getElementById('garage-dialog').open", "the garage did not open", 5)
    for k, v in [("name", "Blue Golf"), ("year", "2019"), ("make", "VW"), ("model", "Golf"), ("trim", "GTI"), ("colour", "blue")]:
        js(f"document.getElementById('veh-{k}').value = {json.dumps(v)}")
    # A phone-sized photo (1600 x 1200), scaled by the page to 800 pixels before it is sent.
    photo = f"{tempfile.mkdtemp()}/golf.jpg"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=1600x1200", "-frames:v", "1", photo], check=True)
    doc = c.call("DOM.getDocument")["root"]["nodeId"]
    c.call("DOM.setFileInputFiles", files=[photo], nodeId=c.call("DOM.querySelector", nodeId=doc, selector="#veh-photo")["nodeId"])
    js("document.getElementById('veh-save').click()")
    until("!!document.querySelector('#garage-list li strong') && document.querySelector('#garage-list li strong').textContent === 'Blue Golf'"
          " && document.querySelector('#garage-list li .small').textContent.startsWith('2019 VW Golf GTI · 0 runs')",
          "the vehicle was not added to the garage")
    until("!!document.querySelector('#garage-list li img') && document.querySelector('#garage-list li img').naturalWidth === 800 && "
          "document.querySelector('#garage-list li img').naturalHeight === 600", "the vehicle's photo is not shown, scaled to 800 x 600")
    shot = c.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
    open(f"{shot_dir}/gps-garage.png", "wb").write(base64.b64decode(shot["data"]))
    js("document.querySelector('#garage-dialog form:last-of-type button').click()")
    until("document.getElementById('g-vehicle').selectedOptions[0].textContent === 'Blue Golf'", "the first vehicle is not the active one")
    garage = json.loads(urllib.request.urlopen(base + "/api/gps/garage", timeout=5).read())
    if garage["activeID"] != garage["defaultID"] or garage["vehicles"][0]["vehicle"]["trim"] != "GTI":
        raise SystemExit(f"FAIL: the garage after adding a vehicle: {garage}")
    print("ok: vehicle added in the page's garage with its photo (scaled to 800 x 600), default and active")
    js("document.getElementById('g-car').click()")
    until("document.body.classList.contains('in-car') && getComputedStyle(document.querySelector('header')).display === 'none'"
          " && getComputedStyle(document.getElementById('board')).display === 'none'", "the in-car view does not hide the rest of the page", 5)
    play(feed)
    until("document.getElementById('g-lock').textContent.startsWith('3D fix · 12 sats · ±3 m')", "no 3D fix shown", 30)
    until("document.getElementById('g-state').textContent.startsWith('Armed')", "the timer did not arm", 30)
    print("ok: fix and armed:", js("document.getElementById('g-lock').textContent"))
    until("document.getElementById('g-state').textContent === 'Running' && "
          "document.querySelectorAll('#g-milestones tbody tr').length >= 2 && "
          "parseFloat(document.getElementById('g-speed').textContent) > 40", "no running view with milestones and speed", 30)
    running = js("[document.getElementById('g-speed').textContent, document.getElementById('g-elapsed').textContent, "
                 "document.querySelectorAll('#g-milestones tbody tr').length]")
    shoot("gps-in-car.png")
    print(f"ok: running: {running[0]} mph, {running[1]}, {running[2]} milestones so far; in-car screenshot")
    until("document.getElementById('g-state').textContent === 'Complete'", "the run did not complete", 40)
    rows = js("[...document.querySelectorAll('#g-milestones tbody tr')].map(r => [...r.cells].map(c => c.textContent))")
    api = json.loads(urllib.request.urlopen(base + "/api/gps", timeout=5).read())
    last = api["last"]
    if last is None or last.get("voided") or len(rows) != 9 or len(last["milestones"]) != 9:
        raise SystemExit(f"FAIL: the finished run shows {len(rows)} milestones: {rows}; API {last!r:.400}")
    for m in last["milestones"]:
        shown = next((r for r in rows if r[0] == m["name"]), None)
        if shown is None or shown[1] != f"{m['seconds']:.2f} s ±{m['uncertainty']:.2f}":
            raise SystemExit(f"FAIL: {m['name']} is {shown} on the page, {m['seconds']:.3f} s in the API")
        if m["name"] in truth and abs(m["seconds"] - truth[m["name"]]) > 0.010:
            raise SystemExit(f"FAIL: {m['name']} {m['seconds']:.3f} s, truth {truth[m['name']]:.3f} s")
    print("ok: complete:", "; ".join(f"{r[0]} {r[1]}" for r in rows[:4]), "… (0-60 and 1/4 mile within 10 ms of truth)")
    js("document.getElementById('g-car').click()")
    until("!document.body.classList.contains('in-car') && getComputedStyle(document.querySelector('header')).display !== 'none'",
          "leaving the in-car view does not bring the page back", 5)
    until("document.querySelectorAll('#g-runs li').length === 1 && document.querySelector('#g-runs li').textContent.startsWith('Blue Golf · ')",
          "the run is not listed under its vehicle")
    if last.get("vehicleName") != "Blue Golf" or not last.get("id"):
        raise SystemExit(f"FAIL: the run was not stored under the active vehicle: {last!r:.300}")
    js("document.getElementById('g-garage').click()")
    sixty = next(m["seconds"] for m in last["milestones"] if m["name"] == "0-60 mph")
    until(f"document.querySelector('#garage-list li .small').textContent.includes('1 run · best 0-60 mph {sixty:.2f} s')",
          "the garage does not show the vehicle's run and best")
    js("document.querySelector('#garage-dialog form:last-of-type button').click()")
    js("const s = document.getElementById('g-h-sort'); s.value = '1/4 mile'; s.dispatchEvent(new Event('change'))")
    until("document.getElementById('g-csv').href.endsWith('sort=1%2F4%20mile') && document.querySelectorAll('#g-runs li').length === 1",
          "sorting by the 1/4 mile did not list the run")
    print("ok: the run stored under Blue Golf; the garage shows 1 run and its best 0-60; sorted by the 1/4 mile")
    js("document.getElementById('g-units').click()")
    until("document.getElementById('g-unit').textContent === 'km/h' && document.getElementById('g-units').textContent === 'Units: metric'",
          "the units did not switch to metric", 5)
    js("document.getElementById('g-units').click()")
    shoot("gps.png")
    heights = tour_tabs(c, f"{shot_dir}/screenshots", only=["gps"])
    print(f"ok: the GPS tab by touch, {heights['gps']} phone screens tall; docs/screenshots/gps.png")
    # Deleting the run from the page (confirm answered yes).
    js("window.confirm = () => true; document.querySelector('#g-runs li button').click()")
    until("document.querySelectorAll('#g-runs li').length === 0", "deleting the run from the page did not remove it")
    if json.loads(urllib.request.urlopen(base + "/api/gps/runs", timeout=5).read()):
        raise SystemExit("FAIL: the deleted run is still stored")
    print("ok: units switched; the run deleted from the page; screenshots gps.png and gps-in-car.png")
finally:
    stop_feed(feed)
