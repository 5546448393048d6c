// The zero-shot ranker (tune/ranker.h): cross-task features have one length for every task and
// machine; records become per-(task, machine) groups (distinct programs, best median, failures
// kept as 0, held-out tasks and foreign sentences left out), an older sitting's latencies scaled
// by the programs it shares with a newer one; a ranker trained on groups whose
// speed follows a known rule learns it for a task it never saw; it saves and loads with the same
// scores and refuses damaged or foreign files; the "ranker" zero-shot mode puts the ranker's
// favourite first, and at two threads a blocked convolution's row-split variant before it when
// the ranker deems it nearly as fast and its weights fit in one core's L2, and a large task's
// candidates without a parallel loop last. Synthetic latencies: what is tested is the plumbing
// and the learning, not a machine.
#include "tune/ranker.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <set>

#include "fixtures/task_cases.h"
#include "fixtures/tiny_base.h"
#include "space/features.h"
#include "space/space_cases.h"
#include "support/error.h"
#include "support/hash.h"
#include "tune/lm_search.h"

namespace tlm::testing_tune {
namespace {

HardwareInfo avx512() {
  return parse_hardware_key("isa=avx512,cores=2,vec=16,l1=32k,l2=1m,l3=32m");
}

// A synthetic "machine" for the learning tests: a program's latency is decided by its
// parallel and vector decisions (the derived features), the same rule on every task.
double fake_latency(const TaskSpace& space, const Program& p, const HardwareInfo& hw) {
  std::vector<float> f = cross_task_features(space, p, hw);
  const size_t derived = 3 + 9 + 5 * kCrossTaskVars + 3 * kCrossTaskRdims;
  const float par = f[derived + 7], vec = f[derived + 8], unroll = f[derived + 9];
  return 1e-3 / (1.0 + 2.0 * (par > 0) + vec + 0.1 * unroll);
}

// Records of n sampled programs of a task with fake latencies (every 7th an error).
std::vector<MeasureRecord> fake_records(const TaskHarness& h, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<MeasureRecord> out;
  for (int i = 0; i < n; i++) {
    Program p = sample_program(h.space, rng);
    MeasureRecord r;
    r.task_key = h.sub.key;
    r.task_kind = h.sub.kind;
    r.hardware = h.hardware_key;
    r.sentence = h.printer->text(p);
    r.strategy = "random";
    if (i % 7 == 6) {
      r.error = "CompileError";
    } else {
      r.median_s = fake_latency(h.space, p, h.hw);
      r.latencies_s = {r.median_s};
    }
    out.push_back(r);
  }
  return out;
}

// A ranker of 20 rounds fitted to 60 fake records of one task, each valid program's latency
// multiplied by factor(program).
Ranker ranker_fit_to(const TaskHarness& h, uint64_t seed,
                     const std::function<double(const Program&)>& factor) {
  std::vector<MeasureRecord> recs = fake_records(h, 60, seed);
  for (MeasureRecord& x : recs) {
    Program p;
    TLM_CHECK(program_from_sentence(*h.printer, x.sentence, &p)) << x.sentence;
    if (x.ok()) x.median_s *= factor(p);
  }
  RankerData d = ranker_data(recs, {});
  RankerOptions ro;
  ro.rounds = 20;
  return Ranker::train({&d.groups[0]}, ro);
}

// The zero-shot candidates of the "ranker" mode with `rule` on (first) and off (second), ranked
// by r; the mode must have the rule on.
std::pair<std::vector<ZeroShotChoice>, std::vector<ZeroShotChoice>> with_and_without(
    const TinyModel& m, const TaskHarness& h, const HardwareInfo& hw, const Ranker& r,
    bool ZeroShotOptions::*rule) {
  ZeroShotOptions zo = zero_shot_mode("ranker");
  EXPECT_TRUE(zo.*rule);
  zo.ranker = &r;
  std::vector<ZeroShotChoice> on = zero_shot_candidates(*m.lm, m.tok, *h.printer, hw, zo);
  zo.*rule = false;
  std::vector<ZeroShotChoice> off = zero_shot_candidates(*m.lm, m.tok, *h.printer, hw, zo);
  return {std::move(on), std::move(off)};
}

// A rule that moved one candidate to the front: c is base with c's front taken out and put first
// (the others keep base's order).
void expect_front_moved(const std::vector<ZeroShotChoice>& c,
                        const std::vector<ZeroShotChoice>& base) {
  ASSERT_FALSE(c.empty());
  std::vector<Program> rest, base_rest;
  for (size_t i = 1; i < c.size(); i++) rest.push_back(c[i].program);
  for (const ZeroShotChoice& b : base)
    if (b.program != c[0].program) base_rest.push_back(b.program);
  EXPECT_EQ(rest, base_rest);
}

TEST(Ranker, CrossTaskFeaturesHaveOneLength) {
  const HardwareInfo hw = avx512();
  std::mt19937_64 rng(1);
  for (const Graph& g : {matmul_graph(), conv_graph()}) {
    auto h = make_task_harness(only_task(g), hw, "unit");
    for (int i = 0; i < 5; i++) {
      std::vector<float> f = cross_task_features(h->space, sample_program(h->space, rng), hw);
      ASSERT_EQ(f.size(), (size_t)kCrossTaskFeatures);
      for (float v : f) EXPECT_TRUE(std::isfinite(v));
    }
  }
  // A Rows task (global average pool) too.
  Partition p = partition_graph(tiny_model());
  for (const Task& t : p.tasks) {
    auto h = make_task_harness(t.sub, hw, "unit");
    EXPECT_EQ(cross_task_features(h->space, sample_program(h->space, rng), hw).size(),
              (size_t)kCrossTaskFeatures);
  }
}

TEST(Ranker, RecordsBecomeGroupsOfDistinctPrograms) {
  const HardwareInfo hw = avx512();
  auto mm = make_task_harness(only_task(matmul_graph()), hw, "unit");
  auto cv = make_task_harness(only_task(conv_graph()), hw, "unit");
  std::vector<MeasureRecord> recs = fake_records(*mm, 10, 1);
  // The first program measured again, faster: the group keeps its best median.
  MeasureRecord again = recs[0];
  again.median_s = recs[0].median_s / 2;
  recs.push_back(again);
  // An autoscheduler marker (not a sentence of ours) and a held-out task's records.
  MeasureRecord marker = recs[1];
  marker.sentence = "halide-adams2019";
  recs.push_back(marker);
  std::vector<MeasureRecord> conv = fake_records(*cv, 4, 2);
  recs.insert(recs.end(), conv.begin(), conv.end());

  RankerData d = ranker_data(recs, {cv->sub.key});
  EXPECT_EQ(d.records, (int64_t)recs.size());
  EXPECT_EQ(d.excluded, 4);
  EXPECT_EQ(d.skipped, 1);
  ASSERT_EQ(d.groups.size(), 1u);
  const RankerGroup& g = d.groups[0];
  EXPECT_EQ(g.task_key, mm->sub.key);
  EXPECT_EQ(g.hardware, mm->hardware_key);
  std::set<std::string> distinct;
  for (int i = 0; i < 10; i++) distinct.insert(recs[i].sentence);
  ASSERT_EQ(g.sentences.size(), distinct.size());
  EXPECT_EQ(g.sentences[0], recs[0].sentence);
  EXPECT_DOUBLE_EQ(g.median_s[0], recs[0].median_s / 2);
  for (size_t i = 0; i < g.sentences.size(); i++) {
    EXPECT_EQ(g.x[i].size(), (size_t)kCrossTaskFeatures);
    if (g.sentences[i] == recs[6].sentence && recs[6].sentence != recs[0].sentence) {
      EXPECT_EQ(g.median_s[i], 0) << "the error record is a failure";
    }
  }
}

// The same programs timed hot and with the caches as in a model are two groups: their latencies
// are never compared with each other.
TEST(Ranker, HotAndModelCacheRecordsAreSeparateGroups) {
  auto mm = make_task_harness(only_task(matmul_graph()), avx512(), "unit");
  std::vector<MeasureRecord> recs = fake_records(*mm, 6, 1);
  std::vector<MeasureRecord> model = fake_records(*mm, 6, 1);
  for (MeasureRecord& r : model) {
    r.cache = kCacheModel;
    r.median_s *= 3;
  }
  recs.insert(recs.end(), model.begin(), model.end());
  RankerData d = ranker_data(recs, {});
  ASSERT_EQ(d.groups.size(), 2u);
  EXPECT_EQ(d.groups[0].cache, "");
  EXPECT_EQ(d.groups[1].cache, kCacheModel);
  ASSERT_EQ(d.groups[0].median_s.size(), d.groups[1].median_s.size());
  for (size_t i = 0; i < d.groups[0].median_s.size(); i++)
    EXPECT_DOUBLE_EQ(d.groups[1].median_s[i], 3 * d.groups[0].median_s[i]);
}

// Two sittings of one machine, the older 10% faster: the programs measured in both scale the
// older sitting's latencies to the newer one's, so a program measured only in the newer sitting
// is compared at the same speed (faster than B here, which the raw times would invert), and one
// measured only in the older sitting is scaled too. Fewer than three shared programs: no scaling.
TEST(Ranker, SittingsAreScaledByTheProgramsTheyShare) {
  const HardwareInfo hw = avx512();
  auto mm = make_task_harness(only_task(matmul_graph()), hw, "unit");
  std::vector<MeasureRecord> base = fake_records(*mm, 40, 5);
  std::vector<std::string> distinct;
  for (const MeasureRecord& r : base)
    if (r.ok() && std::find(distinct.begin(), distinct.end(), r.sentence) == distinct.end())
      distinct.push_back(r.sentence);
  ASSERT_GE(distinct.size(), 5u);
  const int64_t t0 = 1'790'000'000'000, t1 = t0 + 2 * 3600 * 1000;  // two hours apart
  auto rec = [&](int i, int64_t t, double ms) {
    MeasureRecord r = base[0];
    r.sentence = distinct[i];
    r.timestamp_ms = t;
    r.median_s = ms * 1e-3;
    r.latencies_s = {r.median_s};
    return r;
  };
  auto median_of = [](const RankerGroup& g, const std::string& s) {
    for (size_t i = 0; i < g.sentences.size(); i++)
      if (g.sentences[i] == s) return g.median_s[i];
    return -1.0;
  };
  for (int shared : {3, 2}) {
    SCOPED_TRACE(shared);
    std::vector<MeasureRecord> recs;
    // Older sitting: A, B, C (and D only here) at 1.0, 1.1, 1.2, 1.3 ms.
    for (int i = 0; i < 4; i++) recs.push_back(rec(i, t0 + i * 1000, 1.0 + 0.1 * i));
    // Newer sitting, 10% slower: the shared ones again, and E (only here) at 1.155 ms.
    for (int i = 0; i < shared; i++) recs.push_back(rec(i, t1 + i * 1000, 1.1 * (1.0 + 0.1 * i)));
    recs.push_back(rec(4, t1 + 9000, 1.155));
    RankerData d = ranker_data(recs, {});
    ASSERT_EQ(d.groups.size(), 1u);
    const RankerGroup& g = d.groups[0];
    const double b = median_of(g, distinct[1]), dd = median_of(g, distinct[3]),
                 e = median_of(g, distinct[4]);
    EXPECT_DOUBLE_EQ(e, 1.155e-3);
    if (shared == 3) {
      EXPECT_NEAR(b, 1.21e-3, 1e-9);
      EXPECT_NEAR(dd, 1.43e-3, 1e-9);
      EXPECT_LT(e, b);
    } else {
      EXPECT_NEAR(b, 1.1e-3, 1e-9);  // the older sitting's own time: too few programs shared
      EXPECT_NEAR(dd, 1.3e-3, 1e-9);
    }
  }
}

TEST(Ranker, LearnsARuleAndRanksATaskItNeverSaw) {
  const HardwareInfo hw = avx512();
  auto mm = make_task_harness(only_task(matmul_graph()), hw, "unit");
  auto cv = make_task_harness(only_task(conv_graph()), hw, "unit");
  // Several "tasks": the same subgraph on machines with other keys would mix latencies, so the
  // groups are one per seed under distinct hardware keys of the same machine kind.
  std::vector<MeasureRecord> train;
  for (int s = 0; s < 6; s++) {
    std::vector<MeasureRecord> r = fake_records(*mm, 40, 10 + s);
    for (MeasureRecord& x : r) x.hardware += ",cpu=fake-" + std::to_string(s);
    train.insert(train.end(), r.begin(), r.end());
  }
  RankerData d = ranker_data(train, {});
  ASSERT_EQ(d.groups.size(), 6u);
  std::vector<const RankerGroup*> groups;
  for (const RankerGroup& g : d.groups) groups.push_back(&g);
  RankerOptions o;
  o.rounds = 60;
  Ranker r = Ranker::train(groups, o);

  // The convolution was never seen; the rule is the same.
  RankerData test = ranker_data(fake_records(*cv, 60, 99), {});
  ASSERT_EQ(test.groups.size(), 1u);
  RankerEval e = evaluate_ranker(&r, {&test.groups[0]});
  EXPECT_EQ(e.groups, 1);
  EXPECT_GT(e.ranker, e.average + 0.1) << "the ranker's choice is no better than an average one";
  EXPECT_GE(e.ranker, 0.8);
  // One group: time-weighted is best / chosen of that group, and its choice is listed.
  ASSERT_EQ(e.chosen.size(), 1u);
  EXPECT_EQ(e.chosen[0].group, &test.groups[0]);
  EXPECT_NEAR(e.ranker_time, e.ranker, 1e-6);
  EXPECT_NEAR(e.chosen[0].rel, e.ranker, 1e-6);
  EXPECT_NEAR(e.first_time, e.first, 1e-6);

  // Without a ranker only the baselines are filled in.
  RankerEval b = evaluate_ranker(nullptr, {&test.groups[0]});
  EXPECT_EQ(b.ranker, 0);
  EXPECT_EQ(b.ranker_time, 0);
  EXPECT_TRUE(b.chosen.empty());
  EXPECT_DOUBLE_EQ(b.average, e.average);
}

TEST(Ranker, NothingToCompareIsAUserError) {
  auto mm = make_task_harness(only_task(matmul_graph()), avx512(), "unit");
  RankerData d = ranker_data(fake_records(*mm, 1, 1), {});
  std::vector<const RankerGroup*> groups;
  for (const RankerGroup& g : d.groups) groups.push_back(&g);
  EXPECT_THROW(Ranker::train(groups, {}), UserError);
  EXPECT_THROW(Ranker::train({}, {}), UserError);
}

TEST(Ranker, SavesAndLoadsAndRefusesForeignFiles) {
  auto mm = make_task_harness(only_task(matmul_graph()), avx512(), "unit");
  RankerData d = ranker_data(fake_records(*mm, 30, 3), {});
  RankerOptions o;
  o.rounds = 10;
  Ranker r = Ranker::train({&d.groups[0]}, o);
  TempFile f("ranker");
  const std::string path = f.path() + ".json";
  r.save(path);
  Ranker back = Ranker::load(path);
  EXPECT_EQ(back.score(d.groups[0].x), r.score(d.groups[0].x));
  EXPECT_EQ(back.trained_on(), r.trained_on());
  EXPECT_EQ(back.task_hashes(), std::set<std::string>{hex_hash(mm->sub.key)});

  // Another features version: one message saying so.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string key = "\"tlm_features_version\":\"" + std::to_string(kCrossTaskFeaturesVersion);
  ASSERT_NE(text.find(key), std::string::npos);
  std::string other = text;
  other.replace(other.find(key), key.size(), "\"tlm_features_version\":\"999");
  std::ofstream(path) << other;
  try {
    Ranker::load(path);
    ADD_FAILURE() << "another features version loaded";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("features version 999"), std::string::npos) << e.what();
  }
  // Damaged, cut short, missing, not .json.
  std::ofstream(path) << text.substr(0, text.size() / 2);
  EXPECT_THROW(Ranker::load(path), UserError);
  std::ofstream(path) << "{\"learner\": 1}";
  EXPECT_THROW(Ranker::load(path), UserError);
  std::remove(path.c_str());
  EXPECT_THROW(Ranker::load(path), UserError);
  EXPECT_THROW(Ranker::load(f.path()), UserError);
}

TEST(Ranker, ZeroShotModeRankerPutsItsFavouriteFirst) {
  TinyModel m(5);
  const HardwareInfo hw = avx512();
  auto h = make_task_harness(only_task(conv_graph()), hw, "unit");
  RankerData d = ranker_data(fake_records(*h, 40, 5), {});
  RankerOptions o;
  o.rounds = 20;
  Ranker r = Ranker::train({&d.groups[0]}, o);
  ZeroShotOptions zo = zero_shot_mode("ranker");
  EXPECT_TRUE(zo.rank);
  zo.ranker = &r;
  std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw, zo);
  // The greedy program and every expert program, the ranker's scores descending.
  const std::vector<Program> experts = expert_programs(h->space, hw);
  std::set<std::vector<int64_t>> all;
  for (const ZeroShotChoice& x : c) all.insert(x.program.values);
  for (const Program& e : experts) EXPECT_TRUE(all.count(e.values));
  EXPECT_TRUE(all.count(most_likely_program(*m.lm, m.tok, *h->printer).values));
  std::vector<Program> ps;
  for (const ZeroShotChoice& x : c) ps.push_back(x.program);
  std::vector<float> s = r.score(h->space, hw, ps);
  // Descending, but where the copy-twin rule pulled an expert's twin up behind it
  // (ZeroShotExpertsAreFollowedByTheirCopyTwins).
  for (size_t i = 0; i < c.size(); i++) {
    EXPECT_FLOAT_EQ(c[i].score, s[i]);
    if (i > 0 && !copy_twins(h->space, c[i - 1].program, c[i].program) &&
        !(i > 1 && copy_twins(h->space, c[i - 2].program, c[i - 1].program))) {
      EXPECT_GE(c[i - 1].score, c[i].score);
    }
  }
  // A Rows task (the global average pool of tiny_model) gets the greedy program, its expert
  // programs and the model's samples as candidates, the same for the same seed.
  Partition p = partition_graph(tiny_model());
  bool rows_seen = false;
  for (const Task& t : p.tasks) {
    auto ht = make_task_harness(t.sub, hw, "unit");
    if (ht->space.rule != SpaceRule::Rows) continue;
    rows_seen = true;
    const std::vector<Program> rows_experts = expert_programs(ht->space, hw);
    EXPECT_FALSE(rows_experts.empty()) << "task " << t.id;
    std::vector<ZeroShotChoice> a = zero_shot_candidates(*m.lm, m.tok, *ht->printer, hw, zo);
    std::vector<ZeroShotChoice> b = zero_shot_candidates(*m.lm, m.tok, *ht->printer, hw, zo);
    EXPECT_GT(a.size(), rows_experts.size() + 1) << "no samples for task " << t.id;
    ASSERT_EQ(a.size(), b.size());
    std::set<std::vector<int64_t>> rows_all;
    size_t flagged = 0;
    for (size_t i = 0; i < a.size(); i++) {
      EXPECT_EQ(a[i].program, b[i].program);
      EXPECT_TRUE(is_valid_program(ht->space, a[i].program));
      rows_all.insert(a[i].program.values);
      flagged += a[i].expert;
    }
    for (const Program& e : rows_experts) EXPECT_TRUE(rows_all.count(e.values));
    EXPECT_EQ(flagged, rows_experts.size());
  }
  EXPECT_TRUE(rows_seen) << "tiny_model has no Rows task";
  // Tasks with expert programs get no samples: the greedy program and the experts only.
  EXPECT_LE(c.size(), experts.size() + 1);

