# SPDX-License-Identifier: Apache-2.0
# Browser test of the ski track logger over `demo --web --lone-gate --gps PORT`: a real
# gpsd, started and fed by scripts/gps/fake-feed (gpsfake's own library), plays a chairlift
# and a run at 1 Hz (Tests/GPSReplays/ski/lift-and-run-1hz.nmea, 510 fixes; truth in its
# header). Tracking is started from the page with the PIN, every fix is counted on the
# page's live line, tracking is stopped, and the day opened: one run and one lift with the
# run's vertical within 2 % of truth. The run's speed and elevation charts and its route
# are drawn, and its run card is made (a 1080 x 1080 picture to save). The day's GPX is
# imported again through the page's file input as another device's day, a file that is
# not GPX is refused with the reason shown, and the imported day is deleted from the page.
# Saves docs/ski.png (the day) and docs/ski-run.png (a run), 360 x 800, and docs/ski-card.png.
# Usage: browser_ski.py PORT CDP_PORT GPS_PORT SCREENSHOT_DIR PIN_FILE WORK_DIR
import base64, json, sys, time, urllib.request
sys.path.insert(0, "scripts")
from cdp import gps_feed, open_page, open_tab, play, stop_feed, tour_tabs, wait_http, watch_errors

port, cdp, gps_port, shot_dir, pin_file, work = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
base = f"http://127.0.0.1:{port}"
day = "Tests/GPSReplays/ski/lift-and-run-1hz.nmea"
fixes = sum(1 for line in open(day) if line.startswith("$GPGGA"))
truth_vertical = 400.0


def get_json(path):
    return json.loads(urllib.request.urlopen(base + path, timeout=10).read())


