// The integer flag checks refuse what CLI11 alone would take silently: a negative number for an
// unsigned flag (wrapped to 2^64 - 1), a number past the type (clamped to its largest value),
// and text that is not a decimal integer.
#include "strads/flag_checks.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strads {
namespace {

// Parses `args` with one flag --n checked by `check`; returns "" or CLI11's error text.
template <class T>
std::string Parse(T& n, const CLI::Validator& check, const std::string& text) {
  CLI::App app;
  app.add_option("--n", n)->check(check);
  std::vector<std::string> args{text, "--n"};  // CLI11 reads them from the back
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  return {};
}

TEST_CASE("NonNegativeInteger refuses negative, too large and non-integer text, naming the range") {
  uint64_t seed = 0;
  const CLI::Validator check = NonNegativeInteger<uint64_t>();
  CHECK(Parse(seed, check, "18446744073709551615").empty());
  CHECK(seed == UINT64_MAX);
  CHECK(Parse(seed, check, "0").empty());
  CHECK(seed == 0);
  for (const std::string bad : {"-1", "18446744073709551616", "1.5", "7x", "", "0x10"}) {
    CAPTURE(bad);
    CHECK(Parse(seed, check, bad) ==
          "--n: '" + bad + "' is not an integer from 0 to 18446744073709551615");
  }
}

TEST_CASE("IntegerIn takes its bounds and refuses one past either") {
  int64_t event = 0;
  const CLI::Validator check = IntegerIn<int64_t>(-3, 5);
  CHECK(Parse(event, check, "-3").empty());
  CHECK(event == -3);
  CHECK(Parse(event, check, "5").empty());
  CHECK(event == 5);
  CHECK(Parse(event, check, "6") == "--n: '6' is not an integer from -3 to 5");
  CHECK(Parse(event, check, "-4") == "--n: '-4' is not an integer from -3 to 5");
}

}  // namespace
}  // namespace strads
