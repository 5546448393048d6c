// The machine a tensor program is tuned for, and its words in a tensor sentence (paper §4.2:
// "it retrieves hardware details, including the number of processing cores and the supported
// vector instructions").
//
// detect_hardware() reads /proc/cpuinfo (flags, model name), the cores its programs will run on
// (compute_threads(): tlm --threads, at most the CPU affinity mask's count) and
// /sys/devices/system/cpu/cpu0/cache/index*/ (cache sizes); anything it cannot read falls back to
// a conservative default (sse4, 1 core, 32k/256k/8m caches).
// hardware_tokens() turns it into short tokens ("isa=avx512 cores=2 vec=16 l1=32k l2=2m l3=64m")
// with cache sizes rounded *down* to powers of two, so that machines that differ only a little
// share a vocabulary and a tile that fits the promised cache also fits the real one.
// parse_hardware_tokens() reads them back; hardware_key() joins them into one stable string that
// measurement records store, followed by the CPU's identity (vendor, family, model) when known:
// machines whose tokens agree can still run a program at very different speeds (an AMD Zen 1
// and a Zen 3 EPYC both read "isa=avx2 cores=2 vec=8 l1=32k l2=512k l3=8m", but Zen 1 splits
// every 256-bit FMA in two), and latencies of different machines must never be compared. The
// identity and the model name never enter a sentence's tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlm {

struct HardwareInfo {
  std::string isa = "sse4";      // widest x86 vector ISA: "avx512" | "avx2" | "sse4"
  int cores = 1;                 // CPUs this process may run on (affinity mask)
  int vector_bits = 128;         // 512 / 256 / 128, follows isa
  int64_t l1d_bytes = 32 << 10;  // per-core L1 data cache
  int64_t l2_bytes = 256 << 10;  // per-core (or per-cluster) L2
  int64_t l3_bytes = 8 << 20;    // last-level cache, as the OS reports it (often socket-wide)
  std::string cpu_model;         // "Intel(R) Xeon(R) Processor"; never part of a token
  std::string cpu_id;            // "amd-23-1": vendor-family-model from /proc/cpuinfo, "" when
                                 // unknown (e.g. parsed from a sentence); part of the key only
};

HardwareInfo detect_hardware();

// The pieces of detect_hardware(), public so tests can feed them recorded machine descriptions.
// cpuinfo_text is the content of /proc/cpuinfo; cache_dir holds index0/, index1/, ... as in sysfs.
HardwareInfo hardware_from_sources(const std::string& cpuinfo_text, const std::string& cache_dir,
                                   int cores);
// "avx512" when the flags contain avx512f, else "avx2", else "sse4".
std::string isa_from_cpu_flags(const std::string& flags);
// True when `flags` (a /proc/cpuinfo "flags" line) lists `flag`; host_cpu_has(flag) asks this
// machine's (false when /proc/cpuinfo cannot be read).
bool cpu_flags_have(const std::string& flags, const std::string& flag);
bool host_cpu_has(const std::string& flag);
int vector_bits_for_isa(const std::string& isa);  // UserError for an unknown isa
// Parses sysfs cache sizes: "48K" -> 49152, "2048K", "1M", "512"; -1 when unreadable.
int64_t parse_cache_size(const std::string& text);

// Largest power of two <= bytes (bytes >= 1).
int64_t round_down_pow2(int64_t bytes);
// Byte counts as tokens write them: "32k", "2m", "64m", "1g"; a power of two below 1k as "512".
std::string format_size_token(int64_t pow2_bytes);
int64_t parse_size_token(const std::string& text);  // inverse; UserError when malformed

// Always six tokens, in this order: isa=, cores=, vec= (floats per vector), l1=, l2=, l3=.
std::vector<std::string> hardware_tokens(const HardwareInfo& hw);
// Reads exactly those six tokens (any order, each once); UserError naming the bad token otherwise.
// Sizes come back rounded and cpu_model empty, so tokens -> info -> tokens is the identity.
HardwareInfo parse_hardware_tokens(const std::vector<std::string>& tokens);
// The tokens joined by ',', then the CPU identity when known:
// "isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m,cpu=intel-6-143". The key of the measuring
// machine is what records store and what selects the records of "this machine".
std::string hardware_key(const HardwareInfo& hw);
// The inverse; a key without "cpu=" (e.g. a sampling target) leaves cpu_id empty.
HardwareInfo parse_hardware_key(const std::string& key);

}  // namespace tlm
