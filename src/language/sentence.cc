// Sentences: printing (TaskPrinter, make_sentence), parsing (parse_sentence) and generation
// decision by decision (SentenceWriter). The subgraph part lives in subgraph_tokens.cc.
#include "language/sentence.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace tlm {

std::vector<std::string> split_tokens(const std::string& text) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) i++;
    size_t j = i;
    while (j < text.size() && text[j] != ' ' && text[j] != '\t') j++;
    if (j > i) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string join_tokens(const std::vector<std::string>& tokens) {
  std::string s;
  for (const std::string& t : tokens) {
    if (!s.empty()) s += ' ';
    s += t;
  }
  return s;
}

std::vector<std::string> Sentence::to_tokens() const {
  std::vector<std::string> t = subgraph;
  t.insert(t.end(), hardware.begin(), hardware.end());
  t.insert(t.end(), decisions.begin(), decisions.end());
  return t;
}

std::string Sentence::to_text() const { return join_tokens(to_tokens()); }

std::vector<std::string> slot_header_tokens(const Slot& slot) {
  std::vector<std::string> t = split_tokens(slot_header(slot));
  TLM_CHECK(!t.empty()) << "empty slot header";
  t.push_back(kArrow);
  return t;
}

namespace {

// What a tile slot has left of its extent before position `pos`.
int64_t rest_of(const Slot& slot, const int64_t* slot_values, int pos) {
  int64_t rest = slot.extent;
  for (int i = 0; i < pos; i++) rest /= std::max<int64_t>(1, slot_values[i]);
  return rest;
}

bool parse_int(const std::string& s, int64_t* v) {
  if (s.empty() || s.size() > 19) return false;
  char* end = nullptr;
  errno = 0;
  long long x = std::strtoll(s.c_str(), &end, 10);
  if (errno || end != s.c_str() + s.size()) return false;
  *v = x;
  return true;
}

}  // namespace

std::string value_token(const Slot& slot, const int64_t* slot_values, int pos, int64_t v) {
  if (v >= -1 && v <= kMaxPlainValue) return std::to_string(v);
  TLM_CHECK(slot.kind == StepKind::Tile && v > 0)
      << "value " << v << " of " << slot_header(slot) << " has no spelling";
  const int64_t rest = rest_of(slot, slot_values, pos);
  TLM_CHECK(rest % v == 0) << "value " << v << " does not divide " << rest;
  if (rest / v <= kMaxPlainValue) return "/" + std::to_string(rest / v);
  std::vector<int64_t> d = divisors(rest);
  int64_t i = std::find(d.begin(), d.end(), v) - d.begin();
  TLM_USER_CHECK(i < kMaxRankValues)
      << "tile factor " << v << " of " << rest << " (" << slot_header(slot)
      << ") cannot be written in this tensor language";
  return "#" + std::to_string(i);
}

namespace {
// The options as a sentence spells them ("1 2 4 ... /1" for a 1024-wide reduction's tile).
std::string spelled_options(const Slot& slot, const int64_t* slot_values, int pos,
                            const std::vector<int64_t>& options) {
  std::string s;
  for (int64_t o : options) s += (s.empty() ? "" : " ") + value_token(slot, slot_values, pos, o);
  return s;
}
}  // namespace

bool value_from_token(const Slot& slot, const int64_t* slot_values, int pos,
                      const std::string& token, int64_t* v) {
  int64_t x = 0;
  if (token.size() >= 2 && (token[0] == '/' || token[0] == '#')) {
    if (slot.kind != StepKind::Tile || !parse_int(token.substr(1), &x) || x < 0) return false;
    const int64_t rest = rest_of(slot, slot_values, pos);
    if (token[0] == '/') {
      if (x < 1 || rest % x) return false;
      x = rest / x;
    } else {
      std::vector<int64_t> d = divisors(rest);
      if (x >= (int64_t)d.size()) return false;
      x = d[x];
    }
  } else if (!parse_int(token, &x) || x < -1 || x > kMaxPlainValue) {
    return false;  // larger values are spelled "/k" or "#i"
  }
  // A plain tile factor need not divide the unpadded extent (after a Pad decision the chain
  // divides the padded one); callers check every value against next_options().
  if (slot.kind == StepKind::Tile && x < 1) return false;
  if (value_token(slot, slot_values, pos, x) != token) return false;  // canonical spelling only
  *v = x;
  return true;
}