feed = gps_feed(gps_port, day, 0.005)
try:
    wait_http(base + "/api/ski", 30)
    c = open_page(cdp, base + "/")
    c.call("Emulation.setDeviceMetricsOverride", width=360, height=800, deviceScaleFactor=2, mobile=True)

    js = c.eval
    # Script errors go into the failure's text.
    until = watch_errors(c)

    def shoot(name, element):
        js(f"window.scrollTo(0, document.getElementById('{element}').getBoundingClientRect().top + window.scrollY - 8)")
        time.sleep(0.3)
        img = c.call("Page.captureScreenshot", format="png", captureBeyondViewport=False)
        open(f"{shot_dir}/{name}", "wb").write(base64.b64decode(img["data"]))

    until("!document.getElementById('ski-section').hidden", "the ski section is not shown on a gate with [gps]")
    c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
    open_tab(c, "ski")
    until("document.getElementById('sk-state').textContent === 'Not tracking'", "the page does not say tracking is off")
    # One hand on a phone: nothing outside a table's own scroller is wider than 360 px.
    wide = js("document.documentElement.scrollWidth")
    if wide > 360:
        raise SystemExit(f"FAIL: the page is {wide} px wide at 360 px: " + str(js(
            "[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 361 && e.offsetParent !== null && "
            "!e.closest('.scroll-x')).slice(0, 6).map(e => e.tagName + '#' + e.id)")))
    pin = open(pin_file).read().strip()
    js(f"document.getElementById('pin').value = '{pin}'; document.getElementById('btn-pin').click()")
    # "Unlocked." is said once the gate has checked the PIN (a PIN kept by the browser
    # shows "unlocked" before that).
    until("document.getElementById('pin-state').textContent === 'unlocked' && document.getElementById('message').textContent === 'Unlocked.'",
          "the PIN was not accepted")
    js("document.getElementById('sk-name').value = 'Test hill'; document.getElementById('sk-toggle').click()")
    until("document.getElementById('sk-state').textContent === 'Recording' && document.getElementById('sk-toggle').textContent === 'Stop tracking'",
          "tracking did not start from the page")
    print("ok: tracking started from the page")
    # gpsd passes on only what comes after a client watches: the gate's client (which
    # retries with back-off when gpsd was not up yet) must be connected before the feed.
    deadline = time.time() + 30
    while get_json("/api/ski")["link"] == "no-gpsd":
        if time.time() > deadline:
            raise SystemExit("FAIL: the gate's gpsd client did not connect within 30 s")
        time.sleep(0.2)
    play(feed)
    try:
        until(f"document.getElementById('sk-now').textContent.startsWith('Test hill: {fixes} fixes')",
              f"the page never counted all {fixes} fixes", 60)
    except SystemExit:
        print("live line:", js("document.getElementById('sk-now').textContent"), "; API:", get_json("/api/ski"),
              "; tracks:", get_json("/api/ski/tracks"))
        raise
    print("ok: live line:", js("document.getElementById('sk-now').textContent"))
    js("document.getElementById('sk-toggle').click()")
    until("document.getElementById('sk-state').textContent === 'Not tracking'", "tracking did not stop from the page")
    tracks = get_json("/api/ski/tracks")
    if len(tracks) != 1 or tracks[0]["points"] != fixes or tracks[0]["name"] != "Test hill" or tracks[0]["endedWall"] is None:
        raise SystemExit(f"FAIL: the stopped track: {tracks}")
    tid = tracks[0]["id"]
    print(f"ok: tracking stopped; track {tid} has all {fixes} fixes")
    until("[...document.querySelectorAll('#sk-days button')].some(b => b.textContent === 'Test hill')", "the day is not listed")
    js("[...document.querySelectorAll('#sk-days button')].find(b => b.textContent === 'Test hill').click()")
    until("!document.getElementById('sk-day').hidden && document.querySelectorAll('#sk-runs li').length === 1 && "
          "document.querySelectorAll('#sk-lifts li').length === 1", "the day does not show one run and one lift")
    d = get_json(f"/api/ski/tracks/{tid}")
    vertical = d["runs"][0]["vertical"]
    if abs(vertical - truth_vertical) > 0.02 * truth_vertical:
        raise SystemExit(f"FAIL: the run's vertical {vertical:.1f} m, truth {truth_vertical} m")
    totals = js("[...document.querySelectorAll('#sk-totals .sk-stat')].map(s => s.textContent)")
    # The units are the GPS section's (imperial until switched).
    if f"{d['vertical'] / 0.3048:.0f} ftvertical" not in totals or "1runs" not in totals:
        raise SystemExit(f"FAIL: the day's totals on the page: {totals}")
    shoot("ski.png", "sk-day")
    heights = tour_tabs(c, f"{shot_dir}/screenshots", only=["ski"])
    print(f"ok: the Ski tab by touch, {heights['ski']} phone screens tall; docs/screenshots/ski.png")
    print(f"ok: the day: 1 run, 1 lift; vertical {vertical:.1f} m (truth {truth_vertical:.0f}); totals {totals[:4]}")
    js("document.querySelector('#sk-runs li button').click()")
    until("!document.getElementById('sk-run').hidden && !!document.querySelector('#sk-speed polyline') && "
          "!!document.querySelector('#sk-elev polyline') && !!document.querySelector('#sk-route polyline')", "the run's charts and route are not drawn")
    route = js("document.querySelector('#sk-route polyline').getAttribute('points').split(' ').length")
    if route < 200:
        raise SystemExit(f"FAIL: the route has {route} points")
    js("document.getElementById('sk-card-make').click()")
    until("!document.getElementById('sk-card-box').hidden && document.getElementById('sk-card').naturalWidth === 1080 && "
          "document.getElementById('sk-card-save').href.startsWith('blob:')", "the run card was not made")
    shoot("ski-run.png", "sk-run")
    card = js("(() => { const i = document.getElementById('sk-card'); const c = document.createElement('canvas'); "
              "c.width = i.naturalWidth; c.height = i.naturalHeight; c.getContext('2d').drawImage(i, 0, 0); return c.toDataURL().split(',')[1]; })()")
    open(f"{shot_dir}/ski-card.png", "wb").write(base64.b64decode(card))
    print(f"ok: the run's charts, its route ({route} points) and its 1080 x 1080 card")
    # The day's GPX, imported again through the page as another device's day.
    gpx_path = f"{work}/from-a-watch.gpx"
    open(gpx_path, "wb").write(urllib.request.urlopen(f"{base}/api/ski/tracks/{tid}/gpx", timeout=10).read())
    doc = c.call("DOM.getDocument")["root"]["nodeId"]
    node = c.call("DOM.querySelector", nodeId=doc, selector="#sk-file")["nodeId"]
    c.call("DOM.setFileInputFiles", files=[gpx_path], nodeId=node)
    js("document.getElementById('sk-import-sport').value = 'snowboard'; document.getElementById('sk-import').click()")
    until(f"document.getElementById('message').textContent.startsWith('Imported from-a-watch: {fixes} fixes')", "the GPX file was not imported", 30)
    until("document.getElementById('sk-day-title').textContent.startsWith('from-a-watch') && document.querySelectorAll('#sk-runs li').length === 1",
          "the imported day does not show its run")
    tracks = get_json("/api/ski/tracks")
    if len(tracks) != 2 or tracks[0]["source"] != "gpx" or tracks[0]["sport"] != "snowboard":
        raise SystemExit(f"FAIL: the tracks after the import: {tracks}")
    print("ok: the day's GPX imported through the page as a snowboard day, its run found")
    bad_path = f"{work}/notes.gpx"
    open(bad_path, "w").write("these are my notes, not a track\n")
    c.call("DOM.setFileInputFiles", files=[bad_path], nodeId=node)
    js("document.getElementById('sk-import').click()")
    until("document.getElementById('message').textContent === 'file: not a GPX track the gate can read: the file is not XML: a GPX file begins with <?xml or <gpx'",
          "a file that is not GPX was not refused with its reason", 15)
    print("ok: refused:", js("document.getElementById('message').textContent"))
    js("window.confirm = () => true; document.getElementById('sk-day-delete').click()")
    until("document.getElementById('sk-day').hidden && [...document.querySelectorAll('#sk-days button')].length === 1",
          "deleting the imported day from the page did not remove it")
    if len(get_json("/api/ski/tracks")) != 1:
        raise SystemExit("FAIL: the deleted day is still stored")
    print("ok: the imported day deleted from the page; screenshots ski.png, ski-run.png and ski-card.png")
finally:
    stop_feed(feed)
