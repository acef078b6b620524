#!/usr/bin/env python3
"""html_browser.py: drive headless Chromium over the DevTools protocol
(--remote-debugging-pipe: no port, no websocket library) to exercise
report.html's timeline the way a person would, for tests/e2e/test_html.sh.

  html_browser.py CHROME PAGE.html SHOT.png [--whole]

Loads the page, collects every console error and uncaught exception,
reads the timeline's state (#tl data-view-from/to, data-lod), clicks the
first row of the violations table with real mouse events, reads the state
again, hovers the first violation's holder (the tooltip's text), turns the
wheel over the timeline, and saves a screenshot of the timeline: zoomed to
the first violation, or with --whole after a double-click shows the whole
run again. Prints one JSON object; exit 0 when the browser answered (the
caller judges the figures), 1 when it did not. Bounded: 90 s in all.
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

DEADLINE = time.monotonic() + 90


class Browser:
    def __init__(self, chrome, profile):
        a_r, a_w = os.pipe()  # we write commands -> chromium reads fd 3
        b_r, b_w = os.pipe()  # chromium writes fd 4 -> we read

        def fds():  # in the child: the pipe ends become fds 3 and 4, inherited by exec
            x, y = os.dup(a_r), os.dup(b_w)
            os.dup2(x, 3)
            os.dup2(y, 4)
            os.set_inheritable(3, True)
            os.set_inheritable(4, True)

        self.proc = subprocess.Popen(
            [chrome, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(profile + ".stderr", "wb"), preexec_fn=fds, pass_fds=(3, 4))
        os.close(a_r)
        os.close(b_w)
        self.w, self.r = a_w, b_r
        self.buf = b""
        self.next_id = 0
        self.events = []

    def _read_msg(self):
        while b"\0" not in self.buf:
            left = DEADLINE - time.monotonic()
            if left <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self.r], [], [], min(left, 1.0))
            if ready:
                chunk = os.read(self.r, 1 << 16)
                if not chunk:
                    raise EOFError("chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        cmd = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            cmd["sessionId"] = session
        os.write(self.w, json.dumps(cmd).encode() + b"\0")
        while True:
            m = self._read_msg()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, name, seconds):
        end = min(DEADLINE, time.monotonic() + seconds)
        while time.monotonic() < end:
            for i, m in enumerate(self.events):
                if m.get("method") == name:
                    return self.events.pop(i)
            try:
                self.events.append(self._read_msg())
            except TimeoutError:
                break
        return None

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # our own child, by its handle
            self.proc.wait()


def main():
    chrome, page, shot = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
    profile = tempfile.mkdtemp(prefix="lshtml-", dir=os.path.dirname(shot) or ".")
    b = Browser(chrome, profile)
    out = {"errors": []}
    try:
        targets = b.call("Target.getTargets")["targetInfos"]
        tid = [t for t in targets if t["type"] == "page"][0]["targetId"]
        s = b.call("Target.attachToTarget", {"targetId": tid, "flatten": True})["sessionId"]
        for m in ("Runtime.enable", "Log.enable", "Page.enable"):
            b.call(m, session=s)
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 1366, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
        b.call("Page.navigate", {"url": "file://" + page}, session=s)
        out["loaded"] = b.wait_event("Page.loadEventFired", 60) is not None

        def ev(expr):
            r = b.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=s)
            if "exceptionDetails" in r:
                out["errors"].append("evaluate: " + json.dumps(r["exceptionDetails"])[:300])
                return None
            return r["result"].get("value")

        state = ("(function(){var t=document.getElementById('tl');if(!t)return null;"
                 "return {from:t.getAttribute('data-view-from'),to:t.getAttribute('data-view-to'),"
                 "why:t.getAttribute('data-view-why'),lod:t.getAttribute('data-lod'),"
                 "draw_ms:t.getAttribute('data-draw-ms'),rows:t.getAttribute('data-rows'),"
                 "selected:t.getAttribute('data-selected'),"
                 "story:(function(){var o=document.querySelector('ol.tl-sel');"
                 "return o?o.getAttribute('data-story'):null})(),"
                 "canvas:t.querySelector('canvas')?t.querySelector('canvas').width:0}})()")
        out["timeline"] = ev(state)
        out["violation_rows"] = ev("document.querySelectorAll('tr[data-violation]').length")
        out["pagers"] = ev("document.querySelectorAll('.pager').length")
        rect = ev("(function(){var r=document.querySelector('tr[data-violation]');if(!r)return null;"
                  "r.scrollIntoView({block:'center'});var b=r.getBoundingClientRect();"
                  "return {x:b.left+20,y:b.top+b.height/2}})()")
        if rect:
            for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
                b.call("Input.dispatchMouseEvent", {"type": kind, "x": rect["x"], "y": rect["y"],
                                                    "button": "left", "clickCount": 1}, session=s)
            out["after_click"] = ev(state)
            # hover the first violation's earlier holder in the middle of the overlap
            pt = ev("(function(){var o=lsTimeline.firstOverlap();return o&&lsTimeline.point(o[0],o[1])})()")
            if pt:
                b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": pt["x"], "y": pt["y"]},
                       session=s)
                out["tip"] = ev("(function(){var t=document.querySelector('#tl .tl-tip');"
                                "return t.style.display==='block'?t.innerText:''})()")
                b.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": 1, "y": 1}, session=s)
        box = ev("(function(){var c=document.querySelector('#tl canvas');c.scrollIntoView({block:'center'});"
                 "var b=c.getBoundingClientRect();return {x:b.left+b.width/2,y:b.top+40}})()")
        if box:
            b.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": box["x"], "y": box["y"],
                                                "deltaX": 0, "deltaY": -300}, session=s)
            out["after_wheel"] = ev(state)
        if "--whole" in sys.argv[4:] and box:  # a double-click shows the whole run again
            box = ev("(function(){var c=document.querySelector('#tl canvas');c.scrollIntoView({block:'center'});"
                     "var b=c.getBoundingClientRect();return {x:b.left+b.width/2,y:b.top+40}})()")
            for kind, n in (("mousePressed", 1), ("mouseReleased", 1), ("mousePressed", 2),
                            ("mouseReleased", 2)):
                b.call("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"],
                                                    "button": "left", "clickCount": n}, session=s)
            out["after_reset"] = ev(state)
        elif out.get("after_click"):  # back to the first violation for the picture
            ev("document.querySelector('tr[data-violation]').click()")
        clip = ev("(function(){var c=document.getElementById('timeline');c.scrollIntoView();"
                  "var b=c.getBoundingClientRect();return {x:b.left,y:b.top+window.scrollY,"
                  "width:b.width,height:Math.min(b.height,2000),scale:1}})()")
        png = b.call("Page.captureScreenshot", {"format": "png", "clip": clip,
                                                "captureBeyondViewport": True} if clip else
                     {"format": "png"}, session=s)
        import base64
        with open(shot, "wb") as f:
            f.write(base64.b64decode(png["data"]))
        # console errors and exceptions seen at any time
        for m in b.events:
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                out["errors"].append("exception: " + d.get("text", "") + " " +
                                     json.dumps(d.get("exception", {}).get("description", ""))[:300])
            elif meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out["errors"].append("console: " + json.dumps(p.get("args", []))[:300])
            elif meth == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                out["errors"].append("log: " + p["entry"].get("text", "")[:300])
    except Exception as e:  # the browser did not answer: say so, fail
        out["fatal"] = "%s: %s" % (type(e).__name__, e)
    finally:
        b.close()
    print(json.dumps(out))
    return 1 if "fatal" in out else 0


if __name__ == "__main__":
    sys.exit(main())
