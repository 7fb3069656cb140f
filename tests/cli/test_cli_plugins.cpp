// Users' kernels in the command line: cubesim --load with the documented plugin
// (tests/package/plugin/mine.cpp) in list, run and sweep, the same kernel built into a cubesim of
// its own (cubesim_add_cli), and every way a plugin is refused (exit 2, naming the file and the
// fix), and plugins that die of a signal (named in cubesim's last words, with the PE). Specs by
// name are tested here too (cubesim run tiny ...).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_runner.hpp"

namespace cubesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

const std::string kMine = CUBESIM_PLUGIN_MINE;

class CliPlugins : public CliTest {
 protected:
  CliResult mycubesim(const std::vector<std::string>& args) const {
    return run_program(CUBESIM_MYCUBESIM, args, dir_);
  }
};

TEST_F(CliPlugins, ListShowsThePluginsKernelAfterTheShippedOnes) {
  const auto r = cubesim({"--load", kMine, "list", "--json"});
  ASSERT_EQ(r.code, 0) << show(r);
  const auto all = nlohmann::json::parse(r.out);
  ASSERT_GT(all.size(), 1u);
  EXPECT_EQ(all.front()["name"], "sharded_gemm");
  const auto& mine = all.back();
  EXPECT_EQ(mine["name"], "scaled_add");
  ASSERT_EQ(mine["params"].size(), 3u);
  EXPECT_EQ(mine["params"][1]["name"], "alpha");
  EXPECT_EQ(mine["params"][1]["default"], 1.5);
  // Without --load the kernel is unknown, and the message says how to add it.
  const auto without = cubesim({"run", "tiny", "scaled_add"});
  EXPECT_EQ(without.code, 2) << show(without);
  EXPECT_THAT(without.err, HasSubstr("unknown kernel 'scaled_add'"));
  EXPECT_THAT(without.err, HasSubstr("--load PLUGIN.so"));
}

TEST_F(CliPlugins, RunsAndVerifiesThePluginsKernelOnASpecByName) {
  // --load is global: before the subcommand or after it.
  for (const auto& order : {std::vector<std::string>{"--load", kMine, "run", "tiny"},
                            std::vector<std::string>{"run", "tiny", "--load", kMine}}) {
    std::vector<std::string> args = order;
    const std::string report = path("report.json").string();
    args.insert(args.end(), {"scaled_add", "-p", "n=1000", "-p", "alpha=-2.25", "-p", "block=64",
                             "--json", report});
    const auto r = cubesim(args);
    ASSERT_EQ(r.code, 0) << show(r);
    const auto j = read_json(report);
    EXPECT_EQ(j["kernel"], "scaled_add");
    EXPECT_EQ(j["spec"], "tiny");
    EXPECT_EQ(fs::path(j["spec_file"].get<std::string>()), fs::path(spec_file("tiny.json")));
    EXPECT_EQ(j["params"]["alpha"], -2.25);
    EXPECT_EQ(j["verified"], true) << show(r);
    EXPECT_THAT(j["details"]["verification"]["checked"].get<std::string>(),
                HasSubstr("all 1000 elements against alpha * x + y in fp64"));
  }
}

TEST_F(CliPlugins, SweepWorkersLoadTheSamePlugins) {
  const std::string jsonl = path("rows.jsonl").string();
  const auto r =
      cubesim({"--load", kMine, "sweep", "tiny", "scaled_add", "--vary", "param.n=500,3000",
               "--vary", "param.block=32,128", "-j", "2", "--jsonl", jsonl});
  ASSERT_EQ(r.code, 0) << show(r);
  std::ifstream in(jsonl);
  std::string line;
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    const auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["kernel"], "scaled_add");
    EXPECT_EQ(row["status"], "ok") << line;
    EXPECT_GT(row["sim_time_ps"].get<double>(), 0) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 4u) << show(r);
}

TEST_F(CliPlugins, PluginsFromTheEnvironmentAndTwiceTheSameFileLoadOnce) {
  const auto r = run_cubesim({"--load", kMine, "list"}, dir_, {"CUBESIM_PLUGINS=" + kMine});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("scaled_add"));
}

