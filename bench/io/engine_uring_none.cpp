// Built when liburing is absent: the io_uring methods report why they cannot run.
#include "engine.h"

namespace nodeprobe::io {

std::unique_ptr<Engine> make_uring_engine(const Dataset&, bool, std::size_t) {
  throw MethodUnavailable(uring_unavailable());
}

std::string uring_unavailable() { return "this build has no liburing (io_uring methods disabled)"; }

}  // namespace nodeprobe::io