  // Without a ranker the mode cannot run; the loader says where one is expected.
  EXPECT_EQ(load_zero_shot_ranker(zero_shot_mode("experts"), "nope.json"), nullptr);
  EXPECT_THROW(load_zero_shot_ranker(zo, "/nonexistent/ranker.json"), UserError);
}

// Row splits without measurement: at two threads the "ranker" mode puts the row-split variant of
// a blocked convolution's favourite in front when the ranker gives it at least row_split_p of
// being the faster (0: always, above 1: never); the rest keep their order; one thread never.
TEST(Ranker, ZeroShotRowSplitsComeFirstWhenTheRankerAdmitsThem) {
  TinyModel m(5);
  const HardwareInfo hw2 = avx512();
  const HardwareInfo hw1 = parse_hardware_key("isa=avx512,cores=1,vec=16,l1=32k,l2=1m,l3=32m");
  int checked = 0;
  for (const testing_space::TaskCase& tc : testing_space::representative_tasks(hw2)) {
    auto h = make_task_harness(tc.sub, hw2, "unit");
    if (!h->space.blocked_conv || h->space.rule != SpaceRule::TiledAnchor) continue;
    SCOPED_TRACE(tc.name);
    // Row splits three times slower, programs that have no row-split variant twice (among
    // equals the favourite could be one of those: with 16 lanes the experts include MLAS's loop
    // order too), the rest once: the favourite splits the channel blocks and has a variant.
    const Ranker r = ranker_fit_to(*h, 7, [&](const Program& p) {
      Program unused;
      if (splits_rows(h->space, p, 2)) return 3.0;
      return row_split_variant(h->space, p, 2, &unused) ? 1.0 : 2.0;
    });
    ZeroShotOptions zo = zero_shot_mode("ranker");
    EXPECT_DOUBLE_EQ(zo.row_split_p, kZeroShotRowSplitP);
    zo.ranker = &r;
    zo.row_split_p = -1;
    const std::vector<ZeroShotChoice> base =
        zero_shot_candidates(*m.lm, m.tok, *h->printer, hw2, zo);
    Program v;
    if (!row_split_variant(h->space, base.at(0).program, 2, &v)) continue;
    checked++;
    zo.row_split_p = 0;
    const std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw2, zo);
    EXPECT_EQ(c.at(0).program, v);
    EXPECT_TRUE(c[0].row_split);
    EXPECT_TRUE(splits_rows(h->space, c[0].program, 2));
    EXPECT_FLOAT_EQ(c[0].score, r.score(h->space, hw2, {v}).at(0));
    std::vector<Program> rest, base_rest;
    for (size_t i = 1; i < c.size(); i++) rest.push_back(c[i].program);
    for (const ZeroShotChoice& b : base)
      if (b.program != v) base_rest.push_back(b.program);
    EXPECT_EQ(rest, base_rest);
    // Weights that do not fit in one core's L2: every thread would read all of them; no split.
    HardwareInfo small = hw2;
    small.l2_bytes = row_split_shared_bytes(h->space) - 1;
    ASSERT_GT(small.l2_bytes, 0);
    for (const ZeroShotChoice& x : zero_shot_candidates(*m.lm, m.tok, *h->printer, small, zo))
      EXPECT_FALSE(x.row_split);
    for (const ZeroShotChoice& x : base) EXPECT_FALSE(x.row_split);
    zo.row_split_p = 1.01;
    const std::vector<ZeroShotChoice> never =
        zero_shot_candidates(*m.lm, m.tok, *h->printer, hw2, zo);
    ASSERT_EQ(never.size(), base.size());
    for (size_t i = 0; i < base.size(); i++) EXPECT_EQ(never[i].program, base[i].program);
    // One thread: nothing to split.
    auto h1 = make_task_harness(tc.sub, hw1, "unit");
    zo.row_split_p = 0;
    for (const ZeroShotChoice& x : zero_shot_candidates(*m.lm, m.tok, *h1->printer, hw1, zo))
      EXPECT_FALSE(x.row_split);
  }
  EXPECT_GE(checked, 1) << "no blocked convolution whose favourite splits channel blocks";
}

