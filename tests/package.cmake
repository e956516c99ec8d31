# The installed package, tested the way users consume it (issue 15).
#
# Included from tests/CMakeLists.txt, this file adds three ctest entries; run with `cmake -P` by
# those tests, it performs one step (STEP=install|cmake|pkgconfig):
#   package_install            `cmake --install` into a fresh prefix (build/package-test/prefix);
#                              checks the public headers, the CMake package and deberta.pc are
#                              there and the internal headers (pickle.h, tokenizer_detail.h) are not
#   package_cmake_consumer     configures and builds tests/consumer with find_package(deberta CONFIG)
#                              against that prefix, runs it on golden cases (≤ 1e-10 or it fails)
#   package_pkgconfig_consumer compiles the same main.cpp with `pkg-config --cflags --static --libs
#                              deberta` alone and runs it on a golden case
# Sanitizer builds do not add them (their instrumented archives need the sanitizer runtime in every
# consumer, which the package does not carry).

if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(DEBERTA_SANITIZE OR NOT DEBERTA_INSTALL)
    message(STATUS "package tests: not added (sanitizer build or DEBERTA_INSTALL=OFF)")
    return()
  endif()
  set(_work ${CMAKE_BINARY_DIR}/package-test)
  set(_args -DBUILD_DIR=${CMAKE_BINARY_DIR} -DWORK=${_work} -DSOURCE_DIR=${PROJECT_SOURCE_DIR}
            -DCXX=${CMAKE_CXX_COMPILER} -DGENERATOR=${CMAKE_GENERATOR} -DLAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER}
            -DPYTHON=$<$<TARGET_EXISTS:deberta_explorer>:${Python3_EXECUTABLE}>)
  add_test(NAME package_install COMMAND ${CMAKE_COMMAND} -DSTEP=install ${_args} -P ${CMAKE_CURRENT_LIST_FILE})
  add_test(NAME package_cmake_consumer COMMAND ${CMAKE_COMMAND} -DSTEP=cmake ${_args} -P ${CMAKE_CURRENT_LIST_FILE})
  add_test(NAME package_pkgconfig_consumer COMMAND ${CMAKE_COMMAND} -DSTEP=pkgconfig ${_args} -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(package_install PROPERTIES FIXTURES_SETUP deberta_package TIMEOUT 300 LABELS package)
  set_tests_properties(package_cmake_consumer package_pkgconfig_consumer PROPERTIES
                       FIXTURES_REQUIRED deberta_package TIMEOUT 600 LABELS package)
  return()
endif()

# ---- script mode -------------------------------------------------------------------------------
set(_prefix ${WORK}/prefix)
set(_golden ${SOURCE_DIR}/notebooks_data/golden)

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    list(JOIN ARGN " " _cmd)
    message(FATAL_ERROR "package test: `${_cmd}` failed (${_rc})")
  endif()
endfunction()

# The consumer on one case; fails unless it reports max |ours − expected| ≤ 1e-10.
function(run_consumer exe case)
  execute_process(COMMAND ${exe} ${_golden}/${case} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "package test: ${exe} ${case} exited with ${_rc}")
  endif()
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${_prefix})
  run_checked(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${_prefix})
  file(GLOB_RECURSE _configs ${_prefix}/*/debertaConfig.cmake)
  file(GLOB_RECURSE _versions ${_prefix}/*/debertaConfigVersion.cmake)
  file(GLOB_RECURSE _pcs ${_prefix}/*/deberta.pc)
  foreach(_what _configs _versions _pcs)
    if(NOT ${_what})
      message(FATAL_ERROR "package test: ${_prefix} has no ${_what} file after the install")
    endif()
  endforeach()
  foreach(_header deberta/dump.h deberta/model.h deberta/safetensors.h deberta/tokenizer.h)
    if(NOT EXISTS ${_prefix}/include/${_header})
      message(FATAL_ERROR "package test: public header ${_header} not installed in ${_prefix}/include")
    endif()
  endforeach()
  foreach(_header pickle.h tokenizer_detail.h)
    file(GLOB_RECURSE _found ${_prefix}/${_header})
    if(_found)
      message(FATAL_ERROR "package test: internal header ${_header} was installed: ${_found}")
    endif()
  endforeach()
  file(READ ${_pcs} _pc)
  if(NOT _pc MATCHES "prefix=${_prefix}\n")
    message(FATAL_ERROR "package test: ${_pcs} does not name the install prefix ${_prefix}:\n${_pc}")
  endif()
  # The installed Python module (when it is built) imports from the prefix and runs a golden case.
  if(PYTHON)
    file(GLOB_RECURSE _module ${_prefix}/*/deberta_explorer*.so)
    if(NOT _module)
      message(FATAL_ERROR "package test: the Python module was built but not installed under ${_prefix}")
    endif()
    get_filename_component(_module_dir "${_module}" DIRECTORY)
    run_checked(${CMAKE_COMMAND} -E env PYTHONPATH=${_module_dir} ${PYTHON} -c
                "import deberta_explorer as dx; assert dx.__file__.startswith('${_module_dir}'), dx.__file__; t = dx.forward(dx.load_model('${_golden}/v1_basic'), [[1, 5, 9, 3, 2]]); assert t['layer.1.output'].shape == (5, 48)")
  endif()
  message(STATUS "installed into ${_prefix}: ${_configs}, ${_pcs}")

