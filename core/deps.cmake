# Third-party libraries of the checkpoint and tokenizer readers (Debian: libzip-dev,
# libsentencepiece-dev, libpcre2-dev). Included by core/CMakeLists.txt. Linked PRIVATE: no public
# header includes them. The static library still needs them at link time, so the installed
# debertaConfig.cmake finds the same pkg-config modules under the same names (cmake/debertaConfig.cmake.in).
pkg_check_modules(deberta_libzip REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(deberta_sentencepiece REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(deberta_pcre2 REQUIRED IMPORTED_TARGET libpcre2-8)
# The io layer's objects compile with their headers; the archive carries them for the final link.
foreach(_target deberta_layer_io deberta_io)
  target_link_libraries(${_target} PRIVATE PkgConfig::deberta_libzip PkgConfig::deberta_sentencepiece
                        PkgConfig::deberta_pcre2)
endforeach()
