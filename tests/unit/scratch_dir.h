// ScratchDir: a fresh directory for one test's files, removed with everything in it when the
// test ends. Made by mkdtemp under $TMPDIR (std::filesystem::temp_directory_path), so that
// tests running at once, in one process or several (ctest -j), never share one, and a machine
// whose /tmp is not writable can point TMPDIR elsewhere.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace strads::testing {

struct ScratchDir {
  std::string path;

  // `stem` names the directory (stem-XXXXXX), to tell a left-over one's test.
  explicit ScratchDir(const std::string& stem = "strads-test") {
    std::string name = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
    REQUIRE_MESSAGE(::mkdtemp(name.data()) != nullptr, "cannot make ", name);
    path = name;
  }
  ~ScratchDir() {
    std::error_code ignored;  // a destructor must not throw; a left-over directory is harmless
    std::filesystem::remove_all(path, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
};

}  // namespace strads::testing
