// Every wrapper a line arrives in: the same message gives the same finding,
// with the wrapper's time; wrapped, escaped and JSON-encoded lines are
// unwrapped; one kernel event read through several sources or printed as
// several lines counts once; events before the judged window are info.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "collector.h"
#include "diagnose.h"
#include "nodeprobe/finding_ids.h"
#include "normalise.h"
#include "playbook.h"
#include "rule_engine.h"

namespace nodeprobe::diag {
namespace {

constexpr double kNow = 1764432000;  // 2025-11-29T16:00:00Z

RuleEngine& engine() {
  static RuleEngine e(default_playbook());
  return e;
}

SourceResult run(const std::string& text, AnalysisOptions opt = {}, const std::string& name = "test.log") {
  if (opt.time.now == 0) opt.time.now = kNow;
  LineBlockReader reader(text, name);
  return engine().analyze(reader, name, opt);
}

std::string ids(const SourceResult& r) {
  std::string s;
  for (const auto& [k, a] : r.findings.all()) s += k.id + "/" + k.cause + " ";
  return s;
}

const Accum* find(const SourceResult& r, const std::string& id) {
  for (const auto& [k, a] : r.findings.all())
    if (k.id == id) return &a;
  return nullptr;
}

// One Xid line in every wrapper people paste it in.
TEST(Normalise, TheSameXidInEveryWrapperGivesTheSameFinding) {
  const std::string msg = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.";
  const std::vector<std::pair<std::string, bool>> wrapped = {  // line, carries a wall time
      {"[ 1936.510073] " + msg, false},                                                  // dmesg
      {"[Fri Aug 30 11:11:22 2024] " + msg, true},                                        // dmesg -T
      {"kern  :err   : [ 1936.510073] " + msg, false},                                   // dmesg -x
      {"<3>[ 1936.510073] " + msg, false},                                                // /dev/kmsg-ish
      {"Aug 30 11:11:22 gpu-node-7 kernel: " + msg, true},                                // syslog / journalctl short
      {"Aug 30 11:11:22 gpu-node-7 kernel: [ 1936.510073] " + msg, true},                 // syslog with dmesg stamp
      {"2024-08-30T11:11:22.123456+0000 gpu-node-7 kernel: " + msg, true},                // journalctl -o short-iso-precise
      {"2024-08-30T11:11:22+00:00 gpu-node-7 kernel: " + msg, true},                      // rsyslog RFC 3339
      {R"({"__REALTIME_TIMESTAMP":"1725016282123456","_HOSTNAME":"gpu-node-7","MESSAGE":")" + msg + R"("})", true},  // journalctl -o json
      {R"({"log":")" + msg + R"(\n","stream":"stderr","time":"2024-08-30T11:11:22.1Z"})", true},                      // docker json-file
      {"2024-08-30T11:11:22.123456789Z stderr F " + msg, true},                          // containerd CRI
      {"[pod/trainer-0/pytorch] " + msg, false},                                          // kubectl logs --prefix
      {"trainer-1  | " + msg, false},                                                     // docker compose
      {"3: " + msg, false},                                                               // srun --label
      {"[rank3]: " + msg, false},                                                         // torchrun
      {"[default3]:" + msg, false},                                                       // torchrun --tee
      {"[1,3]<stderr>:" + msg, false},                                                    // mpirun --tag-output
      {"\x1b[31m" + msg + "\x1b[0m", false},                                              // colour codes
      {"  | 2024-08-30T11:11:22.123-07:00 | " + msg, true},                              // CloudWatch console table
  };
  for (const auto& [line, timed] : wrapped) {
    SCOPED_TRACE(line);
    const SourceResult r = run(line + "\n");
    const Accum* a = find(r, "gpu.xid");
    ASSERT_NE(a, nullptr) << ids(r);
    EXPECT_EQ(a->facts.value("code", std::string()), "79");
    EXPECT_EQ(a->first_time.has_value(), timed);
    EXPECT_EQ(std::string(message_body(a->first.front().text)).rfind("NVRM: Xid", 0), 0u) << a->first.front().text;
  }
}

TEST(Normalise, Rsyslog012EscapesSplitIntoLogicalLines) {
  // rsyslog writes the API mismatch message's line breaks as #012.
  const SourceResult r = run(
      "Jul 14 06:17:13 node1 kernel: NVRM: API mismatch: the client has the version 535.54.03, but#012NVRM: this "
      "kernel module has the version 530.30.02.  Please#012NVRM: make sure that this kernel module and all NVIDIA "
      "driver#012NVRM: components have the same version.\n");
  const Accum* a = find(r, "gpu.driver_kernel_mismatch");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->facts.value("client_version", std::string()), "535.54.03");
  EXPECT_EQ(a->facts.value("module_version", std::string()), "530.30.02");
}

TEST(Normalise, EscapedQuotesInJournalJsonStillGiveTheFacts) {
  const SourceResult r = run(
      R"({"__REALTIME_TIMESTAMP":"1692020151457000","MESSAGE":"AVC avc:  denied  { read } for  pid=1 comm=\"nvidia-smi\" name=\"nvidiactl\" scontext=a_t tcontext=b_t tclass=chr_file permissive=0"})"
      "\n");
  const Accum* a = find(r, "selinux.avc");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->key.cause, "enforcing");
  EXPECT_EQ(a->facts.at("comm").at(0), "nvidia-smi");
  ASSERT_TRUE(a->first_time.has_value());
  EXPECT_NEAR(*a->first_time, 1692020151.457, 0.01);
}

