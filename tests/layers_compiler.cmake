# The compiler keeps the layers (issue 57, item 4; core/CMakeLists.txt, "the layer rule, kept by the
# compiler"): each include below is preprocessed with the include folder of the layer's object
# library, as the build compiles that layer's files. Every upward include, every include of a
# layer of the same rank and every include of a lower layer's internals around its door must name
# no file; the includes a layer is allowed must be found. The frontends too: the CLI (target
# deberta) and the viewer (deberta_viewer_model, which every viewer target links) see the public
# headers and, of the internal ones, analysis/bench.h alone.
#
#   cmake -DCXX=<compiler> -DINCLUDE_<layer>="dir|dir…" (each layer's include directories, as its
#         object library has them; INCLUDE_cli, INCLUDE_viewer the frontends') -DWORK=<dir> -P layers_compiler.cmake

# (layer, header, "refused" or "found")
set(cases
  "equations|deberta/model.h|refused"        # a layer above (either include form: the same search)
  "equations|backend/threading.h|refused"    # around the backend's door
  "equations|backend/fast.cpp|refused"
  "equations|analysis/bench.h|refused"
  "model|backend/threading.h|refused"
  "model|backend/parallel.h|refused"
  "model|deberta/analysis.h|refused"
  "analysis|deberta/model_io.h|refused"      # the same rank
  "analysis|io/pickle.h|refused"
  "io|deberta/compare.h|refused"
  "io|analysis/bench.h|refused"
  "backend|deberta/equations.h|refused"
  "backend|deberta/model.h|refused"
  "tensor|deberta/backend.h|refused"
  "tensor|backend/ops.h|refused"
  "equations|backend/ops.h|found"            # the door
  "equations|deberta/equations.h|found"
  "model|deberta/model.h|found"
  "analysis|analysis/bench.h|found"          # a layer's own internal header
  "io|io/tokenizer_unicode_tables.inc|found"
  "io|deberta/model.h|found"
  "backend|backend/threading.h|found"
  # the frontends: public headers, and of the internal ones analysis/bench.h alone
  "cli|io/pickle.h|refused"
  "cli|backend/ops.h|refused"
  "cli|deberta/model_io.h|found"
  "cli|analysis/bench.h|found"
  "viewer|io/tokenizer_detail.h|refused"
  "viewer|backend/threading.h|refused"
  "viewer|deberta/compare.h|found")

file(MAKE_DIRECTORY ${WORK})
foreach(layer tensor backend equations model analysis io cli)
  if(NOT INCLUDE_${layer})
    message(FATAL_ERROR "layers_compiler: no include directories given for ${layer}")
  endif()
endforeach()
set(failures 0)
foreach(case IN LISTS cases)
  string(REPLACE "|" ";" case "${case}")
  list(GET case 0 layer)
  list(GET case 1 header)
  list(GET case 2 expected)
  if(layer STREQUAL "viewer" AND NOT DEFINED INCLUDE_viewer)
    message(STATUS "layers_compiler: the viewer is not built (DEBERTA_BUILD_VIEWER=OFF): <${header}> not tried")
    continue()
  endif()
  string(REPLACE "|" ";" dirs "${INCLUDE_${layer}}")
  list(TRANSFORM dirs PREPEND -I)
  file(WRITE ${WORK}/planted.cpp "#include <${header}>\n")
  execute_process(COMMAND ${CXX} -std=c++17 -E ${dirs} ${WORK}/planted.cpp -o /dev/null
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(got found)
  else()
    set(got refused)
  endif()
  if(got STREQUAL expected)
    message(STATUS "layers_compiler: ${layer}: <${header}> ${got}")
  else()
    message(STATUS "layers_compiler: ${layer}: <${header}> ${got}, expected ${expected}\n${err}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()
if(failures GREATER 0)
  message(FATAL_ERROR "layers_compiler: ${failures} include(s) not kept by the layer's include folder")
endif()
