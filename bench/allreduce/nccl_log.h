#pragma once
/// Reads NCCL's own account of which network it used (NCCL_DEBUG=INFO lines)
/// and judges it against the network that was asked for.

#include <string>
#include <vector>

#include "nodeprobe/report.h"

namespace nodeprobe::allreduce {

struct NcclNetInfo {
  std::string network;       ///< "Socket", "IB", "AWS Libfabric", "Libfabric", "" when not seen
  std::string ofi_provider;  ///< "efa", "tcp" ... from "NET/OFI Selected provider is X"
  std::vector<std::string> socket_ifaces;  ///< from "NET/Socket : Using [0]eth0:10.0.0.1<0>"
  std::vector<std::string> channel_vias;   ///< distinct "via NET/Socket/0", "via P2P/IPC" ...
  std::vector<std::string> evidence;       ///< the lines the verdict rests on (first few)
  bool is_ofi() const;
  bool is_socket() const { return network == "Socket"; }
};

/// Parses NCCL_DEBUG=INFO text (any prefix before "NCCL INFO").
NcclNetInfo parse_nccl_log(const std::string& text);

/// The check for `requested` ("socket", "ofi" or ""): efa.fallback_tcp (fail) when
/// OFI was requested and Socket carried the data; info otherwise.
Check nccl_network_check(const std::string& requested, const NcclNetInfo& seen, bool multi_host);

}  // namespace nodeprobe::allreduce
