#include "bundle_dir.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "nodeprobe/json_input.h"

namespace nodeprobe::diag {
namespace {

bool regular_beneath(int dir_fd, const char* name) {
  struct stat st {};
  return ::fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

BundleDir::BundleDir(const std::string& path) : top_(path) {
  has_manifest_ = regular_beneath(top_.fd(), "manifest.json");
  if (has_manifest_) return;
  // A bundle's top directory ("nodeprobe-bundle-host-time/"): a real
  // directory, not a link, holding the manifest.
  for (const auto& e : walk_dir(top_, false, 0)) {
    if (e.regular || e.rel.find('/') != std::string::npos) continue;
    try {
      DirHandle sub(top_, e.rel);
      if (regular_beneath(sub.fd(), "manifest.json")) {
        sub_.emplace(std::move(sub));
        has_manifest_ = true;
        return;
      }
    } catch (const InputError&) {  // a link or unreadable: not the bundle's root
    }
  }
}

Manifest BundleDir::manifest(const InputOverrides& o) const {
  InputFile f = open("manifest.json", input_limits(InputKind::kManifest, o));
  const std::string text = f.read_all();
  return manifest_from_json(parse_json_text(text, f.name()));
}

InputFile BundleDir::open(const std::string& rel, const InputLimits& limits) const {
  return InputFile::open_beneath(root().fd(), rel, limits, root().name() + "/" + rel);
}

std::vector<DirEntryInfo> BundleDir::entries() const { return walk_dir(root(), false); }

}  // namespace nodeprobe::diag
