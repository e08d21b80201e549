# SPDX-License-Identifier: Apache-2.0
# Browser test of the page `sprintgate run` serves when there is no picture: first on a board
# file without [camera] (a car timer with [gps]), then on a board whose camera is not plugged
# in. Both at 360 x 800 with touch. Without a camera the page says the sprint gate is off
# and hides the gate's sections, and the GPS section is there (gpsd is not running: it says
# so); the PIN is entered with taps. With the camera missing, the board says what the gate
# waits for and what to do, while the rest of the page works. Saves docs/no-camera.png and
# docs/camera-missing.png.
# Usage: browser_no_camera.py BINARY WEB_PORT CDP_PORT SCREENSHOT_DIR WORK_DIR
import json, os, socket, subprocess, sys, time, urllib.request
sys.path.insert(0, "scripts")
from cdp import fail_on_errors, open_page, phone, screenshot, tap, wait_http, watch_errors

binary, port, cdp, shot_dir, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
base = f"http://127.0.0.1:{port}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(name, camera):
    """`sprintgate run` as installed, with a board file of its own; `camera` is its [camera]
    table or None. [gps] names a port where no gpsd listens."""
    d = f"{work}/{name}"
    os.makedirs(d + "/state", exist_ok=True)
    with open(d + "/board.toml", "w") as f:
        f.write(f'[board]\nname = "{name}"\n' + (camera or "") + '[audio]\ndevice = "null"\n[peer]\ngroup = "browser"\n')
    with open(d + "/gate.toml", "w") as f:
        f.write(f'board = "{d}/board.toml"\nstate_dir = "{d}/state"\n[gps]\nport = {free_port()}\n')
    log = open(d + "/run.log", "w")
    p = subprocess.Popen([binary, "run", "--config", d + "/gate.toml", "--web-host", "127.0.0.1", "--web-port", str(port),
                          "--ntp-port", "0", "--seconds", "120"], stdout=log, stderr=subprocess.STDOUT,
                         env={k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "JOURNAL_STREAM")})
    wait_http(base + "/api/live", 60)
    return p, d


def stop(p, d):
    p.terminate()
    if p.wait(30) != 0:
        print(open(d + "/run.log").read()[-2000:])
        raise SystemExit(f"FAIL: sprintgate run exited {p.returncode} on SIGTERM")


# A car timer: no [camera] at all.
p, d = start("car-timer", None)
try:
    c = open_page(cdp, base + "/")
    phone(c)
    c.call("Page.navigate", url=base + "/")
    time.sleep(0.5)
    until = watch_errors(c)
    until("document.getElementById('link').textContent === 'live'", "the board did not go live")
    until("!document.getElementById('no-camera').hidden", "the page does not say the board has no camera")
    hidden = c.eval("[...document.querySelectorAll('.camera-gate')].every(s => s.hidden)")
    if not hidden:
        raise SystemExit("FAIL: the sprint gate's sections are shown on a board without a camera")
    until("!document.getElementById('gps-section').hidden", "the GPS section is not shown")
    until("/gpsd/.test(document.getElementById('gps-section').innerText)", "the GPS section does not say what is wrong with gpsd")
    # A car timer opens on its GPS tab; the tab bar offers no sprint gate's screens it cannot fill.
    until("document.body.dataset.tab === 'gps'", "a car timer without a camera does not open on its GPS tab")
    print("ok: no camera:", c.eval("document.getElementById('no-camera').innerText.trim()")[:70], "…")
    print("ok: GPS section:", c.eval("document.getElementById('gps-section').innerText.split('\\n').slice(0, 3).join(' · ')")[:120])
    # The PIN, typed and sent with taps.
    pin = open(d + "/state/web.pin").read().strip()
    tap(c, "#pin")
    c.call("Input.insertText", text=pin)
    tap(c, "#btn-pin")
    until("document.getElementById('pin-state').textContent === 'unlocked'", "the PIN entered by touch was not accepted")
    print("ok: PIN entered with taps")
    c.eval("window.scrollTo(0, 0)")
    time.sleep(0.3)
    screenshot(c, shot_dir + "/no-camera.png")
    fail_on_errors(c)
finally:
    stop(p, d)

# A gate whose camera is not plugged in.
p, d = start("unplugged", f'[camera]\ndevice = "/dev/sprintgate-missing-{os.getpid()}"\nformat = "GREY"\n'
                          'width = 320\nheight = 240\nfps = 30\n')
try:
    c.call("Page.navigate", url=base + "/")
    time.sleep(0.5)
    until = watch_errors(c)
    until("document.getElementById('link').textContent === 'live'", "the board did not go live")
    until("!document.getElementById('camera-problem').hidden && /plug it in/.test(document.getElementById('camera-problem').textContent)",
          "the board does not say to plug the camera in")
    if not c.eval("document.getElementById('no-camera').hidden"):
        raise SystemExit("FAIL: a board with a camera is shown as one without")
    print("ok: camera missing:", c.eval("document.getElementById('camera-problem').textContent")[:110])
    c.eval("window.scrollTo(0, 0)")
    time.sleep(0.3)
    screenshot(c, shot_dir + "/camera-missing.png")
    fail_on_errors(c)
finally:
    stop(p, d)
print("ok: the page without a picture, 360 x 800 with touch; screenshots no-camera.png and camera-missing.png")
