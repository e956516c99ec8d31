#!/usr/bin/env bash
# Installs coi-serviceworker (npm, the version of package-lock.json) into DEST/node_modules, for the
# site's service worker (viewer/web/site/sw.js imports its code; scripts/web.sh copies it into the site).
# The pattern of tests/hf_tokenizers/install.sh: `npm ci` of the committed lockfile, nothing fetched
# when DEST already holds this lockfile's install.
#
#   viewer/web/site/coi/install.sh DEST
#
# Exits non-zero with one FAIL line when npm or the registry is missing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:?usage: install.sh DEST}"
file=node_modules/coi-serviceworker/coi-serviceworker.js
mkdir -p "$dest"
if cmp -s "$here/package-lock.json" "$dest/package-lock.json" && [[ -s "$dest/$file" ]]; then
  exit 0
fi
command -v npm >/dev/null || { echo "FAIL: coi-serviceworker: npm not found (scripts/setup.sh installs it)"; exit 1; }
cp "$here/package.json" "$here/package-lock.json" "$dest/"
rm -rf "$dest/node_modules"
if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error); then
  rm -f "$dest/package-lock.json"
  echo "FAIL: coi-serviceworker: npm ci of viewer/web/site/coi/package-lock.json failed (is the npm registry reachable?)"
  exit 1
fi
[[ -s "$dest/$file" ]] || { rm -f "$dest/package-lock.json"; echo "FAIL: coi-serviceworker: $file missing after npm ci"; exit 1; }
echo "coi-serviceworker: installed $(node -p "require('$dest/node_modules/coi-serviceworker/package.json').version" 2>/dev/null) in $dest"