// The weight rule: on a dense channel-blocked 1x1 convolution whose weights take at least
// pointwise_weights of one core's L2, MLAS's pointwise expert (pointwise_expert) comes first even
// when the ranker puts it last; the other candidates keep the ranker's order. Lighter weights, a
// negative fraction, or a task without that expert (3x3): the ranker's order. The unit tasks'
// weights are small, so the L2 of the hardware is set around them.
TEST(Ranker, ZeroShotPointwiseExpertFirstWhenTheWeightsFillHalfTheL2) {
  TinyModel m(5);
  const HardwareInfo hw = avx512();
  Graph g = build_zoo_model("resnet50:image=32", 7);  // unit-stride 1x1 layers (bottlenecks)
  prepare_graph(g);
  block_channels(g, 16);
  int pointwise = 0, taps = 0;
  for (const Task& t : partition_graph(g).tasks) {
    if (testing_space::family(t.sub.kind) != "conv2d_nchwc") continue;
    auto h = make_task_harness(t.sub, hw, "unit");
    if (h->space.rule != SpaceRule::TiledAnchor) continue;
    SCOPED_TRACE(t.sub.kind + " " + std::to_string(t.id));
    Program pw;
    const bool has = pointwise_expert(h->space, hw, &pw);
    const SpaceStage& st = h->space.stages[h->space.anchor];
    if (st.rextents.size() != 4) {  // the stem (plain input)
      EXPECT_FALSE(has);
      continue;
    }
    // 1x1 of unit stride with more than one pixel along the width (the register block's row var).
    EXPECT_EQ(has, st.rextents[1] * st.rextents[2] == 1 && st.extents[1] > 1 &&
                       testing_space::blocked_conv_unit_stride(t.sub));
    if ((has && pointwise >= 2) || (!has && taps >= 1)) continue;  // enough of each kind
    const Ranker r = ranker_fit_to(*h, 7, [&](const Program& p) { return p == pw ? 3.0 : 1.0; });
    ZeroShotOptions zo = zero_shot_mode("ranker");
    EXPECT_DOUBLE_EQ(zo.pointwise_weights, kZeroShotPointwiseWeights);
    zo.ranker = &r;
    zo.row_split_p = -1;
    const int64_t weights = row_split_shared_bytes(h->space);
    HardwareInfo fits = hw, half = hw;
    fits.l2_bytes = 2 * weights + 4096;  // the weights take less than half of it
    half.l2_bytes = 2 * weights;
    const std::vector<ZeroShotChoice> base =
        zero_shot_candidates(*m.lm, m.tok, *h->printer, fits, zo);
    const std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, half, zo);
    zo.pointwise_weights = -1;
    const std::vector<ZeroShotChoice> never =
        zero_shot_candidates(*m.lm, m.tok, *h->printer, half, zo);
    ASSERT_EQ(c.size(), base.size());
    ASSERT_EQ(never.size(), base.size());
    for (size_t i = 0; i < base.size(); i++) EXPECT_EQ(never[i].program, base[i].program);
    if (!has) {
      taps++;
      for (size_t i = 0; i < base.size(); i++) EXPECT_EQ(c[i].program, base[i].program);
      continue;
    }
    pointwise++;
    EXPECT_NE(base.at(0).program, pw);  // the ranker's order does not put it first
    EXPECT_EQ(c.at(0).program, pw);
    expect_front_moved(c, base);
  }
  EXPECT_GE(pointwise, 1);
  EXPECT_GE(taps, 1);
}

