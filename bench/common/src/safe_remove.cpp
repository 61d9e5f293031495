#include "nodeprobe/safe_remove.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "nodeprobe/atomic_file.h"
#include "nodeprobe/clock.h"
#include "nodeprobe/error.h"
#include "nodeprobe/fd.h"
#include "nodeprobe/stop.h"

namespace nodeprobe {
namespace {

constexpr int kMaxDepth = 64;

[[noreturn]] void fail(int err, const std::string& what, const char* call) {
  throw_api_error("posix", err, errno_name(err), std::strerror(err) + (": " + what), call, __FILE__, __LINE__);
}

EntryKind kind_of(mode_t m) {
  if (S_ISLNK(m)) return EntryKind::kLink;
  if (S_ISDIR(m)) return EntryKind::kDir;
  if (S_ISREG(m)) return EntryKind::kFile;
  return EntryKind::kOther;
}

std::vector<std::string> names_in(int dir_fd, const std::string& where) {
  const int dup_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) fail(errno, where, "fcntl(F_DUPFD_CLOEXEC)");
  DIR* d = ::fdopendir(dup_fd);
  if (!d) {
    const int e = errno;
    ::close(dup_fd);
    fail(e, where, "fdopendir");
  }
  ::rewinddir(d);
  std::vector<std::string> out;
  while (const dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

struct Walk {
  const RemoveOptions& opt;
  const std::string& root;
  RemoveResult& res;

  // Removes what the filter allows below the directory `dir_fd` (at `rel`).
  void remove_in(int dir_fd, const std::string& rel, int depth, bool is_root) {
    for (const auto& name : names_in(dir_fd, root + (rel.empty() ? "" : "/" + rel))) {
      if (is_root && name == opt.marker) continue;  // last
      const std::string sub = rel.empty() ? name : rel + "/" + name;
      struct stat st {};
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        fail(errno, root + "/" + sub, "fstatat");
      }
      const EntryKind kind = kind_of(st.st_mode);
      if (opt.filter && !opt.filter(sub, kind)) {
        res.left.push_back(sub + (kind == EntryKind::kLink ? " (a symbolic link, not followed)" : ""));
        continue;
      }
      if (kind == EntryKind::kDir) {
        if (depth >= kMaxDepth) {
          res.left.push_back(sub + " (deeper than " + std::to_string(kMaxDepth) + " levels)");
          continue;
        }
        Fd child(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (child.get() < 0) {
          // Swapped for a link (ELOOP/ENOTDIR) since fstatat: not crossed.
          res.left.push_back(sub + " (" + std::strerror(errno) + ")");
          continue;
        }
        struct stat cst {};
        if (::fstat(child.get(), &cst) != 0 || cst.st_dev != st.st_dev || cst.st_ino != st.st_ino) {
          res.left.push_back(sub + " (changed while removing)");
          continue;
        }
        const std::size_t kept = res.left.size();
        remove_in(child.get(), sub, depth + 1, false);
        if (res.left.size() != kept) continue;  // something below stays, so does the directory
        if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0) {
          if (errno == ENOTEMPTY || errno == EEXIST) res.left.push_back(sub + " (not empty)");
          else fail(errno, root + "/" + sub, "unlinkat(AT_REMOVEDIR)");
        }
        continue;
      }
      if (::unlinkat(dir_fd, name.c_str(), 0) != 0) {
        if (errno == ENOENT) continue;
        fail(errno, root + "/" + sub, "unlinkat");
      }
      ++res.files;
      if (kind == EntryKind::kFile) res.bytes += static_cast<std::uint64_t>(st.st_size);
    }
  }
};

}  // namespace

RemoveResult remove_tree(const std::string& dir_in, const RemoveOptions& opt) {
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (opt.marker.empty()) throw NotOwnedError(dir + ": no ownership marker named; nothing removed");
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (root.get() < 0) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR) {
      struct stat st {};
      if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        throw NotOwnedError(dir + ": is a symbolic link; not followed, nothing removed");
    }
    fail(e, dir, "open(O_DIRECTORY|O_NOFOLLOW)");
  }
  struct stat mst {};
  if (::fstatat(root.get(), opt.marker.c_str(), &mst, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(mst.st_mode))
    throw NotOwnedError(dir + ": not made by nodeprobe (no " + opt.marker + " marker); nothing removed");

  RemoveResult res;
  Walk w{opt, dir, res};
  w.remove_in(root.get(), "", 0, true);
  if (::unlinkat(root.get(), opt.marker.c_str(), 0) != 0 && errno != ENOENT) fail(errno, dir + "/" + opt.marker, "unlinkat");
  ++res.files;
  res.bytes += static_cast<std::uint64_t>(mst.st_size);
  if (!opt.remove_root || !res.left.empty()) return res;

  // The root itself, relative to its parent, and only if the name still
  // refers to the directory we emptied.
  const auto slash = dir.rfind('/');
  const std::string parent = slash == std::string::npos ? "." : (slash == 0 ? "/" : dir.substr(0, slash));
  const std::string base = slash == std::string::npos ? dir : dir.substr(slash + 1);
  Fd pfd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat now {}, mine {};
  if (pfd.get() < 0 || ::fstat(root.get(), &mine) != 0 ||
      ::fstatat(pfd.get(), base.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_ino != mine.st_ino ||
      now.st_dev != mine.st_dev) {
    res.left.push_back(". (" + dir + " was moved or replaced while removing)");
    return res;
  }
  if (::unlinkat(pfd.get(), base.c_str(), AT_REMOVEDIR) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST) res.left.push_back(". (not empty: something was added meanwhile)");
    else fail(errno, dir, "unlinkat(AT_REMOVEDIR)");
    return res;
  }
  res.root_removed = true;
  return res;
}