TEST(Normalise, PythonReprWithEscapedNewlinesIsSplit) {
  const SourceResult r = run(
      "DistBackendError('NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system "
      "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\\nncclSystemError: System call (e.g. socket, "
      "malloc) or external library call failed or device error. \\nLast error:\\nsocketStartConnect: Connect to "
      "10.0.0.2<45763> failed : No route to host')\n");
  const Accum* a = find(r, "nccl.network_config");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->key.cause, "socket_error");
  EXPECT_EQ(a->facts.value("error", std::string()), "No route to host");
}

// A Windows path's backslashes separate folders: "\native", "\net6.0" and
// "\runtimes" hold no escapes, in a drive path, a UNC share or a path with
// forward slashes before them; outside the path, and behind a repr's doubled
// backslashes, a literal "\n" still ends a line.
TEST(Normalise, AWindowsPathsBackslashesAreNoEscapes) {
  const std::string load = "[ErrorCode:RuntimeException] onnxruntime::ProviderLibrary::Get [ONNXRuntimeError] : 1 : FAIL : "
                           "LoadLibrary failed with error 126 \"\" when trying to load \"";
  for (const char* path : {"E:\\Dev\\bin\\net6.0\\runtimes\\win-x64\\native\\",
                           "\\\\fileserver\\apps\\net6.0\\runtimes\\win-x64\\native\\",
                           "C:/app/bin/net6.0\\runtimes\\win-x64\\native\\",
                           "C:\\Program Files\\App\\net6.0\\runtimes\\native\\"}) {
    const SourceResult r = run(load + path + "onnxruntime_providers_cuda.dll\"\n");
    ASSERT_NE(find(r, "gpu.not_found"), nullptr) << path << ids(r);
    EXPECT_EQ(find(r, "gpu.not_found")->key.cause, "cuda_libraries_missing") << path;
  }
  // A repr doubles the path's backslashes: still no newline at "\\native".
  const SourceResult repr = run("Fail('" + load.substr(load.find("LoadLibrary")) +
                                "E:\\\\Dev\\\\net6.0\\\\native\\\\onnxruntime_providers_cuda.dll\"')\n");
  EXPECT_NE(find(repr, "gpu.not_found"), nullptr) << ids(repr);
  // A flattened traceback: the path ends at its quote, the escapes after it split.
  const SourceResult tb = run(
      "ERROR:root:Traceback (most recent call last):\\n  File \"C:\\Users\\x\\venv\\lib\\site-packages\\jax\\_src\\xla_bridge.py\", "
      "line 100, in backends\\nRuntimeError: Unknown backend 'gpu'\\n");
  EXPECT_NE(find(tb, "gpu.not_found"), nullptr) << ids(tb);
  // A repr's real escapes beside a doubled path.
  const SourceResult nccl = run(
      "RuntimeError('path C:\\\\work\\\\run\\nncclSystemError: System call (e.g. socket, malloc) or external "
      "library call failed or device error. \\nLast error:\\nsocketStartConnect: Connect to 10.0.0.2<45763> failed : "
      "No route to host')\n");
  EXPECT_NE(find(nccl, "nccl.network_config"), nullptr) << ids(nccl);
}

TEST(Normalise, TracebackCauseFarFromTheExceptionLine) {
  // The exception line says little; the cause is printed 30 lines earlier
  // without NCCL's WARN prefix ("Last error:").
  std::string text = "Last error:\nsocketPollConnect: Connect to 10.0.0.4<56849> returned 113(No route to host) errno 115(Operation now in progress)\n";
  for (int i = 0; i < 30; ++i) text += "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/x.py\", line " + std::to_string(100 + i) + ", in f\n";
  text += "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error\n";
  const SourceResult r = run(text);
  const Accum* a = find(r, "nccl.network_config");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->key.cause, "socket_error");  // not the generic "unhandled system error"
}

// A traceback inside a service's log layout: each line carries the layout's
// prefix, and the exception line is still read as the end of a traceback.
TEST(Normalise, ATracebackInsideAServicesLogLayoutIsRead) {
  for (const std::string prefix : {"2024-12-10T13:37:00,743 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - ",
                                   "[E 2024-05-01 10:00:00.123 ServerApp] ", "ERROR 05-01 10:00:00 [core.py:343] ",
                                   "[2024-05-01, 10:00:00 UTC] {logging_mixin.py:188} INFO - "}) {
    SCOPED_TRACE(prefix);
    const SourceResult r = run(prefix + "Traceback (most recent call last):\n" + prefix +
                               "  File \"/app/handler.py\", line 3, in <module>\n" + prefix +
                               "ZeroDivisionError: division by zero\n");
    const Accum* a = find(r, "job.unexplained_failure");
    ASSERT_NE(a, nullptr) << ids(r);
    EXPECT_EQ(a->key.cause, "uncaught_exception");
  }
}

