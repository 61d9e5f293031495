#pragma once
/// Where nodeprobe's data files (playbook, instance tables, report schema)
/// live at run time: beside the binary as installed (BIN/../share/nodeprobe,
/// which the build tree mirrors), or where NODEPROBE_SHARE_DIR (the runner's
/// --share-dir flag sets it) says. Never a path compiled in at build time.

#include <optional>
#include <string>

namespace nodeprobe {

/// The environment variable that overrides the data directory.
inline constexpr const char* kShareDirEnv = "NODEPROBE_SHARE_DIR";

/// The data directory with a trailing '/': $NODEPROBE_SHARE_DIR when set, else
/// BIN/../share/nodeprobe/ when it exists; nullopt when neither.
std::optional<std::string> share_dir();

/// Contents of `rel` ("playbook/xid.json") under share_dir(); nullopt when
/// there is no data directory. Throws std::runtime_error with a one-line
/// reason when the directory exists but the file is missing, not a regular
/// file, unreadable or over 16 MiB (a half-installed package must not pass
/// silently for the built-in copy).
std::optional<std::string> read_share_file(const std::string& rel);

}  // namespace nodeprobe
