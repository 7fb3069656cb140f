// Users' kernels in the command line: cubesim --load with the documented plugin
// (tests/package/plugin/mine.cpp) in list, run and sweep, the same kernel built into a cubesim of
// its own (cubesim_add_cli), and every way a plugin is refused (exit 2, naming the file and the
// fix). Specs by name are tested here too (cubesim run tiny ...).
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

TEST_F(CliPlugins, BrokenPluginsAreRefusedNamingTheFileAndTheFix) {
  { std::ofstream(path("notes.txt")) << "not a library"; }
  const struct {
    std::vector<std::string> args;
    std::vector<std::string> says;
  } cases[] = {
      {{"--load", path("missing.so").string(), "list"},
       {"plugin " + path("missing.so").string() + ": no such file",
        "give the path of the plugin's shared library"}},
      {{"--load", path("notes.txt").string(), "list"},
       {"plugin " + path("notes.txt").string() + " cannot be loaded: ", "cubesim_add_plugin()"}},
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

TEST_F(CliPlugins, SpecNamesResolveInTheSpecFoldersAndUnknownOnesListThem) {
  const auto r = cubesim({"run", "tiny", "vector_add", "-p", "n=100"});
  EXPECT_EQ(r.code, 0) << show(r);
  expect_usage_error({"info", "tinyy"},
                     "no spec file or spec named \"tinyy\"; the named specs are: default, "
                     "default-fast-ucie, large, tiny; looked in ");
  // $CUBESIM_SPECS_DIR comes first.
  fs::create_directories(path("specs"));
  fs::copy_file(spec_file("tiny.json"), path("specs") / "mine.json");
  const auto env =
      run_cubesim({"info", "mine"}, dir_, {"CUBESIM_SPECS_DIR=" + path("specs").string()});
  EXPECT_EQ(env.code, 0) << show(env);
}

}  // namespace
}  // namespace cubesim::test
