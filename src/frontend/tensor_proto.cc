#include "frontend/tensor_proto.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tlm {
namespace {

using TP = onnx::TensorProto;

// raw_data is little-endian by the ONNX spec; tlm only builds for little-endian hosts.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "raw_data is read by memcpy");

// Checks that a typed or raw field holds exactly `n` elements before anything is allocated.
void expect_count(const std::string& what, const char* field, int64_t have, int64_t n) {
  TLM_USER_CHECK(have == n) << what << ": " << field << " holds " << have
                            << " elements but the dims say " << n;
}

}  // namespace

std::string onnx_dtype_name(int32_t code) {
  if (TP::DataType_IsValid(code)) return TP::DataType_Name((TP::DataType)code);
  return "code " + std::to_string(code);
}

bool dtype_from_onnx(int32_t code, DType* out) {
  switch (code) {
    case TP::FLOAT:
      *out = DType::F32;
      return true;
    case TP::INT64:
    case TP::INT32:
      *out = DType::I64;
      return true;
    case TP::BOOL:
      *out = DType::Bool;
      return true;
    default:
      return false;
  }
}

int64_t checked_numel(const Shape& shape, const std::string& what) {
  // The bound applies to the product of max(extent, 1) so that a zero extent cannot hide huge
  // neighbours that later stride computations would multiply together.
  int64_t n = 1, bound = 1;
  for (int64_t d : shape) {
    TLM_USER_CHECK(d >= 0) << what << ": negative extent in shape " << shape_str(shape);
    TLM_USER_CHECK(d <= kMaxTensorElements && bound <= kMaxTensorElements / std::max<int64_t>(d, 1))
        << what << ": shape " << shape_str(shape) << " is too large (more than 2^40 elements)";
    bound *= std::max<int64_t>(d, 1);
    n *= d;
  }
  return n;
}

Tensor tensor_from_proto(const TP& proto, const std::string& what) {
  TLM_USER_CHECK(proto.data_location() != TP::EXTERNAL && proto.external_data_size() == 0)
      << what << ": tensor data is stored in an external file; tlm reads self-contained models "
      << "only (re-save the model with all tensors inside, e.g. onnx.save(model, path, "
         "save_as_external_data=False))";
  TLM_USER_CHECK(!proto.has_segment()) << what << ": segmented tensors are not supported";
  DType dtype;
  TLM_USER_CHECK(dtype_from_onnx(proto.data_type(), &dtype))
      << what << ": element type " << onnx_dtype_name(proto.data_type())
      << " is not supported (tlm supports FLOAT, INT64, INT32 (read as int64) and BOOL)";
  Shape shape(proto.dims().begin(), proto.dims().end());
  const int64_t n = checked_numel(shape, what);
  const bool is_i32 = proto.data_type() == TP::INT32;
  const std::string& raw = proto.raw_data();
  const size_t stored_size = is_i32 ? 4 : dtype_size(dtype);

  if (!raw.empty()) {
    TLM_USER_CHECK(raw.size() % stored_size == 0)
        << what << ": raw_data has " << raw.size() << " bytes, not a multiple of " << stored_size;
    expect_count(what, "raw_data", (int64_t)(raw.size() / stored_size), n);
    Tensor t(dtype, shape);
    if (is_i32) {
      int64_t* dst = t.data<int64_t>();
      for (int64_t i = 0; i < n; i++) {
        int32_t v;
        std::memcpy(&v, raw.data() + 4 * i, 4);
        dst[i] = v;
      }
    } else if (dtype == DType::Bool) {
      for (int64_t i = 0; i < n; i++) t.raw()[i] = raw[i] != 0;
    } else if (n > 0) {
      std::memcpy(t.raw(), raw.data(), t.nbytes());
    }
    return t;
  }

  switch (proto.data_type()) {
    case TP::FLOAT: {
      expect_count(what, "float_data", proto.float_data_size(), n);
      Tensor t(dtype, shape);
      if (n > 0) std::memcpy(t.raw(), proto.float_data().data(), t.nbytes());
      return t;
    }
    case TP::INT64: {
      expect_count(what, "int64_data", proto.int64_data_size(), n);
      Tensor t(dtype, shape);
      if (n > 0) std::memcpy(t.raw(), proto.int64_data().data(), t.nbytes());
      return t;
    }
    case TP::INT32: {
      expect_count(what, "int32_data", proto.int32_data_size(), n);
      Tensor t(dtype, shape);
      int64_t* dst = t.data<int64_t>();
      for (int64_t i = 0; i < n; i++) dst[i] = proto.int32_data((int)i);
      return t;
    }
    case TP::BOOL: {
      // The spec stores bools in int32_data.
      expect_count(what, "int32_data", proto.int32_data_size(), n);
      Tensor t(dtype, shape);
      for (int64_t i = 0; i < n; i++) t.raw()[i] = proto.int32_data((int)i) != 0;
      return t;
    }
  }
  TLM_INTERNAL_ERROR() << "dtype_from_onnx accepted " << proto.data_type();
}

Tensor read_tensor_proto_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TLM_USER_CHECK(in.good()) << "cannot open tensor file '" << path << "'";
  std::ostringstream buf;
  buf << in.rdbuf();
  TLM_USER_CHECK(!in.bad()) << "cannot read tensor file '" << path << "'";
  onnx::TensorProto proto;
  bool ok = false;
  try {
    ok = proto.ParseFromString(buf.str());
  } catch (const std::exception& e) {
    TLM_USER_ERROR() << "'" << path << "' is not an ONNX TensorProto file: " << e.what();
  }
  TLM_USER_CHECK(ok) << "'" << path
                     << "' is not an ONNX TensorProto file (protobuf parse failed; the file is "
                        "truncated or of another format)";
  return tensor_from_proto(proto, "tensor file '" + path + "'");
}

void write_tensor_proto_file(const std::string& path, const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  proto.set_name(name);
  for (int64_t d : t.shape()) proto.add_dims(d);
  switch (t.dtype()) {
    case DType::F32:
      proto.set_data_type(TP::FLOAT);
      break;
    case DType::I64:
      proto.set_data_type(TP::INT64);
      break;
    case DType::Bool:
      proto.set_data_type(TP::BOOL);
      break;
  }
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(t.raw()), t.nbytes()));
  std::string bytes;
  TLM_CHECK(proto.SerializeToString(&bytes)) << "serializing tensor '" << name << "'";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  TLM_USER_CHECK(out.good()) << "cannot open '" << path << "' for writing";
  out.write(bytes.data(), (std::streamsize)bytes.size());
  out.close();
  TLM_USER_CHECK(out.good()) << "cannot write tensor file '" << path << "'";
}

}  // namespace tlm
