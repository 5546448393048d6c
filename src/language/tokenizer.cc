// Tokenizer: the fixed pieces (numbers, groups, big values, characters, bytes), the words, the
// greedy split of a text token into pieces, and the file format.
#include "language/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

#include "graph/op.h"
#include "hardware/hardware.h"
#include "language/sentence.h"
#include "space/space.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/tensor.h"

namespace tlm {
namespace {

constexpr const char* kSpecials[kSpecialCount] = {"<pad>", "<bos>", "<eos>", "<unk>", "<w>"};
constexpr const char* kFormat = "tlm-tokenizer";

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool printable(unsigned char c) { return c > 0x20 && c < 0x7f; }

std::string byte_piece(unsigned char c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "<0x%02X>", c);
  return buf;
}

std::string group_piece(int g) {
  char buf[8];
  std::snprintf(buf, sizeof buf, ",%03d", g);
  return buf;
}

}  // namespace

std::vector<std::string> word_runs(const std::string& token) {
  std::vector<std::string> runs;
  size_t i = 0;
  while (i < token.size()) {
    size_t j = i;
    bool digits = is_digit(token[i]);
    while (j < token.size() && is_digit(token[j]) == digits) j++;
    if (!digits) runs.push_back(token.substr(i, j - i));
    i = j;
  }
  return runs;
}

void Tokenizer::add_piece(const std::string& piece, bool start, bool cont) {
  if (start) {
    TLM_CHECK(!start_id_.count(piece)) << "duplicate piece " << piece;
    start_id_[piece] = (int)id_text_.size();
    id_text_.push_back(piece);
    id_start_.push_back(1);
  }
  if (cont) {
    TLM_CHECK(!cont_id_.count(piece)) << "duplicate piece " << piece;
    cont_id_[piece] = (int)id_text_.size();
    id_text_.push_back(piece);
    id_start_.push_back(0);
  }
}

void Tokenizer::build(std::vector<std::string> words) {
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  // Single characters are pieces of their own; a word is longer.
  words.erase(
      std::remove_if(words.begin(), words.end(), [](const std::string& w) { return w.size() < 2; }),
      words.end());
  words_ = words;
  id_text_.clear();
  id_start_.clear();
  start_id_.clear();
  cont_id_.clear();
  for (const char* s : kSpecials) {
    id_text_.push_back(s);
    id_start_.push_back(0);
  }
  for (int v = 0; v <= 999; v++) add_piece(std::to_string(v), true, true);
  for (int g = 0; g <= 999; g++) add_piece(group_piece(g), false, true);
  add_piece("-1", true, false);
  for (int k = 1; k <= kMaxPlainValue; k++) add_piece("/" + std::to_string(k), true, false);
  for (int i = 0; i < kMaxRankValues; i++) add_piece("#" + std::to_string(i), true, false);
  for (int c = 0; c < 256; c++) {
    if (is_digit((char)c)) continue;  // digits are numbers
    if (printable((unsigned char)c))
      add_piece(std::string(1, (char)c), true, true);
    else
      add_piece(byte_piece((unsigned char)c), false, true);
  }
  max_word_ = 1;
  for (const std::string& w : words_) {
    // A word that is also a fixed piece ("-1") keeps the fixed piece's variants.
    bool start = !start_id_.count(w), cont = !cont_id_.count(w);
    add_piece(w, start, cont);
    max_word_ = std::max(max_word_, w.size());
  }
  // The hash names everything that decides the ids.
  std::string all = std::to_string(kTokenizerVersion);
  for (size_t i = 0; i < id_text_.size(); i++) all += (id_start_[i] ? "\n^" : "\n") + id_text_[i];
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", (unsigned long long)fnv1a(all));
  hash_ = buf;
}

void Tokenizer::encode_run(const std::string& run, bool digits, std::vector<int>* out,
                           bool* first) const {
  auto emit = [&](const std::string& piece) {
    if (*first) {
      auto it = start_id_.find(piece);
      if (it == start_id_.end()) {
        out->push_back(kWordStartId);
      } else {
        out->push_back(it->second);
        *first = false;
        return;
      }
      *first = false;
    }
    auto it = cont_id_.find(piece);
    TLM_CHECK(it != cont_id_.end()) << "no continuation piece '" << piece << "'";
    out->push_back(it->second);
  };
  if (digits) {
    size_t i = 0;
    while (i + 1 < run.size() && run[i] == '0') {  // leading zeros, one piece each
      emit("0");
      i++;
    }
    std::string rest = run.substr(i);
    size_t head = rest.size() % 3 == 0 ? 3 : rest.size() % 3;
    emit(std::to_string(std::stoi(rest.substr(0, head))));
    for (size_t j = head; j < rest.size(); j += 3) emit("," + rest.substr(j, 3));
    return;
  }
  size_t i = 0;
  while (i < run.size()) {
    size_t n = std::min(max_word_, run.size() - i);
    for (; n >= 2; n--)
      if (cont_id_.count(run.substr(i, n)) || start_id_.count(run.substr(i, n))) break;
    if (n >= 2) {
      std::string w = run.substr(i, n);
      // A start-only word ("/3" never happens inside a run) must not continue a token: split.
      if (*first || cont_id_.count(w)) {
        emit(w);
        i += n;
        continue;
      }
    }
    unsigned char c = (unsigned char)run[i];
    emit(printable(c) ? std::string(1, (char)c) : byte_piece(c));
    i++;
  }
}

