// The tensor language (paper §4.2): every program of a task's space is exactly one sentence,
//
//   <subgraph tokens> <hardware tokens> <decision tokens>
//
// and a sentence parses back to the same (subgraph, hardware, program). Equality and
// de-duplication of programs are defined on this canonical text (STYLE.md habit 1).
//
// The three parts:
//   subgraph tokens   subgraph_tokens(sub): the task's input declarations, then one op per node
//                     with inputs by position, attributes and output type (grammar in
//                     subgraph_tokens.cc); subgraph_from_tokens() rebuilds it with the identical
//                     partition key
//   hardware tokens   hardware_tokens(hw) (hardware/hardware.h):
//                     "isa=avx512 cores=2 vec=16 l1=32k l2=2m l3=64m"
//   decision tokens   per slot of the space, in slot order: the header the framework prints
//                     itself (slot_header() split at spaces, then "->"), then the slot's values,
//                     one token per value (value_token): decimal from -1 to 999 ("16"); a tile
//                     factor above 999 as "/k" (k = what the slot has left of the extent divided
//                     by the factor: "/1" is all of it) or, when k > 999 too, "#i" (its index
//                     among the divisors of what is left). So every value is one model token
//                     (language/tokenizer.h) whatever the extents.
//
// The functions:
//   parse_sentence(text)  rebuilds subgraph, hardware, space (lower + build_space) and checks
//                         every value against next_options(): UserError naming the position
//   TaskPrinter           prints the sentences of one task fast (the sampler's hot loop)
//   SentenceWriter        Algorithm 2 of the paper: prints the headers, exposes the allowed value
//                         tokens of the next position and accepts the chosen one
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "partition/partition.h"
#include "space/space.h"

namespace tlm {

// Bump when the grammar of sentences changes; vocabularies and datasets record it and readers
// reject other versions.
constexpr int kLanguageVersion = 3;  // 2: values above 999 spelled "/k" or "#i"; 3: pad slots

// The token that ends every slot header: the model predicts value tokens after it.
constexpr const char* kArrow = "->";

std::vector<std::string> subgraph_tokens(const Subgraph& sub);
// UserError naming the token (1-based position in `tokens`) when the tokens do not describe a
// canonical subgraph: unknown op or attribute, bad number, shape inference failure, a printed
// output type that differs from the inferred one, or a non-canonical spelling.
// With `reordered`: a subgraph spelled in an operand order the graph no longer produces (a weight
// first in Add or Mul, written before session 48: graph/passes.h, canonicalize_operands) is read
// and returned in the canonical order; *reordered says whether it was.
Subgraph subgraph_from_tokens(const std::vector<std::string>& tokens, bool* reordered = nullptr);

// Splits text at runs of spaces/tabs (a sentence has no other separator).
std::vector<std::string> split_tokens(const std::string& text);
std::string join_tokens(const std::vector<std::string>& tokens);

struct Sentence {
  std::vector<std::string> subgraph;   // subgraph_tokens()
  std::vector<std::string> hardware;   // hardware_tokens()
  std::vector<std::string> decisions;  // headers and values, slot by slot
  std::vector<std::string> to_tokens() const;
  std::string to_text() const;  // the canonical form: tokens joined by single spaces
  size_t size() const { return subgraph.size() + hardware.size() + decisions.size(); }
};

// A slot's header tokens: slot_header() split at spaces, then kArrow.
std::vector<std::string> slot_header_tokens(const Slot& slot);

// Decision values from -1 to kMaxPlainValue print as decimal; larger tile factors as "/k"
// (k <= kMaxPlainValue) or "#i" (i < kMaxRankValues).
constexpr int kMaxPlainValue = 999;
constexpr int kMaxRankValues = 1024;
// The canonical token of value `v` at position `pos` of `slot`, whose earlier values are
// slot_values[0..pos). UserError for a value no token can spell (a tile extent with more than
// kMaxRankValues divisors above 999 would need it; none exists below 2^31).
std::string value_token(const Slot& slot, const int64_t* slot_values, int pos, int64_t v);
// The inverse: false when `token` spells no value at that position (a non-canonical spelling
// such as "+16" or "/1" for a factor below 1000 included).
bool value_from_token(const Slot& slot, const int64_t* slot_values, int pos,
                      const std::string& token, int64_t* v);

// The names of every attribute of the canonical IR (docs/ir.md), the words the tokenizer keeps.
const std::vector<std::string>& attribute_names();

// The printing side of one task, computed once and reused for every program of the task (the
// sampler prints hundreds of thousands of sentences from a handful of these).
class TaskPrinter {
 public:
  TaskPrinter(const Subgraph& sub, const HardwareInfo& hw, const TaskSpace& space);
  // Subgraph and hardware tokens: the prompt every sentence of this task starts with.
  const std::vector<std::string>& prompt() const { return prompt_; }
  size_t prompt_subgraph_size() const { return n_subgraph_; }
  const std::vector<std::string>& header(size_t slot) const { return headers_.at(slot); }
  const TaskSpace& space() const { return *space_; }
  const HardwareInfo& hardware() const { return hw_; }  // the prompt's machine
  // Total tokens of every sentence of this task (all programs have the same length).
  size_t sentence_size() const;