TaskPrinter::TaskPrinter(const Subgraph& sub, const HardwareInfo& hw, const TaskSpace& space)
    : space_(&space), hw_(hw) {
  prompt_ = subgraph_tokens(sub);
  n_subgraph_ = prompt_.size();
  std::vector<std::string> hwt = hardware_tokens(hw);
  prompt_.insert(prompt_.end(), hwt.begin(), hwt.end());
  prompt_text_ = join_tokens(prompt_);
  for (const Slot& s : space.slots) {
    headers_.push_back(slot_header_tokens(s));
    header_texts_.push_back(" " + join_tokens(headers_.back()));
  }
}

size_t TaskPrinter::sentence_size() const {
  size_t n = prompt_.size();
  for (size_t k = 0; k < headers_.size(); k++) n += headers_[k].size() + space_->slots[k].arity;
  return n;
}

Sentence TaskPrinter::sentence(const Program& p) const {
  TLM_CHECK(p.values.size() == program_length(*space_))
      << "program has " << p.values.size() << " values, the space " << program_length(*space_);
  Sentence s;
  s.subgraph.assign(prompt_.begin(), prompt_.begin() + n_subgraph_);
  s.hardware.assign(prompt_.begin() + n_subgraph_, prompt_.end());
  size_t v = 0;
  for (size_t k = 0; k < headers_.size(); k++) {
    s.decisions.insert(s.decisions.end(), headers_[k].begin(), headers_[k].end());
    const Slot& slot = space_->slots[k];
    for (int a = 0; a < slot.arity; a++)
      s.decisions.push_back(value_token(slot, &p.values[v - a], a, p.values[v])), v++;
  }
  return s;
}

void TaskPrinter::append_text(const int64_t* values, std::string* out) const {
  *out += prompt_text_;
  char buf[24];
  for (size_t k = 0; k < headers_.size(); k++) {
    *out += header_texts_[k];
    const Slot& slot = space_->slots[k];
    for (int a = 0; a < slot.arity; a++, values++) {
      if (*values >= -1 && *values <= kMaxPlainValue) {  // the common case, without allocating
        int n = std::snprintf(buf, sizeof(buf), " %lld", (long long)*values);
        out->append(buf, n);
      } else {
        *out += " " + value_token(slot, values - a, a, *values);
      }
    }
  }
}

std::string TaskPrinter::text(const Program& p) const {
  TLM_CHECK(p.values.size() == program_length(*space_))
      << "program has " << p.values.size() << " values, the space " << program_length(*space_);
  std::string s;
  append_text(p.values.data(), &s);
  return s;
}

Sentence make_sentence(const Subgraph& sub, const HardwareInfo& hw, const TaskSpace& space,
                       const Program& p) {
  return TaskPrinter(sub, hw, space).sentence(p);
}

namespace {

std::string where(const std::vector<std::string>& t, size_t i) {
  return "token " + std::to_string(i + 1) + " ('" + (i < t.size() ? t[i] : "<end>") + "')";
}

std::string options_text(const std::vector<int64_t>& options) {
  std::string s;
  for (size_t i = 0; i < options.size() && i < 32; i++)
    s += (i ? " " : "") + std::to_string(options[i]);
  if (options.size() > 32) s += " ...";
  return s;
}

}  // namespace

