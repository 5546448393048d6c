// CostModel over XGBoost's C API: a dense DMatrix per call, a booster trained for a fixed number
// of rounds.
#include "tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "support/error.h"

namespace tlm {
namespace {

void xgb_check(int rc, const char* what) {
  TLM_CHECK(rc == 0) << "XGBoost " << what << ": " << XGBGetLastError();
}

// Owns a DMatrix built from rows of equal length.
class Matrix {
 public:
  Matrix(const std::vector<std::vector<float>>& x, size_t columns) {
    std::vector<float> flat;
    flat.reserve(x.size() * columns);
    for (const std::vector<float>& row : x) {
      TLM_CHECK(row.size() == columns)
          << "feature row of " << row.size() << ", expected " << columns;
      flat.insert(flat.end(), row.begin(), row.end());
    }
    xgb_check(XGDMatrixCreateFromMat_omp(flat.data(), x.size(), columns, NAN, &h_, 1), "DMatrix");
  }
  ~Matrix() { XGDMatrixFree(h_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

}  // namespace

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
  xgb_check(XGDMatrixSetFloatInfo(m.get(), "label", y.data(), y.size()), "labels");
  DMatrixHandle dm = m.get();
  BoosterHandle b = nullptr;
  xgb_check(XGBoosterCreate(&dm, 1, &b), "booster");
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
  for (const auto& [k, v] : params) xgb_check(XGBoosterSetParam(b, k, v.c_str()), k);
  for (int i = 0; i < o_.rounds; i++) xgb_check(XGBoosterUpdateOneIter(b, i, dm), "update");
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>>& x) const {
  TLM_CHECK(booster_) << "predict before fit";
  if (x.empty()) return {};
  Matrix m(x, columns_);
  bst_ulong n = 0;
  const float* out = nullptr;
  xgb_check(XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &out), "predict");
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