TEST_F(CliPlugins, ACubesimOfYourOwnHasTheKernelBuiltIn) {
  const auto r = mycubesim({"run", "tiny", "scaled_add", "-p", "n=777", "-p", "alpha=3"});
  ASSERT_EQ(r.code, 0) << show(r);
  EXPECT_THAT(r.out, HasSubstr("verified    passed"));
  // Its sweep workers are itself, so they know the kernel too.
  const auto sweep = mycubesim(
      {"sweep", "tiny", "scaled_add", "--vary", "param.n=100,200", "-j", "2", "--jsonl", "-"});
  EXPECT_EQ(sweep.code, 0) << show(sweep);
  EXPECT_THAT(sweep.out, HasSubstr("\"kernel\":\"scaled_add\""));
  // Loading the same kernel again as a plugin is a duplicate.
  const auto twice = mycubesim({"--load", kMine, "list"});
  EXPECT_EQ(twice.code, 2) << show(twice);
  EXPECT_THAT(twice.err, HasSubstr("cannot register kernel scaled_add (registered by plugin "));
  EXPECT_THAT(twice.err, HasSubstr("already registered by your program; give yours another name"));
}

// The first `bytes` bytes of `from`, as an interrupted copy leaves them.
void copy_prefix(const std::string& from, const fs::path& to, std::size_t bytes) {
  const std::string all = read_text(from);
  ASSERT_LT(bytes, all.size());
  std::ofstream(to, std::ios::binary) << all.substr(0, bytes);
}

// `from` with the bytes at `offset` replaced: an ELF header field changed (little-endian).
void copy_patched(const std::string& from, const fs::path& to, std::size_t offset,
                  const std::string& bytes) {
  std::string all = read_text(from);
  all.replace(offset, bytes.size(), bytes);
  std::ofstream(to, std::ios::binary) << all;
}

