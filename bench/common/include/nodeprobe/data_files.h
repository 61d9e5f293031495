#pragma once
/// The one place that says where nodeprobe's data files are (helper scripts
/// such as bench/io/torch_loader.py, tables): the single seam an installed
/// layout extends. Looks, in order, in $NODEPROBE_DATA_DIR, next to the running
/// executable, and in ../share/nodeprobe/ beside its directory.

#include <string>
#include <vector>

namespace nodeprobe {

/// The directories data files are looked up in, in order (each with a trailing '/').
std::vector<std::string> data_dirs();

/// Path of data file `name` (a regular file in one of data_dirs()), or "" when
/// none has it; then `looked` (if given) lists where it looked.
std::string find_data_file(const std::string& name, std::string* looked = nullptr);

}  // namespace nodeprobe
