// Sentences: printing (TaskPrinter, make_sentence), parsing (parse_sentence) and generation
// decision by decision (SentenceWriter). The subgraph part lives in subgraph_tokens.cc.
#include "language/sentence.h"

#include <algorithm>

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

std::string value_token(int64_t v) { return std::to_string(v); }

TaskPrinter::TaskPrinter(const Subgraph& sub, const HardwareInfo& hw, const TaskSpace& space)
    : space_(&space) {
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
    for (int a = 0; a < space_->slots[k].arity; a++)
      s.decisions.push_back(value_token(p.values[v++]));
  }
  return s;
}

void TaskPrinter::append_text(const int64_t* values, std::string* out) const {
  *out += prompt_text_;
  char buf[24];
  for (size_t k = 0; k < headers_.size(); k++) {
    *out += header_texts_[k];
    for (int a = 0; a < space_->slots[k].arity; a++) {
      int n = std::snprintf(buf, sizeof(buf), " %lld", (long long)*values++);
      out->append(buf, n);
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
    s += (i ? " " : "") + value_token(options[i]);
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
      auto it = std::find_if(options.begin(), options.end(),
                             [&](int64_t o) { return i < t.size() && value_token(o) == t[i]; });
      TLM_USER_CHECK(it != options.end())
          << where(t, i) << ": not a valid value for " << slot_header(slot) << " (value " << a + 1
          << " of " << slot.arity << "); valid: " << options_text(options);
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

std::vector<std::string> SentenceWriter::allowed_tokens() const {
  std::vector<std::string> out;
  for (int64_t v : allowed_values()) out.push_back(value_token(v));
  return out;
}

void SentenceWriter::choose_value(int64_t v) {
  TLM_USER_CHECK(!done()) << "the sentence is complete; no value can be added";
  std::vector<int64_t> allowed = allowed_values();
  TLM_USER_CHECK(std::find(allowed.begin(), allowed.end(), v) != allowed.end())
      << "value " << v << " is not valid for " << slot_header(current_slot())
      << "; valid: " << options_text(allowed);
  values_.push_back(v);
  tokens_.push_back(value_token(v));
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
    if (value_token(v) == token) return choose_value(v);
  TLM_USER_ERROR() << "token '" << token << "' is not valid for " << slot_header(current_slot())
                   << "; valid: " << options_text(allowed_values());
}

Program SentenceWriter::program() const {
  TLM_CHECK(done()) << "the sentence is not complete: " << values_.size() << " values chosen";
  return Program{values_};
}

}  // namespace tlm