void Tokenizer::encode_token(const std::string& token, std::vector<int>* out) const {
  TLM_USER_CHECK(!token.empty()) << "tokenizer: empty text token";
  TLM_CHECK(!id_text_.empty()) << "tokenizer used before it was built";
  auto whole = start_id_.find(token);
  if (whole != start_id_.end()) {
    out->push_back(whole->second);
    return;
  }
  bool first = true;
  size_t i = 0;
  while (i < token.size()) {
    size_t j = i;
    bool digits = is_digit(token[i]);
    while (j < token.size() && is_digit(token[j]) == digits) j++;
    encode_run(token.substr(i, j - i), digits, out, &first);
    i = j;
  }
}

std::vector<int> Tokenizer::encode(const std::vector<std::string>& tokens, bool frame) const {
  std::vector<int> ids;
  ids.reserve(tokens.size() + 2);
  if (frame) ids.push_back(kBosId);
  for (const std::string& t : tokens) encode_token(t, &ids);
  if (frame) ids.push_back(kEosId);
  return ids;
}

std::vector<std::string> Tokenizer::decode(const std::vector<int>& ids) const {
  std::vector<std::string> out;
  bool open = false;  // <w> seen: the next piece starts a token
  for (size_t k = 0; k < ids.size(); k++) {
    int id = ids[k];
    TLM_USER_CHECK(id >= 0 && id < size())
        << "token id " << id << " is outside the vocabulary of " << size();
    if (id < kSpecialCount) {
      open = id == kWordStartId;
      continue;
    }
    std::string piece = id_text_[id];
    if (piece.size() == 6 && piece.rfind("<0x", 0) == 0)
      piece = std::string(1, (char)std::stoi(piece.substr(3, 2), nullptr, 16));
    else if (piece.size() == 4 && piece[0] == ',' && is_digit(piece[1]))
      piece = piece.substr(1);
    if (id_start_[id] || open || out.empty()) {
      TLM_USER_CHECK(id_start_[id] || open)
          << "token id " << id << " ('" << id_text_[id] << "') continues nothing";
      out.push_back(piece);
    } else {
      out.back() += piece;
    }
    open = false;
  }
  return out;
}

int Tokenizer::value_id(const std::string& value_token) const {
  auto it = start_id_.find(value_token);
  TLM_CHECK(it != start_id_.end())
      << "decision value '" << value_token << "' is not a single piece of the tokenizer";
  return it->second;
}

std::string Tokenizer::id_name(int id) const {
  if (id < 0 || id >= size()) return "<bad " + std::to_string(id) + ">";
  return (id_start_[id] ? "^" : "") + id_text_[id];
}

nlohmann::json Tokenizer::to_json() const {
  return {{"format", kFormat},
          {"version", kTokenizerVersion},
          {"language_version", kLanguageVersion},
          {"size", size()},
          {"hash", hash_},
          {"words", words_}};
}

Tokenizer Tokenizer::from_json(const nlohmann::json& j, const std::string& what) {
  const std::string fix = "; re-create it with this tlm (`tlm sample`, then `tlm train`)";
  TLM_USER_CHECK(j.is_object() && j.value("format", "") == kFormat)
      << what << " is not a tlm tokenizer";
  TLM_USER_CHECK(j.value("version", -1) == kTokenizerVersion)
      << what << ": tokenizer version " << j.value("version", -1) << ", this tlm reads version "
      << kTokenizerVersion << fix;
  TLM_USER_CHECK(j.value("language_version", -1) == kLanguageVersion)
      << what << ": tokenizer of tensor-language version " << j.value("language_version", -1)
      << ", this tlm speaks version " << kLanguageVersion << fix;
  Tokenizer t;
  try {
    t.build(j.at("words").get<std::vector<std::string>>());
  } catch (const nlohmann::json::exception& e) {
    TLM_USER_ERROR() << what << ": malformed tokenizer: " << e.what();
  }
  TLM_USER_CHECK(j.value("hash", "") == t.hash() && j.value("size", -1) == t.size())
      << what << ": the tokenizer's hash or size does not match its words (corrupt file?)" << fix;
  return t;
}

void TokenizerBuilder::add_tokens(const std::vector<std::string>& tokens) {
  for (const std::string& t : tokens)
    for (std::string& w : word_runs(t)) words_.insert(std::move(w));
}

Tokenizer TokenizerBuilder::build() const {
  std::vector<std::string> words(words_.begin(), words_.end());
  // The grammar's own words, so that a task with an operator the training set never had still
  // reads as words, not characters.
  for (int i = 0; i < kOpCount; i++) words.push_back(op_name((Op)i));
  for (DType d : {DType::F32, DType::I64, DType::Bool}) words.push_back(dtype_name(d));
  for (const std::string& a : attribute_names()) words.push_back(a);
  for (int k = 0; k < kStepKindCount; k++) words.push_back(step_kind_name((StepKind)k));
  for (const char* w : {"scalar", "->", "isa=", "cores=", "vec=", "avx", "sse", "neon"})
    words.push_back(w);
  std::vector<std::string> runs;
  for (const std::string& w : words)
    for (std::string& r : word_runs(w)) runs.push_back(std::move(r));
  Tokenizer t;
  t.build(runs);
  return t;
}

void save_tokenizer(const Tokenizer& t, const std::string& path) {
  std::ofstream f(path);
  TLM_USER_CHECK(f.good()) << "cannot write " << path;
  f << t.to_json().dump(1) << "\n";
  TLM_USER_CHECK(f.good()) << "error while writing " << path;
}

Tokenizer load_tokenizer(const std::string& path) {
  std::ifstream f(path);
  TLM_USER_CHECK(f.good()) << "cannot read tokenizer " << path;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(f);
  } catch (const nlohmann::json::exception& e) {
    TLM_USER_ERROR() << path << " is not JSON: " << e.what();
  }
  return Tokenizer::from_json(j, path);
}

}  // namespace tlm
