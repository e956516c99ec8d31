// The malformed-input catalogue (tests/bad_inputs/manifest.json, made by make_bad_inputs.py):
// every case gives exit code 1 and one line naming the file and the problem — never a signal,
// never an uncaught exception. (NaN weights: a warning naming the tensor, exit 0.)
#include "test_util.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

}  // namespace

TEST_SUITE("bad_inputs") {
  TEST_CASE("every catalogue case is refused cleanly") {
    const std::string dir = deberta::test::source_path("tests/bad_inputs");
    std::ifstream in(dir + "/manifest.json");
    REQUIRE(in);
    const nlohmann::json cases = nlohmann::json::parse(in);
    CHECK(cases.size() >= 30);
    for (const auto& c : cases) {
      const std::string name = c["name"];
      CAPTURE(name);
      std::string args = c["args"];
      args = replace_all(args, "{cases}", dir + "/cases");
      args = replace_all(args, "{golden}", deberta::test::source_path("notebooks_data/golden"));
      args = replace_all(args, "{tmp}", "/tmp");
      const deberta::test::CliRun r = deberta::test::run_cli(args);
      const std::string& out = r.output;
      CAPTURE(out);
      REQUIRE_MESSAGE(!r.signalled, "killed by a signal: exit " << r.exit_code);
      const int expected_exit = c["exit"];
      CHECK(r.exit_code == expected_exit);
      CHECK_MESSAGE(out.find(c["expect"].get<std::string>()) != std::string::npos, "expected: " << c["expect"]);
      if (c.contains("expect_also")) CHECK(out.find(c["expect_also"].get<std::string>()) != std::string::npos);
      if (expected_exit == 1) {
        CHECK(std::count(out.begin(), out.end(), '\n') == 1);
        CHECK(out.rfind("deberta: ", 0) == 0);
      }
    }
  }
}
