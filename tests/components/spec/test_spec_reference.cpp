// docs/spec-reference.md stays in step with the schema, and the schema is consistent.

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "components/spec/schema.hpp"
#include "components/spec/spec.hpp"

using namespace cubesim::components;
using ::testing::HasSubstr;

namespace {

const std::filesystem::path kDoc =
    std::filesystem::path(CUBESIM_SOURCE_DIR) / "docs/spec-reference.md";
constexpr std::string_view kBegin = "<!-- BEGIN GENERATED: spec_reference_markdown() -->\n";
constexpr std::string_view kEnd = "<!-- END GENERATED -->";

std::string read_doc() {
  std::ifstream in(kDoc);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

// Regenerate with: CUBESIM_UPDATE_SPEC_REFERENCE=1 ctest -R SpecReference (then review the diff).
TEST(SpecReference, DocHoldsExactlyTheGeneratedReference) {
  std::string doc = read_doc();
  const auto begin = doc.find(kBegin);
  const auto end = doc.find(kEnd);
  ASSERT_NE(begin, std::string::npos) << kDoc << " lacks the marker " << kBegin;
  ASSERT_NE(end, std::string::npos) << kDoc << " lacks the marker " << kEnd;
  ASSERT_LT(begin, end);
  const std::size_t from = begin + kBegin.size();
  const std::string generated = spec_reference_markdown();
  if (std::getenv("CUBESIM_UPDATE_SPEC_REFERENCE") != nullptr) {
    doc.replace(from, end - from, generated);
    std::ofstream(kDoc) << doc;
    return;
  }
  EXPECT_EQ(doc.substr(from, end - from), generated)
      << "docs/spec-reference.md is out of date; rerun this test with "
         "CUBESIM_UPDATE_SPEC_REFERENCE=1 set";
}

TEST(SpecReference, EveryFieldAndRuleIsInTheDoc) {
  const std::string doc = read_doc();
  for (const spec::SpecField& f : spec::spec_schema()) {
    SCOPED_TRACE(f.path);
    const std::string parent(f.parent_path());
    EXPECT_THAT(doc, HasSubstr(fmt::format("### `{}`", parent.empty() ? "(top level)" : parent)));
    EXPECT_THAT(doc, HasSubstr(fmt::format("| `{}` |", f.key())));
    EXPECT_THAT(doc, HasSubstr(f.description));
  }
  for (const std::string& rule : spec::cross_field_rules()) EXPECT_THAT(doc, HasSubstr(rule));
}

TEST(SpecSchema, FieldsAreDescribedAndNestInsideObjects) {
  for (const spec::SpecField& f : spec::spec_schema()) {
    SCOPED_TRACE(f.path);
    EXPECT_FALSE(f.description.empty());
    EXPECT_EQ(spec::find_field(f.path), &f);
    if (!f.parent_path().empty()) {
      const spec::SpecField* parent = spec::find_field(f.parent_path());
      ASSERT_NE(parent, nullptr);
      EXPECT_EQ(parent->type, spec::FieldType::object);
      EXPECT_LT(parent, &f) << "parents come before their fields";
      // An optional section is filled from its fields' defaults, so none may be required.
      if (parent->presence == spec::Presence::optional) {
        EXPECT_EQ(f.presence, spec::Presence::optional);
      }
    }
    if (f.type == spec::FieldType::choice && !f.default_value.is_null()) {
      EXPECT_NE(std::find(f.choices.begin(), f.choices.end(), f.default_value.get<std::string>()),
                f.choices.end());
    }
    if (f.type == spec::FieldType::size) {
      EXPECT_GT(f.bytes_per_unit, 0u);
    }
    if (f.presence == spec::Presence::conditional) {
      EXPECT_FALSE(f.condition.empty());
    }
  }
}

TEST(SpecSchema, UnitsAreInTheNamesOfMeasuredFields) {
  for (const spec::SpecField& f : spec::spec_schema()) {
    SCOPED_TRACE(f.path);
    if (f.type == spec::FieldType::number || f.type == spec::FieldType::size) {
      const std::string_view key = f.key();
      const bool named = key.ends_with("_ns") || key.ends_with("_GBps") || key.ends_with("_GHz") ||
                         key.ends_with("_KiB") || key.ends_with("_MiB") || key.ends_with("_GiB") ||
                         key.ends_with("_Gelem_per_s") || key.ends_with("_pJ_per_byte") ||
                         key.ends_with("_pJ_per_element") || key.ends_with("_W_per_pe") ||
                         f.parent_path().ends_with("_TFLOPS") ||
                         f.parent_path().ends_with("_pJ_per_flop");
      EXPECT_TRUE(named) << "a measured field says its unit in its name";
    }
  }
}
