# Third-party libraries of the checkpoint and tokenizer readers (Debian: libzip-dev,
# libsentencepiece-dev, libpcre2-dev). Included by core/CMakeLists.txt. Linked PRIVATE: no public
# header includes them. The static library still needs them at link time, so the installed
# debertaConfig.cmake finds the same pkg-config modules under the same names (cmake/debertaConfig.cmake.in).
pkg_check_modules(deberta_libzip REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(deberta_sentencepiece REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(deberta_pcre2 REQUIRED IMPORTED_TARGET libpcre2-8)
target_link_libraries(deberta_io PRIVATE PkgConfig::deberta_libzip PkgConfig::deberta_sentencepiece
                      PkgConfig::deberta_pcre2)
# The internal headers of the I/O layer (pickle.h, tokenizer_detail.h) sit beside its sources.
target_include_directories(deberta_io PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
