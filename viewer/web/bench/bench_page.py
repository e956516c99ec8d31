#!/usr/bin/env python3
"""The page's speed in the page itself, beside node and the desktop, in one run (issue 41, item 7;
issue 55, item 9; docs/web.md "Speed").

    bench_page.py SITE WASM_BUILD_DIR DEBERTA_CLI [--seq 128] [--repeat 3] [--rounds 2]
                  [--models multilingual,base] [--base DIR]

For each model — the bundled deberta-tiny-multilingual and a deberta-v3-base-shaped one (184.6 M
random parameters, fp16 model.safetensors + spm.model, made by
notebooks_data/references/make_web_test_models.py base into a temporary folder) — and each round,
(--base DIR: that folder, made before, instead) it times a forward at N = `--seq` tokens (the token ids `deberta bench` draws, every 7th a [MASK]):

  - desktop: `deberta bench --model DIR --seq N --threads 1 --json` (its median);
  - node: WASM_BUILD_DIR's forward_bench_wasm.js --model DIR (one thread) and
    forward_bench_wasm_mt.js --threads 2 (the page's WebAssembly, the same flags);
  - the page: SITE (build-web/site) served to headless Chromium, once without the COOP / COEP
    headers (a first visit: deberta-explorer.js, one thread) and once with them (cross-origin
    isolated: deberta-explorer-mt.js, min(4, cores) threads); the model opened as the page opens
    it (the bundled one by `?model=`, the base one picked through #files as a user's folder), then
    `Module.ccall('web_bench_forward', …)` (web_main.cpp): the page's own run for a new input
    (`viewer::compute_result`: the forward at TraceLevel::Probs, the EMD, the MLM head at the masks
    once per distinct hidden state) and, in the same page, what `deberta bench` times (the forward
    and `mlm_logits`), `--repeat` times each; and the page's first run on its own text of about
    N tokens (`web_ui`'s compute_ms: the stages' time, run between frames as a user's run is).

Prints each figure as it comes, then a table of medians over the rounds with each one's ratio to
the desktop's one thread. Times only: nothing is asserted (the builds' numbers are checked by ctest
wasm_bench and the browser checks). The machine's other work disturbs every figure: the load
average is printed before each round.
"""
import argparse
import functools
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..")
# The browser driver of the page's checks (viewer/web/tests/browser_test.py): one shared Chromium,
# a browser context per page.
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import browser_test  # noqa: E402


class IsolatedHandler(browser_test.QuietHandler):
    """The site with the headers that make a page cross-origin isolated (what sw.js adds)."""

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()


def serve(site, isolated):
    handler = IsolatedHandler if isolated else browser_test.QuietHandler
    server = http.server.ThreadingHTTPServer(("127.0.0.1", browser_test.free_port()),
                                             functools.partial(handler, directory=site))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run(cmd, what):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NODE_PATH="/usr/share/nodejs"))
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d):\n%s%s" % (what, p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p.stdout


def result_line(text, what):
    for line in text.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError("no RESULT line from %s:\n%s" % (what, text))


def desktop_ms(cli, folder, a):
    out = run([cli, "bench", "--model", folder, "--seq", str(a.seq), "--threads", "1", "--repeat", str(a.repeat), "--json"],
              "deberta bench")
    return json.loads(out)["median_ms"]


def node_ms(wasm, folder, a, threads):
    program = "forward_bench_wasm.js" if threads == 1 else "forward_bench_wasm_mt.js"
    cmd = ["/usr/bin/node", "--no-experimental-fetch", os.path.join(wasm, program), "--model", os.path.abspath(folder),
           "--seq", str(a.seq), "--repeat", str(a.repeat), "--threads", str(threads)]
    return result_line(run(cmd, program), program)["median_ms"]


