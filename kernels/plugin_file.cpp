#include "kernels/plugin_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "triton_emu/errors.hpp"

// The checks past a file's size read ELF (Linux's shared libraries); where libraries are
// another format (macOS's Mach-O) dlopen's own error is what a bad file gets.
#if defined(__ELF__)
#include <elf.h>
#include <link.h>
#define CUBESIM_PLUGIN_ELF 1
#endif

namespace cubesim::kernels {
namespace {

constexpr const char* kRebuild =
    "; give the libNAME.so that cubesim_add_plugin() builds (docs/writing-kernels.md, \"Your "
    "kernels in the CLI\")";

#if defined(CUBESIM_PLUGIN_ELF)
#if defined(__x86_64__)
constexpr unsigned kMachine = EM_X86_64;
constexpr const char* kMachineName = "x86-64";
#elif defined(__aarch64__)
constexpr unsigned kMachine = EM_AARCH64;
constexpr const char* kMachineName = "AArch64";
#else
#error "check_plugin_file knows the ELF machine of x86-64 and AArch64 only"
#endif
constexpr unsigned char kClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kByteOrder =
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;

std::string machine_name(unsigned machine) {
  switch (machine) {
    case EM_X86_64:
      return "x86-64";
    case EM_386:
      return "x86 (32-bit)";
    case EM_AARCH64:
      return "AArch64";
    case EM_ARM:
      return "ARM (32-bit)";
    case EM_RISCV:
      return "RISC-V";
    case EM_PPC64:
      return "POWER";
    case EM_S390:
      return "s390";
    default:
      return "machine number " + std::to_string(machine);
  }
}

#endif

class Reader {
 public:
  Reader(const std::filesystem::path& file, const std::string& shown) : shown_(shown) {
    fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int e = errno;
      throw UsageError(shown_ + " cannot be read: " + std::strerror(e) +
                       (e == EACCES ? " (make it readable: chmod a+r " + file.string() + ")" : ""));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail_io("cannot be examined");
    size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~Reader() { ::close(fd_); }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  std::uint64_t size() const { return size_; }
  void read(void* into, std::size_t bytes, std::uint64_t offset) const {
    auto* out = static_cast<char*>(into);
    std::size_t done = 0;
    while (done < bytes) {
      const ssize_t n = ::pread(fd_, out + done, bytes - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail_io("cannot be read");
      done += static_cast<std::size_t>(n);
    }
  }

 private:
  [[noreturn]] void fail_io(const char* what) const {
    const int e = errno;
    throw UsageError(shown_ + " " + what + ": " + (e ? std::strerror(e) : "the file shrank"));
  }
  std::string shown_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

#if defined(CUBESIM_PLUGIN_ELF)
// [offset, offset + count * entry) as one end offset; an overflow is past any file.
std::uint64_t end_of(std::uint64_t offset, std::uint64_t count, std::uint64_t entry) {
  std::uint64_t bytes = 0, end = 0;
  if (__builtin_mul_overflow(count, entry, &bytes) || __builtin_add_overflow(offset, bytes, &end))
    return UINT64_MAX;
  return end;
}
#endif

}  // namespace

void check_plugin_file(const std::filesystem::path& file, const std::string& shown) {
  const Reader in(file, shown);
  const std::uint64_t size = in.size();
  [[maybe_unused]] const std::string has = "it has " + std::to_string(size) + " bytes";
  const std::string cut =
      "; the copy or the build that wrote it was cut short: build or copy it "
      "again";
  if (size == 0) throw UsageError(shown + " is empty (0 bytes)" + cut);
#if defined(CUBESIM_PLUGIN_ELF)

  unsigned char ident[EI_NIDENT] = {};
  in.read(ident, size < EI_NIDENT ? size : EI_NIDENT, 0);
  if (size < SELFMAG || std::memcmp(ident, ELFMAG, SELFMAG) != 0)
    throw UsageError(shown +
                     " is not a shared library: it does not start as an ELF file does (bytes 7f "
                     "45 4c 46)" +
                     kRebuild);
  if (size < sizeof(ElfW(Ehdr)))
    throw UsageError(shown + " is truncated: " + has + ", fewer than an ELF header's " +
                     std::to_string(sizeof(ElfW(Ehdr))) + cut);
  if (ident[EI_CLASS] != kClass)
    throw UsageError(shown + " is a " + (ident[EI_CLASS] == ELFCLASS32 ? "32" : "64") +
                     "-bit library, and this cubesim is " + (kClass == ELFCLASS64 ? "64" : "32") +
                     "-bit" + kRebuild + " with the compiler this cubesim was built with");
  if (ident[EI_DATA] != kByteOrder)
    throw UsageError(shown + " was built for a machine of the other byte order" + kRebuild +
                     " on this machine");

  ElfW(Ehdr) header;
  in.read(&header, sizeof header, 0);
  if (header.e_machine != kMachine)
    throw UsageError(shown + " was built for " + machine_name(header.e_machine) +
                     ", and this cubesim runs on " + kMachineName + kRebuild + " on this machine");
  if (header.e_type != ET_DYN) {
    const std::string kind = header.e_type == ET_REL    ? "an object file (.o)"
                             : header.e_type == ET_EXEC ? "an executable"
                             : header.e_type == ET_CORE
                                 ? "a core dump"
                                 : "an ELF file of type " + std::to_string(header.e_type);
    throw UsageError(shown + " is " + kind + ", not a shared library" + kRebuild);
  }

  const auto truncated = [&](const std::string& what, std::uint64_t end) {
    return UsageError(shown + " is truncated: " + what + " ends at byte " + std::to_string(end) +
                      ", but " + has + cut);
  };
  if (header.e_phnum == 0)
    throw UsageError(shown + " has no program headers, so nothing of it can be loaded" + cut);
  if (header.e_phentsize != sizeof(ElfW(Phdr)))
    throw UsageError(shown + " is damaged: its program headers are " +
                     std::to_string(header.e_phentsize) + " bytes each, not " +
                     std::to_string(sizeof(ElfW(Phdr))) + cut);
  const std::uint64_t ph_end = end_of(header.e_phoff, header.e_phnum, header.e_phentsize);
  if (ph_end > size) throw truncated("its program header table", ph_end);
  if (header.e_shoff != 0) {
    // A section count of 0 with a table means the count is in the first entry: one at least.
    const std::uint64_t sections = header.e_shnum == 0 ? 1 : header.e_shnum;
    const std::uint64_t sh_end = end_of(header.e_shoff, sections, header.e_shentsize);
    if (sh_end > size) throw truncated("its section header table", sh_end);
  }
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  in.read(segments.data(), segments.size() * sizeof(ElfW(Phdr)), header.e_phoff);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const ElfW(Phdr)& s = segments[i];
    if (s.p_type != PT_LOAD) continue;
    const std::uint64_t end = end_of(s.p_offset, 1, s.p_filesz);
    if (end > size) throw truncated("its loadable segment " + std::to_string(i), end);
  }
#endif
}

}  // namespace cubesim::kernels