elseif(STEP STREQUAL "cmake")
  set(_build ${WORK}/consumer-cmake)
  file(REMOVE_RECURSE ${_build})
  set(_launcher)
  if(LAUNCHER)
    set(_launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${LAUNCHER})
  endif()
  run_checked(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${_build} -G ${GENERATOR}
              -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} ${_launcher} -DCMAKE_PREFIX_PATH=${_prefix})
  run_checked(${CMAKE_COMMAND} --build ${_build} -j 2)
  # v3_emd: EMD + MLM head; v2_conv_pad: nGiE conv and padding.
  run_consumer(${_build}/deberta_consumer v3_emd)
  run_consumer(${_build}/deberta_consumer v2_conv_pad)
  # Bad input: a clear error naming the problem and exit code 2, not a crash or a pass.
  execute_process(COMMAND ${_build}/deberta_consumer ${_golden}/v1_basic no.such.tensor
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 2 OR NOT _err MATCHES "golden.safetensors: no tensor no.such.tensor")
    message(FATAL_ERROR "package test: an unknown tensor gave exit ${_rc} and '${_err}'")
  endif()
  execute_process(COMMAND ${_build}/deberta_consumer ${WORK}/no-such-case RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 2 OR NOT _err MATCHES "no-such-case")
    message(FATAL_ERROR "package test: a missing case directory gave exit ${_rc} and '${_err}'")
  endif()

elseif(STEP STREQUAL "pkgconfig")
  find_program(_pkg_config pkg-config REQUIRED)
  file(GLOB_RECURSE _pcs ${_prefix}/*/deberta.pc)
  get_filename_component(_pcdir "${_pcs}" DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${_pcdir})
  execute_process(COMMAND ${_pkg_config} --cflags deberta OUTPUT_VARIABLE _cflags RESULT_VARIABLE _rc1
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${_pkg_config} --static --libs deberta OUTPUT_VARIABLE _libs RESULT_VARIABLE _rc2
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _rc1 EQUAL 0 OR NOT _rc2 EQUAL 0)
    message(FATAL_ERROR "package test: pkg-config cannot resolve deberta from ${_pcdir}")
  endif()
  separate_arguments(_cflags UNIX_COMMAND "${_cflags}")
  separate_arguments(_libs UNIX_COMMAND "${_libs}")
  file(MAKE_DIRECTORY ${WORK}/consumer-pc)
  set(_exe ${WORK}/consumer-pc/deberta_consumer)
  file(REMOVE ${_exe})
  run_checked(${LAUNCHER} ${CXX} -std=c++17 -O2 ${_cflags} ${SOURCE_DIR}/tests/consumer/main.cpp -o ${_exe} ${_libs})
  run_consumer(${_exe} v1_basic)

else()
  message(FATAL_ERROR "package.cmake: STEP must be install, cmake or pkgconfig (got '${STEP}')")
endif()
