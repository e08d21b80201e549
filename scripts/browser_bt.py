# SPDX-License-Identifier: Apache-2.0
# The rowing hub's Bluetooth panel in headless Chromium, against `sprintgate run` in the
# qemu rig (scripts/bt-page-test starts both): "Find PM5s" lists the emulated PM5 by its
# name, Connect makes it erg 1, its tile fills as it rows 500 m, the session is stored
# with every stroke, and "Let go" takes the tile off the board.
# Usage: browser_bt.py PORT CDP_PORT PIN_FILE
import json, os, sys, time, urllib.request
sys.path.insert(0, "scripts")
from cdp import fail_on_errors, open_unlocked, wait_http, watch_errors

port, cdp, pin_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
base = f"http://127.0.0.1:{port}"


def get(path):
    return urllib.request.urlopen(base + path, timeout=20).read()


# The guest boots and starts the daemon under software emulation first.
wait_http(base + "/api/rowing", 240)
deadline = time.time() + 30
while not os.path.exists(pin_file) and time.time() < deadline:
    time.sleep(0.5)
c = open_unlocked(cdp, base, open(pin_file).read().strip())
c.call("Emulation.setDeviceMetricsOverride", width=412, height=900, deviceScaleFactor=2, mobile=True)


js = c.eval
watch = watch_errors(c)


def until(expr, what, timeout=60):
    return watch(expr, what, timeout, also=lambda: print("hub:", json.dumps(json.loads(get("/api/rowing")).get("bluetooth"))))


until("!document.getElementById('rowing-section').hidden && !document.getElementById('r-bt').hidden",
      "the ergs' section with its Bluetooth panel is not shown")
print("ok: the Bluetooth panel:", js("document.getElementById('r-scan-state').textContent"))

js("document.getElementById('r-scan').click()")
until("[...document.querySelectorAll('#r-pm5s li')].some(li => /PM5 430000042/.test(li.textContent) && li.querySelector('button.go'))",
      "the scan did not list PM5 430000042 with a Connect button", 90)
print("ok: found:", js("[...document.querySelectorAll('#r-pm5s li')].map(li => li.innerText.replace(/\\n/g, ' ')).join(' | ')"))
js("[...document.querySelectorAll('#r-pm5s li')].find(li => /PM5 430000042/.test(li.textContent)).querySelector('button.go').click()")
until("[...document.querySelectorAll('#r-pm5s li')].some(li => /Erg 1/.test(li.textContent) && /PM5 430000042/.test(li.textContent))",
      "the PM5 is not listed as erg 1 after Connect", 30)
until("!!document.getElementById('erg-1')", "erg 1's tile did not appear", 30)
print("ok: connected as erg 1:", js("document.getElementById('erg-1').innerText.replace(/\\n/g, ' ')"))

# The PM5 plays its 500 m once the hub has subscribed: the tile fills and finishes.
until("parseFloat(document.querySelector('#erg-1 .distance').textContent) > 0", "erg 1's tile shows no distance", 120)
until("!!document.querySelector('#erg-1.finished')", "erg 1 did not finish its 500 m", 240)
print("ok: the tile finished:", js("document.getElementById('erg-1').innerText.replace(/\\n/g, ' ')"))
done = []
deadline = time.time() + 30
while time.time() < deadline:
    done = [s for s in json.loads(get("/api/rowing/sessions")) if s.get("summary")]
    if done:
        break
    time.sleep(1)
if len(done) != 1 or abs(done[0]["summary"]["distance"] - 500) > 0.01 or done[0]["erg"] != "PM5 430000042":
    raise SystemExit(f"FAIL: no finished 500 m session of PM5 430000042: {done}")
detail = json.loads(get(f"/api/rowing/sessions/{done[0]['id']}"))
counts = [st["stroke"] for st in detail["strokes"]]
if counts != list(range(1, len(counts) + 1)) or len(counts) < 40:
    raise SystemExit(f"FAIL: the session's strokes are not 1..n once each: {counts}")
print(f"ok: session {done[0]['id']}: {len(counts)} strokes, {done[0]['summary']['distance']} m")

js("[...document.querySelectorAll('#r-pm5s li')].find(li => /Erg 1/.test(li.textContent)).querySelector('button').click()")
until("!document.getElementById('erg-1') && ![...document.querySelectorAll('#r-pm5s li')].some(li => /Erg 1/.test(li.textContent))",
      "Let go did not take erg 1 off the board", 30)
fail_on_errors(c)
print("ok: let go: the tile left the board")