// The streamed-weight rule (ZeroShotOptions::streamed_root, on in the "ranker" mode): on a matrix
// product whose weight is larger than the last-level cache, the ranker's best streaming expert
// over the weight packed once (streamed_root_expert) comes first even when the ranker puts every
// one of them last; the other candidates keep the ranker's order; with the rule off the order is
// the ranker's, and with a cache that holds the weight there is no such expert among the
// candidates. A 16 x 50 weight (3.2 KB) and small caches.
TEST(Ranker, ZeroShotStreamedRootExpertFirstWhenTheWeightExceedsTheL3) {
  TinyModel m(5);
  const HardwareInfo small = parse_hardware_key("isa=avx2,cores=1,vec=8,l1=32k,l2=1k,l3=2k");
  const HardwareInfo roomy = parse_hardware_key("isa=avx2,cores=1,vec=8,l1=32k,l2=1k,l3=32m");
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {8, 16});
  g.mark_output(g.add(Op::MatMul, {x, weight(g, {16, 50}, 3)}));
  prepare_graph(g);
  auto h = make_task_harness(only_task(g), small, "unit");
  ASSERT_EQ(h->space.rule, SpaceRule::TiledAnchor);
  const Ranker r = ranker_fit_to(*h, 7, [&](const Program& p) {
    return streamed_root_expert(h->space, small, p) ? 3.0 : 1.0;
  });
  const auto [c, base] = with_and_without(m, *h, small, r, &ZeroShotOptions::streamed_root);
  ASSERT_EQ(c.size(), base.size());
  ASSERT_FALSE(c.empty());
  EXPECT_FALSE(streamed_root_expert(h->space, small, base.at(0).program))
      << "the fitted ranker should put the streaming experts late";
  EXPECT_TRUE(streamed_root_expert(h->space, small, c.at(0).program));
  expect_front_moved(c, base);
  // A last-level cache that holds the weight: no streaming expert over it packed once.
  ZeroShotOptions zo = zero_shot_mode("ranker");
  zo.ranker = &r;
  for (const ZeroShotChoice& x : zero_shot_candidates(*m.lm, m.tok, *h->printer, roomy, zo))
    EXPECT_FALSE(streamed_root_expert(h->space, roomy, x.program));
}

