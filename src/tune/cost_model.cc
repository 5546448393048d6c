// CostModel over XGBoost's C API: a dense DMatrix per call, a booster trained for a fixed number
// of rounds.
#include "tune/cost_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "support/error.h"
#include "tune/xgb.h"

namespace tlm {

using xgb::Matrix;

CostModel::CostModel(CostModelOptions o) : o_(o) {}

CostModel::~CostModel() {
  if (booster_) XGBoosterFree(booster_);
}

void CostModel::fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y) {
  TLM_CHECK(!x.empty() && x.size() == y.size())
      << "fit: " << x.size() << " rows, " << y.size() << " labels";
  if (booster_) XGBoosterFree(booster_);
  booster_ = nullptr;
  columns_ = x[0].size();
  Matrix m(x, columns_);
  xgb::check(XGDMatrixSetFloatInfo(m.get(), "label", y.data(), y.size()), "labels");
  DMatrixHandle dm = m.get();
  BoosterHandle b = nullptr;
  xgb::check(XGBoosterCreate(&dm, 1, &b), "booster");
  booster_ = b;
  const std::pair<const char*, std::string> params[] = {
      {"objective", "reg:squarederror"},
      {"max_depth", std::to_string(o_.max_depth)},
      {"eta", std::to_string(o_.eta)},
      {"min_child_weight", "0"},  // tiny data sets: let leaves hold a single program (Ansor too)
      {"nthread", "1"},
      {"verbosity", "0"},
      {"seed", std::to_string(o_.seed)},
  };
  for (const auto& [k, v] : params) xgb::check(XGBoosterSetParam(b, k, v.c_str()), k);
  for (int i = 0; i < o_.rounds; i++) xgb::check(XGBoosterUpdateOneIter(b, i, dm), "update");
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>>& x) const {
  TLM_CHECK(booster_) << "predict before fit";
  if (x.empty()) return {};
  Matrix m(x, columns_);
  bst_ulong n = 0;
  const float* out = nullptr;
  xgb::check(XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &out), "predict");
  TLM_CHECK(n == x.size()) << "XGBoost returned " << n << " predictions for " << x.size();
  return std::vector<float>(out, out + n);
}

std::vector<float> throughput_labels(const std::vector<double>& latencies_s) {
  double best = INFINITY;
  for (double l : latencies_s)
    if (l > 0) best = std::min(best, l);
  std::vector<float> y;
  for (double l : latencies_s) y.push_back(l > 0 ? (float)(best / l) : 0.f);
  return y;
}

}  // namespace tlm
