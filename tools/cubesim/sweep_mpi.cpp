#include "tools/cubesim/sweep_mpi.hpp"

#include <cstdlib>

#include "triton_emu/errors.hpp"

#if CUBESIM_HAVE_MPI
#include <mpi.h>
#endif

namespace cubesim::cli::sweep {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  return *end == '\0' && x >= 0 && x < (1 << 30) ? static_cast<int>(x) : fallback;
}

[[maybe_unused]] constexpr int kTagRequest = 1;
[[maybe_unused]] constexpr int kTagAssign = 2;
[[maybe_unused]] constexpr int kTagResult = 3;
[[maybe_unused]] constexpr int kTagDone = 4;

}  // namespace

int launched_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const int r = env_int(name, -1);
    if (r >= 0) return r;
  }
  return 0;
}

int launched_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const int s = env_int(name, -1);
    if (s >= 1) return s;
  }
  return 1;
}

#if CUBESIM_HAVE_MPI

std::unique_ptr<RankLink> RankLink::connect() {
  if (launched_size() <= 1) return nullptr;
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised == 0) MPI_Init(nullptr, nullptr);
  std::unique_ptr<RankLink> link(new RankLink());
  MPI_Comm_rank(MPI_COMM_WORLD, &link->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &link->size_);
  MPI_Comm local = MPI_COMM_NULL;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local) ==
      MPI_SUCCESS) {
    MPI_Comm_size(local, &link->local_size_);
    MPI_Comm_free(&local);
  }
  if (link->size_ <= 1) return nullptr;  // finalised by the destructor
  return link;
}

RankLink::~RankLink() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (finalised == 0) MPI_Finalize();
}

bool RankLink::broadcast_go(bool go) {
  int flag = go ? 1 : 0;
  MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return flag != 0;
}

std::optional<RankLink::Message> RankLink::poll() {
  int flag = 0;
  MPI_Status status;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (flag == 0) return std::nullopt;
  Message m;
  m.from = status.MPI_SOURCE;
  if (status.MPI_TAG == kTagResult) {
    int bytes = 0;
    MPI_Get_count(&status, MPI_CHAR, &bytes);
    m.kind = Message::Kind::result;
    m.payload.resize(static_cast<std::size_t>(bytes));
    MPI_Recv(m.payload.data(), bytes, MPI_CHAR, m.from, kTagResult, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return m;
  }
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, m.from, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  m.kind = status.MPI_TAG == kTagRequest ? Message::Kind::request : Message::Kind::done;
  m.slots = value;
  return m;
}

void RankLink::assign(int to, const std::vector<std::uint64_t>& indices) {
  MPI_Send(indices.data(), static_cast<int>(indices.size()), MPI_UINT64_T, to, kTagAssign,
           MPI_COMM_WORLD);
}

std::vector<std::uint64_t> RankLink::request(int slots) {
  MPI_Send(&slots, 1, MPI_INT, 0, kTagRequest, MPI_COMM_WORLD);
  MPI_Status status;
  MPI_Probe(0, kTagAssign, MPI_COMM_WORLD, &status);
  int count = 0;
  MPI_Get_count(&status, MPI_UINT64_T, &count);
  std::vector<std::uint64_t> indices(static_cast<std::size_t>(count));
  MPI_Recv(indices.data(), count, MPI_UINT64_T, 0, kTagAssign, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return indices;
}

void RankLink::send_result(const std::string& payload) {
  MPI_Send(payload.data(), static_cast<int>(payload.size()), MPI_CHAR, 0, kTagResult,
           MPI_COMM_WORLD);
}

void RankLink::send_done() {
  int zero = 0;
  MPI_Send(&zero, 1, MPI_INT, 0, kTagDone, MPI_COMM_WORLD);
}

void RankLink::abort(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

#else  // built without MPI

std::unique_ptr<RankLink> RankLink::connect() {
  if (launched_size() > 1)
    throw UsageError("started by mpirun as " + std::to_string(launched_size()) +
                     " ranks, but this cubesim was built without MPI (CUBESIM_MPI=OFF), so "
                     "every rank would run the whole sweep; rebuild with -DCUBESIM_MPI=ON, or run "
                     "one process with --jobs N");
  return nullptr;
}

RankLink::~RankLink() = default;
bool RankLink::broadcast_go(bool go) {
  return go;
}
std::optional<RankLink::Message> RankLink::poll() {
  return std::nullopt;
}
void RankLink::assign(int, const std::vector<std::uint64_t>&) {}
std::vector<std::uint64_t> RankLink::request(int) {
  return {};
}
void RankLink::send_result(const std::string&) {}
void RankLink::send_done() {}
void RankLink::abort(int exit_code) {
  std::_Exit(exit_code);
}

#endif

}  // namespace cubesim::cli::sweep
