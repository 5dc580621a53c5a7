// JSON string literals, for the tool's --json modes and the trace exports.
#pragma once

#include <string>

namespace strads {

// `s` as a JSON string literal, quotes included; bytes outside printable ASCII as \u00XX.
std::string JsonString(const std::string& s);

}  // namespace strads
