// Quote: a piece of untrusted input for an error message, shortened if it is long (a 1 MB token
// must not become a 1 MB message).
#pragma once

#include <string>
#include <string_view>

namespace examples {

// Quote a piece of input for an error message, shortened if it is long.
inline std::string Quote(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  if (text.size() <= kMax) {
    out += text;
  } else {
    out += text.substr(0, kMax);
    out += "...";
  }
  out += "'";
  return out;
}

}  // namespace examples
