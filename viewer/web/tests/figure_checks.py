"""browser_test.py's figure checks (issue 41, item 8), in a module of their own:

  (v) SVG figures in the page: on the bundled model, ?text=…&layer=1&head=2&tab=export, the Export
      tab's "map → SVG" and "grid → SVG" download SVG files, and each is byte for byte the SVG the
      desktop viewer writes for the same model, text and view (deberta-viewer --figure /
      --figure-grid, headless).
      Also the bar's Docs and Source links: the docs' pages answer, the source is a .tar.xz of the
      code and docs without model weights.
  (w) the map PNG is the labelled figure: "PNG of the map" downloads a PNG wider than the bare
      260-pixel map it used to be, byte for byte the PNG the desktop writes for the same view
      (deberta-viewer --export: probs.png).

Both need the desktop viewer (browser_test.py --viewer PATH; ctest passes the build's): without
it they fail, naming what is missing.
"""
import io
import json
import os
import re
import shutil
import struct
import subprocess
import tarfile
import time
import urllib.parse
import urllib.request

TEXT = "In the beginning God created the heaven and the earth. And the earth was without form, and [MASK]."
LAYER, HEAD = 1, 2


def _downloads(page, folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    try:
        page.call("Browser.setDownloadBehavior", behavior="allow", downloadPath=folder)
    except RuntimeError:
        page.call("Page.setDownloadBehavior", behavior="allow", downloadPath=folder)


def _wait_file(folder, suffix, before, seconds=60):
    """The first finished file ending in `suffix` in `folder` not in `before`, or None."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        new = [f for f in os.listdir(folder) if f.endswith(suffix) and f not in before]
        if new:
            time.sleep(0.5)  # Chromium renames the finished download into place
            return os.path.join(folder, new[0])
        time.sleep(0.3)
    return None


def _desktop(viewer, root, args, log):
    """Runs the desktop viewer headless (under xvfb-run) on the bundled model; its output in `log`."""
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", viewer, "--model",
           os.path.join(root, "notebooks_data", "models", "deberta-tiny-512"), "--text", TEXT,
           "--select", "%d:%d" % (LAYER, HEAD)] + args
    with open(log, "w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=300).returncode


def _png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return struct.unpack(">II", head[16:24])


def figure_checks(Page, click_widget, chromium, base, out, viewer, which, failures):
    """Runs (v) and/or (w) (`which`: a set of letters); appends failures."""
    if not viewer or not os.path.exists(viewer):
        failures.append("(%s) needs the desktop viewer to compare with: browser_test.py … --viewer PATH/deberta-viewer (got %r)"
                        % (",".join(sorted(which)), viewer))
        return
    if not shutil.which("xvfb-run"):
        failures.append("(%s) xvfb-run not found (apt-get install xvfb xauth)" % ",".join(sorted(which)))
        return
    root = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
    desk = os.path.join(out, "figures-desktop")
    shutil.rmtree(desk, ignore_errors=True)
    os.makedirs(desk)
    want = {}
    if "v" in which:
        if _desktop(viewer, root, ["--figure", os.path.join(desk, "map.svg"), "--figure-grid", os.path.join(desk, "grid.svg")],
                    os.path.join(desk, "svg.log")) != 0:
            failures.append("(v) the desktop viewer did not write its SVG figures (%s)" % os.path.join(desk, "svg.log"))
            return
        want["export: map SVG"] = (".svg", os.path.join(desk, "map.svg"))
        want["export: grid SVG"] = (".svg", os.path.join(desk, "grid.svg"))
    if "w" in which:
        # --export runs headless with --screenshot (the export's own test does the same).
        if _desktop(viewer, root, ["--screenshot", os.path.join(desk, "window.png"), "--export", desk],
                    os.path.join(desk, "export.log")) != 0:
            failures.append("(w) the desktop viewer did not export (%s)" % os.path.join(desk, "export.log"))
            return
        want["export: PNG of the map"] = (".png", os.path.join(desk, "probs.png"))

    url = base + "?text=%s&layer=%d&head=%d&tab=export" % (urllib.parse.quote(TEXT), LAYER, HEAD)
    page = Page(chromium, url)
    try:
        page.wait_for("document.getElementById('predictions').textContent", 180, "the first predictions")
        folder = os.path.join(out, "figures-page")
        _downloads(page, folder)
        for widget, (suffix, desktop_file) in want.items():
            letter = "w" if suffix == ".png" else "v"
            before = set(os.listdir(folder))
            click_widget(page, widget)
            got = _wait_file(folder, suffix, before)
            if not got:
                failures.append("(%s) clicking %r downloaded no %s file (%s)" % (letter, widget, suffix, sorted(os.listdir(folder))))
                continue
            with open(got, "rb") as f:
                page_bytes = f.read()
            with open(desktop_file, "rb") as f:
                desk_bytes = f.read()
            print("(%s) %r downloaded %s (%d bytes); the desktop's %s: %d bytes"
                  % (letter, widget, os.path.basename(got), len(page_bytes), os.path.basename(desktop_file), len(desk_bytes)))
            if suffix == ".svg":
                if b"<svg" not in page_bytes[:300] or b"<text" not in page_bytes:
                    failures.append("(v) %s is not an SVG figure with text" % got)
            else:
                size = _png_size(got)
                print("(w) the page's PNG is %s × %s pixels" % size if size else "(w) not a PNG")
                if not size or size[0] <= 260 or size[1] <= 260:
                    failures.append("(w) the page's map PNG is not the labelled figure (size %r)" % (size,))
            if page_bytes != desk_bytes:
                at = next((i for i, (a, b) in enumerate(zip(page_bytes, desk_bytes)) if a != b), min(len(page_bytes), len(desk_bytes)))
                failures.append("(%s) the page's %s differs from the desktop's %s from byte %d on"
                                % (letter, got, desktop_file, at))
        if "v" in which:
            _links_check(page, failures)
    finally:
        page.close()


def _links_check(page, failures):
    """(v) also: the bar's Docs and Source links (the site carries them: scripts/site_docs.py). The
    docs index answers and links pages that all answer; the source is a .tar.xz holding the core,
    the viewer and the docs."""
    for link in ("docs-link", "source-link"):
        if not page.eval("!!document.getElementById(%s)" % json.dumps(link)):
            failures.append("(v) the bar has no #%s" % link)
            return
    docs = page.eval("document.getElementById('docs-link').href")
    source = page.eval("document.getElementById('source-link').href")
    try:
        index = urllib.request.urlopen(docs, timeout=30).read().decode("utf-8")
        pages = sorted(set(re.findall(r'href="([\w.-]+\.html)"', index)) - {"index.html"})
        bad = []
        for name in pages:
            try:
                urllib.request.urlopen(urllib.parse.urljoin(docs, name), timeout=30).read()
            except Exception as e:  # a dead link
                bad.append("%s (%s)" % (name, e))
        print("(v) Docs: %s links %d pages%s" % (docs, len(pages), "; dead: " + ", ".join(bad) if bad else ""))
        if len(pages) < 10 or "user-guide.html" not in pages or bad:
            failures.append("(v) the docs in the site: %d pages linked, dead links %s" % (len(pages), bad))
        data = urllib.request.urlopen(source, timeout=60).read()
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:xz") as tar:
            names = tar.getnames()
        want = ["deberta-explorer/core/src/equations/equations.cpp", "deberta-explorer/viewer/figures/figure_svg.cpp",
                "deberta-explorer/docs/user-guide.md", "deberta-explorer/README.md"]
        print("(v) Source: %s, %.2f MB, %d files" % (source, len(data) / 1e6, len(names)))
        missing = [w for w in want if w not in names]
        if missing or any(n.endswith(".safetensors") for n in names):
            failures.append("(v) the source archive lacks %s or holds model weights" % missing)
    except Exception as e:
        failures.append("(v) the Docs / Source links: %s" % e)
