// test_paths.h — this build's source folder, for the viewer's test suites. Defined in a file that
// viewer/CMakeLists.txt generates (viewer_test_paths.cpp in the build folder), not by a -D on each
// test file's compile line: those lines then hold no path of this clone, so ccache reuses the test
// objects in every clone on a machine (issue 56; the core's tests do the same, tests/test_util.h).
#pragma once

/// The source folder the build was configured from (CMake's PROJECT_SOURCE_DIR). No errors.
const char* deberta_test_source_dir();

#define DEBERTA_SOURCE_DIR deberta_test_source_dir()
