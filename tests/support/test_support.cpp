#include "test_support.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#ifdef NODEPROBE_HAVE_VALIJSON
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validator.hpp>
#endif

#include "nodeprobe/safe_remove.h"

#ifndef NODEPROBE_BIN_DIR
#define NODEPROBE_BIN_DIR ""
#endif

namespace nodeprobe::testing {

TempDir::TempDir(const std::string& parent, unsigned mode) {
  std::string tmpl = (parent.empty() ? temp_parent() : parent) + "/nodeprobe-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
  if (mode != 0700) ::chmod(path_.c_str(), mode);
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions a test may have removed, so cleanup cannot fail.
  for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
    ::chmod(it->path().c_str(), 0755);
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out << content;
  if (!out) throw std::runtime_error("cannot write " + path);
}

SpawnResult run(std::vector<std::string> argv, double timeout_s, std::vector<std::string> env_set) {
  SpawnOptions opt;
  opt.argv = std::move(argv);
  // Tests never ask the EC2 metadata service, whatever machine they run on.
  opt.env_set = {"NODEPROBE_NO_IMDS=1"};
  opt.env_set.insert(opt.env_set.end(), env_set.begin(), env_set.end());
  opt.capture_stdout = true;
  opt.capture_stderr = true;
  opt.capture_limit = 16u << 20;
  opt.timeout_s = timeout_s;
  return run_process(opt);
}

std::string bin(const std::string& name) { return std::string(NODEPROBE_BIN_DIR) + "/" + name; }

double time_factor() {
  const char* v = std::getenv("NODEPROBE_TEST_TIME_FACTOR");
  if (!v || !*v) return 1;
  char* end = nullptr;
  const double f = std::strtod(v, &end);
  if (*end != '\0' || !(f >= 1 && f <= 100))
    throw std::invalid_argument(std::string("NODEPROBE_TEST_TIME_FACTOR: want a number from 1 to 100, got ") + v);
  return f;
}

std::string schema_errors(const nlohmann::json& doc, bool* available, const std::string& schema_file) {
#ifdef NODEPROBE_HAVE_VALIJSON
  if (available) *available = true;
  const nlohmann::json schema_doc =
      nlohmann::json::parse(read_file(schema_file.empty() ? std::string(NODEPROBE_REPORT_SCHEMA) : schema_file));
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter doc_adapter(doc);
  if (validator.validate(schema, doc_adapter, &results)) return {};
  std::string out;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string ctx;
    for (const auto& c : e.context) ctx += c;
    out += ctx + ": " + e.description + "\n";
  }
  return out.empty() ? "invalid" : out;
#else
  (void)doc;
  (void)schema_file;
  if (available) *available = false;
  return {};
#endif
}

bool process_alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return false;
  std::string line;
  std::getline(in, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

Background::Background(std::vector<std::string> argv, std::vector<std::string> env_set,
                       const std::string& stdin_path) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    bool replaced = false;
    for (const auto& s : env_set) replaced = replaced || s.substr(0, s.find('=')) == name;
    if (!replaced) env.push_back(kv);
  }
  env.insert(env.end(), env_set.begin(), env_set.end());
  std::vector<char*> argv_c, env_c;
  for (auto& a : argv) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  for (auto& e : env) env_c.push_back(e.data());
  env_c.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, stdin_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, io_.file("out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, io_.file("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t none, dflt;
  sigemptyset(&none);
  sigemptyset(&dflt);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) sigaddset(&dflt, sig);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setsigdefault(&at, &dflt);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv_c[0], &fa, &at, argv_c.data(), env_c.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  if (rc != 0) throw std::runtime_error("posix_spawn " + argv[0] + ": " + std::strerror(rc));
  pid_ = pid;
}

Background::~Background() {
  if (!reaped_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int st = 0;
    ::waitpid(pid_, &st, 0);
  }
}

void Background::signal(int sig) const {
  if (!reaped_) ::kill(pid_, sig);
}

int Background::wait(double timeout_s) {
  int st = 0;
  const bool done = wait_for([&] { return ::waitpid(pid_, &st, WNOHANG) == pid_; }, timeout_s);
  if (!done) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &st, 0);
  }
  reaped_ = true;
  if (!done) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

std::string Background::out() const { return read_file(io_.file("out")); }
std::string Background::err() const { return read_file(io_.file("err")); }

bool wait_for(const std::function<bool()>& cond, double timeout_s) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    if (cond()) return true;
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::vector<std::string> entries_with_prefix(const std::string& dir, const std::string& prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  }
  return out;
}

ClusterUp cluster_up(const std::string& script, int hosts, const std::vector<std::string>& extra,
                     int id_offset, double timeout_s) {
  ClusterUp c;
  if (::geteuid() != 0) {
    c.skip = std::filesystem::path(script).filename().string() + " needs root";
    return c;
  }
  SpawnResult r;
  for (int attempt = 0; attempt < 8; ++attempt) {
    c.id = 20 + static_cast<int>((::getpid() + id_offset + attempt * 37) % 200);
    std::vector<std::string> argv = {script, "up", std::to_string(hosts), "--id", std::to_string(c.id),
                                     "--owner-pid", std::to_string(::getpid())};
    argv.insert(argv.end(), extra.begin(), extra.end());
    r = run(argv, timeout_s);
    if (r.err.find("is already up") == std::string::npos) break;
  }
  if (r.exit_code == 77) {
    c.skip = r.err;
  } else if (!r.exited_ok()) {
    // The caller's constructor throws and gets no destructor: tear down here.
    run({script, "down", "--id", std::to_string(c.id)}, 60);
    throw std::runtime_error(std::filesystem::path(script).filename().string() + " up failed: " + r.describe() +
                             ": " + r.err);
  }
  return c;
}

}  // namespace nodeprobe::testing
