// The one redaction (nodeprobe/redact.h) against a seeded set of secret
// shapes, in the forms they take in env, argv, config files and logs; and
// the same function applied to reports (to_json / parse_report / exports).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "nodeprobe/exporters.h"
#include "nodeprobe/host_facts.h"
#include "nodeprobe/redact.h"
#include "nodeprobe/report_json.h"
#include "secret_shapes.h"

namespace nodeprobe {
namespace {

TEST(Redact, EverySeededSecretShapeIsRemovedAndItsContextKept) {
  for (const auto& s : testing::secret_shapes()) {
    const std::string out = redact_secrets(s.text);
    EXPECT_EQ(out.find(s.secret), std::string::npos) << s.kind << ": " << out;
    EXPECT_NE(out.find(s.kept), std::string::npos) << s.kind << ": " << out;
    EXPECT_NE(out.find("<redacted"), std::string::npos) << s.kind << ": " << out;
    EXPECT_EQ(redact_secrets(out), out) << s.kind << ": redaction is idempotent";
  }
}

TEST(Redact, OrdinaryLogAndReportTextIsUntouched) {
  for (const char* t : {
           "tokens/s=125000 loss=1.9",
           "max_tokens=512 tokenizer=bpe num_tokens: 4096",
           "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
           "2025-11-24T03:20:21Z host kernel: [ 12.345] nvidia: loading out-of-tree module",
           "host:123:456 [0] NCCL INFO NET/OFI Selected Provider is efa (found 4 nics)",
           "NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory",
           "Authorization required for this endpoint",
           "error: invalid token received",
           "monkey=3 keyboard=us passes=4 author=me",
           "https://docs.aws.amazon.com/efa/latest/userguide.html?x=1&y=2",
           "export NCCL_SOCKET_IFNAME=eth0 FI_PROVIDER=efa",
           "mkdir -p /mnt/data && cp -p a b",
           "{\"name\": \"busbw\", \"value\": 12.5, \"unit\": \"GB/s\", \"status\": \"pass\"}",
       })
    EXPECT_EQ(redact_secrets(t), t);
}

// A local user can write any number of "token=x" lines into syslog, which
// collect copies as root: redaction must stay linear (a quadratic pass over
// an 8 MiB log full of secrets would run for hours).
TEST(Redact, AHugeTextFullOfSecretsEnds) {
  std::string text;
  while (text.size() < (8u << 20))
    text += "password=x token: y https://u:p@h mysql -pz AKIAIOSFODNN7EXAMPLE ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa --token w\n";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string out = redact_secrets(text);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 30.0) << "not linear";
  EXPECT_EQ(out.find("AKIAIOSFODNN7EXAMPLE"), std::string::npos);
  EXPECT_EQ(out.find("u:p@"), std::string::npos);
  EXPECT_EQ(out.find("--token w"), std::string::npos);
}

TEST(Redact, SecretNames) {
  for (const char* n : {"HF_TOKEN", "aws_secret_access_key", "UCX_AUTH", "client-key-data", "password",
                        "secretKey", "apiToken", "X-Amz-Security-Token", "GITHUB_PAT", "db_passwd", "sig"})
    EXPECT_TRUE(secret_name(n)) << n;
  for (const char* n : {"max_tokens", "tokenizer", "monkey", "author", "status", "pass", "NCCL_DEBUG_FILE",
                        "busbw", "keyboard", "passes"})
    EXPECT_FALSE(secret_name(n)) << n;
}

TEST(Redact, ArgvFlagsLoseTheirValues) {
  const std::vector<std::string> argv = {"nodeprobe", "diag", "--token", "abc123", "--password=hunter2",
                                         "--label", "https://u:pat123@git.example.com/x", "--json", "out.json",
                                         "-u", "admin:pw9"};
  const auto out = redact_argv(argv);
  ASSERT_EQ(out.size(), argv.size());
  std::string joined;
  for (const auto& a : out) joined += a + " ";
  for (const char* secret : {"abc123", "hunter2", "pat123", "pw9"})
    EXPECT_EQ(joined.find(secret), std::string::npos) << joined;
  EXPECT_EQ(out[2], "--token");
  EXPECT_EQ(out[7], "--json");
  EXPECT_EQ(out[8], "out.json");
  EXPECT_EQ(redact_argv({"/usr/bin/mysql", "-uroot", "-pS3cret", "db"})[2], "-p<redacted>");
}

TEST(Redact, EnvironmentAllowlistDropsSecretNamesAndRedactsValues) {
  const char* env[] = {"UCX_AUTH=s3cr3t", "NCCL_DEBUG_FILE=/tmp/nccl.%h.log?token=tok42",
                       "NCCL_SOCKET_IFNAME=eth0", "FI_EFA_API_KEY=k", nullptr};
  const auto kept = allowlisted_env(env);
  EXPECT_EQ(kept.count("UCX_AUTH"), 0u);
  EXPECT_EQ(kept.count("FI_EFA_API_KEY"), 0u);
  EXPECT_EQ(kept.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_EQ(kept.at("NCCL_DEBUG_FILE"), "/tmp/nccl.%h.log?token=<redacted>");
}

Report report_with_secrets() {
  Report r;
  r.tool = {"nodeprobe", "0.1", "g"};
  r.run.argv = {"nodeprobe", "accept", "--label", "password=hunter2", "--token", "abc123"};
  r.run.label = "run with secret_key=wJalrXUtnFEMI";
  r.host.env = {{"NCCL_DEBUG_FILE", "/x?token=tok42"}, {"UCX_AUTH", "ucxsecret"}};
  ProbeResult p;
  p.name = "io";
  p.status = Status::kError;
  p.reason = "cannot reach https://user:urlpass@s3.example.com/bucket";
  p.config = {{"endpoint", "mysql -uroot -pDbPass9 db"}, {"api_key", "k-777"}};
  Metric m;
  m.name = "busbw";
  m.labels = {{"url", "https://tok-in-user@host/x"}};
  p.metrics.push_back(m);
  Check c;
  c.id = "x";
  c.observed = "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig";
  p.checks.push_back(c);
  r.probes.push_back(p);
  Finding f;
  f.id = "nccl.timeout";
  f.evidence.push_back({"nccl.log", 3, "AKIAIOSFODNN7EXAMPLE aws_session_token=IQoJb3JpZ2luX2Vj"});
  f.facts = {{"password", "factpw"}};
  r.findings.push_back(f);
  return r;
}

const char* kReportSecrets[] = {"hunter2", "abc123", "wJalrXUtnFEMI", "tok42", "ucxsecret", "urlpass",
                                "DbPass9", "k-777", "tok-in-user", "eyJhbGciOiJIUzI1NiJ9", "AKIAIOSFODNN7EXAMPLE",
                                "IQoJb3JpZ2luX2Vj", "factpw"};

TEST(Redact, ReportsNeverCarryASecret) {
  const Report r = report_with_secrets();
  const std::string doc = dump_report(r);
  for (const char* s : kReportSecrets) EXPECT_EQ(doc.find(s), std::string::npos) << s << "\n" << doc;
  EXPECT_NE(doc.find("\"--token\""), std::string::npos);
  EXPECT_NE(doc.find("\"NCCL_DEBUG_FILE\": \"/x?token=<redacted>\""), std::string::npos) << doc;
  // A report written elsewhere is redacted when read.
  Json raw = Json::parse(doc);
  raw["run"]["label"] = "password=inreport";
  raw["findings"][0]["evidence"][0]["text"] = "https://u:readpass@h/";
  const Report back = parse_report(raw.dump(), "r.json");
  EXPECT_EQ(back.run.label, "password=<redacted>");
  EXPECT_EQ(back.findings[0].evidence[0].text, "https://u:<redacted>@h/");
  // Exports carry none either.
  ExportPaths paths{"a.prom", "a.emf", "a.xml"};
  for (const auto& [path, text] : export_documents(r, paths))
    for (const char* s : kReportSecrets) EXPECT_EQ(text.find(s), std::string::npos) << path << ": " << s;
}

}  // namespace
}  // namespace nodeprobe
