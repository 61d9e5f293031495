#pragma once
/// JSON documents from bounded input (input.h): one loader for every JSON a
/// command reads (reports, expectations, playbook data, bundle manifests).
/// Nesting is limited too: a document nested deeper than `max_depth` is
/// refused before anything recursive (copy, dump) can exhaust the stack.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "nodeprobe/input.h"

namespace nodeprobe {

/// Deepest nesting a document may have (reports need about 8).
inline constexpr int kMaxJsonDepth = 64;

/// Parses `text`; `origin` names it in messages. Throws InputError (one
/// line: origin, byte offset, reason) on malformed JSON, numbers out of
/// range or nesting deeper than `max_depth`.
nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& origin,
                                       int max_depth = kMaxJsonDepth);

/// Reads `path` ("-": stdin) typed and bounded by `limits`, then parses it.
nlohmann::ordered_json load_json(const std::string& path, const InputLimits& limits,
                                 int max_depth = kMaxJsonDepth);

}  // namespace nodeprobe
