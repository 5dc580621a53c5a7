// The one exception of the trace library.
#pragma once

#include <stdexcept>

namespace strads {

// A trace (or a file in it) cannot be written or read. The message names the file, the byte
// offset when there is one, and what was wrong.
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace strads
