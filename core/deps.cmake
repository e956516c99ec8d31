# Third-party libraries of the checkpoint and tokenizer readers (Debian: libzip-dev,
# libsentencepiece-dev, libpcre2-dev). Included by core/CMakeLists.txt.
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)
pkg_check_modules(SENTENCEPIECE REQUIRED IMPORTED_TARGET sentencepiece)
pkg_check_modules(PCRE2 REQUIRED IMPORTED_TARGET libpcre2-8)
target_link_libraries(deberta_core PUBLIC PkgConfig::LIBZIP PkgConfig::SENTENCEPIECE PkgConfig::PCRE2)
