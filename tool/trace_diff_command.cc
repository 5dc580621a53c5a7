// `strads trace diff A B [--json]`: identical, or where two traces of the same program first
// part, per node and thread, and how many decisions differ per operator invocation. Exit 0
// identical, 1 different, 2 not comparable (or unreadable).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>

#include "commands.h"
#include "json.h"
#include "strads/exit_code.h"
#include "strads/trace/diff.h"

namespace strads::tool {

namespace {

std::string StreamName(const TraceDiff::First& f) {
  return "node " + std::to_string(f.node) +
         (f.driver ? ", driver" : ", thread " + std::to_string(f.thread));
}

std::string Index(const std::optional<uint64_t>& index) {
  return index ? "#" + std::to_string(*index) : "its end";
}

void PrintText(const std::string& a, const std::string& b, const TraceDiff& d, std::ostream& out) {
  switch (d.verdict) {
    case TraceDiff::Verdict::kNotComparable:
      out << "not comparable: " << d.not_comparable << "\n";
      return;
    case TraceDiff::Verdict::kIdentical:
      out << "identical: " << d.events << " events\n";
      return;
    case TraceDiff::Verdict::kDifferent:
      break;
  }
  out << "different: " << d.firsts.size() << " of the streams part (A = " << a << ", B = " << b
      << ")\n";
  for (const TraceDiff::First& f : d.firsts) {
    out << StreamName(f) << ": first difference at its event " << f.position << " ("
        << Index(f.index_a) << " in A, " << Index(f.index_b) << " in B of node-" << f.node
        << ".log), " << f.where << "\n"
        << "  A: " << f.event_a << "\n"
        << "  B: " << f.event_b << "\n";
  }
  out << "decisions that differ, per operator invocation:\n";
  for (const TraceDiff::OperatorCount& c : d.per_operator)
    out << "  node " << c.node << " " << c.where << ": " << c.differing << " (A has " << c.events_a
        << " events, B " << c.events_b << ")\n";
}

void PrintJson(const TraceDiff& d, std::ostream& out) {
  const char* verdict = d.verdict == TraceDiff::Verdict::kIdentical   ? "identical"
                        : d.verdict == TraceDiff::Verdict::kDifferent ? "different"
                                                                      : "not comparable";
  out << "{\"verdict\": " << JsonString(verdict);
  if (!d.not_comparable.empty()) out << ", \"reason\": " << JsonString(d.not_comparable);
  out << ", \"events\": " << d.events << ", \"firsts\": [";
  for (size_t i = 0; i < d.firsts.size(); ++i) {
    const TraceDiff::First& f = d.firsts[i];
    out << (i ? ", " : "") << "{\"node\": " << f.node << ", \"thread\": " << f.thread
        << ", \"driver\": " << (f.driver ? "true" : "false") << ", \"position\": " << f.position
        << ", \"index_a\": " << (f.index_a ? std::to_string(*f.index_a) : "null")
        << ", \"index_b\": " << (f.index_b ? std::to_string(*f.index_b) : "null")
        << ", \"a\": " << JsonString(f.event_a) << ", \"b\": " << JsonString(f.event_b)
        << ", \"where\": " << JsonString(f.where) << "}";
  }
  out << "], \"per_operator\": [";
  for (size_t i = 0; i < d.per_operator.size(); ++i) {
    const TraceDiff::OperatorCount& c = d.per_operator[i];
    out << (i ? ", " : "") << "{\"node\": " << c.node << ", \"where\": " << JsonString(c.where)
        << ", \"differing\": " << c.differing << ", \"events_a\": " << c.events_a
        << ", \"events_b\": " << c.events_b << "}";
  }
  out << "]}\n";
}

}  // namespace

void AddTraceDiffCommand(CLI::App& parent, CommandResult& result) {
  struct Options {
    std::string a, b;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* diff = parent.add_subcommand(
      "diff", "Where two traces of the same program first differ (exit 0 identical, 1 different)");
  diff->add_option("A", options->a, "Trace directory")->required();
  diff->add_option("B", options->b, "Trace directory")->required();
  diff->add_flag("--json", options->json, "Print JSON");
  diff->callback([options, &result] {
    const TraceDiff d = DiffTraces(OpenTrace(options->a), OpenTrace(options->b));
    if (options->json)
      PrintJson(d, std::cout);
    else
      PrintText(options->a, options->b, d, std::cout);
    switch (d.verdict) {
      case TraceDiff::Verdict::kIdentical:
        result.exit_status = ToInt(ExitCode::kOk);
        break;
      case TraceDiff::Verdict::kDifferent:
        result.exit_status = ToInt(ExitCode::kFailed);  // "the runs differ", as diff(1) says 1
        break;
      case TraceDiff::Verdict::kNotComparable:
        result.exit_status = ToInt(ExitCode::kBadInput);
        break;
    }
  });
}

}  // namespace strads::tool