  Sentence sentence(const Program& p) const;
  std::string text(const Program& p) const;  // == sentence(p).to_text(), without the vectors
  // Appends text(values) to *out (values: program_length() of them).
  void append_text(const int64_t* values, std::string* out) const;

 private:
  const TaskSpace* space_;
  HardwareInfo hw_;
  std::vector<std::string> prompt_;
  size_t n_subgraph_ = 0;
  std::vector<std::vector<std::string>> headers_;
  std::string prompt_text_;                // prompt tokens joined, no trailing space
  std::vector<std::string> header_texts_;  // " tile f1_conv.d0 56 ->" per slot
};

Sentence make_sentence(const Subgraph& sub, const HardwareInfo& hw, const TaskSpace& space,
                       const Program& p);

// Everything a sentence determines. `task` is freshly lowered and unscheduled: apply_program()
// may be called on it once.
struct ParsedSentence {
  Subgraph sub;
  HardwareInfo hw;
  LoweredTask task;
  TaskSpace space;
  Program program;
  Sentence sentence;  // the canonical sentence; equal to the parsed text token for token
};
// UserError naming the 1-based token position on any mismatch.
ParsedSentence parse_sentence(const std::string& text);

// Generates one sentence decision by decision (paper Algorithm 2, Figure 7). The writer prints
// every header itself; the caller (a language model, a search) only picks values:
//
//   SentenceWriter w(space, printer.prompt());
//   while (!w.done()) w.choose(pick_one_of(w.allowed_tokens(), w.tokens()));
//   Program p = w.program();
//
// tokens() always ends where a value token is expected (after "->" or after a value of a slot
// with arity > 1), so tokens() is the model's prompt at every step.
class SentenceWriter {
 public:
  SentenceWriter(const TaskSpace& space, std::vector<std::string> prompt);
  bool done() const { return slot_ >= space_->slots.size(); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  // The slot the next value belongs to and the value's index within it (done() must be false).
  const Slot& current_slot() const;
  int position_in_slot() const { return pos_; }
  // The token of value v at the current position (value_token with this slot's context).
  std::string token_of(int64_t v) const;
  std::vector<int64_t> allowed_values() const;
  std::vector<std::string> allowed_tokens() const;
  // UserError when the token/value is not among the allowed ones (or done()).
  void choose(const std::string& token);
  void choose_value(int64_t v);
  const std::vector<int64_t>& values() const { return values_; }
  Program program() const;  // InternalError unless done()

 private:
  void open_slots();  // appends headers up to the next slot that takes a value
  const TaskSpace* space_;
  std::vector<std::string> tokens_;
  std::vector<int64_t> values_;
  size_t slot_ = 0;
  int pos_ = 0;
  mutable bool cached_ = false;
  mutable std::vector<int64_t> options_;
};

}  // namespace tlm
