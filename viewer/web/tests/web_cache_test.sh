#!/usr/bin/env bash
# web_cache_test.sh SOURCE_DIR WORK — the WebAssembly libraries are built once per machine (issue 56,
# scripts/cache.sh): web.sh keeps them under a key of everything that changes them. Checks that
#   - the key is the same for the same inputs, and changes with the flags and with the compiler's
#     version (a stand-in emcc that reports another version);
#   - a second output folder (what a second clone's build-web/ is) reuses the libraries web_site
#     built, without building them again.
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin"
key() { bash "$src/scripts/web.sh" --print-deps-key | tail -1; }
fail=0
k1=$(key); k2=$(key)
echo "key: $k1 / again: $k2"
[[ "$k1" =~ ^[0-9a-f]{16}$ ]] || { echo "FAIL: the key is not 16 hex digits: $k1"; fail=1; }
[[ "$k1" == "$k2" ]] || { echo "FAIL: the same inputs gave two keys"; fail=1; }
k_flags=$(DEBERTA_WEB_DEP_FLAGS=-O1 key)
echo "key with DEBERTA_WEB_DEP_FLAGS=-O1: $k_flags"
[[ "$k_flags" != "$k1" ]] || { echo "FAIL: other flags, same key (the libraries would be reused)"; fail=1; }
real_emcc=$(command -v emcc)
cat >"$work/bin/emcc" <<EOT
#!/bin/sh
[ "\$1" = --version ] && { echo "emcc (Emscripten gcc/clang-like replacement + linker emulating GNU ld) 9.9.9"; exit 0; }
exec "$real_emcc" "\$@"
EOT
chmod +x "$work/bin/emcc"
k_emcc=$(PATH=$work/bin:$PATH key)
echo "key with another emcc version: $k_emcc"
[[ "$k_emcc" != "$k1" ]] || { echo "FAIL: another compiler, same key"; fail=1; }
log=$(DEBERTA_WEB_OUT=$work/second-clone bash "$src/scripts/web.sh" --deps-only)
echo "$log" | grep "WebAssembly libraries" || true
echo "$log" | grep -q "WebAssembly libraries reused from .*$k1" ||
  { echo "FAIL: a second output folder did not reuse the libraries of key $k1"; fail=1; }
[[ $fail -eq 0 ]] && echo "PASS: one key per recipe; a second build folder reuses the libraries"
exit $fail
