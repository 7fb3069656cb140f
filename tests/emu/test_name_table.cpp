// emu::NameTable: lookup by name, the names in table order, and the error for an unknown name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "emu/name_table.hpp"

namespace cubesim::emu {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

enum class Shape { ring, mesh };

const NameTable<Shape>& shapes() {
  static const NameTable<Shape> table("shape",
                                      {{"ring", Shape::ring, "a cycle"}, {"mesh", Shape::mesh}});
  return table;
}

TEST(NameTable, FindsEntriesByNameAndNamesThemInTableOrder) {
  EXPECT_EQ(shapes().at("mesh"), Shape::mesh);
  EXPECT_EQ(shapes().at("ring"), Shape::ring);
  EXPECT_EQ(shapes().find("torus"), nullptr);
  EXPECT_THAT(shapes().names(), ElementsAre("ring", "mesh"));
  EXPECT_EQ(shapes().name_of(Shape::mesh), "mesh");
}

TEST(NameTable, UnknownNameErrorNamesItAndListsEveryKnownNameWithItsDescription) {
  try {
    (void)shapes().at("torus");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown shape 'torus'; the known ones are 'ring' (a cycle), 'mesh'");
  }
  const NameTable<int> one("model", {{"simple", 1}});
  EXPECT_EQ(one.unknown("banked", "system.model"),
            "unknown model 'banked' (system.model); the only known one is 'simple'");
}

TEST(NameTable, RefusesANameRegisteredTwice) {
  EXPECT_THROW(NameTable<int>("model", {{"a", 1}, {"a", 2}}), std::logic_error);
}

}  // namespace
}  // namespace cubesim::emu