ParsedSentence parse_sentence(const std::string& text) {
  std::vector<std::string> t = split_tokens(text);
  size_t h = 0;
  while (h < t.size() && t[h].rfind("isa=", 0) != 0) h++;
  TLM_USER_CHECK(h < t.size()) << "sentence has no hardware tokens (isa=... cores=... vec=... "
                               << "l1=... l2=... l3=...) after the subgraph";
  TLM_USER_CHECK(t.size() >= h + 6) << where(t, t.size()) << ": the hardware part has 6 tokens";

  ParsedSentence ps;
  ps.sub = subgraph_from_tokens(std::vector<std::string>(t.begin(), t.begin() + h));
  std::vector<std::string> hwt(t.begin() + h, t.begin() + h + 6);
  try {
    ps.hw = parse_hardware_tokens(hwt);
  } catch (const UserError& e) {
    TLM_USER_ERROR() << "tokens " << h + 1 << "-" << h + 6 << ": " << e.what();
  }
  TLM_USER_CHECK(hardware_tokens(ps.hw) == hwt)
      << "tokens " << h + 1 << "-" << h + 6 << ": hardware tokens are not in canonical order ("
      << join_tokens(hardware_tokens(ps.hw)) << ")";
  ps.task = lower_subgraph(ps.sub);
  ps.space = build_space(ps.task, ps.hw);

  // Decisions: the headers must be exactly the space's, the values among next_options().
  size_t i = h + 6;
  std::vector<int64_t>& values = ps.program.values;
  for (const Slot& slot : ps.space.slots) {
    for (const std::string& want : slot_header_tokens(slot)) {
      TLM_USER_CHECK(i < t.size() && t[i] == want)
          << where(t, i) << ": expected '" << want << "' (the header '" << slot_header(slot)
          << " ->' of this task's next decision)";
      i++;
    }
    for (int a = 0; a < slot.arity; a++) {
      std::vector<int64_t> options = next_options(ps.space, values);
      const int64_t* slot_values = values.data() + values.size() - a;
      int64_t v = 0;
      bool spelled = i < t.size() && value_from_token(slot, slot_values, a, t[i], &v);
      auto it = spelled ? std::find(options.begin(), options.end(), v) : options.end();
      TLM_USER_CHECK(it != options.end())
          << where(t, i) << ": not a valid value for " << slot_header(slot) << " (value " << a + 1
          << " of " << slot.arity << "); valid: " << spelled_options(slot, slot_values, a, options);
      values.push_back(*it);
      i++;
    }
  }
  TLM_USER_CHECK(i == t.size()) << where(t, i) << ": the sentence goes on after its last decision";
  ps.sentence.subgraph.assign(t.begin(), t.begin() + h);
  ps.sentence.hardware = hwt;
  ps.sentence.decisions.assign(t.begin() + h + 6, t.end());
  return ps;
}

SentenceWriter::SentenceWriter(const TaskSpace& space, std::vector<std::string> prompt)
    : space_(&space), tokens_(std::move(prompt)) {
  open_slots();
}

void SentenceWriter::open_slots() {
  // Headers of slots that take no value are printed and passed over at once.
  while (slot_ < space_->slots.size() && pos_ == 0) {
    const std::vector<std::string> h = slot_header_tokens(space_->slots[slot_]);
    tokens_.insert(tokens_.end(), h.begin(), h.end());
    if (space_->slots[slot_].arity > 0) break;
    slot_++;
  }
}

const Slot& SentenceWriter::current_slot() const {
  TLM_CHECK(!done()) << "the sentence is complete";
  return space_->slots[slot_];
}

std::vector<int64_t> SentenceWriter::allowed_values() const {
  if (done()) return {};
  if (!cached_) {
    options_ = next_options(*space_, values_);
    cached_ = true;
  }
  return options_;
}

std::string SentenceWriter::token_of(int64_t v) const {
  return value_token(current_slot(), values_.data() + values_.size() - pos_, pos_, v);
}

std::vector<std::string> SentenceWriter::allowed_tokens() const {
  std::vector<std::string> out;
  for (int64_t v : allowed_values()) out.push_back(token_of(v));
  return out;
}

void SentenceWriter::choose_value(int64_t v) {
  TLM_USER_CHECK(!done()) << "the sentence is complete; no value can be added";
  std::vector<int64_t> allowed = allowed_values();
  TLM_USER_CHECK(std::find(allowed.begin(), allowed.end(), v) != allowed.end())
      << "value " << v << " is not valid for " << slot_header(current_slot())
      << "; valid: " << options_text(allowed);
  tokens_.push_back(token_of(v));
  values_.push_back(v);
  cached_ = false;
  if (++pos_ == space_->slots[slot_].arity) {
    pos_ = 0;
    slot_++;
    open_slots();
  }
}

void SentenceWriter::choose(const std::string& token) {
  TLM_USER_CHECK(!done()) << "the sentence is complete; no token can be added";
  for (int64_t v : allowed_values())
    if (token_of(v) == token) return choose_value(v);
  std::string valid;
  for (const std::string& t : allowed_tokens()) valid += (valid.empty() ? "" : " ") + t;
  TLM_USER_ERROR() << "token '" << token << "' is not valid for " << slot_header(current_slot())
                   << "; valid: " << valid;
}

Program SentenceWriter::program() const {
  TLM_CHECK(done()) << "the sentence is not complete: " << values_.size() << " values chosen";
  return Program{values_};
}

}  // namespace tlm
