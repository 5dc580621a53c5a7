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

// `text` with "</" written "<\\/" (the same in a JavaScript string), so that nothing in it ends
// its <script> element.
std::string ScriptSafe(std::string text) {
  for (size_t at = 0; (at = text.find("</", at)) != std::string::npos; at += 3)
    text.replace(at, 2, "<\\/");
  return text;
}

// The page's text from `at` up to `marker` (a build defect if missing); `at` moves past it.
std::string Until(const std::string& page, size_t& at, const std::string& marker) {
  const size_t end = page.find(marker, at);
  if (end == std::string::npos)
    throw std::logic_error("viewer/view.html has no " + marker);  // a build defect
  std::string text = page.substr(at, end - at);
  at = end + marker.size();
  return text;
}

void RunView(const ViewArgs& args) {
  std::string dir = args.dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const std::string output = args.output.empty() ? dir + ".html" : args.output;
  const std::string tmp = output + ".tmp", blocks_tmp = output + ".blocks.tmp";

  // The lazily decoded blocks go to a file of their own while the data is made, so that the
  // tool holds the trace's rows but not the page.
  std::ostringstream data;
  ViewDataCounts counts;
  {
    std::ofstream blocks(blocks_tmp, std::ios::binary | std::ios::trunc);
    if (!blocks) throw UsageError("strads trace view: cannot write '" + blocks_tmp + "'");
    data << "const STRADS_VIEW_DATA = ";
    try {
      counts = WriteViewData(dir, data, blocks);
    } catch (...) {
      std::remove(blocks_tmp.c_str());  // a bad trace leaves no temporary file behind
      throw;
    }
    blocks.flush();
    if (!blocks) throw UsageError("strads trace view: writing '" + blocks_tmp + "' failed");
  }
  data << ";\nconst STRADS_VIEW_STATS = ";
  PrintStatsJson(ComputeStats(OpenTrace(dir)), data);
  data << ";\nconst STRADS_VIEW_TITLE = " << JsonString(dir) << ";\n";

  // The page: view.html with the CSS, the data and the renderer at its markers, then the blocks
  // (after the renderer, so that the first frame does not wait for the parser to reach them).
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw UsageError("strads trace view: cannot write '" + tmp + "'");
    const std::string page = kViewHtml;
    size_t at = 0;
    out << Until(page, at, "/*STRADS_VIEW_CSS*/") << kViewCss;
    out << Until(page, at, "/*STRADS_VIEW_DATA*/") << ScriptSafe(data.str());
    out << Until(page, at, "/*STRADS_VIEW_JS*/") << kViewJs;
    out << Until(page, at, "<!--STRADS_VIEW_BLOCKS-->");
    {
      std::ifstream blocks(blocks_tmp, std::ios::binary);
      if (blocks.peek() != std::ifstream::traits_type::eof()) out << blocks.rdbuf();
    }
    std::remove(blocks_tmp.c_str());
    out << page.substr(at);
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
