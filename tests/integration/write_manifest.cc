// Writes DIR/manifest for NODES nodes (and nothing else), so that tests can hand `strads` a
// manifest no recording of this machine makes (257 nodes).
//   write_manifest DIR NODES
#include <cstdio>
#include <string>

#include "strads/trace/manifest.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_manifest DIR NODES\n");
    return 2;
  }
  strads::ManifestInfo info;
  info.program = "write_manifest";
  info.node_count = static_cast<uint32_t>(std::stoul(argv[2]));
  info.clean_close = true;
  info.run_id = 1;
  strads::ManifestWriter::Write(argv[1], info);
  return 0;
}