TEST(Normalise, TerminalWrappedLinesAreJoined) {
  // A terminal 80 columns wide cut the watchdog message in the middle of its
  // key phrase; the pieces alone match nothing.
  const std::string full =
      "[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
      "timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600060 "
      "milliseconds before timing out.";
  std::string wrapped;
  for (std::size_t i = 0; i < full.size(); i += 80) wrapped += full.substr(i, 80) + "\n";
  std::string pad;  // other 80-column lines of the same paste
  for (int i = 0; i < 3; ++i) pad += std::string(80, 'x') + "\n";
  ASSERT_EQ(full.substr(80, 20).find("Watchdog caught"), std::string::npos);
  const SourceResult r = run(pad + wrapped);
  const Accum* a = find(r, "nccl.timeout");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->facts.value("op", std::string()), "ALLREDUCE");
  EXPECT_EQ(a->first.front().line, 4);  // the run's first line
}

TEST(Normalise, AMessageBrokenMidSentenceIsJoinedForRulesNeitherLineMatches) {
  // An issue editor broke Redis's warning at a word: neither half matches.
  const std::string two =
      "WARNING: The TCP backlog setting of 511 cannot be enforced because\n"
      "/proc/sys/net/core/somaxconn is set to the lower value of 128.\n";
  const SourceResult r = run(two);
  const Accum* a = find(r, "limits.somaxconn");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->facts.value("observed", std::string()), "128");
  EXPECT_EQ(a->first.front().line, 1);
  // The evidence cites both lines, joined with one space.
  EXPECT_NE(a->first.front().text.find("because /proc/sys/net/core/somaxconn"), std::string::npos);

  const std::vector<WrapRun> runs = sentence_runs(two);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].lines, 2);
  // Indented continuations join without their indent.
  const std::vector<WrapRun> indented = sentence_runs(
      "[rank8] Warning: Unable to resolve hostname to a (local) address. Using the loopback\n"
      "        address as fallback.\n");
  ASSERT_EQ(indented.size(), 1u);
  EXPECT_NE(indented[0].text.find("Using the loopback address as fallback."), std::string::npos);
}

TEST(Normalise, LinesThatEndARecordOrStartOneAreNotJoined) {
  // The first line ends a sentence, a table row, or is short (a prompt).
  EXPECT_TRUE(sentence_runs("WARNING: The TCP backlog setting of 511 cannot be enforced.\n"
                            "/proc/sys/net/core/somaxconn is set to the lower value of 128.\n").empty());
  EXPECT_TRUE(sentence_runs("| 0  NVIDIA H100 80GB HBM3          On  | 00000000:18:00.0 Off |                    0 |\n"
                            "| N/A   31C    P0             69W / 700W |      4MiB / 81559MiB |      0%      Default |\n").empty());
  EXPECT_TRUE(sentence_runs("$ cat /proc/sys/net/core/somaxconn\nsomaxconn\n").empty());
  // The second line starts a record: a timestamp, a bracket, a host or program
  // prefix, an upper-case word.
  const std::string first = "kernel: nvidia-uvm: Loaded the UVM driver, major device number\n";
  EXPECT_TRUE(sentence_runs(first + "[   12.345678] nvidia 0000:3b:00.0: enabling device\n").empty());
  EXPECT_TRUE(sentence_runs(first + "2024-08-30T11:11:22Z host kernel: something else\n").empty());
  EXPECT_TRUE(sentence_runs(first + "Aug 30 11:11:22 gpu-node-7 kernel: NVRM: loading\n").empty());
  EXPECT_TRUE(sentence_runs(first + "gpu-node-7:1234:1290 [0] NCCL INFO Bootstrap : Using eth0\n").empty());
  EXPECT_TRUE(sentence_runs(first + "Error: something unrelated\n").empty());
  EXPECT_TRUE(sentence_runs(first + "misc/shmutils.cc:87 NCCL WARN Error: failed to extend /dev/shm/nccl-x\n").empty());
  EXPECT_TRUE(sentence_runs(first + "libfabric:718892:1658904526::efa:mr:efa_mr_regattr():632<warn> x\n").empty());
  // A rule that fired elsewhere in the source gains no joined occurrence.
  const SourceResult once = run(
      "1:M 29 Dec 19:34:39.879 # WARNING: The TCP backlog setting of 511 cannot be enforced because "
      "/proc/sys/net/core/somaxconn is set to the lower value of 128.\n"
      "WARNING: The TCP backlog setting of 511 cannot be enforced because\n"
      "/proc/sys/net/core/somaxconn is set to the lower value of 128.\n");
  const Accum* s = find(once, "limits.somaxconn");
  ASSERT_NE(s, nullptr) << ids(once);
  EXPECT_EQ(s->first.size(), 1u);
  EXPECT_EQ(s->first.front().line, 1);
  // A rule either line matches alone is not matched again on the pair.
  const SourceResult r = run("NCCL WARN Cuda failure 'out of memory' while allocating the buffers for ring\n"
                             "channels of the second communicator, retrying\n");
  const Accum* a = find(r, "gpu.oom");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->count, 1);
}

TEST(Normalise, LinesCutByATerminalStillMatch) {
  // less -S / a journalctl pager cut the line at the screen's edge.
  const SourceResult r = run("Aug 30 11:11:22 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=18\n");
  const Accum* a = find(r, "gpu.xid");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->facts.value("code", std::string()), "79");
}