TEST_F(CliPlugins, BrokenPluginsAreRefusedNamingTheFileAndTheFix) {
  { std::ofstream(path("notes.txt")) << "not a library"; }
  { std::ofstream(path("empty.so")); }
  const std::size_t mine_bytes = fs::file_size(kMine);
  // Cut where dlopen would map and run it (half), and where only the section headers at the end
  // are missing (all but one byte).
  copy_prefix(kMine, path("half.so"), mine_bytes / 2);
  copy_prefix(kMine, path("short.so"), mine_bytes - 1);
  copy_prefix(kMine, path("header.so"), 20);
  // ELF header fields: the class at byte 4, the type at 16, the machine at 18.
  copy_patched(kMine, path("class.so"), 4, std::string(1, '\1'));
  copy_patched(kMine, path("object.so"), 16, std::string("\1\0", 2));
#if defined(__x86_64__)
  const std::string other_machine("\xb7\0", 2), other_name = "AArch64", this_name = "x86-64";
#else
  const std::string other_machine("\x3e\0", 2), other_name = "x86-64", this_name = "AArch64";
#endif
  copy_patched(kMine, path("machine.so"), 18, other_machine);
  const struct {
    std::vector<std::string> args;
    std::vector<std::string> says;
  } cases[] = {
      {{"--load", path("missing.so").string(), "list"},
       {"plugin " + path("missing.so").string() + ": no such file",
        "give the path of the plugin's shared library"}},
      {{"--load", path("notes.txt").string(), "list"},
       {"plugin " + path("notes.txt").string() +
            " is not a shared library: it does not start as an ELF file does",
        "cubesim_add_plugin()"}},
      {{"--load", path("empty.so").string(), "list"},
       {"plugin " + path("empty.so").string() + " is empty (0 bytes)", "build or copy it again"}},
      {{"--load", path("half.so").string(), "run", "tiny", "scaled_add"},
       {"plugin " + path("half.so").string() + " is truncated: its ",
        "but it has " + std::to_string(mine_bytes / 2) + " bytes", "build or copy it again"}},
      {{"--load", path("short.so").string(), "list"},
       {"plugin " + path("short.so").string() +
            " is truncated: its section header table ends at "
            "byte " +
            std::to_string(mine_bytes),
        "but it has " + std::to_string(mine_bytes - 1) + " bytes"}},
      {{"--load", path("header.so").string(), "list"},
       {"plugin " + path("header.so").string() +
        " is truncated: it has 20 bytes, fewer than an "
        "ELF header's 64"}},
      {{"--load", path("class.so").string(), "list"},
       {"plugin " + path("class.so").string() +
        " is a 32-bit library, and this cubesim is 64-bit; give the libNAME.so"}},
      {{"--load", path("object.so").string(), "list"},
       {"plugin " + path("object.so").string() +
        " is an object file (.o), not a shared library; give the libNAME.so"}},
      {{"--load", path("machine.so").string(), "list"},
       {"plugin " + path("machine.so").string() + " was built for " + other_name +
        ", and this cubesim runs on " + this_name}},
      {{"--load", CUBESIM_PLUGIN_NULL_ABI, "list"},
       {std::string("plugin ") + CUBESIM_PLUGIN_NULL_ABI +
            "'s cubesim_plugin_abi() answered a null pointer",
        "CUBESIM_PLUGIN(your_register_function)"}},
      {{"--load", CUBESIM_PLUGIN_NO_ENTRY, "list"},
       {std::string("plugin ") + CUBESIM_PLUGIN_NO_ENTRY + " is not a cubesim plugin",
        "add CUBESIM_PLUGIN(your_register_function)"}},
      {{"--load", CUBESIM_PLUGIN_OTHER_VERSION, "list"},
       {"was built against cubesim 0.0.1, but this is cubesim ",
        "rebuild the plugin against this cubesim's package"}},
      {{"--load", CUBESIM_PLUGIN_SHIPPED_NAME, "run", "tiny", "vector_add"},
       {"cannot register kernel vector_add (registered by plugin ",
        "already registered by cubesim; give yours another name"}},
      {{"--load", CUBESIM_PLUGIN_BAD_PARAM, "list"},
       {"cannot register kernel bad_default",
        "parameter block: its default 0 is outside its range 1 to 64"}},
      {{"--load", CUBESIM_PLUGIN_EMPTY, "list"}, {"registered no kernel"}},
      {{"list", "--load"}, {"--load"}},
  };
  for (const auto& c : cases) {
    const auto r = cubesim(c.args);
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_THAT(r.err, StartsWith("cubesim: ")) << show(r);
    for (const auto& s : c.says) EXPECT_THAT(r.err, HasSubstr(s)) << show(r);
    EXPECT_EQ(r.out, "") << show(r);
  }
}

TEST_F(CliPlugins, APluginThatDiesWhileLoadingIsNamedWithTheStageAndExit2) {
  const struct {
    std::string plugin;
    std::vector<std::string> says;
  } cases[] = {
      {CUBESIM_PLUGIN_CRASH_IN_REGISTER,
       {"cannot load a plugin: segmentation fault (SIGSEGV): an access to unmapped memory, at "
        "address 0x10 in plugin ",
        ", in its registration function (cubesim_register_kernels).\n",
        "none of its kernels was added"}},
      {CUBESIM_PLUGIN_CRASH_ON_LOAD,
       {"cannot load a plugin: abort (SIGABRT): std::abort()",
        ", while dlopen ran its initialisers (constructors of its static objects).\n"}},
  };
  for (const auto& c : cases) {
    const auto r = cubesim({"--load", c.plugin, "list"});
    EXPECT_EQ(r.code, 2) << show(r);
    EXPECT_THAT(r.err, StartsWith("cubesim: ")) << show(r);
    EXPECT_THAT(r.err, HasSubstr("plugin " + fs::canonical(c.plugin).string())) << show(r);
    for (const auto& s : c.says) EXPECT_THAT(r.err, HasSubstr(s)) << show(r);
    EXPECT_EQ(r.out, "") << show(r);
  }
}

