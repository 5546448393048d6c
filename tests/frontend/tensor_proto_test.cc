// TensorProto <-> Tensor: round trips through files for every tlm dtype, each storage form ONNX
// allows (raw_data, typed fields, int32 widened to int64, bools in int32_data), rejection of
// malformed or unsupported tensors without allocating, and the ONNX project's own test data.
#include "frontend/tensor_proto.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>

namespace tlm {
namespace {

using TP = onnx::TensorProto;

const std::string kNodeData = "/usr/share/libonnx-testdata/data/node/";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "tlm_frontend_" + name;
}

std::string error_of(const TP& p) {
  try {
    tensor_from_proto(p, "t");
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no UserError";
  return "";
}

TEST(TensorProto, RoundTripF32) {
  Tensor t = Tensor::from<float>({2, 3}, {1.5f, -2.f, 0.f, INFINITY, -0.25f, 1e30f});
  std::string path = temp_path("f32.pb");
  write_tensor_proto_file(path, t, "a");
  Tensor r = read_tensor_proto_file(path);
  ASSERT_EQ(r.dtype(), DType::F32);
  ASSERT_EQ(r.shape(), (Shape{2, 3}));
  EXPECT_EQ(std::memcmp(r.raw(), t.raw(), t.nbytes()), 0);
}

TEST(TensorProto, RoundTripI64AndScalar) {
  Tensor t = Tensor::from<int64_t>({4}, {0, -1, INT64_MAX, INT64_MIN});
  std::string path = temp_path("i64.pb");
  write_tensor_proto_file(path, t, "b");
  Tensor r = read_tensor_proto_file(path);
  ASSERT_EQ(r.dtype(), DType::I64);
  EXPECT_EQ(r.to_i64_vector(), t.to_i64_vector());
  write_tensor_proto_file(path, Tensor::scalar<int64_t>(7), "s");
  Tensor s = read_tensor_proto_file(path);
  EXPECT_EQ(s.shape(), Shape{});
  EXPECT_EQ(s.get_i(0), 7);
}

TEST(TensorProto, RoundTripBool) {
  Tensor t(DType::Bool, {5});
  for (int i : {0, 3, 4}) t.raw()[i] = 1;
  std::string path = temp_path("bool.pb");
  write_tensor_proto_file(path, t, "c");
  Tensor r = read_tensor_proto_file(path);
  ASSERT_EQ(r.dtype(), DType::Bool);
  for (int i = 0; i < 5; i++) EXPECT_EQ(r.get_i(i), t.get_i(i)) << i;
  // The name travels in the file.
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TP p;
  ASSERT_TRUE(p.ParseFromString(bytes));
  EXPECT_EQ(p.name(), "c");
  EXPECT_EQ(p.data_type(), TP::BOOL);
}

TEST(TensorProto, TypedFieldsAndInt32Widening) {
  TP f;
  f.set_data_type(TP::FLOAT);
  f.add_dims(2);
  f.add_float_data(3.f);
  f.add_float_data(-4.f);
  Tensor tf = tensor_from_proto(f, "f");
  EXPECT_EQ(tf.get_f(1), -4.0);

  TP i32;
  i32.set_data_type(TP::INT32);
  i32.add_dims(3);
  for (int v : {-5, 0, 2147483647}) i32.add_int32_data(v);
  Tensor ti = tensor_from_proto(i32, "i32");
  EXPECT_EQ(ti.dtype(), DType::I64);
  EXPECT_EQ(ti.to_i64_vector(), (std::vector<int64_t>{-5, 0, 2147483647}));

  TP raw32;  // int32 in raw_data
  raw32.set_data_type(TP::INT32);
  raw32.add_dims(2);
  int32_t vals[2] = {-7, 9};
  raw32.set_raw_data(std::string(reinterpret_cast<char*>(vals), 8));
  EXPECT_EQ(tensor_from_proto(raw32, "r").to_i64_vector(), (std::vector<int64_t>{-7, 9}));

  TP b;  // bools in int32_data, any non-zero is true
  b.set_data_type(TP::BOOL);
  b.add_dims(3);
  for (int v : {0, 1, 5}) b.add_int32_data(v);
  EXPECT_EQ(tensor_from_proto(b, "b").to_i64_vector(), (std::vector<int64_t>{0, 1, 1}));

  TP empty;  // zero elements are fine for a constant
  empty.set_data_type(TP::INT64);
  empty.add_dims(0);
  EXPECT_EQ(tensor_from_proto(empty, "e").numel(), 0);
}

TEST(TensorProto, MalformedTensorsAreUserErrors) {
  TP short_raw;
  short_raw.set_data_type(TP::FLOAT);
  short_raw.add_dims(3);
  short_raw.set_raw_data(std::string(8, '\0'));
  EXPECT_EQ(error_of(short_raw), "t: raw_data holds 2 elements but the dims say 3");

  TP odd_raw = short_raw;
  odd_raw.set_raw_data(std::string(7, '\0'));
  EXPECT_EQ(error_of(odd_raw), "t: raw_data has 7 bytes, not a multiple of 4");

  TP negative;
  negative.set_data_type(TP::INT64);
  negative.add_dims(-2);
  EXPECT_EQ(error_of(negative), "t: negative extent in shape [-2]");

  TP huge;  // declares 2^60 elements and holds none: must fail before allocating
  huge.set_data_type(TP::FLOAT);
  huge.add_dims(int64_t(1) << 30);
  huge.add_dims(int64_t(1) << 30);
  EXPECT_EQ(error_of(huge),
            "t: shape [1073741824,1073741824] is too large (more than 2^40 elements)");
  TP hidden = huge;  // a zero extent does not excuse huge neighbours
  hidden.add_dims(0);
  EXPECT_NE(error_of(hidden).find("is too large"), std::string::npos);

  TP dbl;
  dbl.set_data_type(TP::DOUBLE);
  dbl.add_double_data(1.0);
  EXPECT_EQ(error_of(dbl),
            "t: element type DOUBLE is not supported (tlm supports FLOAT, INT64, "
            "INT32 (read as int64) and BOOL)");
  TP bogus;
  bogus.set_data_type(99);
  EXPECT_NE(error_of(bogus).find("element type code 99"), std::string::npos);

  TP ext;
  ext.set_data_type(TP::FLOAT);
  ext.set_data_location(TP::EXTERNAL);
  EXPECT_NE(error_of(ext).find("stored in an external file"), std::string::npos);
}

TEST(TensorProto, BadFiles) {
  try {
    read_tensor_proto_file("/nonexistent/x.pb");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "cannot open tensor file '/nonexistent/x.pb'");
  }
  std::string path = temp_path("garbage.pb");
  std::ofstream(path, std::ios::binary) << std::string("\xff\xff\xff\xff\x0f garbage", 13);
  try {
    read_tensor_proto_file(path);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("is not an ONNX TensorProto file"), std::string::npos)
        << e.what();
  }
}

