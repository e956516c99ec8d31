// doctest_main.cpp — the runner of the golden suite compiled to WebAssembly (ctest golden_wasm).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