TEST_F(CliPlugins, AKernelThatDiesOfASignalIsNamedWithItsPluginAndPeAndExit3) {
  const std::string plugin = fs::canonical(CUBESIM_PLUGIN_CRASH_KERNELS).string();
  const struct {
    std::string kernel;
    std::string signal;
  } cases[] = {
    {"segfault_on_pe1",
     "segmentation fault (SIGSEGV): an access to unmapped memory, at address 0x10"},
    {"abort_on_pe1", "abort (SIGABRT): std::abort(), a failed assert() or std::terminate()"},
// AArch64 divides by zero without a trap; UBSan (sanitizer builds) stops at the division first.
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
    {"divide_by_zero_on_pe1", "arithmetic fault (SIGFPE): an integer division by zero"},
#endif
  };
  for (const auto& c : cases) {
    const auto r = cubesim({"--load", plugin, "run", "tiny", c.kernel});
    EXPECT_EQ(r.code, 3) << show(r);
    // Program (1, 0, 0) of the hardware grid runs on PE 1 of cube 0, after its load took time.
    EXPECT_THAT(r.err, StartsWith("cubesim: kernel fault: " + c.signal + " in kernel '" + c.kernel +
                                  "' of plugin " + plugin +
                                  ", in its program on PE sip0.cube0.pe1 at simulated time "))
        << show(r);
    EXPECT_THAT(r.err, HasSubstr("Fix: the fault is in the code of plugin " + plugin)) << show(r);
    EXPECT_THAT(r.err, HasSubstr("gdb --args")) << show(r);
    EXPECT_EQ(r.out, "") << show(r);
  }
  // Before any launch no PE runs and no simulated time passes: the harness is named instead.
  const auto host = cubesim({"--load", plugin, "run", "tiny", "segfault_in_harness"});
  EXPECT_EQ(host.code, 3) << show(host);
  EXPECT_THAT(host.err, StartsWith("cubesim: kernel fault: segmentation fault (SIGSEGV): an access "
                                   "to unmapped memory, at address 0x10 in kernel "
                                   "'segfault_in_harness' of plugin " +
                                   plugin + ", in its host harness (outside the PEs' programs).\n"))
      << show(host);
  // A sweep's worker says the same, and its row carries it.
  const auto sweep = cubesim({"--load", plugin, "sweep", "tiny", "segfault_on_pe1", "--vary",
                              "system.pe.clock_GHz=1,2", "-j", "1", "--jsonl", "-"});
  EXPECT_EQ(sweep.code, 3) << show(sweep);
  std::istringstream rows(sweep.out);
  std::string line;
  int faulted = 0;
  while (std::getline(rows, line)) {
    if (line.empty() || line[0] != '{') continue;
    const auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["exit_code"], 3) << line;
    EXPECT_THAT(row["error"].get<std::string>(),
                HasSubstr("in kernel 'segfault_on_pe1' of plugin " + plugin +
                          ", in its program on PE sip0.cube0.pe1 at simulated time "))
        << line;
    ++faulted;
  }
  EXPECT_EQ(faulted, 2) << show(sweep);
}

TEST_F(CliPlugins, SpecNamesResolveInTheSpecFoldersAndUnknownOnesListThem) {
  const auto r = cubesim({"run", "tiny", "vector_add", "-p", "n=100"});
  EXPECT_EQ(r.code, 0) << show(r);
  expect_usage_error({"info", "tinyy"},
                     "no spec file or spec named \"tinyy\"; the named specs are: default, "
                     "default-fast-ucie, h200, h200x4-nvlink, large, tiny; looked in ");
  // $CUBESIM_SPECS_DIR comes first.
  fs::create_directories(path("specs"));
  fs::copy_file(spec_file("tiny.json"), path("specs") / "mine.json");
  const auto env =
      run_cubesim({"info", "mine"}, dir_, {"CUBESIM_SPECS_DIR=" + path("specs").string()});
  EXPECT_EQ(env.code, 0) << show(env);
}

}  // namespace
}  // namespace cubesim::test
