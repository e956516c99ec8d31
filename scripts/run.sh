#!/usr/bin/env bash
# The main job: installs dependencies, builds, and opens the explorer on the bundled model.
# Without a display it prints the bundled model's predictions instead and says how to get a window.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" && -x build/bin/deberta-viewer ]]; then
  exec build/bin/deberta-viewer "$@"
fi
echo "No display found: showing the command-line view (run build/bin/deberta-viewer on a desktop)."
build/bin/deberta predict --text "In the beginning God created the heaven and the [MASK]." --top-k 5
