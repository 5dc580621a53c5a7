// JSON output of the tool's --json modes: the trace library's JsonString.
#pragma once

#include "strads/trace/json_string.h"

namespace strads::tool {

using strads::JsonString;

}  // namespace strads::tool