// The copy-twin rule (ZeroShotOptions::copy_twins, on in the "ranker" mode): on AVX-512 a blocked
// 3x3 convolution's chunked experts come with twins that copy the padded input at root
// (expert.cc); in the ranker's order the first expert that has a twin is followed by one, the
// front candidate and the set of candidates stay the ranker's, and with the rule off the order
// is the ranker's alone. Here the ranker is fit to times that put every root copy late.
TEST(Ranker, ZeroShotExpertsAreFollowedByTheirCopyTwins) {
  TinyModel m(5);
  const HardwareInfo hw = avx512();
  Graph g = build_zoo_model("resnet50:image=32", 7);
  prepare_graph(g);
  block_channels(g, 16);
  int checked = 0, adjacent_with = 0, adjacent_without = 0;
  for (const Task& t : partition_graph(g).tasks) {
    if (checked >= 2) break;
    if (testing_space::family(t.sub.kind) != "conv2d_nchwc") continue;
    auto h = make_task_harness(t.sub, hw, "unit");
    if (h->space.rule != SpaceRule::TiledAnchor) continue;
    const SpaceStage& st = h->space.stages[h->space.anchor];
    if (st.rextents.size() != 4 || st.rextents[1] * st.rextents[2] == 1) continue;  // taps only
    SCOPED_TRACE(t.sub.kind + " " + std::to_string(t.id));
    const std::vector<Program> experts = expert_programs(h->space, hw);
    auto has_twin = [&](const Program& p) {
      for (const Program& e : experts)
        if (copy_twins(h->space, p, e)) return true;
      return false;
    };
    const Ranker r = ranker_fit_to(*h, 7, [&](const Program& p) {
      for (const Program& e : experts)  // the member that copies is the slower of a pair
        if (copy_twins(h->space, p, e)) return p.values < e.values ? 1.0 : 3.0;
      return 1.5;
    });
    const auto [c, base] = with_and_without(m, *h, hw, r, &ZeroShotOptions::copy_twins);
    ASSERT_EQ(c.size(), base.size());
    ASSERT_FALSE(c.empty());
    EXPECT_EQ(c[0].program, base[0].program);
    std::set<std::vector<int64_t>> a, b;
    for (size_t i = 0; i < c.size(); i++) {
      a.insert(c[i].program.values);
      b.insert(base[i].program.values);
    }
    EXPECT_EQ(a, b);
    // With the rule the first expert with a twin is followed by one.
    size_t first = 0;
    while (first < c.size() && !(c[first].expert && has_twin(c[first].program))) first++;
    ASSERT_LT(first + 1, c.size()) << "no expert with a copy twin";
    EXPECT_TRUE(c[first + 1].expert);
    EXPECT_TRUE(copy_twins(h->space, c[first].program, c[first + 1].program));
    // Twins side by side: more with the rule than in the ranker's own order (which puts the
    // copies late).
    for (size_t i = 0; i + 1 < c.size(); i++) {
      adjacent_with += copy_twins(h->space, c[i].program, c[i + 1].program);
      adjacent_without += copy_twins(h->space, base[i].program, base[i + 1].program);
    }
    checked++;
  }
  EXPECT_GE(checked, 1) << "no blocked 3x3 convolution";
  EXPECT_GT(adjacent_with, adjacent_without);
}

