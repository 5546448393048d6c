// Models outside the classifier and transformer families.
//   dcgan  the generator of the PyTorch DCGAN example (Radford et al.): z [batch,nz,1,1] ->
//          ConvTranspose(4, stride 1) to 4x4, then ConvTranspose(4, stride 2, pad 1) + BN + ReLU
//          doubling the size and halving the channels until `image`, Tanh at the end.
//          Knobs: batch, nz (latent size), ngf (base width), image (a power of two >= 8).
#include "zoo/families.h"

namespace tlm::zoo {

void build_dcgan(ModelBuilder& b, const ZooSpec& spec) {
  int64_t nz = param(spec, "nz"), ngf = param(spec, "ngf"), image = param(spec, "image");
  int upsamples = 0;  // stride-2 layers after the 4x4 stem
  while ((int64_t{4} << upsamples) < image) upsamples++;
  if ((int64_t{4} << upsamples) != image || upsamples < 1)
    TLM_USER_ERROR() << "dcgan: image=" << image << " must be a power of two >= 8";

  ValueId x = b.g.add_input("z", DType::F32, {param(spec, "batch"), nz, 1, 1});
  int64_t width = ngf << (upsamples - 1);  // 64x64: ngf*8 at 4x4
  x = conv_transpose2d(b, "main.0", x, width, 4, 1, 0, false);
  x = relu(b, batch_norm(b, "main.1", x));
  for (int i = 1; i < upsamples; i++) {
    std::string name = "main.up" + std::to_string(i);
    x = conv_transpose2d(b, name, x, width >> i, 4, 2, 1, false);
    x = relu(b, batch_norm(b, name + ".bn", x));
  }
  x = conv_transpose2d(b, "main.out", x, 3, 4, 2, 1, false);
  b.g.mark_output(unary(b, Op::Tanh, x));
}

}  // namespace tlm::zoo
