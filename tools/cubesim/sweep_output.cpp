#include "tools/cubesim/sweep_output.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "emu/platform.hpp"
#include "kernels/registry.hpp"
#include "tools/cubesim/common.hpp"
#include "tools/cubesim/format.hpp"
#include "tools/cubesim/sweep_point.hpp"
#include "triton_emu/errors.hpp"

extern char** environ;

namespace cubesim::cli::sweep {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The value of a column in a row.
json cell_value(const json& row, const std::string& column) {
  if (row.contains(column)) return row[column];
  if (row.contains("values") && row["values"].contains(column)) return row["values"][column];
  if (column.rfind("param.", 0) == 0 && row.contains("params")) {
    const std::string name = column.substr(6);
    if (row["params"].contains(name)) return row["params"][name];
  }
  return nullptr;
}

std::string cell_text(const json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  return dump(v);
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Runs argv, its stdout and stderr into `output`; returns the exit code (127: cannot start).
int run_process(const std::vector<std::string>& args, std::string& output) {
  int pipefd[2];
  if (::pipe2(pipefd, O_CLOEXEC) != 0) return 127;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipefd[1], STDERR_FILENO);
  std::vector<std::string> storage = args;
  std::vector<char*> argv;
  for (auto& a : storage) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipefd[1]);
  if (rc != 0) {
    ::close(pipefd[0]);
    output = std::strerror(rc);
    return 127;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
    if (n > 0)
      output.append(buf, static_cast<std::size_t>(n));
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool executable(const fs::path& p) {
  return ::access(p.c_str(), X_OK) == 0;
}

// CUBESIM_PYTHON, else Debian's interpreter (where python3-matplotlib installs), else python3
// from PATH.
std::string python() {
  if (const char* p = std::getenv("CUBESIM_PYTHON"); p != nullptr && *p != '\0') return p;
  if (executable("/usr/bin/python3")) return "/usr/bin/python3";
  return "python3";
}

// CUBESIM_PLOT_SCRIPT, else the installed copy beside the binary, else the source tree's.
std::string plot_script() {
  if (const char* p = std::getenv("CUBESIM_PLOT_SCRIPT"); p != nullptr && *p != '\0') return p;
  std::error_code ec;
  if (const fs::path exe = emu::self_executable(); !exe.empty()) {
    const fs::path installed = exe.parent_path().parent_path() / "share/cubesim/plot_sweep.py";
    if (fs::exists(installed, ec)) return installed.string();
  }
  return CUBESIM_PLOT_SCRIPT_SOURCE;
}

std::string last_lines(const std::string& text, std::size_t n) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  std::size_t pos = t.size();
  for (std::size_t i = 0; i < n && pos != std::string::npos && pos > 0; ++i)
    pos = t.rfind('\n', pos - 1);
  return pos == std::string::npos || pos == 0 ? t : t.substr(pos + 1);
}

}  // namespace

// ---- RowStore -----------------------------------------------------------------------------

RowStore::RowStore(std::uint64_t points) : slots_(points) {
  file_ = std::tmpfile();
  if (file_ == nullptr)
    throw UsageError(std::string("cannot create a temporary file for the sweep's rows: ") +
                     std::strerror(errno) + "; set TMPDIR to a writable folder");
}

RowStore::~RowStore() {
  if (file_ != nullptr) std::fclose(file_);
}

void RowStore::put(std::uint64_t index, const json& row) {
  const std::string text = dump(row);
  std::fseek(file_, static_cast<long>(end_), SEEK_SET);
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
    throw std::runtime_error(std::string("cannot keep a sweep row in the temporary file: ") +
                             std::strerror(errno));
  if (slots_[index].length == 0) {
    ++finished_;
    // Rows come from our workers or from files row_problem() accepted; anything else counts
    // as a failure rather than ending the sweep.
    const json& c = row.is_object() ? row.value("exit_code", json(3)) : json(3);
    const int code = c.is_number_integer() ? c.get<int>() : 3;
    failed_ += code != 0 ? 1 : 0;
    worst_ = std::max(worst_, code);
  }
  slots_[index] = {end_, static_cast<std::uint32_t>(text.size())};
  end_ += text.size();
  for (const auto& [k, v] : row.items())
    if (k.rfind("details.", 0) == 0) details_.insert(k);
}

std::optional<json> RowStore::get(std::uint64_t index) const {
  const Slot& s = slots_[index];
  if (s.length == 0) return std::nullopt;
  std::string text(s.length, '\0');
  std::fflush(file_);
  std::fseek(file_, static_cast<long>(s.offset), SEEK_SET);
  if (std::fread(text.data(), 1, text.size(), file_) != text.size()) return std::nullopt;
  return json::parse(text);
}

