#!/usr/bin/env python3
"""The forward bench in a browser page (issue 41, item 7; docs/web.md "Speed").

    bench_page.py WASM_BUILD_DIR [--threads 1] [--repeat 3]

Serves viewer/web/bench/bench.html beside WASM_BUILD_DIR's forward_bench_page.js / _mt.js with the
COOP / COEP headers that make the page cross-origin isolated (as sw.js makes the site), opens it in
headless Chromium (browser_test.py's Page) and prints the program's output, its RESULT line
included. Exit status: the program's (1 when the page is not isolated but threads were asked for).
"""
import argparse
import functools
import http.server
import os
import shutil
import sys
import tempfile
import threading

# The browser driver of the page's checks (viewer/web/tests/browser_test.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import browser_test  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class IsolatedHandler(browser_test.QuietHandler):
    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def translate_path(self, path):
        if path.split("?")[0] == "/bench.html":
            return os.path.join(HERE, "bench.html")
        return super().translate_path(path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wasm")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    chromium = shutil.which("chromium") or sys.exit("chromium not found (apt-get install chromium)")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", browser_test.free_port()),
                                             functools.partial(IsolatedHandler, directory=a.wasm))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="deberta-bench-")
    url = "http://127.0.0.1:%d/bench.html?threads=%d&repeat=%d" % (server.server_address[1], a.threads, a.repeat)
    page = browser_test.Page(chromium, url, profile)
    try:
        isolated = page.wait_for("document.readyState === 'complete' ? String(window.crossOriginIsolated) : ''", 60, "the page")
        text = page.wait_for("window.benchDone !== undefined ? document.getElementById('out').textContent : ''", 900,
                             "the bench's end")
        status = page.eval("window.benchDone")
    finally:
        page.close()
        shutil.rmtree(profile, ignore_errors=True)
        server.shutdown()
    print("page cross-origin isolated: %s" % isolated)
    print(text.rstrip())
    if a.threads > 1 and isolated != "true":
        return 1
    return 0 if status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
