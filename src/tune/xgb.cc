#include "tune/xgb.h"

#include <cmath>

#include "support/error.h"

namespace tlm::xgb {

std::string first_line(const char* msg) {
  std::string s = msg ? msg : "";
  const size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

void check(int rc, const char* what) {
  TLM_CHECK(rc == 0) << "XGBoost " << what << ": " << first_line(XGBGetLastError());
}

Matrix::Matrix(const std::vector<std::vector<float>>& x, size_t columns) {
  std::vector<float> flat;
  flat.reserve(x.size() * columns);
  for (const std::vector<float>& row : x) {
    TLM_CHECK(row.size() == columns) << "feature row of " << row.size() << ", expected " << columns;
    flat.insert(flat.end(), row.begin(), row.end());
  }
  check(XGDMatrixCreateFromMat_omp(flat.data(), x.size(), columns, NAN, &h_, 1), "DMatrix");
}

Matrix::~Matrix() { XGDMatrixFree(h_); }

}  // namespace tlm::xgb
