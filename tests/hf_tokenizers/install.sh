#!/usr/bin/env bash
# Installs the reference tokenizers library of package-lock.json (npm `tokenizers`, Hugging Face's
# Rust library with its Linux binary) into DEST/node_modules, for tests/test_tokenizer_hf.cpp.
# Run by ctest as the hf_tokenizers_install fixture (tests/CMakeLists.txt). Idempotent: nothing is
# fetched when DEST already holds this lockfile's install and the library loads.
#
#   tests/hf_tokenizers/install.sh DEST
#
# Exits non-zero with one FAIL line when npm or the network is missing: the comparison tests that
# need the library then fail, they are never skipped.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:?usage: install.sh DEST}"
node=/usr/bin/node
[[ -x "$node" ]] || { echo "FAIL: hf_tokenizers: $node not found (scripts/setup.sh installs nodejs)"; exit 1; }
loads() { NODE_PATH="$dest/node_modules" "$node" -e "require('tokenizers')" >/dev/null 2>&1; }
mkdir -p "$dest"
if cmp -s "$here/package-lock.json" "$dest/package-lock.json" && loads; then
  echo "hf_tokenizers: $(NODE_PATH="$dest/node_modules" "$node" -p "require('tokenizers/package.json').version") already installed in $dest"
  exit 0
fi
command -v npm >/dev/null || { echo "FAIL: hf_tokenizers: npm not found (scripts/setup.sh installs it)"; exit 1; }
cp "$here/package.json" "$here/package-lock.json" "$dest/"
rm -rf "$dest/node_modules"
if ! (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error); then
  rm -f "$dest/package-lock.json"
  echo "FAIL: hf_tokenizers: npm ci of tests/hf_tokenizers/package-lock.json failed (is the npm registry reachable?)"
  exit 1
fi
if ! loads; then
  rm -f "$dest/package-lock.json"
  echo "FAIL: hf_tokenizers: the tokenizers package installed but does not load under $node"
  exit 1
fi
echo "hf_tokenizers: installed tokenizers $(NODE_PATH="$dest/node_modules" "$node" -p "require('tokenizers/package.json').version") in $dest"
