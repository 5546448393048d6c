#include "support/tensor.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

namespace tlm {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::I64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::I64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); i++) os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  for (int64_t d : shape_) TLM_CHECK(d >= 0) << "negative extent in " << shape_str(shape_);
  bytes_.assign((size_t)tlm::numel(shape_) * dtype_size(dtype_), 0);
}

Tensor Tensor::reshaped(Shape shape) const {
  TLM_CHECK(tlm::numel(shape) == numel()) << shape_str(shape_) << " -> " << shape_str(shape);
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

double Tensor::get_f(int64_t i) const {
  switch (dtype_) {
    case DType::F32: return data<float>()[i];
    case DType::I64: return (double)data<int64_t>()[i];
    case DType::Bool: return bytes_[i] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::get_i(int64_t i) const {
  switch (dtype_) {
    case DType::F32: return (int64_t)data<float>()[i];
    case DType::I64: return data<int64_t>()[i];
    case DType::Bool: return bytes_[i] ? 1 : 0;
  }
  return 0;
}

std::vector<int64_t> Tensor::to_i64_vector() const {
  std::vector<int64_t> v((size_t)numel());
  for (int64_t i = 0; i < numel(); i++) v[i] = get_i(i);
  return v;
}

Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo, double hi) {
  Tensor t(dtype, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  int64_t n = t.numel();
  switch (dtype) {
    case DType::F32: {
      float* p = t.data<float>();
      for (int64_t i = 0; i < n; i++) p[i] = (float)u(rng);
      break;
    }
    case DType::I64: {
      int64_t* p = t.data<int64_t>();
      for (int64_t i = 0; i < n; i++) p[i] = (int64_t)std::floor(u(rng));
      break;
    }
    case DType::Bool: {
      uint8_t* p = t.raw();
      for (int64_t i = 0; i < n; i++) p[i] = (rng() & 1) ? 1 : 0;
      break;
    }
  }
  return t;
}

double max_rel_violation(const Tensor& a, const Tensor& b, double atol, double rtol) {
  TLM_CHECK(a.shape() == b.shape()) << shape_str(a.shape()) << " vs " << shape_str(b.shape());
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); i++) {
    double x = a.get_f(i), y = b.get_f(i);
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return INFINITY;
      continue;
    }
    if (std::isinf(x) || std::isinf(y)) {
      if (x != y) return INFINITY;
      continue;
    }
    worst = std::max(worst, std::fabs(x - y) / (atol + rtol * std::fabs(y)));
  }
  return worst;
}

}  // namespace tlm