// ---- PointStore ---------------------------------------------------------------------------

PointStore::PointStore(fs::path dir) : dir_(std::move(dir)) {
  std::error_code ec;
  fs::create_directories(dir_ / "points", ec);
  if (ec || !fs::is_directory(dir_ / "points"))
    throw UsageError("--out " + dir_.string() + ": cannot create the folder " +
                     (dir_ / "points").string() + ": " +
                     (ec ? ec.message() : std::string("a file is in the way")));
  const fs::path probe = dir_ / "points" / (".probe-" + std::to_string(::getpid()));
  {
    std::ofstream out(probe);
    if (!out)
      throw UsageError("--out " + dir_.string() + ": cannot write in " +
                       (dir_ / "points").string() + ": " + std::strerror(errno));
  }
  fs::remove(probe, ec);
}

fs::path PointStore::file(std::uint64_t key) const {
  return dir_ / "points" / (key_hex(key) + ".json");
}

PointStore::Kept PointStore::load(std::uint64_t key) const {
  const fs::path path = file(key);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st)) return {};
  if (fs::is_directory(st)) return {std::nullopt, "is a folder, not a file"};
  if (!fs::is_regular_file(st)) return {std::nullopt, "is not a regular file"};
  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (!in.good() && !in.eof())
    return {std::nullopt, std::string("cannot be read: ") + std::strerror(errno)};
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return {std::nullopt, "is not JSON (" +
                              (text.empty() ? std::string("empty")
                                            : "byte " + std::to_string(e.byte) + " is wrong") +
                              ")"};
  } catch (const json::exception&) {  // out_of_range: a number no double holds (1e400)
    return {std::nullopt, "is not JSON cubesim can read (a number out of range)"};
  }
  if (!doc.is_object() || !doc.contains("row"))
    return {std::nullopt, "is not a kept point (no \"row\")"};
  if (!doc.contains("key") || doc["key"] != key_hex(key))
    return {std::nullopt, "holds another point's key"};
  if (std::string problem = row_problem(doc["row"]); !problem.empty())
    return {std::nullopt, std::move(problem)};
  return {std::move(doc["row"]), ""};
}

std::string PointStore::save(std::uint64_t key, const json& row, const json& report) const {
  if (row.value("status", "") == "crashed") return "";
  const json doc = {{"key", key_hex(key)}, {"row", row}, {"report", report}};
  // Always through a new file renamed over the old: whatever was at the path (a FIFO, a link,
  // damage load() reported) is replaced, never written into (a FIFO would block for ever).
  const fs::path path = file(key);
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write " + tmp.string() + ": " + std::strerror(errno);
    out << dump(doc) << "\n";
    out.close();
    if (!out) return "cannot write " + tmp.string() + ": " + std::strerror(errno);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    const std::string why = ec.message();
    fs::remove(tmp, ec);
    return "cannot write " + path.string() + ": " + why;
  }
  return "";
}

// ---- CSV, JSON lines, table ---------------------------------------------------------------

std::vector<std::string> csv_columns(const Definition& def, const RowStore& rows) {
  std::vector<std::string> columns = {"index"};
  bool kernel_varied = false;
  std::set<std::string> varied_params;
  for (const auto& d : def.dims) {
    columns.push_back(d.field);
    kernel_varied = kernel_varied || d.kind == Dimension::Kind::kernel;
    if (d.kind == Dimension::Kind::param) varied_params.insert(d.name);
  }
  if (!kernel_varied) columns.push_back("kernel");
  std::set<std::string> seen;
  for (const auto& name : kernels_of(def)) {
    const auto& k = kernels::find_kernel(name);
    for (const auto& p : k.params)
      if (!varied_params.contains(p.name) && seen.insert(p.name).second)
        columns.push_back("param." + p.name);
  }
  columns.push_back("status");
  columns.push_back("exit_code");
  for (const auto& m : metric_columns()) columns.push_back(m);
  for (const auto& d : rows.detail_columns()) columns.push_back(d);
  columns.push_back("error");
  return columns;
}

void write_csv(std::ostream& out, const std::vector<std::string>& columns, const RowStore& rows) {
  for (std::size_t c = 0; c < columns.size(); ++c) out << (c ? "," : "") << csv_escape(columns[c]);
  out << "\n";
  for (std::uint64_t i = 0; i < rows.points(); ++i) {
    const auto row = rows.get(i);
    if (!row) continue;
    for (std::size_t c = 0; c < columns.size(); ++c)
      out << (c ? "," : "") << csv_escape(cell_text(cell_value(*row, columns[c])));
    out << "\n";
  }
}