TEST(Normalise, MessageBodyStripsOnlyWrappers) {
  EXPECT_EQ(message_body("Aug 30 11:11:22 host kernel: [ 12.3] NVRM: Xid x"), "NVRM: Xid x");
  EXPECT_EQ(message_body("2024-08-30T11:11:22+0000 host python3[123]: RuntimeError: boom"), "RuntimeError: boom");
  EXPECT_EQ(message_body("host:12:34 [0] NCCL WARN Net : x"), "NCCL WARN Net : x");
  EXPECT_EQ(message_body("[rank1]:[E1206 18:44:12.715 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog"), "[Rank 1] Watchdog");
  EXPECT_EQ(message_body("RuntimeError: plain"), "RuntimeError: plain");
  EXPECT_EQ(message_body("[rank0]:"), "[rank0]:");  // all prefix: unchanged
}

TEST(Normalise, NewWrappersAndTheStartsBehindAmbiguousOnes) {
  // Definite wrappers: message_body strips them.
  EXPECT_EQ(message_body("(RayTrainWorker pid=1234, ip=10.0.0.1) RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("(pid=1234) RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("[1,mpirank:0,algo-1]<stderr>:RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("\xEF\xBB\xBFKilled"), "Killed");
  EXPECT_EQ(message_body("    MESSAGE=NVRM: Xid x"), "NVRM: Xid x");
  EXPECT_EQ(message_body("> [rank0]: RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("2024-01-01 00:00:00,123 - root - ERROR - RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("(see the log) RuntimeError: x"), "(see the log) RuntimeError: x");  // not Ray's
  // Jupyter Server, the notebook and tornado ("[%(levelname)1.1s %(asctime)s %(name)s]").
  EXPECT_EQ(message_body("[E 2024-05-01 10:00:00.123 ServerApp] RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("[I 10:00:00.123 NotebookApp] RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("[W 240501 10:00:00 web:2246] RuntimeError: x"), "RuntimeError: x");
  EXPECT_EQ(message_body("[I want] RuntimeError: x"), "[I want] RuntimeError: x");  // a level letter, then no time
  // log4j's padded level, then its thread and logger (TorchServe's model worker output).
  EXPECT_EQ(message_body("2024-12-10T13:37:00,743 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - RuntimeError: x"),
            "RuntimeError: x");
  EXPECT_EQ(message_body("[ERROR] main org.pytorch.serve.ModelServer - RuntimeError: x"), "RuntimeError: x");
  // The layouts of ML tools' own loggers.
  for (const char* line : {
           "ERROR 05-01 10:00:00 [core.py:100] RuntimeError: x",                              // vLLM
           "ERROR 05-01 10:00:00 engine.py:100] RuntimeError: x",                              // vLLM, older
           "2024-05-01 10:00:00.123 | ERROR    | __main__:main:10 - RuntimeError: x",         // loguru
           "[05/01/24 10:00:00] ERROR    RuntimeError: x",                                     // rich
           "[2024-05-01 10:00:00,123][__main__][ERROR] - RuntimeError: x",                     // Hydra
           "[2024-05-01, 10:00:00 UTC] {taskinstance.py:1234} ERROR - RuntimeError: x",        // Airflow
           "[2024-05-01 10:00:00 +0000] [123] [ERROR] RuntimeError: x",                        // gunicorn
           "[2024-05-01 10:00:00,123] [ERROR] [launch.py:321:sigkill_handler] RuntimeError: x",  // DeepSpeed
           "[NeMo E 2024-05-01 10:00:00 train:10] RuntimeError: x",                            // NeMo
           "[2024-05-01 10:00:00 TP0] RuntimeError: x",                                        // SGLang
           "2024-05-01 10:00:00.123456: E tensorflow/core/x.cc:10] RuntimeError: x",           // TensorFlow C++
           "2024/05/01 10:00:00 ERROR mlflow.cli: RuntimeError: x",                            // Go's log layout, MLflow
           "24/05/01 10:00:00 ERROR Executor: RuntimeError: x",                                // log4j default (Spark)
       }) {
    SCOPED_TRACE(line);
    EXPECT_EQ(message_body(line), "RuntimeError: x");
  }
  // ... and what stays a message.
  EXPECT_EQ(message_body("[::1]:29500 RuntimeError: x"), "[::1]:29500 RuntimeError: x");
  EXPECT_EQ(message_body("ERROR something failed"), "ERROR something failed");
  EXPECT_EQ(message_body("{\"level\": \"ERROR\"} x"), "{\"level\": \"ERROR\"} x");
  // Ambiguous prefixes are starts to try, not stripped for people.
  EXPECT_EQ(message_body("worker-1: Killed"), "worker-1: Killed");
  std::string_view starts[8];
  auto has_start = [&](std::string_view line, std::string_view want) {
    const std::size_t n = message_starts(line, starts, 8);
    for (std::size_t i = 0; i < n; ++i)
      if (starts[i] == want) return true;
    return false;
  };
  EXPECT_TRUE(has_start("worker-1: Killed", "Killed"));
  EXPECT_TRUE(has_start("ERROR:root:Soft rlimits too low", "Soft rlimits too low"));
  EXPECT_TRUE(has_start("2024-01-01T00:00:00.1234567Z zsh: killed     python", "zsh: killed     python"));
  EXPECT_TRUE(has_start("2024-01-01T00:00:00.123000+00:00 algo-1-1704067200 Killed", "Killed"));
  EXPECT_TRUE(has_start("Killed\r", "Killed"));
  EXPECT_TRUE(has_start("[INFO ] W-9000 MODEL_LOG - Traceback (most recent call last):", "W-9000 MODEL_LOG - Traceback (most recent call last):"));
  EXPECT_TRUE(has_start("[WARN ] one two three - RuntimeError: x", "one two three - RuntimeError: x"));  // not thread and logger
  EXPECT_TRUE(has_start("05/01/2024 10:00:00 - ERROR - __main__ - RuntimeError: x", "RuntimeError: x"));  // transformers' examples
  EXPECT_EQ(message_starts("Killed", starts, 8), 0u);  // the line itself is not a start
  // Tables and -q outputs keep their indentation; a table's rows stay whole.
  EXPECT_EQ(strip_wrappers("[rank3]:     Fabric"), "    Fabric");
  EXPECT_EQ(strip_wrappers("[ 12.345678]     State : In Progress"), "    State : In Progress");
  EXPECT_EQ(strip_wrappers("| 0  NVIDIA H100 80GB HBM3  On |"), "| 0  NVIDIA H100 80GB HBM3  On |");
  EXPECT_EQ(strip_wrappers("plain line"), "plain line");
}

// "prog:" after a stamp is a syslog tag; "name::" is not (a C++ scope, a pytest node id), so
// pytest's summary line behind mpirun's ctime and tag keeps its start.
TEST(Normalise, ADoubleColonIsNotAProgramTag) {
  EXPECT_EQ(strip_wrappers("Thu Jan 23 11:55:50 2025[1,1]<stderr>:FAILED tests/test_x.py::test_y - ValueError: z"),
            "FAILED tests/test_x.py::test_y - ValueError: z");
  EXPECT_EQ(strip_wrappers("Jan  1 00:00:00 node1 kernel: NVRM: Xid 79"), "NVRM: Xid 79");
}

// A thread quotes one message as Markdown inline code: the message is read
// without its backticks (a fence and a code span inside a line are kept).
TEST(Normalise, AWholeLineInAMarkdownCodeSpanIsReadAsTheMessage) {
  EXPECT_EQ(strip_wrappers("`ImportError: cannot import name 'Provider' from 'qiskit.providers'`"),
            "ImportError: cannot import name 'Provider' from 'qiskit.providers'");
  EXPECT_EQ(strip_wrappers("> `RuntimeError: No CUDA GPUs are available` "), "RuntimeError: No CUDA GPUs are available");
  EXPECT_EQ(strip_wrappers("```"), "```");
  EXPECT_EQ(strip_wrappers("```text```"), "```text```");
  EXPECT_EQ(strip_wrappers("run `nvidia-smi` to see"), "run `nvidia-smi` to see");
  const SourceResult r = run("`RuntimeError: No CUDA GPUs are available`\n");
  EXPECT_NE(find(r, "gpu.not_found"), nullptr) << ids(r);
}

TEST(Normalise, HtmlEntitiesAndNestedRecordsAreDecoded) {
  const SourceResult r = run("modprobe: ERROR: could not insert &#39;nvidia&#39;: Key was rejected by service\n");
  EXPECT_NE(find(r, "gpu.driver_kernel_mismatch"), nullptr) << ids(r);
  const std::vector<std::string> pieces =
      unwrap(R"({"MESSAGE":"{\"level\":\"warn\",\"msg\":\"slow fdatasync\",\"took\":\"1.8s\"}"})");
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], "slow fdatasync");
}

TEST(Normalise, AStructuredRecordsErrorFieldIsReadWithItsMessage) {
  // zap/logrus/slog keep the failure apart from the message (gpud,
  // dcgm-exporter in JSON mode): the rules see both, as logfmt prints them.
  const std::vector<std::string> pieces = unwrap(
      R"({"level":"warn","ts":"2025-03-14T09:12:44.318Z","caller":"memory/memory.go:136","msg":"device memory info v1 failed","error":"GPU is lost"})");
  ASSERT_EQ(pieces.size(), 1u);
  EXPECT_EQ(pieces[0], "device memory info v1 failed error=\"GPU is lost\"");
  const SourceResult r = run(
      R"({"level":"warn","ts":"2025-03-14T09:12:44.318Z","msg":"NVML device enumeration failed","error":"error getting device handle for index '6': Unknown Error"})"
      "\n");
  EXPECT_NE(find(r, "gpu.xid"), nullptr) << ids(r);
  // An error already inside the message is not repeated.
  EXPECT_EQ(unwrap(R"({"msg":"open failed: EIO","error":"EIO"})")[0], "open failed: EIO");
}

TEST(Normalise, AnEventsMessageInsideANestedObjectIsReadToo) {
  // A node problem detector logs a format string as its message and the
  // event, with the kernel's Xid line, in an object under the record
  // (SageMaker HyperPod's health-monitoring agent): both are lines to match.
  const char* line =
      R"(2024-08-21T11:35:35.532-07:00 {"level":"info","ts":"2024-08-21T18:35:35Z","msg":"NPD caught event: %v","details: ":{"severity":"warn","reason":"XidHardwareFailure","message":"Node condition NvidiaErrorReboot is now: True, reason: XidHardwareFailure, message: \"NVRM: Xid (PCI:0000:b9:00): 79, pid=<unknown>, name=<unknown>, GPU has fallen off the bus.\""}})";
  const std::vector<std::string> pieces = unwrap(line);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0], "NPD caught event: %v");
  EXPECT_NE(pieces[1].find("NVRM: Xid (PCI:0000:b9:00): 79"), std::string::npos) << pieces[1];
  const SourceResult r = run(std::string(line) + "\n");
  const Accum* xid = find(r, "gpu.xid");
  ASSERT_NE(xid, nullptr) << ids(r);
  EXPECT_EQ(xid->facts.value("code", std::string()), "79");
  // A nested object that repeats the message adds nothing.
  EXPECT_EQ(unwrap(R"({"msg":"GPU is lost","event":{"msg":"GPU is lost"}})").size(), 1u);
}

