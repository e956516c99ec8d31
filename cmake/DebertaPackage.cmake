# Install rules: `cmake --install <build> --prefix P` gives
#   P/lib/libdeberta_math.a, P/lib/libdeberta_io.a     the two library layers
#   P/include/deberta/*.h                              the public headers (internal ones stay in core/src)
#   P/lib/cmake/deberta/debertaConfig.cmake (+ version, targets)   find_package(deberta CONFIG) → deberta::core
#   P/lib/pkgconfig/deberta.pc                         pkg-config --static --cflags --libs deberta
#   P/bin/deberta                                      the command-line tool
# Included by the top-level CMakeLists.txt after every target exists.
include_guard(GLOBAL)
include(CMakePackageConfigHelpers)

set(DEBERTA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/deberta)

install(TARGETS deberta_math deberta_io deberta_core EXPORT debertaTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/deberta DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS deberta RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT debertaTargets NAMESPACE deberta:: DESTINATION ${DEBERTA_CMAKE_DIR})

# What the config file has to find again: it mirrors the find_package / pkg_check_modules calls
# that deberta_math and deberta_io link against.
set(DEBERTA_PACKAGE_USES_OPENMP ${OpenMP_CXX_FOUND})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/debertaConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/package/debertaConfig.cmake
                              INSTALL_DESTINATION ${DEBERTA_CMAKE_DIR})
# 0.x: a minor version may change the API, so only the same minor version is compatible.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/debertaConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/debertaConfig.cmake ${PROJECT_BINARY_DIR}/package/debertaConfigVersion.cmake
        DESTINATION ${DEBERTA_CMAKE_DIR})

# deberta.pc. The archives are static, so their private dependencies are listed under
# Requires.private / Libs.private: link with `pkg-config --static --libs deberta`. No -march: the
# package does not impose the build machine's CPU. OpenMP is private to the archive (fast.cpp), so
# it appears only under Libs.private, for the final link.
set(DEBERTA_PC_CFLAGS " -DEIGEN_MAX_ALIGN_BYTES=64")
set(DEBERTA_PC_LIBS "")
set(DEBERTA_PC_LIBS_PRIVATE "-pthread")
if(OpenMP_CXX_FOUND)
  string(APPEND DEBERTA_PC_LIBS_PRIVATE " ${OpenMP_CXX_FLAGS}")
endif()
# Relative install directories are written relative to ${prefix}; absolute ones as they are.
foreach(_kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${_kind}}")
    set(DEBERTA_PC_${_kind} "${CMAKE_INSTALL_${_kind}}")
  else()
    set(DEBERTA_PC_${_kind} "\${prefix}/${CMAKE_INSTALL_${_kind}}")
  endif()
endforeach()
set(DEBERTA_PC_PREFIX "@DEBERTA_PC_PREFIX@")  # kept as a placeholder until install time (below)
configure_file(${PROJECT_SOURCE_DIR}/cmake/deberta.pc.in ${PROJECT_BINARY_DIR}/package/deberta.pc.in @ONLY)
# The prefix is only known at install time (cmake --install --prefix P): substitute it then.
install(CODE "
  file(READ \"${PROJECT_BINARY_DIR}/package/deberta.pc.in\" _pc)
  string(REPLACE \"@DEBERTA_PC_PREFIX@\" \"\${CMAKE_INSTALL_PREFIX}\" _pc \"\${_pc}\")
  file(WRITE \"${PROJECT_BINARY_DIR}/package/deberta.pc\" \"\${_pc}\")")
install(FILES ${PROJECT_BINARY_DIR}/package/deberta.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
