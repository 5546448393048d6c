// Vocabulary: building from token counts, the JSON file, encode/decode.
#include "language/vocab.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "language/sentence.h"
#include "support/error.h"

namespace tlm {

using nlohmann::json;

namespace {
constexpr const char* kFormat = "tlm-vocab";
}  // namespace

Vocab::Vocab() {
  for (const char* s : kSpecialTokens) add(s, 0);
}

void Vocab::add(const std::string& token, int64_t count) {
  TLM_CHECK(!ids_.count(token)) << "token '" << token << "' twice in a vocabulary";
  ids_[token] = (int)tokens_.size();
  tokens_.push_back(token);
  counts_.push_back(count);
}

int Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnkId : it->second;
}

const std::string& Vocab::token(int id) const {
  TLM_USER_CHECK(id >= 0 && id < size())
      << "token id " << id << " is outside the vocabulary (" << size() << " tokens)";
  return tokens_[id];
}

std::vector<int> Vocab::encode(const std::vector<std::string>& tokens, bool frame) const {
  std::vector<int> ids;
  ids.reserve(tokens.size() + 2);
  if (frame) ids.push_back(kBosId);
  for (const std::string& t : tokens) ids.push_back(id(t));
  if (frame) ids.push_back(kEosId);
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int>& ids) const {
  std::vector<std::string> out;
  for (int i : ids) {
    const std::string& t = token(i);
    if (i >= kSpecialCount) out.push_back(t);
  }
  return out;
}

void VocabBuilder::add_tokens(const std::vector<std::string>& tokens, int64_t times) {
  for (const std::string& t : tokens) counts_[t] += times;
}

void VocabBuilder::add_sentence(const std::string& text) { add_tokens(split_tokens(text)); }

void VocabBuilder::merge(const VocabBuilder& other) {
  for (const auto& [t, c] : other.counts_) counts_[t] += c;
}

Vocab VocabBuilder::build() const {
  Vocab v;
  for (const auto& [t, c] : counts_) {
    TLM_CHECK(!v.contains(t)) << "corpus token '" << t << "' collides with a special token";
    v.add(t, c);
  }
  return v;
}

void save_vocab(const Vocab& v, const std::string& path) {
  json j;
  j["format"] = kFormat;
  j["version"] = kVocabVersion;
  j["language_version"] = kLanguageVersion;
  j["special"] = std::vector<std::string>(kSpecialTokens, kSpecialTokens + kSpecialCount);
  j["tokens"] = v.tokens();
  std::vector<int64_t> counts;
  for (int i = 0; i < v.size(); i++) counts.push_back(v.count(i));
  j["counts"] = counts;
  std::ofstream f(path);
  TLM_USER_CHECK(f.good()) << "cannot write vocabulary file " << path;
  f << j.dump(1) << "\n";
  TLM_USER_CHECK(f.good()) << "error while writing vocabulary file " << path;
}

Vocab load_vocab(const std::string& path) {
  const std::string fix =
      "; rebuild it with this tlm: `tlm sample --out DIR ...` writes DIR/vocab.json";
  std::ifstream f(path);
  TLM_USER_CHECK(f.good()) << "cannot read vocabulary file " << path;
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << "vocabulary file " << path << " is not JSON: " << e.what();
  }
  TLM_USER_CHECK(j.is_object() && j.value("format", "") == kFormat)
      << path << " is not a tlm vocabulary (no \"format\": \"" << kFormat << "\")";
  TLM_USER_CHECK(j.contains("version") && j["version"].is_number_integer())
      << path << ": vocabulary has no integer 'version'" << fix;
  TLM_USER_CHECK(j["version"].get<int64_t>() == kVocabVersion)
      << path << ": vocabulary format version " << j["version"].dump()
      << ", this tlm reads version " << kVocabVersion << fix;
  TLM_USER_CHECK(j.contains("language_version") && j["language_version"].is_number_integer() &&
                 j["language_version"].get<int64_t>() == kLanguageVersion)
      << path << ": vocabulary of tensor-language version "
      << (j.contains("language_version") ? j["language_version"].dump() : "none")
      << ", this tlm writes sentences of version " << kLanguageVersion << fix;
  try {
    std::vector<std::string> special = j.at("special").get<std::vector<std::string>>();
    std::vector<std::string> tokens = j.at("tokens").get<std::vector<std::string>>();
    std::vector<int64_t> counts = j.at("counts").get<std::vector<int64_t>>();
    TLM_USER_CHECK(special ==
                   std::vector<std::string>(kSpecialTokens, kSpecialTokens + kSpecialCount))
        << path << ": special tokens differ from <pad> <bos> <eos> <unk>" << fix;
    TLM_USER_CHECK(tokens.size() == counts.size() && tokens.size() >= (size_t)kSpecialCount)
        << path << ": 'tokens' and 'counts' disagree" << fix;
    Vocab v;
    for (size_t i = 0; i < tokens.size(); i++) {
      if (i < (size_t)kSpecialCount) {
        TLM_USER_CHECK(tokens[i] == kSpecialTokens[i])
            << path << ": token " << i << " must be " << kSpecialTokens[i] << fix;
        continue;
      }
      TLM_USER_CHECK(!v.contains(tokens[i]))
          << path << ": token '" << tokens[i] << "' appears twice" << fix;
      TLM_USER_CHECK(!tokens[i].empty() && tokens[i].find_first_of(" \t\n") == std::string::npos)
          << path << ": token " << i << " is empty or contains a space" << fix;
      v.add(tokens[i], counts[i]);
    }
    return v;
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << ": malformed vocabulary: " << e.what() << fix;
  }
  return Vocab();
}

}  // namespace tlm
