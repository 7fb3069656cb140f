// Specs by name: where a name is looked for, in which order, and what an unknown name says.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "components/spec/spec.hpp"
#include "components/spec/spec_paths.hpp"

namespace cubesim::components {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kSourceSpecs = fs::path(CUBESIM_SOURCE_DIR) / "specs";

// A scratch folder as $CUBESIM_SPECS_DIR, and a scratch working directory.
class SpecPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("cubesim-spec-paths-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "specs");
    fs::create_directories(root_ / "work");
    old_cwd_ = fs::current_path();
    fs::current_path(root_ / "work");
    ::unsetenv("CUBESIM_SPECS_DIR");
  }
  void TearDown() override {
    ::unsetenv("CUBESIM_SPECS_DIR");
    fs::current_path(old_cwd_);
    fs::remove_all(root_);
  }
  // A copy of tiny.json under another "name" field.
  void write_spec(const fs::path& file, const std::string& name) {
    std::ifstream in(kSourceSpecs / "tiny.json");
    nlohmann::json doc = nlohmann::json::parse(in);
    doc["name"] = name;
    std::ofstream(file) << doc.dump(2);
  }
  fs::path root_, old_cwd_;
};

TEST_F(SpecPaths, TheEnvironmentsFolderComesFirstThenTheSourceTree) {
  std::vector<SpecFolder> folders = spec_folders();
  ASSERT_GE(folders.size(), 2u);
  EXPECT_EQ(folders.back().dir, kSourceSpecs);
  EXPECT_EQ(folders.front().why, "installed");  // beside this test binary; none there

  ::setenv("CUBESIM_SPECS_DIR", (root_ / "specs").c_str(), 1);
  folders = spec_folders();
  EXPECT_EQ(folders.front().dir, root_ / "specs");
  EXPECT_EQ(folders.front().why, "$CUBESIM_SPECS_DIR");

  // tiny in the environment's folder shadows the shipped one; other names fall through.
  write_spec(root_ / "specs" / "tiny.json", "my_tiny");
  EXPECT_EQ(resolve_spec("tiny"), root_ / "specs" / "tiny.json");
  EXPECT_EQ(Spec::load("tiny").config().name, "my_tiny");
  EXPECT_EQ(resolve_spec("default"), kSourceSpecs / "default.json");
  ::unsetenv("CUBESIM_SPECS_DIR");
  EXPECT_EQ(resolve_spec("tiny"), kSourceSpecs / "tiny.json");
  EXPECT_EQ(Spec::load("tiny").config().name, "tiny");
}

TEST_F(SpecPaths, PathsAndFilesHereAreNotNames) {
  EXPECT_FALSE(is_spec_name("specs/tiny"));
  EXPECT_FALSE(is_spec_name("tiny.json"));
  EXPECT_FALSE(is_spec_name(""));
  EXPECT_TRUE(is_spec_name("tiny"));
  EXPECT_EQ(resolve_spec("./tiny"), fs::path("./tiny"));
  // A file of that name in the working directory wins over the spec folders.
  write_spec("tiny", "local");
  EXPECT_FALSE(is_spec_name("tiny"));
  EXPECT_EQ(Spec::load("tiny").config().name, "local");
}

TEST_F(SpecPaths, AnUnknownNameListsTheSpecsAndTheFoldersSearched) {
  ::setenv("CUBESIM_SPECS_DIR", (root_ / "specs").c_str(), 1);
  write_spec(root_ / "specs" / "mine.json", "mine");
  try {
    Spec::load("tinyy");
    FAIL() << "loaded a spec named tinyy";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.file(), "tinyy");
    EXPECT_THAT(
        e.what(),
        HasSubstr("no spec file or spec named \"tinyy\"; the named specs are: "
                  "default, default-fast-ucie, h200, h200x4-nvlink, large, mine, tiny; looked in " +
                  (root_ / "specs").generic_string() + " ($CUBESIM_SPECS_DIR)"));
    EXPECT_THAT(e.what(), HasSubstr(kSourceSpecs.generic_string() + " (source tree)"));
    EXPECT_THAT(e.what(), HasSubstr("set CUBESIM_SPECS_DIR"));
  }
}

}  // namespace
}  // namespace cubesim::components
