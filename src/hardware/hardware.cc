// Hardware detection from /proc and /sys, and the hardware part of a tensor sentence.
#include "hardware/hardware.h"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/error.h"
#include "support/threads.h"

namespace tlm {
namespace {

std::string read_file_or_empty(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace((unsigned char)s[b])) b++;
  while (e > b && std::isspace((unsigned char)s[e - 1])) e--;
  return s.substr(b, e - b);
}

// The value of the first "key : value" line of /proc/cpuinfo whose key is `key`.
std::string cpuinfo_field(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (trim(line.substr(0, colon)) == key) return trim(line.substr(colon + 1));
  }
  return "";
}

// Parses a non-negative decimal integer that must make up all of `s`; -1 otherwise.
int64_t parse_count(const std::string& s) {
  if (s.empty() || s.size() > 18) return -1;
  int64_t v = 0;
  for (char c : s) {
    if (!std::isdigit((unsigned char)c)) return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

constexpr int64_t kMaxCacheBytes = int64_t(1) << 50;  // guards the unit multiply

}  // namespace

bool cpu_flags_have(const std::string& flags, const std::string& flag) {
  std::istringstream in(flags);
  std::string f;
  while (in >> f)
    if (f == flag) return true;
  return false;
}

std::string isa_from_cpu_flags(const std::string& flags) {
  // avx512f is the foundation every AVX-512 code path needs; the other subsets ride on it.
  if (cpu_flags_have(flags, "avx512f")) return "avx512";
  if (cpu_flags_have(flags, "avx2")) return "avx2";
  return "sse4";  // the x86-64 floor we target (older CPUs are not worth a separate token)
}

bool host_cpu_has(const std::string& flag) {
  return cpu_flags_have(cpuinfo_field(read_file_or_empty("/proc/cpuinfo"), "flags"), flag);
}

int vector_bits_for_isa(const std::string& isa) {
  if (isa == "avx512") return 512;
  if (isa == "avx2") return 256;
  if (isa == "sse4") return 128;
  TLM_USER_ERROR() << "unknown isa '" << isa << "': expected avx512, avx2 or sse4";
}

int64_t parse_cache_size(const std::string& text) {
  std::string s = trim(text);
  if (s.empty()) return -1;
  int64_t unit = 1;
  char last = (char)std::toupper((unsigned char)s.back());
  if (last == 'K' || last == 'M' || last == 'G') {
    unit = last == 'K' ? (1 << 10) : last == 'M' ? (1 << 20) : (1 << 30);
    s.pop_back();
  }
  int64_t v = parse_count(s);
  if (v <= 0 || v > kMaxCacheBytes / unit) return -1;
  return v * unit;
}

HardwareInfo hardware_from_sources(const std::string& cpuinfo_text, const std::string& cache_dir,
                                   int cores) {
  HardwareInfo hw;
  hw.isa = isa_from_cpu_flags(cpuinfo_field(cpuinfo_text, "flags"));
  hw.vector_bits = vector_bits_for_isa(hw.isa);
  hw.cores = cores > 0 ? cores : 1;
  hw.cpu_model = cpuinfo_field(cpuinfo_text, "model name");
  std::string vendor = cpuinfo_field(cpuinfo_text, "vendor_id");
  std::string family = cpuinfo_field(cpuinfo_text, "cpu family");
  std::string model = cpuinfo_field(cpuinfo_text, "model");
  if (!vendor.empty() && parse_count(family) >= 0 && parse_count(model) >= 0) {
    vendor = vendor == "AuthenticAMD" ? "amd" : vendor == "GenuineIntel" ? "intel" : "other";
    hw.cpu_id = vendor + "-" + family + "-" + model;
  }

  int64_t l1 = -1, l2 = -1, l3 = -1;
  // sysfs numbers the caches index0..indexN without gaps; 16 is far beyond any real CPU.
  for (int i = 0; i < 16; i++) {
    std::string dir = cache_dir + "/index" + std::to_string(i) + "/";
    std::string level = trim(read_file_or_empty(dir + "level"));
    if (level.empty()) break;
    std::string type = trim(read_file_or_empty(dir + "type"));
    int64_t size = parse_cache_size(read_file_or_empty(dir + "size"));
    if (size <= 0 || type == "Instruction") continue;
    if (level == "1") l1 = size;
    if (level == "2") l2 = size;
    if (level == "3" || level == "4") l3 = std::max(l3, size);
  }
  if (l1 > 0) hw.l1d_bytes = l1;
  if (l2 > 0) hw.l2_bytes = l2;
  if (l3 > 0) {
    hw.l3_bytes = l3;
  } else if (l2 > 0) {
    hw.l3_bytes = l2;  // no L3 reported: the L2 is the last level
  }
  return hw;
}

HardwareInfo detect_hardware() {
  // The cores a program gets are the threads it runs with (tlm --threads, support/threads.h),
  // at most the cores this process may use: `tlm tune --threads 1` on two cores measures
  // one-thread programs, and its records and prompts must say cores=1.
  return hardware_from_sources(read_file_or_empty("/proc/cpuinfo"),
                               "/sys/devices/system/cpu/cpu0/cache",
                               std::min(compute_threads(), usable_cores()));
}

int64_t round_down_pow2(int64_t bytes) {
  TLM_CHECK(bytes >= 1) << "round_down_pow2(" << bytes << ")";
  int64_t p = 1;
  while (p <= bytes / 2) p *= 2;
  return p;
}

std::string format_size_token(int64_t pow2_bytes) {
  TLM_CHECK(pow2_bytes >= 1 && round_down_pow2(pow2_bytes) == pow2_bytes) << pow2_bytes;
  const char* units[] = {"", "k", "m", "g", "t"};
  int u = 0;
  while (u < 4 && pow2_bytes >= 1024) {
    pow2_bytes /= 1024;
    u++;
  }
  return std::to_string(pow2_bytes) + units[u];
}

int64_t parse_size_token(const std::string& text) {
  std::string s = text;
  int64_t unit = 1;
  if (!s.empty()) {
    switch (s.back()) {
      case 'k':
        unit = int64_t(1) << 10;
        break;
      case 'm':
        unit = int64_t(1) << 20;
        break;
      case 'g':
        unit = int64_t(1) << 30;
        break;
      case 't':
        unit = int64_t(1) << 40;
        break;
      default:
        break;
    }
    if (unit != 1) s.pop_back();
  }
  int64_t v = parse_count(s);
  TLM_USER_CHECK(v >= 1 && v <= kMaxCacheBytes / unit && round_down_pow2(v) == v)
      << "bad cache size '" << text << "' in a hardware token: expected a power of two with an "
      << "optional k/m/g/t suffix, like 32k";
  return v * unit;
}

std::vector<std::string> hardware_tokens(const HardwareInfo& hw) {
  TLM_CHECK(hw.cores >= 1 && hw.vector_bits >= 32) << "cores " << hw.cores;
  return {
      "isa=" + hw.isa,
      "cores=" + std::to_string(hw.cores),
      "vec=" + std::to_string(hw.vector_bits / 32),  // float32 lanes per vector register
      "l1=" + format_size_token(round_down_pow2(hw.l1d_bytes)),
      "l2=" + format_size_token(round_down_pow2(hw.l2_bytes)),
      "l3=" + format_size_token(round_down_pow2(hw.l3_bytes)),
  };
}

HardwareInfo parse_hardware_tokens(const std::vector<std::string>& tokens) {
  HardwareInfo hw;
  const char* keys[] = {"isa", "cores", "vec", "l1", "l2", "l3"};
  constexpr int kKeys = 6;
  bool seen[kKeys] = {};
  int vec = 0;
  for (const std::string& tok : tokens) {
    size_t eq = tok.find('=');
    std::string key = tok.substr(0, eq), value = eq == std::string::npos ? "" : tok.substr(eq + 1);
    int k = 0;
    while (k < kKeys && key != keys[k]) k++;
    TLM_USER_CHECK(eq != std::string::npos && k < kKeys)
        << "unknown hardware token '" << tok << "': expected isa=, cores=, vec=, l1=, l2=, l3=";
    TLM_USER_CHECK(!seen[k]) << "hardware token '" << key << "=' appears twice";
    seen[k] = true;
    switch (k) {
      case 0:
        hw.isa = value;
        hw.vector_bits = vector_bits_for_isa(value);
        break;
      case 1: {
        int64_t c = parse_count(value);
        TLM_USER_CHECK(c >= 1 && c <= (1 << 20))
            << "bad core count in hardware token '" << tok << "'";
        hw.cores = (int)c;
        break;
      }
      case 2: {
        int64_t v = parse_count(value);
        TLM_USER_CHECK(v >= 1 && v <= 1024) << "bad vector width in hardware token '" << tok << "'";
        vec = (int)v;
        break;
      }
      case 3:
        hw.l1d_bytes = parse_size_token(value);
        break;
      case 4:
        hw.l2_bytes = parse_size_token(value);
        break;
      case 5:
        hw.l3_bytes = parse_size_token(value);
        break;
    }
  }
  for (int k = 0; k < kKeys; k++) {
    TLM_USER_CHECK(seen[k]) << "hardware tokens lack '" << keys[k] << "='";
  }
  TLM_USER_CHECK(vec * 32 == hw.vector_bits)
      << "hardware tokens disagree: vec=" << vec << " but isa=" << hw.isa << " has "
      << hw.vector_bits / 32 << " floats per vector";
  return hw;
}

std::string hardware_key(const HardwareInfo& hw) {
  std::string key;
  for (const std::string& tok : hardware_tokens(hw)) key += (key.empty() ? "" : ",") + tok;
  if (!hw.cpu_id.empty()) key += ",cpu=" + hw.cpu_id;
  return key;
}

HardwareInfo parse_hardware_key(const std::string& key) {
  std::vector<std::string> tokens;
  std::string tok;
  std::istringstream in(key);
  std::string cpu_id;
  while (std::getline(in, tok, ',')) {
    if (tok.rfind("cpu=", 0) == 0) {
      TLM_USER_CHECK(cpu_id.empty() && tok.size() > 4 &&
                     tok.find_first_of(" \t") == std::string::npos)
          << "hardware key '" << key << "': bad or repeated '" << tok << "'";
      cpu_id = tok.substr(4);
      continue;
    }
    tokens.push_back(tok);
  }
  HardwareInfo hw = parse_hardware_tokens(tokens);
  hw.cpu_id = cpu_id;
  return hw;
}

}  // namespace tlm
