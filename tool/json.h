// JSON output of the tool's --json modes.
#pragma once

#include <string>

namespace strads::tool {

// `s` as a JSON string literal, quotes included; bytes outside printable ASCII as \u00XX.
std::string JsonString(const std::string& s);

}  // namespace strads::tool
