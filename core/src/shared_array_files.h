// SharedArrayFiles: under `--nodes P`, one memory file per DDS array, which every logical node
// of the process maps copy-on-write (DdsArray::MapShared), so that the pages of owners' values a
// node only reads are one physical copy for the process instead of one per node (docs/
// async_for.md, "Memory"). Made by the in-process cluster, shared by its nodes; nodes create their
// DDSs in the same order (collectives), so a DDS's id names the same DDS on every node.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

namespace strads {

class Runtime;

class SharedArrayFiles {
 public:
  SharedArrayFiles() = default;
  ~SharedArrayFiles();  // closes the files; mappings keep their own descriptors
  SharedArrayFiles(const SharedArrayFiles&) = delete;
  SharedArrayFiles& operator=(const SharedArrayFiles&) = delete;

  // The file of DDS `id`, `bytes` long, made by the first node that asks (thread-safe); -1 if
  // it cannot be made, or if another node asked for this id with another length (nodes that
  // disagree keep private pages: the disagreement shows where it did before).
  int FileFor(uint32_t id, size_t bytes);

 private:
  struct File {
    int fd;
    size_t bytes;
  };
  std::mutex mu_;
  std::map<uint32_t, File> files_;
};

// Collective; does nothing unless the nodes share files (NodeContext::shared_files). Once every
// node has come here (no node still reads the files' older bytes), each node copies its owned
// range of each DDS in `dds` into the DDS's file; once all have, each maps the file over the
// pages of its array it never wrote, and over its own whole owned pages. Called before owners
// send elements of these DDSs to their readers (ServeElements), who then find the bytes in place
// and write nothing: each such page stays one copy for the process. A node that fails to publish
// or map keeps private pages; since readers compare before they skip a write, no node ever reads
// bytes other than those it would have been sent.
void ShareOwnersPages(Runtime& rt, const std::vector<uint32_t>& dds);

}  // namespace strads
