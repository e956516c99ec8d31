// file_limits.h — the guards every loader puts in front of a file it reads (issue 12).
//
// A model folder comes from anyone: a `config.json` may be a FIFO (opening it would wait for a
// writer forever), `spm.model` may be /dev/zero (reading it whole never ends), a JSON file may
// nest ten thousand brackets deep (the recursive parser would overflow the stack). Each loader
// therefore opens regular files only, checks a file's size before reading it whole, and checks
// the nesting depth of JSON text before parsing it.
#pragma once

#include <cstdint>
#include <string>

namespace deberta {

/// Deeper JSON is refused. Real config.json / tokenizer.json files nest fewer than 10 levels.
constexpr int kMaxJsonDepth = 128;

/// Refuses (Error naming `path`) anything that is not a regular file — a FIFO, a device, a
/// directory, a socket — after following symlinks, without opening it.
void require_regular_file(const std::string& path);

/// Whether `path` exists, after following symlinks: true or false for "is there" or "no such file"
/// (a dangling symlink included); any other failure is an Error naming the path and the system's
/// reason — a symlink loop ("Too many levels of symbolic links"), no permission — never "no such
/// file" (issue 44, class 8). An empty path: Error "empty path".
bool path_exists(const std::string& path);

/// Reads a whole regular file of at most `max_bytes` bytes (Error naming `path` otherwise: not
/// a regular file, too large, unreadable). The size is checked before anything is read.
std::string read_whole_file(const std::string& path, uint64_t max_bytes);

/// Refuses JSON text whose arrays / objects nest deeper than `max_depth` (brackets inside
/// strings do not count). Error: "<source>: JSON nests deeper than N levels".
void check_json_depth(const std::string& text, const std::string& source, int max_depth = kMaxJsonDepth);

}  // namespace deberta
