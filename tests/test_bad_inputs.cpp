// The malformed-input catalogue (tests/bad_inputs/manifest.json, made by make_bad_inputs.py):
// every case gives exit code 1 and one line naming the file and the problem — never a signal,
// never an uncaught exception. (NaN weights: a warning naming the tensor, exit 0.) Each run is
// bounded in time (60 s: a hang fails) and, over all runs, in peak memory (1 GB resident: a
// kilobyte file must not cost gigabytes); ctest adds a 4 GB address-space cap (tests/CMakeLists.txt).
#include "test_util.h"

#include "deberta/model.h"
#include "backend/ops.h"
#include "backend/parallel.h"
#include "deberta/safetensors.h"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <iterator>
#include <limits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

/// run_cli under `timeout`: a case that hangs is killed after 60 s (exit 124 or 137) and fails.
deberta::test::CliRun run_bounded(const std::string& args) {
  deberta::test::CliRun r;
  const std::string cmd = std::string("timeout -k 5 60 ") + DEBERTA_CLI + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf{};
  while (size_t n = fread(buf.data(), 1, buf.size(), pipe)) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  // timeout passes a signal on as exit 128 + signal; the shell's own signals show as signalled.
  r.signalled = !WIFEXITED(status) || (WEXITSTATUS(status) > 128 && WEXITSTATUS(status) < 160);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace

TEST_SUITE("bad_inputs") {
  TEST_CASE("an exception inside an OpenMP loop is rethrown after it, not std::terminate (issue 12)") {
    deberta::ParallelErrors errors;
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < 64; ++k) errors.run([&] {
      if (k == 3) throw deberta::Error("iteration 3 failed");
      if (k == 5) throw std::bad_alloc();
    });
    bool caught = false;
    try {
      errors.rethrow();
    } catch (const deberta::Error& e) {
      caught = std::string(e.what()) == "iteration 3 failed";
    } catch (const std::bad_alloc&) {
      caught = true;  // whichever of the two threads failed first
    }
    CHECK(caught);
    deberta::ParallelErrors none;
    CHECK_NOTHROW(none.rethrow());
  }

  TEST_CASE("attention maps that cannot fit are refused before allocating (issue 12)") {
    // 200,000 tokens, 62 maps of 200,000^2 doubles: 19.8 TB, more than any test machine has.
    const std::string m = deberta::test::error_of([] { deberta::ops::check_attention_memory(200000, 48, 14); });
    CHECK_MESSAGE(m.find("200000 tokens need 19840.0 GB") != std::string::npos, m);
    CHECK_NOTHROW(deberta::ops::check_attention_memory(512, 48, 14));  // 130 MB
    CHECK_NOTHROW(deberta::ops::check_attention_memory(0, 48, 14));
  }

  TEST_CASE("the memory guard counts the address-space limit, not the machine's memory (issue 44, class 3)") {
    // In a child with RLIMIT_AS at most 1.5 GB (lower when this process runs under a lower cap, as
    // ctest's 1 GB prlimit sets it), an input whose 24 maps need twice that must be refused by the
    // guard's message, although the machine has more physical memory than that.
    if (deberta::test::kAddressSanitizer) {
      MESSAGE("not run under AddressSanitizer (an address-space cap and ASan's shadow memory exclude each other)");
      return;
    }
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      struct rlimit r {};
      if (getrlimit(RLIMIT_AS, &r) != 0) _exit(2);
      const rlim_t cap = std::min<rlim_t>(1536ull << 20, r.rlim_max);
      r.rlim_cur = cap;
      if (setrlimit(RLIMIT_AS, &r) != 0) _exit(3);
      if (deberta::ops::usable_memory_bytes() > cap) _exit(4);
      if (deberta::ops::physical_memory_bytes() < 4 * static_cast<uint64_t>(cap)) _exit(7);  // the case would be the machine's limit
      const auto n = static_cast<int64_t>(std::sqrt(2.0 * static_cast<double>(cap) / (8.0 * 24.0)));
      try {
        deberta::ops::check_attention_memory(n, 20, 4);
      } catch (const deberta::Error& e) {
        _exit(std::string(e.what()).find("this process may use") != std::string::npos ? 0 : 5);
      }
      _exit(6);  // not refused
    }
    int status = 0;
    waitpid(pid, &status, 0);
    REQUIRE(WIFEXITED(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == 0,
                  "child exit " << WEXITSTATUS(status) << " (3: setrlimit failed, 4: limit not seen, 6: not refused, 7: too little memory)");
  }

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
      if (c.contains("setup")) {
        // Files git cannot hold (a FIFO, a link to /dev/zero) are made here.
        std::string setup = c["setup"];
        setup = replace_all(setup, "{cases}", dir + "/cases");
        setup = replace_all(setup, "{tmp}", "/tmp");
        REQUIRE_MESSAGE(std::system(setup.c_str()) == 0, "setup failed: " << setup);
      }
      const auto start = std::chrono::steady_clock::now();
      const deberta::test::CliRun r = run_bounded(args);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      CHECK_MESSAGE(seconds < 60, "took " << seconds << " s");
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
    // Peak resident memory of the largest CLI run (ru_maxrss of waited-for children, in KB).
    rusage usage{};
    REQUIRE(getrusage(RUSAGE_CHILDREN, &usage) == 0);
    MESSAGE("peak RSS of the worst catalogue case: " << usage.ru_maxrss / 1024 << " MB");
    CHECK(usage.ru_maxrss < 1024 * 1024);
  }
}