// The serial guard: at two threads, on a task of at least serial_work iterations (the "ranker"
// mode's kZeroShotSerialWork; 0 here, the unit tasks are small), every candidate with a parallel
// loop comes before those without, each kind in the ranker's order, even when the ranker prefers
// a serial one (here serial programs measured 10x faster); at one thread, with the guard off
// (< 0) or on a task below the bound, the ranker's order stands.
TEST(Ranker, ZeroShotSerialProgramsGoLastAtTwoThreadsOnLargeTasks) {
  TinyModel m(5);
  const HardwareInfo hw2 = avx512();
  const HardwareInfo hw1 = parse_hardware_key("isa=avx512,cores=1,vec=16,l1=32k,l2=1m,l3=32m");
  int guarded = 0;
  for (const testing_space::TaskCase& tc : testing_space::representative_tasks(hw2)) {
    auto h = make_task_harness(tc.sub, hw2, "unit");
    SCOPED_TRACE(tc.name);
    const Ranker r = ranker_fit_to(
        *h, 11, [&](const Program& p) { return parallel_loops(h->space, p) == 0 ? 0.1 : 1.0; });
    ZeroShotOptions zo = zero_shot_mode("ranker");
    EXPECT_DOUBLE_EQ(zo.serial_work, kZeroShotSerialWork);
    zo.ranker = &r;
    zo.row_split_p = -1;
    zo.serial_work = 0;
    const std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw2, zo);
    size_t first_serial = c.size();
    double best_serial = -1e30, best_parallel = -1e30;
    for (size_t i = 0; i < c.size(); i++) {
      const bool serial = parallel_loops(h->space, c[i].program) == 0;
      if (serial) {
        first_serial = std::min(first_serial, i);
        best_serial = std::max(best_serial, c[i].score);
      } else {
        EXPECT_LT(i, first_serial) << "a parallel candidate after a serial one";
        best_parallel = std::max(best_parallel, c[i].score);
      }
      if (i > 0 && i != first_serial) {
        EXPECT_LE(c[i].score, c[i - 1].score);
      }
    }
    if (first_serial == 0 || first_serial == c.size()) continue;  // one kind only
    if (best_serial > best_parallel) guarded++;
    // The guard off, a task below its bound, or one thread: the ranker's order.
    for (double off : {-1.0, 1e30}) {
      zo.serial_work = off;
      const std::vector<ZeroShotChoice> o =
          zero_shot_candidates(*m.lm, m.tok, *h->printer, hw2, zo);
      for (size_t i = 1; i < o.size(); i++) EXPECT_LE(o[i].score, o[i - 1].score);
    }
    zo.serial_work = 0;
    auto h1 = make_task_harness(tc.sub, hw1, "unit");
    const std::vector<ZeroShotChoice> c1 =
        zero_shot_candidates(*m.lm, m.tok, *h1->printer, hw1, zo);
    for (size_t i = 1; i < c1.size(); i++) EXPECT_LE(c1[i].score, c1[i - 1].score);
  }
  EXPECT_GE(guarded, 1) << "no task where the ranker preferred a serial program at two threads";
}

}  // namespace
}  // namespace tlm::testing_tune