TEST(Normalise, TypographicQuotesAndNoBreakSpacesAreReadAsAscii) {
  // A forum editor's curly quotes ("couldn\xE2\x80\x98t" as a corpus sample
  // has it), a prime for an apostrophe, and &nbsp; copied as U+00A0.
  EXPECT_TRUE(needs_unwrap("could not insert \xE2\x80\x98nvidia\xE2\x80\x99: Key was rejected by service"));
  EXPECT_EQ(unwrap("could not insert \xE2\x80\x98nvidia\xE2\x80\x99: \xE2\x80\x9Cx\xE2\x80\x9D can\xE2\x80\xB2t")[0],
            "could not insert 'nvidia': \"x\" can't");
  const SourceResult q = run("modprobe: ERROR: could not insert \xE2\x80\x98nvidia\xE2\x80\x99: Key was rejected by service\n");
  EXPECT_NE(find(q, "gpu.driver_kernel_mismatch"), nullptr) << ids(q);
  // Other UTF-8 is left as it is: no decoding, no unwrapping.
  EXPECT_FALSE(needs_unwrap("GPU 0: 45\xC2\xB0" "C, \xE2\x80\x94 fan 30%"));

  std::string storage;
  const std::string_view plain = "no such bytes here\n";
  EXPECT_EQ(ascii_spaces(plain, &storage).data(), plain.data());  // unchanged: no copy
  EXPECT_EQ(ascii_spaces("a\xC2\xA0" "b\n\xC2\xA0\xC2\xA0" "c\n", &storage), "a b\n  c\n");
  std::string nbsp = "Out of memory: Killed process 41234 (python) total-vm:123456kB, anon-rss:98765kB\n";
  for (std::size_t i = nbsp.find(' '); i != std::string::npos; i = nbsp.find(' ', i + 2)) nbsp.replace(i, 1, "\xC2\xA0");
  const SourceResult n = run("kernel: " + nbsp);
  const Accum* a = find(n, "host.oom");
  ASSERT_NE(a, nullptr) << ids(n);
  EXPECT_EQ(a->first.front().line, 1);
}

