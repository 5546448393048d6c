// The tokenizer between tensor sentences and the language model: a sentence's text tokens
// (sentence.h) become model token ids, and back. It is total: every string has an encoding, so
// no sentence of any task -- zoo, held-out or an ONNX file never seen -- produces <unk>.
//
// The model vocabulary is a list of *pieces*, each with a start variant (it begins a text token)
// and/or a continuation variant, so that ids decode back to the exact text tokens:
//
//   numbers      "0" .. "999", both variants. An integer run of digits is spelled as its
//                leading zeros ("0" each), then base-1000 groups: 50257 -> "50" ",257";
//                9223372036854775807 -> "9" ",223" ... (7 pieces)
//   groups       ",000" .. ",999", continuation only
//   big values   "/1" .. "/999" and "#0" .. "#1023", whole text tokens only: the spellings of
//                decision values above 999 (sentence.h, value_token)
//   words        the non-digit runs of the grammar (op, attribute, step kind names) and of the
//                prompts and headers of the training tasks ("_conv.d", "isa=avx", ...), both
//                variants; a non-digit run is split greedily into the longest known words
//   characters   every printable ASCII character, both variants; any other byte as "<0xNN>"
//                (continuation only; a text token that begins with one is preceded by "<w>")
//
// Every decision value is exactly one model token (the number "16", "-1", "/29", "#3"), so
// constrained decoding masks one step per value (value_id()).
//
//   TokenizerBuilder  collects the words of prompts and headers; build() adds the fixed pieces
//   Tokenizer         encode(text tokens) -> ids, decode(ids) -> text tokens, value_id(),
//                     hash() (stored in model checkpoints), to_json / from_json
//   save_tokenizer / load_tokenizer   DIR/tokenizer.json of a dataset (versioned)
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace tlm {

// Bump when the layout of tokenizer.json or the piece rules change.
constexpr int kTokenizerVersion = 1;

constexpr int kPadId = 0, kBosId = 1, kEosId = 2, kUnkId = 3, kWordStartId = 4;
constexpr int kSpecialCount = 5;  // <pad> <bos> <eos> <unk> <w>; <unk> is never produced

class Tokenizer {
 public:
  Tokenizer() = default;
  int size() const { return (int)id_text_.size(); }
  // The model ids of a sentence's text tokens, optionally framed by <bos> ... <eos>.
  std::vector<int> encode(const std::vector<std::string>& tokens, bool frame = false) const;
  // Ids of one text token (1 or more).
  void encode_token(const std::string& token, std::vector<int>* out) const;
  // The text tokens of ids (specials dropped). UserError for an id outside the vocabulary or a
  // continuation piece with no token to continue.
  std::vector<std::string> decode(const std::vector<int>& ids) const;
  // The one id of a decision value's text token (value_token()); InternalError when it is not a
  // single piece (every value token is, by construction).
  int value_id(const std::string& value_token) const;
  // A readable name of an id, e.g. "^tile" (start variant) or "_conv.d" (continuation).
  std::string id_name(int id) const;
  const std::string& hash() const { return hash_; }
  const std::vector<std::string>& words() const { return words_; }

  nlohmann::json to_json() const;
  // UserError (naming `what`) for a malformed description or another tokenizer version.
  static Tokenizer from_json(const nlohmann::json& j, const std::string& what);

 private:
  friend class TokenizerBuilder;
  void build(std::vector<std::string> words);
  void add_piece(const std::string& piece, bool start, bool cont);
  void encode_run(const std::string& run, bool digits, std::vector<int>* out, bool* first) const;

  std::vector<std::string> words_;    // the variable part, sorted
  std::vector<std::string> id_text_;  // per id: its piece
  std::vector<uint8_t> id_start_;     // per id: 1 = start variant
  std::unordered_map<std::string, int> start_id_, cont_id_;
  size_t max_word_ = 1;  // longest word, for greedy matching
  std::string hash_;
};

class TokenizerBuilder {
 public:
  // Collects the non-digit runs of text tokens (prompts, headers).
  void add_tokens(const std::vector<std::string>& tokens);
  // The grammar's fixed words (op and attribute names, step kinds, hardware keys) plus the
  // collected ones.
  Tokenizer build() const;

 private:
  std::set<std::string> words_;
};

// The non-digit runs of a text token ("f12_conv.d0" -> "f", "_conv.d").
std::vector<std::string> word_runs(const std::string& token);

// UserError when the file cannot be written.
void save_tokenizer(const Tokenizer& t, const std::string& path);
// UserError when the file is missing, malformed, or of another version (saying what to re-run).
Tokenizer load_tokenizer(const std::string& path);

}  // namespace tlm
