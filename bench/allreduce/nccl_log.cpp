#include "nccl_log.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace nodeprobe::allreduce {
namespace {

std::string trim_copy(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  std::size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

std::string after(const std::string& line, const std::string& key) {
  const auto at = line.find(key);
  return at == std::string::npos ? std::string() : line.substr(at + key.size());
}

void add_evidence(NcclNetInfo& info, const std::string& line) {
  if (info.evidence.size() < 6) info.evidence.push_back(trim_copy(line));
}

}  // namespace

bool NcclNetInfo::is_ofi() const {
  return network.find("Libfabric") != std::string::npos || network == "OFI" || !ofi_provider.empty();
}

NcclNetInfo parse_nccl_log(const std::string& text) {
  NcclNetInfo info;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.find("NCCL INFO") == std::string::npos) continue;
    std::string v = after(line, "Using network ");
    if (!v.empty()) {
      info.network = trim_copy(v);
      add_evidence(info, line);
      continue;
    }
    v = after(line, "Assigned NET plugin ");
    if (!v.empty() && info.network.empty()) {
      info.network = trim_copy(v.substr(0, v.find(" to comm")));
      add_evidence(info, line);
      continue;
    }
    std::string lower = line;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower.find("net/ofi selected provider is ") != std::string::npos) {
      std::string p = after(lower, "net/ofi selected provider is ");
      p = p.substr(0, p.find_first_of(" ,("));
      info.ofi_provider = p;
      add_evidence(info, line);
      continue;
    }
    v = after(line, "NET/Socket : Using ");
    if (!v.empty()) {
      std::istringstream words(v);
      for (std::string w; words >> w;) info.socket_ifaces.push_back(w);
      add_evidence(info, line);
      continue;
    }
    v = after(line, " via ");
    if (!v.empty()) {
      v = trim_copy(v);
      if (std::find(info.channel_vias.begin(), info.channel_vias.end(), v) == info.channel_vias.end())
        info.channel_vias.push_back(v);
    }
  }
  if (info.network.empty()) {
    // Older NCCL without "Using network": infer from the channels.
    for (const auto& via : info.channel_vias) {
      if (via.rfind("NET/Socket", 0) == 0) info.network = "Socket";
      if (via.find("Libfabric") != std::string::npos) info.network = "AWS Libfabric";
      if (via.rfind("NET/IB", 0) == 0) info.network = "IB";
    }
  }
  return info;
}

Check nccl_network_check(const std::string& requested, const NcclNetInfo& seen, bool multi_host) {
  Check c;
  c.id = "nccl.network";
  c.expected = requested == "ofi" ? "NCCL uses the OFI plugin (aws-ofi-nccl) over EFA"
               : requested == "socket" ? "NCCL uses its Socket transport"
                                       : "NCCL reports the network it chose";
  std::string seen_text = seen.network.empty() ? "not reported" : seen.network;
  if (!seen.ofi_provider.empty()) seen_text += " (OFI provider " + seen.ofi_provider + ")";
  c.observed = "NCCL network: " + seen_text;
  for (const auto& e : seen.evidence) c.detail += (c.detail.empty() ? "" : " | ") + e;
  c.status = Status::kPass;
  if (requested == "ofi" && (seen.is_socket() || (seen.is_ofi() && seen.ofi_provider == "tcp"))) {
    c.status = Status::kFail;
    c.finding = "efa.fallback_tcp";
    c.fix = "Load the aws-ofi-nccl plugin (LD_LIBRARY_PATH with /opt/amazon/ofi-nccl/lib, or "
            "NCCL_NET_PLUGIN), set FI_PROVIDER=efa, check `fi_info -p efa`; confirm with "
            "NCCL_DEBUG=INFO that the log says 'Using network Libfabric' and 'Selected provider is efa'";
  } else if (requested == "ofi" && seen.network.empty() && multi_host) {
    c.status = Status::kWarn;
    c.finding = "nccl.network_config";
    c.fix = "Run with NCCL_DEBUG=INFO and check which network NCCL loads";
  } else if (requested == "socket" && seen.is_ofi()) {
    c.status = Status::kWarn;
    c.observed += " although Socket was requested";
    c.fix = "NCCL_NET=Socket forces the socket transport";
  }
  return c;
}

}  // namespace nodeprobe::allreduce
