// `strads trace view TRACE [-o FILE.html]`: one self-contained web page of the trace that opens
// from file:// with no network: the embedded viewer/ page (viewer_files.h) with the timeline's
// binary columns (trace/include/strads/trace/view_data.h) and `trace stats --json` in it.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include "commands.h"
#include "json.h"
#include "strads/trace/stats.h"
#include "strads/trace/view_data.h"
#include "viewer_files.h"

namespace strads::tool {

namespace {

struct ViewArgs {
  std::string dir;
  std::string output;  // "": TRACE.html next to the trace directory
};

// `page` with the first `marker` replaced by `text`.
std::string Fill(std::string page, const std::string& marker, const std::string& text) {
  const size_t at = page.find(marker);
  if (at == std::string::npos)
    throw std::logic_error("viewer/view.html has no " + marker);  // a build defect
  return page.replace(at, marker.size(), text);
}

void RunView(const ViewArgs& args) {
  std::string dir = args.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string output = args.output.empty() ? dir + ".html" : args.output;

  std::ostringstream data;
  data << "const STRADS_VIEW_DATA = ";
  const ViewDataCounts counts = WriteViewData(dir, data);
  data << ";\nconst STRADS_VIEW_STATS = ";
  PrintStatsJson(ComputeStats(OpenTrace(dir)), data);
  data << ";\nconst STRADS_VIEW_TITLE = " << JsonString(dir) << ";\n";
  // Nothing in the data may end its <script> element: "<\/" is "</" in a JavaScript string.
  std::string script = data.str();
  for (size_t at = 0; (at = script.find("</", at)) != std::string::npos; at += 3)
    script.replace(at, 2, "<\\/");

  std::string page = Fill(kViewHtml, "/*STRADS_VIEW_CSS*/", kViewCss);
  page = Fill(std::move(page), "/*STRADS_VIEW_DATA*/", script);
  page = Fill(std::move(page), "/*STRADS_VIEW_JS*/", kViewJs);

  const std::string tmp = output + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("strads trace view: cannot write '" + tmp + "'");
    out << page;
    out.flush();
    if (!out) throw UsageError("strads trace view: writing '" + tmp + "' failed");
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0)
    throw UsageError("strads trace view: cannot rename '" + tmp + "' to '" + output + "'");
  std::cerr << "strads trace view: " << output << ": " << counts.nodes << " nodes x "
            << counts.threads << " threads, " << counts.operator_slices << " operator slices, "
            << counts.waits << " waits, " << counts.message_arrows << " message arrows, "
            << counts.handover_arrows << " lock handover arrows\n";
}

}  // namespace

void AddTraceViewCommand(CLI::App& parent, CommandResult&) {
  auto args = std::make_shared<ViewArgs>();
  CLI::App* cmd = parent.add_subcommand(
      "view", "A self-contained HTML page of a trace: timeline, message matrix, lock contention");
  cmd->add_option("TRACE", args->dir, "Trace directory")->required();
  cmd->add_option("-o,--output", args->output, "Output file (default: TRACE.html)");
  cmd->callback([args] { RunView(*args); });
}

}  // namespace strads::tool