TEST(Normalise, FullwidthPunctuationFromACjkInputMethodIsReadAsAscii) {
  // The kernel's OOM line as a user pasted it through a Chinese input method
  // (fullwidth colon, parentheses and commas): U+FF01-U+FF5E and U+3000.
  const std::string line =
      "Out of memory\xEF\xBC\x9AKilled process 217423\xEF\xBC\x88python\xEF\xBC\x89total-vm:112518872kB"
      "\xEF\xBC\x8C  anon-rss:30204444kB\xEF\xBC\x8C UID:1000";
  EXPECT_TRUE(needs_unwrap(line));
  EXPECT_EQ(unwrap(line)[0], "Out of memory:Killed process 217423(python)total-vm:112518872kB,  anon-rss:30204444kB, UID:1000");
  EXPECT_EQ(unwrap("GPU\xE3\x80\x80\xEF\xBC\x90")[0], "GPU 0");
  const SourceResult r = run(line + "\n");
  EXPECT_NE(find(r, "host.oom"), nullptr) << ids(r);
  // Other CJK text is left as it is.
  EXPECT_FALSE(needs_unwrap("\xE6\x98\xBE\xE5\xAD\x98\xE4\xB8\x8D\xE8\xB6\xB3"));
}

TEST(Normalise, AHardWrapCutAfterAnEqualsSignOrBeforeABraceIsJoined) {
  // Cut points that look like a table's border ("code=") or a record's start
  // ("< image", "{ code: 11") in the middle of a wrapped message.
  std::string pad;  // other 80-column lines of the same paste
  for (int i = 0; i < 3; ++i) pad += std::string(80, 'x') + "\n";
  const std::string full = "Mar 04 10:12:01 gpu-node-3 systemd[1]: train.service: Main process exited, code=killed, status=9/KILL";
  ASSERT_EQ(full[79], '=');
  const SourceResult r = run(pad + full.substr(0, 80) + "\n" + full.substr(80) + "\n");
  EXPECT_NE(find(r, "host.oom"), nullptr) << ids(r);
  // Whether a run joins line 4 (after the pad's three and the cut line).
  const auto joins_line_4 = [](const std::vector<WrapRun>& runs) {
    return std::any_of(runs.begin(), runs.end(), [](const WrapRun& w) { return w.first_line + w.lines > 4; });
  };
  for (const std::string cont : {"< image 7.5", "{ code: 11, kind: WouldBlock }"})
    EXPECT_TRUE(joins_line_4(wrap_runs(pad + std::string(80, 'y') + "\n" + cont + "\n"))) << cont;
  // A kmsg priority and a JSON record still start lines; a rule of dashes or
  // equals signs still ends one.
  for (const std::string cont : {"<3>[ 12.345678] nvidia: x", "{\"log\": \"x\"}"})
    EXPECT_FALSE(joins_line_4(wrap_runs(pad + std::string(80, 'y') + "\n" + cont + "\n"))) << cont;
  EXPECT_FALSE(joins_line_4(wrap_runs(pad + std::string(78, 'y') + "==\nnext line\n")));
}