void write_jsonl(std::ostream& out, const RowStore& rows) {
  for (std::uint64_t i = 0; i < rows.points(); ++i)
    if (const auto row = rows.get(i)) out << dump(*row) << "\n";
}

void print_table(std::ostream& out, const Definition& def, const RowStore& rows) {
  std::vector<std::string> header = {"point"};
  for (const auto& d : def.dims) header.push_back(d.field);
  header.insert(header.end(), {"sim time", "achieved", "status"});
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> errors;
  for (std::uint64_t i = 0; i < rows.points(); ++i) {
    const auto row = rows.get(i);
    if (!row) continue;
    std::vector<std::string> line = {std::to_string(i)};
    for (const auto& d : def.dims) line.push_back(cell_text(cell_value(*row, d.field)));
    const bool ran = (*row)["sim_time_ps"].is_number();
    line.push_back(ran ? format_duration_ps((*row)["sim_time_ps"].get<std::uint64_t>()) : "-");
    const json flops = (*row)["achieved_flops_per_second"],
               bytes = (*row)["achieved_bytes_per_second"];
    const json useful = (*row)["useful_flops"];
    const json busbw = row->value("details.busbw_GBps", json(nullptr));
    if (busbw.is_number())  // a collective: its bus bandwidth, as NCCL reports it
      line.push_back(format_si(busbw.get<double>() * 1e9, "B/s") + " busbw");
    else if (useful.is_number() && useful.get<double>() > 0 && flops.is_number())
      line.push_back(format_si(flops.get<double>(), "FLOP/s"));
    else if (bytes.is_number())
      line.push_back(format_si(bytes.get<double>(), "B/s"));
    else
      line.push_back("-");
    line.push_back(row->value("status", "?"));
    table.push_back(std::move(line));
    const std::string error = row->value("error", "");
    if (!error.empty()) errors.push_back("point " + std::to_string(i) + ": " + error);
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& l : table) width[c] = std::max(width[c], l[c].size());
  }
  auto print = [&](const std::vector<std::string>& l) {
    std::string s;
    for (std::size_t c = 0; c < l.size(); ++c) {
      const bool right = c == 0 || c == l.size() - 3 || c == l.size() - 2;
      const std::string pad(width[c] - l[c].size(), ' ');
      s += (c ? "  " : "") + (right ? pad + l[c] : l[c] + (c + 1 < l.size() ? pad : ""));
    }
    out << s << "\n";
  };
  print(header);
  for (const auto& l : table) print(l);
  for (const auto& e : errors) out << e << "\n";
}

// ---- Plot ---------------------------------------------------------------------------------

void check_plot(const std::string& out_file) {
  const std::string ext = lower(fs::path(out_file).extension().string());
  if (ext != ".png" && ext != ".svg")
    throw UsageError("--plot " + out_file +
                     ": name a .png or .svg file (the extension picks the "
                     "format)");
  const std::string script = plot_script();
  if (!fs::exists(script))
    throw UsageError("--plot: the plot script " + script +
                     " is missing; set CUBESIM_PLOT_SCRIPT to tools/plot_sweep.py");
  std::string output;
  const std::string py = python();
  const int rc = run_process({py, script, "--check"}, output);
  if (rc != 0)
    throw UsageError("--plot needs Python 3 with matplotlib, and " + py + " " + script +
                     " --check failed (" + last_lines(output, 1) +
                     "); install python3-matplotlib (tools/install-deps.sh) or set CUBESIM_PYTHON "
                     "to a Python that has matplotlib");
}

void draw_plot(const PlotRequest& r) {
  std::vector<std::string> args = {python(),   plot_script(), r.csv_file, r.out_file,
                                   "--metric", r.metric,      "--title",  r.title};
  const char* roles[] = {"--x", "--lines", "--panels"};
  for (std::size_t i = 0; i < r.fields.size() && i < 3; ++i) {
    args.push_back(roles[i]);
    args.push_back(r.fields[i]);
  }
  if (!r.reference.empty()) {
    args.push_back("--reference");
    args.push_back(r.reference);
  }
  if (r.log_y) args.push_back("--log-y");
  std::string output;
  const int rc = run_process(args, output);
  if (rc != 0)
    throw std::runtime_error("the plot failed (" + args[0] + " " + args[1] + " exited with " +
                             std::to_string(rc) + "): " + last_lines(output, 3));
}

}  // namespace cubesim::cli::sweep
