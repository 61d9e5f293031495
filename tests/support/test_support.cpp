#include "test_support.h"

#include <sys/stat.h>
#include <unistd.h>

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

#ifndef NODEPROBE_BIN_DIR
#define NODEPROBE_BIN_DIR ""
#endif

namespace nodeprobe::testing {

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/nodeprobe-test-XXXXXX";
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
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

}  // namespace nodeprobe::testing
