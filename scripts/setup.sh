#!/usr/bin/env bash
# Installs every Debian 12 package the project needs to build, test and run (idempotent).
#   scripts/setup.sh            build + test + viewer + Python module + notebook dependencies (what CI needs)
#   scripts/setup.sh --python   also the Python stack for notebooks_data/ (torch, numpy, sentencepiece)
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config ninja-build
  # Compiler outputs kept between builds and clones on this machine (scripts/cache.sh, issue 56).
  ccache
  libeigen3-dev doctest-dev nlohmann-json3-dev libcli11-dev libfmt-dev gettext
  libzip-dev libsentencepiece-dev libpcre2-dev
  libimgui-dev libglfw3-dev libgl-dev libstb-dev fonts-dejavu-core fonts-droid-fallback fonts-nanum
  # Japanese in Japanese forms (issue 54, item 4); the page's copy is cut with fontTools (web.sh).
  fonts-ipafont-gothic python3-fonttools
  # Line breaking by the language's rules in the desktop viewer (UAX #14; issue 54, item 3).
  libunibreak-dev
  # English and Italian word lists: the test that no English prose is left in a translated interface.
  wamerican witalian
  xvfb xauth libgl1-mesa-dri
  # The desktop viewer's clipboard check (viewer/tests/desktop_paste_check.sh: keys and the X clipboard).
  xdotool xclip
  clang libclang-rt-14-dev
  # The Python module (pybind11) and its tests; the notebooks executed in CI (NumPy only, no torch).
  pybind11-dev python3-dev python3-numpy python3-pytest
  python3-nbclient python3-nbformat python3-ipykernel python3-matplotlib
  # The zoo's statistics test (tests/zoo_stats): SciPy as the reference, torch for the shared
  # initialisation of small models (no training in CI).
  python3-scipy python3-torch libopenblas0-pthread python3-sentencepiece
  # Figures for slides (SVG/PDF through cairo) and their PDF -> PNG check.
  libcairo2-dev poppler-utils
  # The web edition (scripts/web.sh: emscripten, the sources of Dear ImGui, zlib, libzip and
  # sentencepiece through dpkg-dev's `apt-get source`, built with make and cmake from above; the
  # site's docs rendered with python3-markdown) and its tests in a real
  # browser (chromium through the DevTools protocol).
  emscripten nodejs dpkg-dev chromium python3-websocket python3-markdown
)
# Hugging Face's tokenizers library (npm, tests/hf_tokenizers/package-lock.json; installed by
# tests/hf_tokenizers/install.sh when the tests run) needs npm. Node.js's own npm is used when it
# came with it; otherwise Debian's.
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
if [[ "${1:-}" == "--python" ]]; then
  pkgs+=(python3-torch python3-numpy python3-sentencepiece sentencepiece libopenblas0-pthread
          wordnet-base bible-kjv-text bible-kjv)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#pkgs[@]} packages present"
  exit 0
fi
SUDO=""
[[ $(id -u) -ne 0 ]] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: installed ${missing[*]}"