std::vector<std::string> remove_own_files_in(const std::string& dir,
                                             const std::function<bool(const std::string&)>& pick) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) fail(errno, dir, "open(O_DIRECTORY|O_NOFOLLOW)");
  std::vector<std::string> removed;
  const uid_t me = ::geteuid();
  for (const auto& name : names_in(fd.get(), dir)) {
    if (!pick(name)) continue;
    struct stat st {};
    if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(st.st_mode) || st.st_uid != me) continue;
    if (::unlinkat(fd.get(), name.c_str(), 0) == 0) removed.push_back(name);
  }
  return removed;
}

std::string temp_parent() {
  const char* t = std::getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

std::string make_owned_temp_dir(const std::string& parent, const std::string& prefix) {
  std::string tmpl = parent + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) fail(errno, "temporary directory in " + parent, "mkdtemp");
  const int fd = create_new_file(AT_FDCWD, tmpl + "/" + kOwnedMarker, 0600);
  if (fd < 0) {
    const int e = errno;
    ::rmdir(tmpl.c_str());
    fail(e, tmpl + "/" + kOwnedMarker, "create marker");
  }
  const std::string note = "made by pid " + std::to_string(::getpid()) + " at " + utc_now_iso8601() + "\n";
  ssize_t rc = ::write(fd, note.data(), note.size());
  (void)rc;  // the marker's presence is what counts
  ::close(fd);
  return tmpl;
}

OwnedTempDir::OwnedTempDir(const std::string& parent, const std::string& prefix)
    : path_(make_owned_temp_dir(parent, prefix)) {
  cleanup_id_ = register_stop_cleanup(path_, CleanupKind::kOwnedDir);
}

OwnedTempDir::~OwnedTempDir() {
  const std::string why = remove();
  if (!why.empty()) report_cleanup_failure(why);
}

std::string OwnedTempDir::remove() noexcept {
  if (path_.empty()) return {};
  std::string why;
  try {
    const RemoveResult r = remove_tree(path_);
    if (!r.root_removed)
      why = path_ + " stays: " + (r.left.empty() ? std::string("not removed") : r.left.front());
  } catch (const std::exception& e) {
    why = e.what();
  }
  unregister_stop_cleanup(cleanup_id_);
  cleanup_id_ = -1;
  path_.clear();
  return why;
}

void OwnedTempDir::release() noexcept {
  unregister_stop_cleanup(cleanup_id_);
  cleanup_id_ = -1;
  path_.clear();
}

}  // namespace nodeprobe
