// The learned cost model of the evolutionary search: gradient-boosted trees (XGBoost, as Ansor
// uses) regressing a program's normalized throughput from its features (space/features.h).
//
//   CostModel::fit(x, y)   trains from scratch (the data sets are small: one task's records)
//   CostModel::predict(x)  higher = predicted faster; only rankings are used
//   throughput_labels()    Ansor's labels: best latency of the task / this latency, in (0, 1];
//                          failed programs get 0
//
// XGBoost runs with nthread = 1: the tuner forks measurement workers, and an OpenMP thread team
// in the parent would both compete with timed runs and be unusable in the children.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tlm {

struct CostModelOptions {
  int rounds = 60;    // boosting rounds
  int max_depth = 6;  // tree depth
  double eta = 0.3;   // learning rate
  uint64_t seed = 0;  // XGBoost's own seed (row/column subsampling is off; kept for clarity)
};

class CostModel {
 public:
  explicit CostModel(CostModelOptions o = {});
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // Rows of equal length; y.size() == x.size() >= 1. InternalError on XGBoost failures.
  void fit(const std::vector<std::vector<float>>& x, const std::vector<float>& y);
  // One score per row; InternalError unless trained.
  std::vector<float> predict(const std::vector<std::vector<float>>& x) const;
  bool trained() const { return booster_ != nullptr; }

 private:
  CostModelOptions o_;
  void* booster_ = nullptr;  // BoosterHandle
  size_t columns_ = 0;
};

// Labels for fit(): min(latency) / latency for measured programs (latency > 0), 0 for failures
// (latency <= 0).
std::vector<float> throughput_labels(const std::vector<double>& latencies_s);

}  // namespace tlm
