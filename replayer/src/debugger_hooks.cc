#include "debugger_hooks.h"

extern "C" {

int strads_debugger_break_node = -1;
uint64_t strads_debugger_break_event = ~uint64_t{0};

// noinline and with an asm statement, so that each stays a real call gdb can break on.
[[gnu::noinline]] void strads_debugger_event_reached(int node, uint64_t index) {
  asm volatile("" : : "r"(node), "r"(index) : "memory");
}

[[gnu::noinline]] void strads_debugger_operator_begin(int node, uint64_t site, uint64_t invocation,
                                                      const char* kind, const char* file,
                                                      uint32_t line) {
  asm volatile(""
               :
               : "r"(node), "r"(site), "r"(invocation), "r"(kind), "r"(file), "r"(line)
               : "memory");
}

[[gnu::noinline]] void strads_debugger_divergence(int node, const char* report) {
  asm volatile("" : : "r"(node), "r"(report) : "memory");
}
}