TEST(TensorProto, ReadsOnnxTestData) {
  // test_abs: output = |input|, float32 [3,4,5].
  Tensor x = read_tensor_proto_file(kNodeData + "test_abs/test_data_set_0/input_0.pb");
  Tensor y = read_tensor_proto_file(kNodeData + "test_abs/test_data_set_0/output_0.pb");
  ASSERT_EQ(x.shape(), (Shape{3, 4, 5}));
  ASSERT_EQ(y.shape(), x.shape());
  for (int64_t i = 0; i < x.numel(); i++) EXPECT_EQ(y.get_f(i), std::fabs(x.get_f(i))) << i;
  // test_equal: int32 inputs (read as int64) and a bool output.
  Tensor a = read_tensor_proto_file(kNodeData + "test_equal/test_data_set_0/input_0.pb");
  Tensor b = read_tensor_proto_file(kNodeData + "test_equal/test_data_set_0/input_1.pb");
  Tensor eq = read_tensor_proto_file(kNodeData + "test_equal/test_data_set_0/output_0.pb");
  ASSERT_EQ(a.dtype(), DType::I64);
  ASSERT_EQ(eq.dtype(), DType::Bool);
  ASSERT_EQ(eq.shape(), a.shape());
  for (int64_t i = 0; i < a.numel(); i++) EXPECT_EQ(eq.get_i(i), a.get_i(i) == b.get_i(i)) << i;
  // test_gather_0: int64 indices.
  Tensor idx = read_tensor_proto_file(kNodeData + "test_gather_0/test_data_set_0/input_1.pb");
  EXPECT_EQ(idx.dtype(), DType::I64);
  EXPECT_EQ(idx.to_i64_vector(), (std::vector<int64_t>{0, 1, 3}));  // gather.py: [0, 1, 3]
}

}  // namespace
}  // namespace tlm
