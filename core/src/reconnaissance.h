// Reconnaissance execution shared by the AsyncFor engines (schedule and locks), and the
// element shipping they both use.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "element_ref.h"
#include "recon_hook.h"
#include "strads/internal/function_ref.h"
#include "strads/runtime.h"

namespace strads {

struct ReconResult {
  // This node ran bodies first + share_begin + k, k in [0, share_count).
  int64_t share_begin = 0, share_count = 0;
  // Body k's accesses: touches[where[k].first .. + where[k].second).
  std::vector<std::pair<uint64_t, uint32_t>> where;
  std::vector<Touch> touches;
  // Per DDS id, agreed by all nodes: bit 0 touched by some body, bit 1 written by some body.
  std::vector<uint8_t> flags;
  std::vector<uint32_t> written, read_only;
};

// Collective. Runs every body of [first, last] once (each node a contiguous share), with DDS
// accesses recorded and nothing committed; fetches remote reads and reruns until none miss.
ReconResult Reconnoitre(Runtime& rt, const std::string& site, int64_t first, int64_t last,
                        FunctionRef<void(int64_t)> body);

// Collective. serve[p] lists elements this node owns that node p needs: sends their current
// values; stores what the others send into this node's arrays.
void ServeElements(Runtime& rt, const std::vector<std::vector<ElementRef>>& serve);

// Restores the driver hook on every DDS when a loop phase ends, normally or not.
class HookGuard {
 public:
  explicit HookGuard(Runtime& rt) : rt_(rt) {}
  ~HookGuard();
  HookGuard(const HookGuard&) = delete;
  HookGuard& operator=(const HookGuard&) = delete;

 private:
  Runtime& rt_;
};

}  // namespace strads
