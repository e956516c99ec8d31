#!/usr/bin/env bash
# web.sh — the web edition of the explorer (docs/web.md): the same Dear ImGui viewer compiled to
# WebAssembly with Debian's emscripten, float64 as on the desktop: a one-thread build and a threaded
# one (emscripten pthreads) for pages that are cross-origin isolated (docs/web.md "Speed").
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
serve=1 mode=site
case "${1:-}" in
  --build-only) serve=0 ;;
  --deps-only) serve=0 mode=deps ;;        # the WebAssembly libraries only (built or reused), then stop
  --print-deps-key) serve=0 mode=key ;;    # print the libraries' cache key and stop (tests/web_cache_test.sh)
  "") ;;
  *) echo "web.sh: unknown option $1 (usage: web.sh [--build-only | --deps-only | --print-deps-key])" >&2; exit 2 ;;
esac
took() { echo "web.sh: $1 at $((SECONDS / 60)) min $((SECONDS % 60)) s"; }

SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO=sudo

need_pkgs=()
for p in emscripten nodejs dpkg-dev fonts-dejavu-core fonts-droid-fallback fonts-nanum fonts-ipafont-gothic python3-fonttools python3; do
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

# debian_source PKG DEST [BINARY]: Debian's source package PKG (the version of the installed BINARY
# package when there is one), unpacked with its patches into DEST, unless DEST/.unpacked exists.
debian_source() {
  local pkg=$1 dest=$2 binary=${3:-} version=""
  [[ -f "$dest/.unpacked" ]] && return 0
  if ! apt-get source --print-uris "$pkg" >/dev/null 2>&1; then
    local base="" src_list=/etc/apt/sources.list.d/deberta-src.sources
    for f in /etc/apt/sources.list.d/debian.sources /etc/apt/sources.list.d/*.sources; do
      [[ -f "$f" ]] && grep -q '^Types:.*deb' "$f" && { base=$f; break; }
    done
    [[ -n "$base" ]] || { echo "web.sh: no deb822 apt source to derive a deb-src entry from" >&2; exit 1; }
    sed 's/^Types:.*/Types: deb-src/' "$base" | $SUDO tee "$src_list" >/dev/null
    $SUDO apt-get update -q
  fi
  [[ -n "$binary" ]] && version=$(dpkg-query -W -f='${source:Version}' "$binary" 2>/dev/null || true)
  rm -rf "$dest.fetch" && mkdir -p "$dest.fetch"
  (cd "$dest.fetch" && { apt-get source --download-only "$pkg${version:+=$version}" >/dev/null 2>&1 ||
     apt-get source --download-only "$pkg" >/dev/null; })
  (cd "$dest.fetch" && dpkg-source --no-check -x ./*.dsc src >/dev/null)
  rm -rf "$dest" && mv "$dest.fetch/src" "$dest" && rm -rf "$dest.fetch"
  touch "$dest/.unpacked"
}

# What this machine keeps between builds and clones (scripts/cache.sh): the WebAssembly libraries
# and Dear ImGui's sources below, and ccache for the explorer's own objects.
source scripts/cache.sh
deberta_cache_enable_ccache "$ROOT"
mkdir -p "$OUT"

# Dear ImGui's sources: Debian's source package of the imgui the desktop links (kept per version).
if [[ "$DEBERTA_CACHE" == off ]]; then
  IMGUI_DIR=$OUT/imgui-src
else
  IMGUI_DIR=$DEBERTA_CACHE/imgui-src/$(dpkg-query -W -f='${source:Version}' libimgui-dev)
  mkdir -p "$(dirname "$IMGUI_DIR")"
fi
[[ -f "$IMGUI_DIR/imgui.cpp" ]] && touch "$IMGUI_DIR/.unpacked"
(flock 9; debian_source imgui "$IMGUI_DIR" libimgui-dev) 9>"$IMGUI_DIR.lock"
took "packages and sources ready"

# Debian's emscripten: its node wants Debian's node modules; its packaged cache stays as it is.
export NODE_PATH=/usr/share/nodejs
unset EM_CACHE
# emcc checks its toolchain (LLVM, node) on every call here, ~1 s each (the packaged cache keeps no
# record of a passed check): about half of each compile and a third of each configure check.
# Checked once, then skipped.
emcc --check >/dev/null 2>&1 || { echo "web.sh: emcc --check failed:" >&2; emcc --check >&2; exit 1; }
export EMCC_SKIP_SANITY_CHECK=1

# Header-only includes, without the rest of /usr/include (glibc's headers must not shadow
# emscripten's sysroot).
INC=$OUT/include
mkdir -p "$INC"
for d in nlohmann doctest fmt; do ln -sfn "/usr/include/$d" "$INC/$d"; done
ln -sfn /usr/include/stb/stb_image_write.h "$INC/stb_image_write.h"

# The readers' C and C++ libraries, the desktop's own (zlib + libzip for pytorch_model.bin,
# libsentencepiece with its bundled protobuf-lite for spm.model), built for WebAssembly from Debian's
# source packages into static libraries: PREFIX/{include,lib}, once with DEBERTA_WEB_DEP_FLAGS
# (default -O2) for the one-thread build (…/deps) and once more with -pthread for the threaded
# one (…/deps-mt): objects with and without atomics do not link together.
DEP_FLAGS=${DEBERTA_WEB_DEP_FLAGS:--O2}
build_web_deps() {  # build_web_deps PREFIX FLAGS
  local prefix=$1 flags=$2
  mkdir -p "$prefix/include" "$prefix/lib"
  dep_cmake() {  # dep_cmake SRC BUILD [cmake args…]: configure SRC with emcmake into BUILD
    local src=$1 build=$2; shift 2
    emcmake cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_INSTALL_PREFIX="$prefix" -Wno-dev "$@" >/dev/null
  }
  if [[ ! -f "$prefix/lib/libz.a" ]]; then
    debian_source zlib "$prefix/zlib-src" zlib1g-dev
    # zlib's own configure (Debian's source has no win32/ files, which its CMakeLists asks for).
    (cd "$prefix/zlib-src"; CFLAGS="$flags" emconfigure ./configure --static --prefix="$prefix" >/dev/null
     emmake make -j "$(nproc)" libz.a >/dev/null)
    cp "$prefix/zlib-src/libz.a" "$prefix/lib/" && cp "$prefix/zlib-src/zconf.h" "$prefix/zlib-src/zlib.h" "$prefix/include/"
  fi
  if [[ ! -f "$prefix/lib/libzip.a" ]]; then
    debian_source libzip "$prefix/libzip-src" libzip-dev
    # Its configure checks' answers for libzip 1.7.3 under emscripten 3.1.6 (Debian 12's pair), when
    # that is the pair here (scripts/web-libzip-checks.cmake); else it runs them (~10 min).
    local checks=()
    grep -q "VERSION 1.7.3" "$prefix/libzip-src/CMakeLists.txt" && [[ $(emcc --version | head -1) == *" 3.1.6 "* ]] &&
      checks=(-C "$ROOT/scripts/web-libzip-checks.cmake")
    # (CMake's check_type_size reads 9 for off_t and size_t under emscripten 3.1.6: given here.)
    dep_cmake "$prefix/libzip-src" "$prefix/libzip-build" "${checks[@]}" -DBUILD_SHARED_LIBS=OFF -DBUILD_TOOLS=OFF \
      -DBUILD_REGRESS=OFF -DBUILD_EXAMPLES=OFF -DBUILD_DOC=OFF -DENABLE_COMMONCRYPTO=OFF -DENABLE_GNUTLS=OFF \
      -DENABLE_MBEDTLS=OFF -DENABLE_OPENSSL=OFF -DENABLE_WINDOWS_CRYPTO=OFF -DENABLE_BZIP2=OFF -DENABLE_LZMA=OFF \
      -DZLIB_INCLUDE_DIR="$prefix/include" -DZLIB_LIBRARY="$prefix/lib/libz.a" \
      -DHAVE_SIZEOF_OFF_T=TRUE -DSIZEOF_OFF_T=8 -DHAVE_SIZEOF_SIZE_T=TRUE -DSIZEOF_SIZE_T=4
    cmake --build "$prefix/libzip-build" -j "$(nproc)" >/dev/null
    cmake --install "$prefix/libzip-build" >/dev/null
  fi
  if [[ ! -f "$prefix/lib/libsentencepiece.a" ]]; then
    debian_source sentencepiece "$prefix/sentencepiece-src" libsentencepiece-dev
    # Its bundled protobuf-lite is compiled with -pthread unconditionally: dropped without threads.
    [[ " $flags " == *" -pthread "* ]] ||
      sed -i 's/"-pthread -DHAVE_PTHREAD=1/"-DHAVE_PTHREAD=1/' "$prefix/sentencepiece-src/src/CMakeLists.txt"
    # Debian builds the library shared only; emscripten turns that target into a static library.
    dep_cmake "$prefix/sentencepiece-src" "$prefix/sentencepiece-build" -DSPM_ENABLE_TCMALLOC=OFF -DSPM_ENABLE_SHARED=ON
    cmake --build "$prefix/sentencepiece-build" --target sentencepiece -j "$(nproc)" >/dev/null
    cp "$prefix/sentencepiece-build/src/libsentencepiece.a" "$prefix/lib/"
    cp "$prefix/sentencepiece-src/src/sentencepiece_processor.h" "$prefix/include/"
  fi
}
# build_both_deps BASE: the two sets side by side into BASE/deps and BASE/deps-mt (most of their time
# is configure checks, one emcc call after another).
build_both_deps() {
  build_web_deps "$1/deps" "$DEP_FLAGS" &
  local one_thread_deps=$!
  build_web_deps "$1/deps-mt" "$DEP_FLAGS -pthread"
  wait "$one_thread_deps"
}
# web_deps_key: the cache key of the libraries: the compiler, the three source packages' versions,
# the flags and the recipe itself (this script's functions and libzip's configure answers).
web_deps_key() {
  deberta_cache_key "$(emcc --version | head -1)" \
    "$(dpkg-query -W -f='${source:Version} ' zlib1g-dev libzip-dev libsentencepiece-dev)" "$DEP_FLAGS" \
    "$(declare -f build_web_deps debian_source)" "$(cat "$ROOT/scripts/web-libzip-checks.cmake")"
}
if [[ $mode == key ]]; then web_deps_key; exit 0; fi
if [[ "$DEBERTA_CACHE" == off ]]; then
  DEPS_BASE=$OUT
  build_both_deps "$DEPS_BASE"
  took "WebAssembly libraries built"
else
  # Built once per machine, kept under web_deps_key: a second clone reuses them; a change of any
  # of its parts builds anew.
  WEB_DEPS_KEY=$(web_deps_key)
  DEPS_BASE=$DEBERTA_CACHE/wasm-deps/$WEB_DEPS_KEY
  mkdir -p "$DEBERTA_CACHE/wasm-deps"
  exec 8>"$DEPS_BASE.lock"
  flock 8  # another build of the same key (a second clone, a second session) waits here
  if [[ -f "$DEPS_BASE/.complete" ]]; then
    echo "web.sh: WebAssembly libraries reused from $DEPS_BASE (key $WEB_DEPS_KEY)"
  else
    rm -rf "$DEPS_BASE.partial"
    build_both_deps "$DEPS_BASE.partial"
    # Only the libraries and headers are kept; the sources and build trees go.
    for d in deps deps-mt; do
      (cd "$DEPS_BASE.partial/$d" && rm -rf -- *-src *-build share bin lib/cmake lib/pkgconfig)
    done
    touch "$DEPS_BASE.partial/.complete"
    rm -rf "$DEPS_BASE" && mv "$DEPS_BASE.partial" "$DEPS_BASE"
    echo "web.sh: WebAssembly libraries built into $DEPS_BASE (key $WEB_DEPS_KEY)"
  fi
  exec 8>&-
  took "WebAssembly libraries ready"
fi
DEPS=$DEPS_BASE/deps
[[ $mode == deps ]] && { took "done (--deps-only)"; exit 0; }

# The page's Japanese font: IPA Gothic cut to Kana and the JIS X 0208 level-1 kanji (issue 54, item 4).
mkdir -p "$OUT/fonts"
ja_font=/usr/share/fonts/opentype/ipafont-gothic/ipag.ttf
if [[ ! -s "$OUT/fonts/ipag.ttf" || "$ja_font" -nt "$OUT/fonts/ipag.ttf" || viewer/web/site/japanese_font.py -nt "$OUT/fonts/ipag.ttf" ]]; then
  /usr/bin/python3 viewer/web/site/japanese_font.py "$ja_font" "$OUT/fonts/ipag.ttf.partial"
  mv "$OUT/fonts/ipag.ttf.partial" "$OUT/fonts/ipag.ttf"
fi
# The page's Korean font: Nanum Gothic with every character, without hinting (2.9 MB of its 4.7 MB).
ko_font=/usr/share/fonts/truetype/nanum/NanumGothic.ttf
if [[ ! -s "$OUT/fonts/NanumGothic.ttf" || "$ko_font" -nt "$OUT/fonts/NanumGothic.ttf" || viewer/web/site/unhinted_font.py -nt "$OUT/fonts/NanumGothic.ttf" ]]; then
  /usr/bin/python3 viewer/web/site/unhinted_font.py "$ko_font" "$OUT/fonts/NanumGothic.ttf.partial"
  mv "$OUT/fonts/NanumGothic.ttf.partial" "$OUT/fonts/NanumGothic.ttf"
fi
emcmake cmake -S viewer/web -B "$OUT/cmake" -DCMAKE_BUILD_TYPE=Release -DIMGUI_DIR="$IMGUI_DIR" "${DEBERTA_CCACHE_ARGS[@]}" \
  -DDEBERTA_WEB_INCLUDE="$INC" -DDEBERTA_WEB_DEPS="$DEPS" -DDEBERTA_SOURCE_DIR="$ROOT" -DDEBERTA_WEB_JA_FONT="$OUT/fonts/ipag.ttf" \
  -DDEBERTA_WEB_KO_FONT="$OUT/fonts/NanumGothic.ttf" >/dev/null
cmake --build "$OUT/cmake" -j "$(nproc)"
took "both builds of the explorer done"

# The static site: index.html at its root.
SITE=$OUT/site
rm -rf "$SITE" && mkdir -p "$SITE"
cp "$OUT/cmake/deberta-explorer.js" "$OUT/cmake/deberta-explorer.wasm" "$OUT/cmake/deberta-explorer.data" "$SITE/"
# The threaded build (index.html loads it where the page is cross-origin isolated) shares the data
# file: both builds preload the same files, checked here byte for byte.
cmp -s "$OUT/cmake/deberta-explorer.data" "$OUT/cmake/deberta-explorer-mt.data" ||
  { echo "web.sh: the two builds' data files differ (viewer/web/CMakeLists.txt must preload the same files)" >&2; exit 1; }
cp "$OUT/cmake/deberta-explorer-mt.js" "$OUT/cmake/deberta-explorer-mt.wasm" "$OUT/cmake/deberta-explorer-mt.worker.js" "$SITE/"
cp viewer/web/site/index.html "$SITE/index.html"
cp viewer/web/site/sw.js "$SITE/sw.js"  # the offline copy (docs/web.md)
# sw.js imports coi-serviceworker (npm, viewer/web/site/coi/package-lock.json): the headers that make the
# page cross-origin isolated, so that the threaded build can run.
bash viewer/web/site/coi/install.sh "$OUT/npm"
cp "$OUT/npm/node_modules/coi-serviceworker/coi-serviceworker.js" "$SITE/"
# The page's own strings (loading line, dead ends, Open button) from the explorer's catalogues.
/usr/bin/python3 viewer/web/site/page_catalogues.py viewer/i18n/po "$SITE/page_catalogues.js"
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
took "done"
