# Per-target build settings of DeBERTa Explorer's own targets.
#
#   deberta_target_defaults(<target>)
#     C++17 and the project's warnings (-Wall -Wextra; GCC 12's -Wmaybe-uninitialized is off
#     because it reports false positives inside Eigen's AVX-512 kernels with -march=native).
#     Warnings are PRIVATE: they never reach a project that links deberta::core.
#
# -march=native (option DEBERTA_NATIVE) is not set here: it is a PUBLIC compile option of
# deberta::math (core/CMakeLists.txt), because every translation unit that instantiates Eigen
# templates next to the library must agree with it (see the comment there).
include_guard(GLOBAL)

function(deberta_target_defaults target)
  target_compile_features(${target} PRIVATE cxx_std_17)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
endfunction()
