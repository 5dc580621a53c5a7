#include "output_tagger.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <mutex>
#include <streambuf>
#include <string>

namespace strads {

namespace {

struct Registry {
  std::mutex mu;
  std::map<int, OutputTagger::NextEvent> nodes;  // an empty NextEvent: withdrawn
};

Registry& TheRegistry() {
  static Registry* registry = new Registry;  // never destroyed: threads may print at exit
  return *registry;
}

constexpr int kUnnamed = -2;
thread_local int thread_node = kUnnamed;
thread_local int thread_index = -1;
thread_local bool thread_is_driver = false;

// The tag of a line the calling thread starts now.
std::string Tag() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  int node = thread_node;
  if (node == kUnnamed && r.nodes.size() == 1) node = r.nodes.begin()->first;
  auto it = r.nodes.find(node);
  if (it == r.nodes.end()) return "[node ?] ";
  const std::string name = "[node " + std::to_string(node);
  const std::optional<uint64_t> next =
      it->second ? it->second(thread_index, thread_is_driver) : std::nullopt;
  return next ? name + " event " + std::to_string(*next) + "] " : name + " end] ";
}

void WriteAll(int fd, const std::string& text) {
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere to write: the program's own writes would fail alike
    p += n;
    left -= static_cast<size_t>(n);
  }
}

// The calling thread's unfinished lines, for fd 1 and fd 2, each with its tag already in front
// (taken when the line's first byte was written). A thread that ends mid-line writes the rest.
struct PendingLines {
  std::string text[2];
  ~PendingLines() {
    for (int i = 0; i < 2; ++i)
      if (!text[i].empty()) WriteAll(i + 1, text[i]);
  }
};
thread_local PendingLines pending;

void Append(int fd, const char* data, size_t size) {
  std::string& line = pending.text[fd - 1];
  while (size > 0) {
    if (line.empty()) line = Tag();
    const void* newline = std::memchr(data, '\n', size);
    const size_t take =
        newline ? static_cast<size_t>(static_cast<const char*>(newline) - data) + 1 : size;
    line.append(data, take);
    data += take;
    size -= take;
    if (newline) {
      WriteAll(fd, line);
      line.clear();
    }
  }
}

template <int kFd>
ssize_t CookieWrite(void*, const char* data, size_t size) {
  Append(kFd, data, size);
  return static_cast<ssize_t>(size);
}

class TaggingStreambuf : public std::streambuf {
 public:
  explicit TaggingStreambuf(int fd) : fd_(fd) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    const char ch = traits_type::to_char_type(c);
    Append(fd_, &ch, 1);
    return c;
  }
  std::streamsize xsputn(const char* data, std::streamsize size) override {
    Append(fd_, data, static_cast<size_t>(size));
    return size;
  }

 private:
  int fd_;
};

FILE* TaggingFile(cookie_io_functions_t functions) {
  FILE* file = ::fopencookie(nullptr, "w", functions);
  if (file == nullptr) {
    std::fprintf(stderr, "strads replay: --tag-output: fopencookie: %s\n", std::strerror(errno));
    std::exit(1);
  }
  std::setvbuf(file, nullptr, _IONBF, 0);
  return file;
}

void HookOutput() {
  std::fflush(stdout);
  std::fflush(stderr);
  std::cout.flush();
  std::cerr.flush();
  // glibc documents stdin, stdout and stderr as variables a program may set.
  stdout = TaggingFile({nullptr, CookieWrite<1>, nullptr, nullptr});
  stderr = TaggingFile({nullptr, CookieWrite<2>, nullptr, nullptr});
  // Never destroyed: std::cout and std::cerr are flushed by ios_base::Init's destructor after
  // every function-local static is gone, and would then flush a destroyed streambuf (found by
  // ASan: a SEGV at exit in every tagged replay).
  auto* out = new TaggingStreambuf(1);
  auto* err = new TaggingStreambuf(2);
  std::cout.rdbuf(out);
  std::cerr.rdbuf(err);
  std::clog.rdbuf(err);
}

}  // namespace

bool OutputTagger::Requested() {
  const char* value = std::getenv("STRADS_REPLAY_TAG_OUTPUT");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

void OutputTagger::Enroll(int node, NextEvent next) {
  static std::once_flag hooked;
  std::call_once(hooked, HookOutput);
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.nodes[node] = std::move(next);
  thread_node = node;
  thread_is_driver = true;
}

void OutputTagger::Withdraw(int node) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.nodes.find(node);
  if (it != r.nodes.end()) it->second = nullptr;
}

void OutputTagger::NameThread(int node, int thread) {
  thread_node = node;
  thread_index = thread;
}

}  // namespace strads
