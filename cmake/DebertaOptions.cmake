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

# deberta_scale_test_timeouts()
#   Multiplies the TIMEOUT of every test of the calling folder by DEBERTA_TEST_TIMEOUT_SCALE (an
#   integer ≥ 1; default 1: unchanged). A TIMEOUT is a guard against a hung test, sized for the
#   Release build on two busy cores; the sanitizer build (scripts/sanitize.sh: 3) runs the same
#   suites 2–3× slower, and under scripts/with_load.sh slower again (issue 56: the ASan lesson suite
#   passed its 300 s there). Call it last in a folder that adds tests (CMake 3.25 sets a test's
#   properties only from its own folder).
set(DEBERTA_TEST_TIMEOUT_SCALE 1 CACHE STRING "Multiply every test's TIMEOUT by this integer (sanitizer builds: 3)")
function(deberta_scale_test_timeouts)
  if(NOT DEBERTA_TEST_TIMEOUT_SCALE MATCHES "^[1-9][0-9]*$")
    message(FATAL_ERROR "DEBERTA_TEST_TIMEOUT_SCALE must be a whole number ≥ 1, got '${DEBERTA_TEST_TIMEOUT_SCALE}'")
  endif()
  if(DEBERTA_TEST_TIMEOUT_SCALE EQUAL 1)
    return()
  endif()
  get_property(_tests DIRECTORY PROPERTY TESTS)
  foreach(_test IN LISTS _tests)
    get_test_property(${_test} TIMEOUT _seconds)
    if(_seconds)
      math(EXPR _seconds "${_seconds} * ${DEBERTA_TEST_TIMEOUT_SCALE}")
      set_tests_properties(${_test} PROPERTIES TIMEOUT ${_seconds})
    endif()
  endforeach()
endfunction()
