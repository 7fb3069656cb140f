// End-to-end tests of hostile or malformed inputs (issue 17): kernel parameters, spec files and
// overrides that a parser would take the wrong way, read without end, or recurse on. Each is a
// usage or spec error (exit 2) that names the input and says what to write instead.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "tests/cli/cli_runner.hpp"

namespace cubesim::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class CliInputs : public CliTest {
 protected:
  const std::string tiny = spec_file("tiny.json");
};

// ---- Kernel parameters (-p) ----------------------------------------------------------------

TEST_F(CliInputs, IntegerParameterWithALeadingZeroIsNotReadAsOctal) {
  // std::stoll's base 0 would run n = 14 for "016".
  expect_usage_error({"run", tiny, "vector_add", "-p", "n=016"},
                     "parameter n of kernel vector_add: '016' has a leading zero");
  expect_usage_error({"run", tiny, "vector_add", "-p", "n=016"}, "-p n=16");
}

TEST_F(CliInputs, IntegerParameterIsDecimalOnly) {
  for (const std::string value : {"0x10", "0X10", " 16", "+16"})  // all read by std::stoll
    expect_usage_error({"run", tiny, "vector_add", "-p", "n=" + value},
                       "'" + value + "' is not a decimal integer");
}

TEST_F(CliInputs, RealParameterIsDecimalOnly) {
  // std::stod reads hex floats: 0x1p3 would be 8.
  expect_usage_error({"run", tiny, "attention_similarity", "-p", "temperature=0x1p3"},
                     "'0x1p3' is not a decimal number");
}

TEST_F(CliInputs, ParameterGivenTwiceIsAnError) {
  expect_usage_error({"run", tiny, "vector_add", "-p", "n=16", "-p", "n=32"},
                     "-p n is given more than once (n=16, n=32)");
  expect_usage_error(
      {"sweep", tiny, "vector_add", "-p", "n=16", "-p", "n=32", "--vary", "param.block=4,8"},
      "-p n is given more than once (n=16, n=32)");
}

TEST_F(CliInputs, SweepRefusesAVariedParameterWithALeadingZero) {
  // The CSV would record 010 while the point ran with 8.
  expect_usage_error({"sweep", tiny, "vector_add", "--vary", "param.n=010,16"},
                     "--vary param.n=010: parameter n of kernel vector_add: '010' has a leading "
                     "zero");
}

// ---- Spec files and overrides -------------------------------------------------------------

TEST_F(CliInputs, DeeplyNestedSpecIsRefusedAtTheBracketThatGoesTooDeep) {
  // Merging and validating recurse per level: 50,000 levels overflowed the stack.
  const std::string head = "{\"name\": \"deep\",\n \"x\": ";
  const std::string deep = head + std::string(50000, '[') + std::string(50000, ']') + "}\n";
  std::ofstream(path("deep.json")) << deep;
  // The top-level object is level 1, so the 64th '[' opens level 65 (line 2, after ' "x": ').
  const std::size_t column = std::string(" \"x\": ").size() + 64;
  expect_usage_error(
      {"validate", path("deep.json").string()},
      "deep.json: line 2, column " + std::to_string(column) + ": nested deeper than 64 levels");
}

TEST_F(CliInputs, DeeplyNestedOverrideIsRefused) {
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  expect_usage_error({"info", tiny, "--set", "description=" + deep},
                     "override description=...: the value, line 1, column 65: nested "
                     "deeper than 64 levels");
}

TEST_F(CliInputs, DeviceAsASpecIsRefusedNotReadWithoutEnd) {
  expect_usage_error({"validate", "/dev/zero"},
                     "/dev/zero: is a character device, not a regular file");
}

TEST_F(CliInputs, ExtendingADeviceIsRefusedNamingTheExtendingFile) {
  std::ofstream(path("zero.json")) << R"({"name": "zero", "extends": "/dev/zero"})";
  expect_usage_error({"validate", path("zero.json").string()},
                     "zero.json: /extends: extends \"/dev/zero\", which is a character device, "
                     "not a regular file");
}

TEST_F(CliInputs, FifoAsASpecIsRefusedNotWaitedOn) {
  ASSERT_EQ(::mkfifo(path("spec.fifo").c_str(), 0600), 0);
  expect_usage_error({"validate", path("spec.fifo").string()},
                     "spec.fifo: is a pipe (FIFO), not a regular file");
}

TEST_F(CliInputs, NumberBeyondADoubleNamesItsFieldAndLine) {
  std::ofstream(path("huge.json")) << "{\"name\": \"huge\", \"extends\": \"" << tiny
                                   << "\",\n  \"system\": {\"sips\": {\"count\": 1e400}}}\n";
  const std::size_t column = std::string(R"(  "system": {"sips": {"count": )").size() + 1;
  expect_usage_error({"validate", path("huge.json").string()},
                     "huge.json: /system/sips/count: line 2, column " + std::to_string(column) +
                         ": the number 1e400 is out of range");
}

TEST_F(CliInputs, OverrideThatIsNotUtf8IsASpecError) {
  expect_usage_error({"info", tiny, "--set", "description=caf\xe9"}, "is not valid UTF-8");
  expect_usage_error({"sweep", tiny, "vector_add", "--vary", "description=plain,caf\xe9"},
                     "is not valid UTF-8");
}

}  // namespace
}  // namespace cubesim::test