TEST(Normalise, ASoftWrapBeforeABracketedEndpointIsJoined) {
  // A paste cut after "connect " (a trailing space) and went on with the
  // peer's "[address]:port": gloo's refused connect, whole only when joined.
  const std::string cut = "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:799] connect \n";
  for (const std::string peer : {"[127.0.1.1]:29591: Connection refused", "[fe80::1%eth0]:29500: Connection refused"}) {
    const SourceResult r = run(cut + peer + "\n");
    const Accum* a = find(r, "net.unreachable");
    ASSERT_NE(a, nullptr) << peer << ": " << ids(r);
    EXPECT_EQ(a->first.front().line, 1);
  }
  // A line prefix in brackets still starts a line after a soft cut: a rank
  // tag, a dmesg time, a bracket with no port after it; and a bracketed
  // endpoint after a line that does not end in a space is not joined.
  const std::string soft = std::string(50, 'y') + " \n";
  for (const std::string next : {"[rank0]: Traceback (most recent call last):", "[ 12.345678] nvidia: x",
                                 "[10.0.0.2] is the master", "[10.0.0.2]: 29500"}) {
    const std::vector<WrapRun> runs = wrap_runs(soft + next + "\n");
    EXPECT_TRUE(runs.empty()) << next;
  }
  EXPECT_TRUE(wrap_runs(std::string(50, 'y') + "\n[10.0.0.2]:29500: Connection refused\n").empty());
}

TEST(Normalise, EvidenceForPeopleIsWholeOrCutAtAWord) {
  const std::string line = "Aug 30 11:11:22 host kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.";
  EXPECT_EQ(evidence_display(line, 300), "NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.");
  const std::string cut = evidence_display(line, 60);
  EXPECT_LE(cut.size(), 64u);
  EXPECT_EQ(cut.substr(cut.size() - 4), " ...");
  EXPECT_EQ(line.find(cut.substr(0, cut.size() - 4)) != std::string::npos, true);
}

// ---- issue 20: one event, one count -----------------------------------------------------------

TEST(Events, OneOomReportIsOneEventNotThreeLines) {
  const SourceResult r = run(
      "[ 518.050000] python invoked oom-killer: gfp_mask=0x100cca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n"
      "[ 518.050100] CPU: 3 PID: 26420 Comm: python Not tainted 5.15.0-1051-aws #56-Ubuntu\n"
      "[ 518.050200] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n"
      "[ 518.050300] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/user.slice,task=python,pid=26420,uid=1000\n"
      "[ 518.050606] Out of memory: Killed process 26420 (python) total-vm:11964kB, anon-rss:4288kB, file-rss:3028kB, shmem-rss:0kB, UID:1000 pgtables:44kB oom_score_adj:0\n"
      "[ 518.053407] oom_reaper: reaped process 26420 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB\n");
  const Accum* a = find(r, "host.oom");
  ASSERT_NE(a, nullptr) << ids(r);
  EXPECT_EQ(a->count, 1);
  EXPECT_EQ(a->lines, 5);  // the task-dump header is a line of the same report
  // A line that names the killed process leads the evidence, not the header.
  EXPECT_NE(a->first.front().text.find("26420"), std::string::npos) << a->first.front().text;
}

TEST(Events, TwoKillsAreTwoEvents) {
  const SourceResult r = run(
      "May 15 23:09:30 h kernel: [  518.050606] Out of memory: Killed process 15784 (python3) total-vm:11964kB, anon-rss:4288kB\n"
      "May 15 23:09:30 h kernel: [  518.053407] oom_reaper: reaped process 15784 (python3), now anon-rss:0kB\n"
      "May 15 23:09:30 h kernel: [  518.070786] Out of memory: Killed process 15783 (python3) total-vm:11964kB, anon-rss:4288kB\n"
      "May 15 23:09:30 h kernel: [  518.073567] oom_reaper: reaped process 15783 (python3), now anon-rss:0kB\n");
  const Accum* a = find(r, "host.oom");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 2);
}