TEST_SUITE("bad_inputs") {
  TEST_CASE("thread counts are bounded everywhere: the API, the CLI, and OMP_NUM_THREADS (issue 28)") {
    const int before = deberta::num_threads();
    for (int bad : {0, -1, deberta::kMaxThreads + 1, 100000}) {
      CAPTURE(bad);
      CHECK(deberta::test::error_of([&] { deberta::set_num_threads(bad); }).find("threads must be in [1, 256]") !=
            std::string::npos);
    }
    CHECK(deberta::num_threads() == before);
    // The environment: a forward under OMP_NUM_THREADS=100000 is refused in one line, not started.
    const std::string golden = deberta::test::source_path("notebooks_data/golden/v1_c2p_only");
    const std::string cmd = "OMP_NUM_THREADS=100000 " + std::string(DEBERTA_CLI) + " predict --model " + golden +
                            " --ids 1,5,6,2 --positions 2 > /tmp/deberta_omp_env.txt 2>&1";
    const int status = std::system(cmd.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    std::ifstream out("/tmp/deberta_omp_env.txt");
    const std::string text((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
    CAPTURE(text);
    CHECK(text.find("OMP_NUM_THREADS") != std::string::npos);
    CHECK(std::count(text.begin(), text.end(), '\n') == 1);
  }

  TEST_CASE("diff: equal infinities are equal, opposite ones and NaN are not (numpy.allclose; issue 28)") {
    using deberta::Tensor;
    const auto write = [](const std::string& path, std::vector<double> v) {
      Tensor t;
      t.shape = {static_cast<int64_t>(v.size())};
      t.f = std::move(v);
      deberta::write_safetensors(path, {{"x", t}});
    };
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    write("/tmp/deberta_inf_a.safetensors", {1.0, inf, -inf});
    write("/tmp/deberta_inf_b.safetensors", {1.0, inf, -inf});
    write("/tmp/deberta_inf_c.safetensors", {1.0, -inf, -inf});
    write("/tmp/deberta_inf_d.safetensors", {nan, inf, -inf});
    const auto diff = [](const char* b) {
      return deberta::test::run_cli(std::string("diff /tmp/deberta_inf_a.safetensors /tmp/deberta_inf_") + b +
                                    ".safetensors --tol 0");
    };
    const deberta::test::CliRun same = diff("b");
    CAPTURE(same.output);
    CHECK(same.exit_code == 0);
    CHECK(same.output.find("equal within tolerance") != std::string::npos);
    CHECK(diff("c").exit_code == 1);
    CHECK(diff("d").exit_code == 1);
  }
}
