#include <stdexcept>

#include "backend.h"
#include "mpi_util.h"
#include "nodeprobe/report_json.h"

namespace nodeprobe::allreduce {

void run_agreed(MPI_Comm comm, const std::function<void()>& local) {
  Json mine = Json::object();
  try {
    local();
  } catch (const InputError& e) {
    mine["kind"] = "input";
    mine["what"] = e.what();
  } catch (const BackendUnavailable& e) {
    mine["kind"] = "unavailable";
    mine["what"] = e.what();
    Json c;
    to_json(c, e.check());
    mine["check"] = c;
  } catch (const std::exception& e) {
    mine["kind"] = "error";
    mine["what"] = e.what();
  }
  const auto all = allgather_strings(comm, mine.empty() ? std::string() : mine.dump());
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const Json j = Json::parse(all[r]);
    const std::string kind = j.value("kind", "error");
    const std::string what = j.value("what", "");
    if (kind == "input") throw InputError(what);
    if (kind == "unavailable") {
      Check c;
      if (j.contains("check")) from_json(j["check"], c);
      throw BackendUnavailable(what, c);
    }
    int me = 0;
    MPI_Comm_rank(comm, &me);
    if (static_cast<int>(r) == me) throw AgreedError(what);
    throw AgreedError("rank " + std::to_string(r) + ": " + what);
  }
}

}  // namespace nodeprobe::allreduce
