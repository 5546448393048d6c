// Tensor: a dense, row-major (C order, last dimension fastest) array with a dtype and a shape.
// It is the currency between the importer, the reference interpreter, the executor and the test
// data. float32 is the compute type; int64 carries indices (token ids, Gather indices, shapes);
// bool carries Where conditions. Storage is owned (value semantics; move it when it is large).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "support/error.h"
#include "support/huge_pages.h"

namespace tlm {

enum class DType : uint8_t { F32, I64, Bool };

using Shape = std::vector<int64_t>;

const char* dtype_name(DType t);    // "f32", "i64", "bool"
size_t dtype_size(DType t);         // bytes per element
int64_t numel(const Shape& shape);  // product of extents (1 for a scalar)
std::string shape_str(const Shape& shape);  // "[1,3,224,224]"

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() { return DType::F32; }
template <>
constexpr DType dtype_of<int64_t>() { return DType::I64; }
template <>
constexpr DType dtype_of<bool>() { return DType::Bool; }

// The allocator of a tensor's bytes: large ones on huge pages (support/huge_pages.h), so that a
// model's weights and a measured task's inputs and outputs are on them wherever they are read.
template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}
  T* allocate(size_t n) {
    void* p = huge_alloc(n ? n * sizeof(T) : 1);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const { return false; }
};

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor.
  Tensor(DType dtype, Shape shape);

  template <typename T>
  static Tensor from(Shape shape, const std::vector<T>& values) {
    Tensor t(dtype_of<T>(), std::move(shape));
    TLM_CHECK((int64_t)values.size() == t.numel()) << "from(): " << values.size() << " values";
    if (!values.empty()) std::memcpy(t.raw(), values.data(), t.nbytes());
    return t;
  }
  template <typename T>
  static Tensor scalar(T v) {
    return from<T>({}, {v});
  }

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return (int)shape_.size(); }
  int64_t numel() const { return tlm::numel(shape_); }
  size_t nbytes() const { return bytes_.size(); }
  bool empty_storage() const { return bytes_.empty(); }

  template <typename T>
  T* data() {
    TLM_CHECK(dtype_ == dtype_of<T>()) << "tensor is " << dtype_name(dtype_);
    return reinterpret_cast<T*>(bytes_.data());
  }
  template <typename T>
  const T* data() const {
    TLM_CHECK(dtype_ == dtype_of<T>()) << "tensor is " << dtype_name(dtype_);
    return reinterpret_cast<const T*>(bytes_.data());
  }
  uint8_t* raw() { return bytes_.data(); }
  const uint8_t* raw() const { return bytes_.data(); }

  // Same bytes, new shape of equal numel.
  Tensor reshaped(Shape shape) const;
  // Element i (row-major) converted to double / int64, whatever the dtype.
  double get_f(int64_t i) const;
  int64_t get_i(int64_t i) const;
  // All elements as int64 (for shape-like tensors).
  std::vector<int64_t> to_i64_vector() const;

 private:
  DType dtype_ = DType::F32;
  Shape shape_;
  std::vector<uint8_t, HugePageAllocator<uint8_t>> bytes_;
};

// Deterministic pseudo-random fill (uniform in [lo, hi)), from an explicit seed.
Tensor random_tensor(DType dtype, const Shape& shape, uint64_t seed, double lo = -1.0,
                     double hi = 1.0);

// Largest |a-b| / (atol + rtol*|b|) over elements; <= 1 means "close". Shapes must match.
double max_rel_violation(const Tensor& a, const Tensor& b, double atol, double rtol);

}  // namespace tlm
