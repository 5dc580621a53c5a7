#include "shared_array_files.h"

#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "node_context.h"
#include "strads/internal/dds.h"
#include "strads/internal/dds_array.h"
#include "strads/runtime.h"

namespace strads {

SharedArrayFiles::~SharedArrayFiles() {
  for (const auto& [id, file] : files_)
    if (file.fd >= 0) close(file.fd);
}

int SharedArrayFiles::FileFor(uint32_t id, size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = files_.find(id);
  if (it == files_.end()) {
    const std::string name = "strads-dds-" + std::to_string(id);
    int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
      close(fd);
      fd = -1;
    }
    it = files_.emplace(id, File{fd, bytes}).first;
  }
  return it->second.bytes == bytes ? it->second.fd : -1;
}

void ShareOwnersPages(Runtime& rt, const std::vector<uint32_t>& dds) {
  SharedArrayFiles* files = rt.context().shared_files();
  if (files == nullptr || dds.empty()) return;
  rt.context().collectives().Barrier();
  std::vector<int> published(dds.size(), -1);
  for (size_t k = 0; k < dds.size(); ++k) {
    DdsBase& v = rt.context().dds(dds[k]);
    internal::DdsArray* array = v.array();
    if (array == nullptr || !array->mapped()) continue;
    const int fd = files->FileFor(v.id(), array->bytes());
    const size_t eb = v.element_bytes();
    if (array->Publish(fd, static_cast<size_t>(v.owned_begin()) * eb,
                       static_cast<size_t>(v.owned_end()) * eb))
      published[k] = fd;
  }
  rt.context().collectives().Barrier();
  for (size_t k = 0; k < dds.size(); ++k) {
    if (published[k] < 0) continue;
    DdsBase& v = rt.context().dds(dds[k]);
    const size_t eb = v.element_bytes();
    v.array()->MapShared(published[k], static_cast<size_t>(v.owned_begin()) * eb,
                         static_cast<size_t>(v.owned_end()) * eb);
  }
}

}  // namespace strads
