#pragma once
// The ranks of a sweep started by mpirun: rank 0 validates the sweep, hands out points on
// request and writes the results; every rank runs the points it is given on its own workers.
// Built on MPI when CUBESIM_MPI is on; otherwise connect() finds no ranks (and refuses to run
// one sweep per rank under mpirun).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cubesim::cli::sweep {

// The rank mpirun gave this process, from its environment (OpenMPI, MPICH, PMIx), or 0. Usable
// before MPI is initialised, e.g. to let only rank 0 print a command-line error.
int launched_rank();
// The number of ranks mpirun started, from the environment; 1 when not started by mpirun.
int launched_size();

class RankLink {
 public:
  // Joins the MPI world when this process is one of several ranks started by mpirun; nullptr
  // when it runs alone. UsageError when started as several ranks by a cubesim built without MPI.
  static std::unique_ptr<RankLink> connect();
  ~RankLink();  // MPI_Finalize
  RankLink(const RankLink&) = delete;
  RankLink& operator=(const RankLink&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_size() const { return local_size_; }  // ranks on this host

  // Collective: rank 0 says whether the sweep goes ahead (after validating it); every rank
  // returns rank 0's answer.
  bool broadcast_go(bool go);

  // Rank 0.
  struct Message {
    enum class Kind { request, result, done };
    int from = 0;
    Kind kind = Kind::done;
    int slots = 0;        // request: how many points the rank can start now
    std::string payload;  // result: {"index", "row", "report"} as JSON text
  };
  std::optional<Message> poll();  // a message that has arrived, without waiting
  void assign(int to, const std::vector<std::uint64_t>& indices);  // empty: no more points

  // Other ranks.
  std::vector<std::uint64_t> request(int slots);  // waits for rank 0's answer
  void send_result(const std::string& payload);
  void send_done();

  // Ends every rank (after rank 0 wrote what it has, on an interrupt).
  [[noreturn]] void abort(int exit_code);

 private:
  RankLink() = default;
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace cubesim::cli::sweep