def page_ms(chromium, site, model, folder, a, isolated):
    """The page's own forward (web_bench_forward) on `model`: (page run median, bench median, threads,
    (the live first run's compute_ms, its token count))."""
    server = serve(site, isolated)
    base = "http://127.0.0.1:%d/index.html" % server.server_address[1]
    # About 128 tokens (the page prints how many): the live run's figure beside web_bench_forward's.
    text = " ".join(["The capital of France is [MASK]."] * 14)
    bundled = model == "multilingual"
    url = base + "?lang=en&text=" + urllib.parse.quote(text) + ("&model=deberta-tiny-multilingual" if bundled else "")
    page = browser_test.Page(chromium, url)
    predictions = "document.getElementById('predictions').textContent"
    try:
        first = page.wait_for(predictions, 300, "the first predictions")
        if not bundled:  # the base-shaped folder, picked through #files as a user's (browser check (r))
            node = page.call("DOM.querySelector", nodeId=page.call("DOM.getDocument")["root"]["nodeId"], selector="#files")["nodeId"]
            page.call("DOM.setFileInputFiles", files=sorted(os.path.join(folder, f) for f in os.listdir(folder)), nodeId=node)
            page.wait_for("(() => { const u = JSON.parse(Module.ccall('web_ui', 'string', [], [])); const t = %s; "
                          "return u.result_model.startsWith('/upload/') && t !== %s && t.includes(':') ? t : ''; })()"
                          % (predictions, json.dumps(first)), 1200, "the base-shaped model's predictions")
        ui = json.loads(page.eval("Module.ccall('web_ui', 'string', [], [])"))
        live = (ui["compute_ms"], ui["tokens"])  # the page's own first run on the text, between frames
        state = json.loads(page.eval("JSON.stringify({isolated: window.crossOriginIsolated, threads: Module._web_threads()})"))
        if state["isolated"] != isolated:
            raise RuntimeError("the page is %scross-origin isolated" % ("not " if isolated else ""))
        got = json.loads(page.eval("Module.ccall('web_bench_forward', 'string', ['number', 'number'], [%d, %d])" % (a.seq, a.repeat)))
        if "error" in got:
            raise RuntimeError("web_bench_forward: %s" % got["error"])
        return statistics.median(got["page_ms"]), statistics.median(got["bench_ms"]), got["threads"], live
    finally:
        page.close()
        server.shutdown()
        server.server_close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site")
    ap.add_argument("wasm")
    ap.add_argument("cli")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--models", default="multilingual,base")
    ap.add_argument("--base", help="a base-shaped folder made before by make_web_test_models.py base")
    a = ap.parse_args()
    chromium = shutil.which("chromium") or sys.exit("chromium not found (apt-get install chromium)")
    temp = tempfile.mkdtemp(prefix="deberta-bench-page-")
    folders = {}
    try:
        for model in a.models.split(","):
            if model == "multilingual":
                folders[model] = os.path.abspath(os.path.join(ROOT, "notebooks_data", "models", "deberta-tiny-multilingual"))
            elif model == "base" and a.base:
                folders[model] = os.path.abspath(a.base)
            elif model == "base":
                folders[model] = os.path.join(temp, "base")
                subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "notebooks_data", "references", "make_web_test_models.py"),
                                "base", folders[model]], check=True, capture_output=True)
            else:
                sys.exit("bench_page.py: unknown model %r (multilingual, base)" % model)
        times = {}  # (model, build) -> [ms per round]
        for r in range(1, a.rounds + 1):
            for model, folder in folders.items():
                load = open("/proc/loadavg").read().split()[0]
                row = []
                for build, f in (("desktop, 1 thread", lambda: desktop_ms(a.cli, folder, a)),
                                 ("node, 1 thread", lambda: node_ms(a.wasm, folder, a, 1)),
                                 ("node, 2 threads", lambda: node_ms(a.wasm, folder, a, 2))):
                    row.append((build, f()))
                    print("  %s %s: %.1f ms" % (model, build, row[-1][1]), flush=True)
                for isolated in (False, True):
                    t0 = time.time()
                    page, bench, threads, (live_ms, live_n) = page_ms(chromium, a.site, model, folder, a, isolated)
                    plural = "s" if threads > 1 else ""
                    row.append(("page, %d thread%s" % (threads, plural), page))
                    row.append(("page's forward as bench, %d thread%s" % (threads, plural), bench))
                    row.append(("page's live first run (%d tokens), %d thread%s" % (live_n, threads, plural), live_ms))
                    print("  %s page, %d thread%s: %.1f ms (as bench %.1f ms; live first run on %d tokens %.1f ms; %.0f s with its load)"
                          % (model, threads, plural, page, bench, live_n, live_ms, time.time() - t0), flush=True)
                for build, ms in row:
                    times.setdefault((model, build), []).append(ms)
                print("round %d, %s (load average %s): %s" % (r, model, load, ", ".join("%s %.1f ms" % x for x in row)), flush=True)
        print("medians over %d rounds (each a median of %d forwards), N = %d:" % (a.rounds, a.repeat, a.seq))
        for model in folders:
            desk = statistics.median(times[(model, "desktop, 1 thread")])
            print("  %s" % model)
            for (m, build), ms in times.items():
                if m == model:
                    print("    %-40s %9.1f ms  %5.2f x desktop" % (build, statistics.median(ms), statistics.median(ms) / desk))
        return 0
    finally:
        shutil.rmtree(temp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
