#!/usr/bin/env bash
# web.sh — the web edition of the explorer (docs/web.md): the same Dear ImGui viewer compiled to
# WebAssembly with Debian's emscripten, float64 as on the desktop, one thread.
#
#   bash scripts/web.sh               install what it needs, build build-web/site/, serve it at
#                                     http://127.0.0.1:8000/
#   bash scripts/web.sh --build-only  the same without serving
#
# DEBERTA_WEB_OUT=<dir> builds into <dir> (its cmake/ tree and site/) instead of build-web/, so
# sessions can build side by side: DEBERTA_WEB_OUT=$PWD/build-web-speed bash scripts/web.sh --build-only
#
# What it installs (Debian packages): emscripten, its node, and Dear ImGui's sources
# (`apt-get source imgui`, the version the desktop build links). The deb-src entry is derived from
# this machine's own apt sources: a copy of debian.sources with `Types: deb-src`, in a file of its
# own (/etc/apt/sources.list.d/deberta-src.sources). No registry host is written here.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${DEBERTA_WEB_OUT:-$ROOT/build-web}
serve=1
[[ "${1:-}" == "--build-only" ]] && serve=0

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo

need_pkgs=()
for p in emscripten nodejs dpkg-dev fonts-dejavu-core fonts-droid-fallback fonts-nanum python3; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [[ ${#need_pkgs[@]} -gt 0 ]]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${need_pkgs[@]}"
fi
# Header-only libraries the core compiles with (the desktop setup installs them too).
for p in libeigen3-dev nlohmann-json3-dev doctest-dev libstb-dev libfmt-dev gettext; do
  dpkg -s "$p" >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$p"
done

# Dear ImGui's sources: Debian's source package of the imgui the desktop links.
IMGUI_DIR=$OUT/imgui-src
if [[ ! -f "$IMGUI_DIR/imgui.cpp" ]]; then
  src_list=/etc/apt/sources.list.d/deberta-src.sources
  if ! apt-get source --print-uris imgui >/dev/null 2>&1; then
    base=""
    for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
      [[ -f "$f" ]] && grep -q '^Types:.*deb' "$f" && { base=$f; break; }
    done
    [[ -n "$base" ]] || { echo "web.sh: no deb822 apt source to derive a deb-src entry from" >&2; exit 1; }
    sed 's/^Types:.*/Types: deb-src/' "$base" | $SUDO tee "$src_list" >/dev/null
    $SUDO apt-get update -q
  fi
  rm -rf "$OUT/imgui-fetch" && mkdir -p "$OUT/imgui-fetch"
  version=$(dpkg-query -W -f='${source:Version}' libimgui-dev 2>/dev/null || true)
  (cd "$OUT/imgui-fetch" && apt-get source --download-only "imgui${version:+=$version}" >/dev/null 2>&1 ||
     apt-get source --download-only imgui >/dev/null)
  (cd "$OUT/imgui-fetch" && dpkg-source --no-check -x ./*.dsc src >/dev/null)
  rm -rf "$IMGUI_DIR" && mv "$OUT/imgui-fetch/src" "$IMGUI_DIR" && rm -rf "$OUT/imgui-fetch"
fi

# Debian's emscripten: its node wants Debian's node modules; its packaged cache stays as it is.
export NODE_PATH=/usr/share/nodejs
unset EM_CACHE

# Header-only includes, without the rest of /usr/include (glibc's headers must not shadow
# emscripten's sysroot).
INC=$OUT/include
mkdir -p "$INC"
for d in nlohmann doctest fmt; do ln -sfn "/usr/include/$d" "$INC/$d"; done
ln -sfn /usr/include/stb/stb_image_write.h "$INC/stb_image_write.h"

emcmake cmake -S viewer/web -B "$OUT/cmake" -DCMAKE_BUILD_TYPE=Release -DIMGUI_DIR="$IMGUI_DIR" \
  -DDEBERTA_WEB_INCLUDE="$INC" -DDEBERTA_SOURCE_DIR="$ROOT" >/dev/null
cmake --build "$OUT/cmake" -j "$(nproc)"

# The static site: index.html at its root.
SITE=$OUT/site
rm -rf "$SITE" && mkdir -p "$SITE"
cp "$OUT/cmake/deberta-explorer.js" "$OUT/cmake/deberta-explorer.wasm" "$OUT/cmake/deberta-explorer.data" "$SITE/"
cp viewer/web/index.html "$SITE/index.html"
cp viewer/web/sw.js "$SITE/sw.js"  # the offline copy (docs/web.md)
# The page's own strings (loading line, dead ends, Open button) from the explorer's catalogues.
/usr/bin/python3 viewer/web/page_catalogues.py viewer/po "$SITE/page_catalogues.js"
# The docs as HTML and the source as .tar.xz (linked from the page's bar; ~1.5 MB together).
/usr/bin/python3 scripts/site_docs.py "$ROOT" "$SITE"
du -sh "$SITE" | sed 's/^/web.sh: site size /'
size=$(du -sb "$SITE" | cut -f1)
# At most 60 MB with the multilingual bundled model beside the English one (issues 40 and 41).
if (( size > 60 * 1024 * 1024 )); then echo "web.sh: the site is over 60 MB" >&2; exit 1; fi

if [[ $serve -eq 1 ]]; then
  echo "web.sh: serving $SITE at http://127.0.0.1:8000/ (Ctrl+C stops)"
  cd "$SITE" && exec python3 -m http.server 8000 --bind 127.0.0.1
fi
echo "web.sh: built $SITE"
