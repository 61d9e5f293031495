#pragma once
/// Atomic report writing: temp file in the same directory, fsync, rename.

#include <string>

namespace nodeprobe {

/// Writes `content` to `path` atomically ("-" writes to stdout). Throws
/// ApiError on failure; the destination is then untouched and no temp file is
/// left behind.
void write_file_atomic(const std::string& path, const std::string& content);

/// Async-signal-safe variant for a signal handler or watchdog: no allocation,
/// no exceptions. `tmp_path` must be prepared beforehand. Returns false on failure.
bool write_file_atomic_nothrow(const char* path, const char* tmp_path, const char* data,
                               std::size_t size) noexcept;

}  // namespace nodeprobe
