// Small deterministic hashes: the same input gives the same value on every machine and run, so
// seeds derived from them keep sampling and weights reproducible.
//
//   splitmix64(x)  SplitMix64's finalizer: decorrelates consecutive seeds (x, x+1, ...)
//   fnv1a(s)       64-bit FNV-1a of a string: a stable seed or key from a name
//   hex_hash(s)    fnv1a(s) as 16 hex digits: how checkpoints list the tasks they learned from
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace tlm {

inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

inline std::string hex_hash(const std::string& s) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)fnv1a(s));
  return buf;
}

}  // namespace tlm
