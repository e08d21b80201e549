# SPDX-License-Identifier: Apache-2.0
# The browser tests' DevTools protocol client for headless Chromium, and their waits.
import base64, json, os, socket, struct, subprocess, time, urllib.request

def wait_http(url, timeout):
    end = time.time() + timeout
    while time.time() < end:
        try:
            return urllib.request.urlopen(url, timeout=2).read()
        except Exception:
            time.sleep(0.2)
    raise SystemExit(f"FAIL: {url} did not answer within {timeout} s")

class CDP:
    """A minimal DevTools protocol client: one WebSocket (RFC 6455, masked client frames)."""
    def __init__(self, url):
        host, rest = url[len("ws://"):].split("/", 1)
        h, p = host.split(":")
        self.s = socket.create_connection((h, int(p)), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(f"GET /{rest} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                       f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.s.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise SystemExit("FAIL: DevTools refused the WebSocket: " + head.decode(errors="replace"))
        self.n = 0
    def _recv(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c: raise SystemExit("FAIL: DevTools connection closed")
            b += c
        return b
    def _frame(self):
        h = self._recv(2)
        ln = h[1] & 0x7F
        if ln == 126: ln = struct.unpack(">H", self._recv(2))[0]
        elif ln == 127: ln = struct.unpack(">Q", self._recv(8))[0]
        return h[0] & 0x0F, self._recv(ln)
    def call(self, method, **params):
        self.n += 1
        data = json.dumps({"id": self.n, "method": method, "params": params}).encode()
        mask = os.urandom(4)
        hdr = bytes([0x81])
        if len(data) < 126: hdr += bytes([0x80 | len(data)])
        elif len(data) < 65536: hdr += bytes([0x80 | 126]) + struct.pack(">H", len(data))
        else: hdr += bytes([0x80 | 127]) + struct.pack(">Q", len(data))
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))
        while True:
            op, payload = self._frame()
            if op != 1: continue
            msg = json.loads(payload)
            if msg.get("id") == self.n:
                if "error" in msg: raise SystemExit(f"FAIL: {method}: {msg['error']}")
                return msg["result"]
    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r["result"].get("value")


def open_page(cdp_port, url):
    """Connects to Chromium's first page, sized as a phone (412 CSS px wide), and loads url."""
    targets = json.loads(wait_http(f"http://127.0.0.1:{cdp_port}/json/list", 30))
    page = next(t for t in targets if t.get("type") == "page")
    c = CDP(page["webSocketDebuggerUrl"])
    c.call("Emulation.setDeviceMetricsOverride", width=412, height=1500, deviceScaleFactor=2, mobile=True)
    c.call("Page.enable")
    c.call("Page.navigate", url=url)
    return c

def gps_feed(gps_port, log, cycle):
    """Starts gpsd on gps_port with scripts/gps/fake-feed, ready to play log (NMEA) at cycle s
    between sentences once "go" is written to its stdin."""
    feed = subprocess.Popen(["scripts/gps/fake-feed", str(gps_port), log, str(cycle)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    if feed.stdout.readline().strip() != "ready":
        feed.terminate()
        raise SystemExit("FAIL: fake-feed did not start gpsd")
    return feed

def play(feed):
    feed.stdin.write("go\n")
    feed.stdin.flush()

def stop_feed(feed):
    try:
        feed.stdin.close()
    except OSError:
        pass
    feed.terminate()
    feed.wait(10)

def open_unlocked(cdp_port, base, pin):
    """Opens the gate's page at `base`, waits for the live board and unlocks it with `pin`."""
    c = open_page(cdp_port, base + "/")
    until(c, "document.getElementById('link').textContent === 'live'", "the board did not go live", 15)
    c.eval(f"document.getElementById('pin').value = '{pin}'; document.getElementById('btn-pin').click()")
    until(c, "document.getElementById('pin-state').textContent === 'unlocked'", "the PIN was not accepted", 15)
    return c

def until(c, expr, what, timeout):
    """Evaluates expr in the page until it is truthy; fails with the page's text after timeout s."""
    end = time.time() + timeout
    while time.time() < end:
        v = c.eval(expr)
        if v: return v
        time.sleep(0.25)
    raise SystemExit(f"FAIL: {what} within {timeout} s; page text: {c.eval('document.body.innerText')!r:.600}")

def watch_errors(c):
    """Keeps the page's uncaught errors and rejected promises in window.pageErrors, and
    returns until() for that page: on failure it prints them, and then calls also() if given."""
    c.eval("window.pageErrors = []; window.addEventListener('error', e => pageErrors.push(e.message)); "
           "window.addEventListener('unhandledrejection', e => pageErrors.push(String(e.reason)))")

    def until_here(expr, what, timeout=20, also=None):
        try:
            return until(c, expr, what, timeout)
        except SystemExit:
            print("page errors:", c.eval("window.pageErrors"))
            if also: also()
            raise
    return until_here

def fail_on_errors(c):
    """Fails if the page has thrown since watch_errors()."""
    if c.eval("window.pageErrors.length"):
        raise SystemExit(f"FAIL: page errors: {c.eval('window.pageErrors')}")

def step_frames(c, gate):
    """In an open run dialog: the frames of gate `gate` start at the first one at or after
    the crossing, load, show the gate line inside the frame, and step one frame earlier
    to the last one before it and back. Returns a summary."""
    sec = f"#run-body section[data-gate='{gate}']"
    label = f"document.querySelector(\"{sec} .frame-label\").textContent"
    loaded = (f"(() => {{ const i = document.querySelector(\"{sec} img\"); "
              f"return i && i.complete && i.naturalWidth > 0 && i.src; }})()")
    first_src = until(c, loaded, f"gate {gate}'s first frame did not load", 10)
    first = c.eval(label)
    if not first.startswith("Frame ") or "+" not in first:
        raise SystemExit(f"FAIL: gate {gate}'s strip does not open at the crossing: {first!r}")
    left = c.eval(f"parseFloat(document.querySelector(\"{sec} .gate-line\").style.left)")
    if left is None or not (0 < left < 100):
        raise SystemExit(f"FAIL: gate {gate}'s gate line is not inside the frame: left {left!r}")
    c.eval(f"[...document.querySelectorAll(\"{sec} button\")].find(b => b.textContent.includes('Earlier')).click()")
    until(c, f"{label} !== {json.dumps(first)}", f"gate {gate}'s strip did not step", 5)
    before = c.eval(label)
    src = until(c, f"(() => {{ const s = {loaded}; return s && s !== {json.dumps(first_src)} && s; }})()",
                f"gate {gate}'s earlier frame did not load", 10)
    if "-" not in before.split(",")[-1] and "−" not in before:
        raise SystemExit(f"FAIL: the frame before the crossing has no negative offset: {before!r}")
    c.eval(f"[...document.querySelectorAll(\"{sec} button\")].find(b => b.textContent.includes('Later')).click()")
    until(c, f"{label} === {json.dumps(first)}", f"gate {gate}'s strip did not step back", 5)
    return f"frames: {first} (line at {left:.1f} %), then {before}"

def tap(c, selector):
    """Taps the element's centre with touch events, as a finger does (the page must have been
    given touch with Emulation.setTouchEmulationEnabled); fails if it is not on screen."""
    c.eval(f"document.querySelector({json.dumps(selector)}).scrollIntoView({{block: 'center'}})")
    box = c.eval(f"(() => {{ const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect(); "
                 "return r.width && r.height ? [r.left + r.width / 2, r.top + r.height / 2] : null; })()")
    if not box:
        raise SystemExit(f"FAIL: {selector} is not on screen to tap")
    x, y = box
    c.call("Input.dispatchTouchEvent", type="touchStart", touchPoints=[{"x": x, "y": y}])
    c.call("Input.dispatchTouchEvent", type="touchEnd", touchPoints=[])

def phone(c, width=360, height=800):
    """Sizes the page as a phone of width x height CSS px with touch input."""
    c.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=2, mobile=True)
    c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)

def screenshot(c, path):
    """Saves what is on the phone's screen now as a PNG."""
    img = c.call("Page.captureScreenshot", format="png")
    open(path, "wb").write(base64.b64decode(img["data"]))

def sideways(c):
    """What scrolls sideways on the page as it is sized now: the page itself, or a box of its
    own (a table in a .scroll-x). An empty list when nothing does."""
    return c.eval("(() => { const out = []; const d = document.documentElement; "
                  "if (d.scrollWidth > d.clientWidth) out.push('the page: ' + d.scrollWidth + ' px in ' + d.clientWidth); "
                  "for (const b of document.querySelectorAll('.scroll-x')) if (b.offsetParent !== null && b.scrollWidth > b.clientWidth + 1) "
                  "out.push((b.querySelector('[id]') || b).id + ': ' + b.scrollWidth + ' px in ' + b.clientWidth); return out; })()")

def save_settings(c, timeout=40):
    """Presses Save settings and returns what the page then says. A gate refuses settings while
    a run is under way (the demo's runner may be passing); the save is pressed again after it."""
    end = time.time() + timeout
    while True:
        c.eval("document.getElementById('message').textContent = ''; document.getElementById('set-save').click()")
        said = until(c, "(() => { const t = document.getElementById('message').textContent; return t !== 'OK' && t; })()",
                     "pressing Save settings said nothing", 20)
        busy = "a run is under way" in said or "has not applied the settings yet" in said
        if not busy or time.time() > end:
            return said
        time.sleep(0.5)

def tabs_offered(c):
    """The tabs the page's bar offers now, in its order."""
    return c.eval("[...document.querySelectorAll('#tabs button')].filter(b => !b.hidden).map(b => b.dataset.tab)")

def open_tab(c, name):
    """Taps the tab bar's `name` with a finger and waits until the tab shows."""
    tap(c, f"#tabs button[data-tab='{name}']")
    until(c, f"document.body.dataset.tab === '{name}' && "
             f"document.querySelector(\"#tabs button[data-tab='{name}']\").getAttribute('aria-selected') === 'true'",
          f"the {name} tab did not open", 5)

def tour_tabs(c, shot_dir=None, only=None):
    """Every tab the bar offers (or those in `only`), opened by touch: at 1280 x 800 and at
    360 x 800 nothing scrolls sideways (the tab bar neither); at 360 x 800 every visible
    button is at least 44 px tall and the tab at most 3.5 phone screens tall, with a
    screenshot of each, `<shot_dir>/<tab>.png`, when asked. Returns {tab: height in phone
    screens}. Leaves the page at 360 x 800 on the last tab."""
    heights = {}
    for width, height, scale, mobile in ((1280, 800, 1, False), (360, 800, 2, True)):
        c.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=scale, mobile=mobile)
        c.call("Emulation.setTouchEmulationEnabled", enabled=True, maxTouchPoints=5)
        for name in tabs_offered(c):
            if only and name not in only: continue
            open_tab(c, name)
            time.sleep(0.4)
            wide = sideways(c) + c.eval("(() => { const t = document.getElementById('tabs'); "
                                        "return t.scrollWidth > t.clientWidth + 1 ? ['the tab bar: ' + t.scrollWidth + ' px in ' + t.clientWidth] : []; })()")
            if wide:
                raise SystemExit(f"FAIL: the {name} tab scrolls sideways at {width} px: {wide}")
            if not mobile: continue
            cut = c.eval("[...document.querySelectorAll('#tabs button')].filter(b => !b.hidden && b.scrollWidth > b.clientWidth + 1).map(b => b.textContent)")
            if cut:
                raise SystemExit(f"FAIL: at 360 px the tab bar cuts the labels {cut} short")
            small = c.eval("[...document.querySelectorAll('main button, main .button, main select, #tabs button')]"
                           ".filter(b => b.offsetParent !== null && b.closest('dialog') === null && b.getBoundingClientRect().height < 43.5)"
                           ".map(b => (b.id || b.textContent.trim().slice(0, 20)) + ' ' + Math.round(b.getBoundingClientRect().height) + ' px')")
            if small:
                raise SystemExit(f"FAIL: on the {name} tab, touch targets under 44 px: {small}")
            heights[name] = round(c.eval("document.documentElement.scrollHeight") / 800, 1)
            if heights[name] > 3.5:
                raise SystemExit(f"FAIL: the {name} tab is {heights[name]} phone screens tall, not about three at most")
            if shot_dir:
                # What the last action said, and a new best's banner, are tapped away first.
                for box, shown in (("#toast", "!document.getElementById('toast').hidden"),
                                   ("#message", "document.getElementById('message').textContent !== ''")):
                    if c.eval(shown):
                        tap(c, box)
                        until(c, f"!({shown})", f"tapping {box} did not put it away", 5)
                c.eval("window.scrollTo(0, 0)")
                os.makedirs(shot_dir, exist_ok=True)
                screenshot(c, os.path.join(shot_dir, f"{name}.png"))
    return heights
