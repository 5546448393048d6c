// Hardware detection on recorded machine descriptions, and tokens <-> HardwareInfo round trips.
#include "hardware/hardware.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "support/error.h"
#include "support/threads.h"

namespace tlm {
namespace {

// A scratch directory holding a fake sysfs cache tree; removed by the test's end (best effort).
class FakeCacheDir {
 public:
  FakeCacheDir() {
    std::string tmpl = ::testing::TempDir() + "tlm_hw_XXXXXX";
    dir_ = mkdtemp(tmpl.data()) ? tmpl : "";
    EXPECT_FALSE(dir_.empty());
  }
  ~FakeCacheDir() {
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }
  void add(int index, int level, const std::string& type, const std::string& size) {
    std::string d = dir_ + "/index" + std::to_string(index);
    ASSERT_EQ(mkdir(d.c_str(), 0755), 0);
    std::ofstream(d + "/level") << level << "\n";
    std::ofstream(d + "/type") << type << "\n";
    std::ofstream(d + "/size") << size << "\n";
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

const char* kSapphireRapidsCpuinfo =
    "processor\t: 0\n"
    "vendor_id\t: GenuineIntel\n"
    "cpu family\t: 6\n"
    "model\t\t: 143\n"
    "model name\t: Intel(R) Xeon(R) Processor\n"
    "flags\t\t: fpu sse4_1 sse4_2 avx avx2 avx512f avx512dq avx512bw avx512vl avx512_fp16\n"
    "\n"
    "processor\t: 1\n"
    "flags\t\t: fpu sse4_1\n";

TEST(Hardware, IsaFromFlags) {
  EXPECT_EQ(isa_from_cpu_flags("fpu sse4_2 avx avx2 avx512f avx512bw"), "avx512");
  EXPECT_EQ(isa_from_cpu_flags("fpu sse4_2 avx avx2 fma"), "avx2");
  // avx512_fp16 alone is not the foundation subset.
  EXPECT_EQ(isa_from_cpu_flags("sse4_2 avx2 avx512_fp16"), "avx2");
  EXPECT_EQ(isa_from_cpu_flags("fpu sse4_1 sse4_2"), "sse4");
  EXPECT_EQ(isa_from_cpu_flags(""), "sse4");
  EXPECT_EQ(vector_bits_for_isa("avx512"), 512);
  EXPECT_EQ(vector_bits_for_isa("avx2"), 256);
  EXPECT_EQ(vector_bits_for_isa("sse4"), 128);
  EXPECT_THROW(vector_bits_for_isa("neon"), UserError);
}

TEST(Hardware, CacheSizes) {
  EXPECT_EQ(parse_cache_size("48K\n"), 48 << 10);
  EXPECT_EQ(parse_cache_size("107520K"), int64_t(107520) << 10);
  EXPECT_EQ(parse_cache_size("1M"), 1 << 20);
  EXPECT_EQ(parse_cache_size("512"), 512);
  EXPECT_EQ(parse_cache_size(""), -1);
  EXPECT_EQ(parse_cache_size("K"), -1);
  EXPECT_EQ(parse_cache_size("-4K"), -1);
  EXPECT_EQ(parse_cache_size("99999999999999999999K"), -1);
  EXPECT_EQ(round_down_pow2(48 << 10), 32 << 10);
  EXPECT_EQ(round_down_pow2(1), 1);
  EXPECT_EQ(round_down_pow2(int64_t(107520) << 10), int64_t(64) << 20);
  EXPECT_EQ(format_size_token(32 << 10), "32k");
  EXPECT_EQ(format_size_token(int64_t(1) << 30), "1g");
  EXPECT_EQ(format_size_token(512), "512");
  EXPECT_EQ(parse_size_token("2m"), 2 << 20);
  EXPECT_THROW(parse_size_token("33k"), UserError);
  EXPECT_THROW(parse_size_token("k"), UserError);
  EXPECT_THROW(parse_size_token("1x"), UserError);
}

TEST(Hardware, FromRecordedSources) {
  FakeCacheDir cache;
  cache.add(0, 1, "Data", "48K");
  cache.add(1, 1, "Instruction", "32K");
  cache.add(2, 2, "Unified", "2048K");
  cache.add(3, 3, "Unified", "107520K");
  HardwareInfo hw = hardware_from_sources(kSapphireRapidsCpuinfo, cache.path(), 2);
  EXPECT_EQ(hw.isa, "avx512");
  EXPECT_EQ(hw.vector_bits, 512);
  EXPECT_EQ(hw.cores, 2);
  EXPECT_EQ(hw.l1d_bytes, 48 << 10);  // the data cache, not the instruction cache
  EXPECT_EQ(hw.l2_bytes, 2048 << 10);
  EXPECT_EQ(hw.l3_bytes, int64_t(107520) << 10);
  EXPECT_EQ(hw.cpu_model, "Intel(R) Xeon(R) Processor");
  std::vector<std::string> want = {"isa=avx512", "cores=2", "vec=16", "l1=32k", "l2=2m", "l3=64m"};
  EXPECT_EQ(hardware_tokens(hw), want);
  EXPECT_EQ(hardware_key(hw), "isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m,cpu=intel-6-143");
  EXPECT_EQ(hardware_key(parse_hardware_key(hardware_key(hw))), hardware_key(hw));
}

// Two EPYCs with the same tokens (Zen 1 splits 256-bit FMAs, Zen 3 does not): one sentence
// prompt, two record keys, so their latencies are never compared.
TEST(Hardware, SameTokensDifferentCpusHaveDifferentKeys) {
  auto epyc = [](int family, int model) {
    return std::string("vendor_id\t: AuthenticAMD\ncpu family\t: ") + std::to_string(family) +
           "\nmodel\t\t: " + std::to_string(model) +
           "\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse4_2 avx avx2 fma\n";
  };
  HardwareInfo zen1 = hardware_from_sources(epyc(23, 1), "/nonexistent", 2);
  HardwareInfo zen3 = hardware_from_sources(epyc(25, 1), "/nonexistent", 2);
  EXPECT_EQ(hardware_tokens(zen1), hardware_tokens(zen3));
  EXPECT_EQ(hardware_key(zen1), "isa=avx2,cores=2,vec=8,l1=32k,l2=256k,l3=8m,cpu=amd-23-1");
  EXPECT_NE(hardware_key(zen1), hardware_key(zen3));
  EXPECT_EQ(parse_hardware_key(hardware_key(zen3)).cpu_id, "amd-25-1");
  EXPECT_EQ(parse_hardware_key("isa=avx2,cores=2,vec=8,l1=32k,l2=256k,l3=8m").cpu_id, "");
  EXPECT_THROW(parse_hardware_key("isa=avx2,cores=2,vec=8,l1=32k,l2=256k,l3=8m,cpu="), UserError);
}

TEST(Hardware, FallbacksWhenNothingIsReadable) {
  HardwareInfo hw = hardware_from_sources("", "/nonexistent/tlm/cache", 0);
  EXPECT_EQ(hw.isa, "sse4");
  EXPECT_EQ(hw.cores, 1);
  EXPECT_EQ(hardware_key(hw), "isa=sse4,cores=1,vec=4,l1=32k,l2=256k,l3=8m");

  FakeCacheDir no_l3;  // the L2 is the last level
  no_l3.add(0, 1, "Data", "32K");
  no_l3.add(1, 2, "Unified", "1M");
  EXPECT_EQ(hardware_from_sources("", no_l3.path(), 4).l3_bytes, 1 << 20);
}

TEST(Hardware, NearbyMachinesShareTokens) {
  HardwareInfo a, b;
  a.l1d_bytes = 48 << 10;
  b.l1d_bytes = 32 << 10;
  a.l3_bytes = int64_t(105) << 20;
  b.l3_bytes = int64_t(96) << 20;
  a.cpu_model = "one";
  b.cpu_model = "another";
  EXPECT_EQ(hardware_key(a), hardware_key(b));
}

TEST(Hardware, DetectedTokensAreDeterministicAndParseBack) {
  HardwareInfo hw = detect_hardware();
  EXPECT_GE(hw.cores, 1);
  EXPECT_EQ(hw.vector_bits, vector_bits_for_isa(hw.isa));
  std::vector<std::string> tokens = hardware_tokens(hw);
  ASSERT_EQ(tokens.size(), 6u);
  EXPECT_EQ(hardware_tokens(detect_hardware()), tokens);
  HardwareInfo back = parse_hardware_tokens(tokens);
  EXPECT_EQ(hardware_tokens(back), tokens);
  EXPECT_EQ(back.cores, hw.cores);
  EXPECT_EQ(back.isa, hw.isa);
  EXPECT_EQ(hardware_key(parse_hardware_key(hardware_key(hw))), hardware_key(hw));
}

// The cores of the detected machine are the threads its programs run with (tlm --threads): a
// one-thread measurement on a two-core machine is recorded, and prompted, as cores=1.
TEST(Hardware, DetectedCoresFollowTheThreadsKnob) {
  const int usable = usable_cores();
  EXPECT_EQ(detect_hardware().cores, std::min(compute_threads(), usable));
  set_compute_threads(1);
  EXPECT_EQ(detect_hardware().cores, 1);
  set_compute_threads(usable + 3);  // more threads than cores: the machine still has `usable`
  EXPECT_EQ(detect_hardware().cores, usable);
  set_compute_threads(usable);
}

TEST(Hardware, ParseOrderFreeButStrict) {
  HardwareInfo hw =
      parse_hardware_tokens({"l3=16m", "l2=1m", "l1=32k", "vec=8", "cores=8", "isa=avx2"});
  EXPECT_EQ(hardware_key(hw), "isa=avx2,cores=8,vec=8,l1=32k,l2=1m,l3=16m");

  auto message = [](const std::vector<std::string>& toks) -> std::string {
    try {
      parse_hardware_tokens(toks);
    } catch (const UserError& e) {
      return e.what();
    }
    return "no error";
  };
  std::vector<std::string> ok = hardware_tokens(hw);
  auto with = [&](int i, const std::string& t) {
    auto v = ok;
    v[i] = t;
    return v;
  };
  EXPECT_NE(message(with(0, "isa=neon")).find("unknown isa 'neon'"), std::string::npos);
  EXPECT_NE(message(with(1, "cores=0")).find("cores=0"), std::string::npos);
  EXPECT_NE(message(with(2, "vec=16")).find("disagree"), std::string::npos);
  EXPECT_NE(message(with(3, "l1=48k")).find("'48k'"), std::string::npos);
  EXPECT_NE(message(with(4, "gpu=1")).find("unknown hardware token 'gpu=1'"), std::string::npos);
  EXPECT_NE(message(with(5, "l2=1m")).find("appears twice"), std::string::npos);
  EXPECT_NE(message({"isa=avx2", "vec=8"}).find("lack 'cores='"), std::string::npos);
  EXPECT_THROW(parse_hardware_key(""), UserError);
}

}  // namespace
}  // namespace tlm
