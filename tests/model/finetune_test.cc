// Fine-tuning from a base checkpoint: a tiny model fine-tuned on a few demonstrations assigns
// them a lower loss than the base did; the result loads like any model and says where it came
// from; no demonstration is a UserError; the base's weights are the start (a second run from the
// same base and data gives the same model).
#include "model/finetune.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "fixtures/tiny_base.h"
#include "language/sentence.h"
#include "language/workloads.h"
#include "model/data.h"
#include "model/tlm_model.h"
#include "support/error.h"

namespace tlm {
namespace {

std::string path(const std::string& name) {
  return std::string(TLM_BINARY_DIR) + "/finetune_test_" + std::to_string(getpid()) + "_" + name;
}

void remove_all(const std::string& p) {
  for (const char* s : {"", ".last", ".csv"}) std::remove((p + s).c_str());
}

// A tiny untrained base with the grammar's tokenizer.
std::string make_base() { return write_tiny_base(path("base.ckpt")); }

// Six random programs of one small task: the demonstrations.
std::vector<Demonstration> demos() {
  const Subgraph sub = workload_tasks("bert-tiny:seq=16").at(1);
  const HardwareInfo hw = parse_hardware_key("isa=avx2,cores=1,vec=8,l1=32k,l2=512k,l3=8m");
  LoweredTask lt = lower_subgraph(sub);
  TaskSpace space = build_space(lt, hw);
  TaskPrinter printer(sub, hw, space);
  std::mt19937_64 rng(5);
  std::vector<Demonstration> out;
  for (int i = 0; i < 6; i++) out.push_back({printer.text(sample_program(space, rng)), 1, "t"});
  return out;
}

FinetuneOptions options(const std::string& out) {
  FinetuneOptions o;
  o.epochs = 20;
  o.train.batch_size = 6;
  o.train.lr = 5e-3;
  o.train.out_path = out;
  return o;
}

class FinetuneTest : public ::testing::Test {
 protected:
  void SetUp() override { set_model_threads(1); }
};

TEST_F(FinetuneTest, LowersTheLossOfTheDemonstrations) {
  Tokenizer tok = TokenizerBuilder().build();
  const std::string base = make_base(), out = path("ft.ckpt");
  remove_all(out);
  const std::vector<Demonstration> d = demos();
  FinetuneReport r = finetune_from_base(base, d, options(out));
  EXPECT_EQ(r.demonstrations, 6);
  EXPECT_EQ(r.train_sequences, 6);
  EXPECT_EQ(r.steps, 20);
  EXPECT_FALSE(r.resumed);
  EXPECT_LT(r.best_val_loss, r.base_val_loss * 0.7) << r.base_val_loss;

  // The saved model is the fine-tuned one: lower loss on the demonstrations than the base.
  TlmModel ft = load_tlm_model(out), b = load_tlm_model(base);
  std::vector<TokenSeq> seqs;
  for (const Demonstration& x : d)
    seqs.push_back(encode_sentence(tok, split_tokens(x.sentence), LossOn::Values));
  const double ft_loss = evaluate_loss(*ft.lm, seqs, 8), base_loss = evaluate_loss(*b.lm, seqs, 8);
  EXPECT_NEAR(ft_loss, r.best_val_loss, 1e-4);
  EXPECT_NEAR(base_loss, r.base_val_loss, 1e-4);
  EXPECT_EQ(ft.info.stage, "finetune");
  EXPECT_EQ(ft.info.extra["finetune"]["base_hash"], checkpoint_file_hash(base));
  EXPECT_EQ(ft.info.extra["finetune"]["demonstrations"], 6);

  // Always from the base: the same run again (no .last) gives the same weights.
  remove_all(out);
  FinetuneReport again = finetune_from_base(base, d, options(out));
  EXPECT_DOUBLE_EQ(again.best_val_loss, r.best_val_loss);
  remove_all(out);
  std::remove(base.c_str());
}

TEST_F(FinetuneTest, CopiesAndValidationGroups) {
  const std::string base = make_base(), out = path("groups.ckpt");
  remove_all(out);
  std::vector<Demonstration> d = demos();
  for (size_t i = 0; i < d.size(); i++) d[i].group = "g" + std::to_string(i), d[i].copies = 2;
  FinetuneOptions o = options(out);
  o.epochs = 1;
  FinetuneReport r = finetune_from_base(base, d, o);
  EXPECT_EQ(r.val_sequences, 1);  // one group of six held out
  EXPECT_EQ(r.train_sequences, 10);
  EXPECT_EQ(r.steps, 2);
  remove_all(out);
  std::remove(base.c_str());
}

TEST_F(FinetuneTest, NoDemonstrationIsAUserError) {
  const std::string base = make_base();
  try {
    finetune_from_base(base, {}, options(path("none.ckpt")));
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no demonstration"), std::string::npos) << e.what();
  }
  std::remove(base.c_str());
}

}  // namespace
}  // namespace tlm
