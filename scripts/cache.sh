# cache.sh — sourced by build.sh, sanitize.sh, fuzz.sh and web.sh (issue 56, "build once per
# machine"): what a build on this machine may reuse from an earlier build in any clone.
#
#   DEBERTA_CACHE   the cache's folder (default ${XDG_CACHE_HOME:-$HOME/.cache}/deberta-explorer);
#                   DEBERTA_CACHE=off turns every cache off (each build then starts from nothing)
#
# Two things are kept there:
#   ccache/         Debian's ccache for the compiler outputs of the native, sanitizer, fuzzer and
#                   WebAssembly builds. ccache keys each object by the preprocessed source, the
#                   compiler's own bytes and its flags; CCACHE_BASEDIR makes the paths of two clones
#                   of the project compare equal.
#   wasm-deps/KEY/  the WebAssembly libraries web.sh builds from Debian's source packages (zlib,
#                   libzip, sentencepiece with its protobuf-lite), KEY = deberta_cache_key of
#                   everything that changes them (web.sh lists it).
#   imgui-src/VER/  Dear ImGui's sources, VER = the installed libimgui-dev's source version.
#
# deberta_cache_key TEXT…   prints a short key (sha256, 16 hex digits) of its arguments.
# deberta_cache_enable_ccache ROOT
#                   exports CCACHE_* for ROOT's builds and sets DEBERTA_CCACHE_ARGS (the CMake
#                   launcher flags) when ccache is installed and the cache is on; else leaves it empty.

DEBERTA_CACHE=${DEBERTA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/deberta-explorer}

deberta_cache_key() {
  printf '%s\n' "$@" | sha256sum | cut -c1-16
}

deberta_cache_enable_ccache() {
  DEBERTA_CCACHE_ARGS=()
  [[ "$DEBERTA_CACHE" == off ]] && return 0
  command -v ccache >/dev/null 2>&1 || return 0
  export CCACHE_DIR=${CCACHE_DIR:-$DEBERTA_CACHE/ccache}
  export CCACHE_BASEDIR=$1         # paths below the clone hash as relative: clones share objects
  export CCACHE_NOHASHDIR=1        # the build folder's path is not part of the key (-g1 objects)
  export CCACHE_COMPILERCHECK=content
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
  mkdir -p "$CCACHE_DIR"
  DEBERTA_CCACHE_ARGS=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
}
