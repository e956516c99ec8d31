// mmintrin.h — an empty MMX header for the web edition's SIMD build (viewer/web/CMakeLists.txt).
//
// Eigen 3.4's SSE2 path includes <mmintrin.h>, <emmintrin.h> and <xmmintrin.h> but uses no MMX
// (64-bit __m64) intrinsics. Emscripten maps SSE and SSE2 onto WebAssembly SIMD
// (system/include/compat/{x,e}mmintrin.h) and has no mmintrin.h, so the compiler's own x86 header
// would be found, which refuses any other target. This one stands in for it.
#pragma once
