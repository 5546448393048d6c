// The vocabulary of the tensor language: every token of a sampled corpus gets an id (paper §4.3:
// "build as large a vocabulary as possible": a value never seen in sampling can never be
// generated). Ids 0-3 are the special tokens <pad> <bos> <eos> <unk>; the corpus tokens follow
// in byte order, so the same corpus always gives the same ids.
//
//   VocabBuilder         counts tokens (add_sentence / add_tokens with a repeat count); build()
//   save_vocab(v, path)  JSON: {"format": "tlm-vocab", "version", "language_version",
//                        "special": [...], "tokens": [...], "counts": [...]}
//   load_vocab(path)     UserError for another format/language version, saying what to re-run
//   encode / decode      tokens <-> ids (unknown tokens -> <unk>)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace tlm {

// Bump when the file layout changes. The grammar's version (kLanguageVersion) is stored too.
constexpr int kVocabVersion = 1;

constexpr int kPadId = 0, kBosId = 1, kEosId = 2, kUnkId = 3;
constexpr const char* kSpecialTokens[] = {"<pad>", "<bos>", "<eos>", "<unk>"};
constexpr int kSpecialCount = 4;

class Vocab {
 public:
  Vocab();  // only the special tokens
  int size() const { return (int)tokens_.size(); }
  int id(const std::string& token) const;  // kUnkId when absent
  bool contains(const std::string& token) const { return ids_.count(token) > 0; }
  const std::string& token(int id) const;                 // UserError for an id outside [0, size())
  int64_t count(int id) const { return counts_.at(id); }  // corpus occurrences (0 for specials)
  const std::vector<std::string>& tokens() const { return tokens_; }

  // Ids of the tokens, optionally framed by <bos> ... <eos>.
  std::vector<int> encode(const std::vector<std::string>& tokens, bool frame = false) const;
  // Tokens of the ids, special tokens dropped.
  std::vector<std::string> decode(const std::vector<int>& ids) const;

 private:
  friend class VocabBuilder;
  friend Vocab load_vocab(const std::string& path);
  void add(const std::string& token, int64_t count);
  std::vector<std::string> tokens_;
  std::vector<int64_t> counts_;
  std::unordered_map<std::string, int> ids_;
};

class VocabBuilder {
 public:
  void add_tokens(const std::vector<std::string>& tokens, int64_t times = 1);
  void add_token(const std::string& token, int64_t times = 1) { counts_[token] += times; }
  void add_sentence(const std::string& text);
  void merge(const VocabBuilder& other);
  Vocab build() const;

 private:
  std::map<std::string, int64_t> counts_;
};

// UserError when the file cannot be written.
void save_vocab(const Vocab& v, const std::string& path);
// UserError when the file is missing, malformed, or of another version.
Vocab load_vocab(const std::string& path);

}  // namespace tlm
