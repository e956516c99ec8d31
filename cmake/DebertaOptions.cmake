# Per-target build settings of DeBERTa Explorer's own targets.
#
#   deberta_target_defaults(<target>)
#     C++17 and the project's warnings (-Wall -Wextra; GCC 12's -Wmaybe-uninitialized is off
#     because it reports false positives inside Eigen's AVX-512 kernels with -march=native).
#     Warnings are PRIVATE: they never reach a project that links deberta::core.
#
# -march=native (option DEBERTA_NATIVE) is not set here: core/CMakeLists.txt gives it to every object
# of the core (the internal deberta_core_build) and, inside this build only (BUILD_INTERFACE), to
# what links the libraries — the CLI, the viewer, the tests — so that every translation unit that
# instantiates Eigen templates next to the library agrees with it. The installed package does not
# carry it (see the comment there).
include_guard(GLOBAL)

function(deberta_target_defaults target)
  target_compile_features(${target} PRIVATE cxx_std_17)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
endfunction()
