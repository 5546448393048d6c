// ONNX TensorProto <-> tlm::Tensor, for initializers, Constant attributes and the ONNX test-data
// format (a file holding one serialized TensorProto, e.g. test_data_set_0/input_0.pb).
//
//   tensor_from_proto()        validating conversion: dtype, dims, data length (no allocation
//                              before the declared size is known to match the stored data)
//   read_tensor_proto_file()   / write_tensor_proto_file()
//   dtype_from_onnx()          ONNX element-type code -> DType (int32 widens to int64)
//   checked_numel()            element count of an untrusted shape, bounded by kMaxTensorElements
//
// tlm computes in float32, int64 and bool. int32 data is widened to int64 on the way in; every
// other ONNX type (float64, float16, uint8, string, ...) is a UserError naming the tensor.
// External-data tensors are rejected: tlm reads self-contained .onnx files only.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "support/tensor.h"

namespace tlm {

// Shapes beyond this many elements (or with any extent beyond it) are rejected as malformed;
// they cannot be real models and would overflow int64 index arithmetic downstream.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

// Name of an ONNX TensorProto::DataType code ("FLOAT", "DOUBLE", ...; "code 99" if unknown).
std::string onnx_dtype_name(int32_t code);

// Maps an ONNX element type to a DType; false if tlm does not support it.
bool dtype_from_onnx(int32_t code, DType* out);

// Element count of `shape`; UserError naming `what` if an extent is negative or the shape is
// beyond kMaxTensorElements.
int64_t checked_numel(const Shape& shape, const std::string& what);

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& what);

Tensor read_tensor_proto_file(const std::string& path);
void write_tensor_proto_file(const std::string& path, const Tensor& t, const std::string& name);

}  // namespace tlm