TEST(Events, TheSameKernelEventInKmsgAndSyslogCountsOnce) {
  const std::string kmsg =
      "2025-11-29T10:00:00.123456Z kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.\n"
      "2025-11-29T10:05:00.000000Z kernel: Out of memory: Killed process 26420 (python) total-vm:11964kB, anon-rss:4288kB\n";
  const std::string syslog =
      "Nov 29 10:00:00 node1 kernel: [ 1936.510073] NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.\n"
      "Nov 29 10:05:01 node1 kernel: [ 2236.000000] Out of memory: Killed process 26420 (python) total-vm:11964kB, anon-rss:4288kB\n";
  const std::string dmesg =  // seconds since boot only: matched by the event's facts
      "[ 1936.510073] NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.\n"
      "[ 2236.000000] Out of memory: Killed process 26420 (python) total-vm:11964kB, anon-rss:4288kB\n";
  FindingSet all;
  all.merge(run(kmsg, {}, "kernel/kmsg.log").findings);
  all.merge(run(syslog, {}, "logs/messages").findings);
  all.merge(run(dmesg, {}, "dmesg.txt").findings);
  const auto out = all.render(default_playbook());
  int xid = 0, oom = 0;
  for (const auto& f : out) {
    if (f.id == "gpu.xid") xid += static_cast<int>(f.count);
    if (f.id == "host.oom") oom += static_cast<int>(f.count);
  }
  EXPECT_EQ(xid, 1);
  EXPECT_EQ(oom, 1);
}

TEST(Events, DistinctPidsAreDistinctEventsEvenInOneSecond) {
  std::string text;
  for (int i = 0; i < 5; ++i)
    text += "2025-11-29T10:00:00Z host kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=" + std::to_string(100 + i) +
            ", name=python, Graphics SM Warp Exception\n";
  text += "2025-11-29T10:00:00Z host kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=104, name=python, Graphics SM Warp Exception\n";
  const SourceResult r = run(text);  // find() points into it: it must outlive a
  const Accum* a = find(r, "gpu.xid");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->count, 5);
  EXPECT_EQ(a->lines, 6);
}

// ---- issue 20: the judged window ----------------------------------------------------------------

TEST(Window, EventsBeforeTheBootAreInfoWithTheirAge) {
  AnalysisOptions opt;
  opt.current_from = kNow - 1800;  // booted 30 min ago
  opt.window = "before the current boot";
  const SourceResult r = run(
      "2025-11-29T14:00:00Z kernel: Out of memory: Killed process 26420 (nodeprobe) total-vm:11964kB, anon-rss:4288kB\n"
      "2025-11-29T15:50:00Z kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1896, name=python, GPU has fallen off the bus.\n",
      opt);
  const auto out = r.findings.render(default_playbook(), kNow);
  const Finding* oom = nullptr;
  const Finding* xid = nullptr;
  for (const auto& f : out) {
    if (f.id == "host.oom") oom = &f;
    if (f.id == "gpu.xid") xid = &f;
  }
  ASSERT_NE(oom, nullptr);
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ(oom->severity, Severity::kInfo);
  EXPECT_EQ(oom->action, "none");
  EXPECT_NE(oom->title.find("2 h 0 min ago"), std::string::npos) << oom->title;
  EXPECT_NE(oom->title.find("before the current boot"), std::string::npos) << oom->title;
  EXPECT_EQ(xid->severity, Severity::kError);  // after the boot: judged now
  EXPECT_EQ(xid->action, "reboot");
  EXPECT_EQ(node_action(out), "reboot");
}

}  // namespace
}  // namespace nodeprobe::diag

namespace nodeprobe::diag {
namespace {

// A bundle remembers when its host booted: kernel events before that boot
// are the past (info with their age), events after it are judged.
TEST(Window, ABundleJudgesFromItsHostsBoot) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("np-window-" + std::to_string(::getpid()));
  fs::create_directories(dir / "logs");
  Manifest m;
  m.created = "2025-11-29T16:00:00Z";
  m.created_epoch = kNow;
  m.boot_epoch = kNow - 1800;
  m.files.push_back({"logs/messages", "/var/log/messages", "ok", "", 0});
  std::ofstream(dir / "manifest.json") << manifest_to_json(m).dump(1);
  std::ofstream(dir / "logs/messages")
      << "Nov 29 14:00:00 node1 kernel: Out of memory: Killed process 26420 (nodeprobe) total-vm:11964kB, anon-rss:4288kB\n"
      << "Nov 29 14:00:00 node1 kernel: oom_reaper: reaped process 26420 (nodeprobe), now anon-rss:0kB\n";
  DiagInputs in;
  in.bundle = dir.string();
  in.now = kNow;
  Report rep;
  const DiagOutcome out = diagnose(rep, in);
  fs::remove_all(dir);
  ASSERT_TRUE(out.input_errors.empty()) << out.input_errors.front();
  ASSERT_EQ(rep.findings.size(), 1u);
  const Finding& f = rep.findings.front();
  EXPECT_EQ(f.id, "host.oom");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.count, 1);
  EXPECT_NE(f.title.find("before the current boot"), std::string::npos) << f.title;
  EXPECT_EQ(rep.action, "none");
  // accept's --since narrows the window further; diag's --since still drops.
  in.judge_from_boot = false;
  Report all;
  fs::create_directories(dir / "logs");
  std::ofstream(dir / "manifest.json") << manifest_to_json(m).dump(1);
  std::ofstream(dir / "logs/messages")
      << "Nov 29 14:00:00 node1 kernel: Out of memory: Killed process 26420 (nodeprobe) total-vm:11964kB, anon-rss:4288kB\n";
  diagnose(all, in);
  fs::remove_all(dir);
  ASSERT_EQ(all.findings.size(), 1u);
  EXPECT_EQ(all.findings.front().severity, Severity::kError);
  EXPECT_EQ(all.action, "tune");
}

}  // namespace
}  // namespace nodeprobe::diag
