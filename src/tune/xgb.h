// What the two XGBoost users of tune/ share (cost_model.cc: the per-task cost model; ranker.cc:
// the cross-task zero-shot ranker): errors as InternalError, and a dense DMatrix from rows.
#pragma once

#include <xgboost/c_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tlm::xgb {

// InternalError "XGBoost <what>: <the first line of its message>" unless rc == 0.
void check(int rc, const char* what);
// XGBoost's messages end in a stack trace: the first line says it.
std::string first_line(const char* msg);

// Owns a dense DMatrix built from rows of `columns` floats each (InternalError otherwise).
class Matrix {
 public:
  Matrix(const std::vector<std::vector<float>>& x, size_t columns);
  ~Matrix();
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle get() const { return h_; }

 private:
  DMatrixHandle h_ = nullptr;
};

}  // namespace tlm::xgb
