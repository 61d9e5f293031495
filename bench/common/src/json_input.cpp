#include "nodeprobe/json_input.h"

namespace nodeprobe {
namespace {

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

struct TooDeep {
  int depth;
};

}  // namespace

nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& origin, int max_depth) {
  using J = nlohmann::ordered_json;
  // The callback sees every start of an object or array with its depth:
  // refusing there keeps the parser from building anything deeper.
  J::parser_callback_t cb = [max_depth](int depth, J::parse_event_t ev, J&) {
    if ((ev == J::parse_event_t::object_start || ev == J::parse_event_t::array_start) && depth >= max_depth)
      throw TooDeep{depth};
    return true;
  };
  if (text.empty()) throw InputError(origin + ": empty file");
  try {
    return J::parse(text.begin(), text.end(), cb);
  } catch (const TooDeep&) {
    throw InputError(origin + ": JSON nested deeper than " + std::to_string(max_depth) + " levels");
  } catch (const J::parse_error& e) {
    throw InputError(origin + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const J::exception& e) {
    throw InputError(origin + ": not valid JSON: " + one_line(e.what()));
  }
}

nlohmann::ordered_json load_json(const std::string& path, const InputLimits& limits, int max_depth) {
  const std::string text = read_input(path, limits);
  return parse_json_text(text, path == "-" ? "stdin" : path, max_depth);
}

}  // namespace nodeprobe
