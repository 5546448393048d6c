// Interpreter rows for the anchors: Conv, ConvTranspose, ConvNchwc, Gemm, MatMul, MaxPool,
// AveragePool, GlobalAveragePool (float32, any number of spatial dims).
//
// These are naive in what they compute and only as clever as needed to verify whole models in
// seconds: Conv is im2col + gemm_acc (C += A*B with the inner loop on contiguous output
// columns), built a bounded chunk of output lines at a time; ConvNchwc unblocks its operands
// (docs/layout.md), runs that Conv and blocks the result; ConvTranspose is gemm_acc +
// col2im; MatMul calls gemm_acc per batch; Gemm too, except that a few rows against a
// transposed weight [N, K] are plain dot products. Work is split over threads with
// parallel_for along output rows, or along (batch, group) when there are many. Nodes beyond
// 2^40 multiply-adds are refused (UserError). Pools: MaxPool pads with -inf; AveragePool divides by
// the window clipped to the padded input (count_include_pad=1) or by its valid elements
// (count_include_pad=0).
#include <algorithm>
#include <cmath>

#include "graph/interp_common.h"

namespace tlm {
namespace {

// Walks a multi-index over `extent` in row-major order; returns false after the last one.
bool next_index(std::vector<int64_t>& idx, const std::vector<int64_t>& extent) {
  for (int d = (int)idx.size() - 1; d >= 0; d--) {
    if (++idx[d] < extent[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// C[M,N] += A[M,K] * B[K,N], splitting rows (or, for few rows, column blocks) over threads.
void gemm_parallel(int64_t M, int64_t N, int64_t K, const float* A, int64_t lda, const float* B,
                   int64_t ldb, float* C, int64_t ldc) {
  const double work = 2.0 * M * N * K;
  if (M >= 32) {
    const int64_t blocks = (M + 3) / 4;  // 4-row blocks match gemm_acc's register tile
    parallel_rows(blocks, work, [&](int64_t b, int64_t e) {
      const int64_t r0 = b * 4, r1 = std::min(M, e * 4);
      gemm_acc(r1 - r0, N, K, A + r0 * lda, lda, B, ldb, C + r0 * ldc, ldc);
    });
  } else {
    constexpr int64_t kCols = 256;
    parallel_rows((N + kCols - 1) / kCols, work, [&](int64_t b, int64_t e) {
      const int64_t c0 = b * kCols, c1 = std::min(N, e * kCols);
      gemm_acc(M, c1 - c0, K, A, lda, B + c0, ldb, C + c0, ldc);
    });
  }
}

// The transpose of a 2-D tensor, copied in 32x32 tiles so that both sides stay in cache.
std::vector<float> transposed(const Tensor& t) {
  const int64_t rows = t.shape()[0], cols = t.shape()[1];
  const float* src = t.data<float>();
  std::vector<float> dst(rows * cols);
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0; i < std::min(rows, i0 + kTile); i++)
        for (int64_t j = j0; j < std::min(cols, j0 + kTile); j++)
          dst[j * rows + i] = src[i * cols + j];
  return dst;
}

// sum_k a[k] * b[k], in 8 interleaved partial sums (which the compiler can vectorize without
// reassociating; the order is fixed, so the result is deterministic).
float dot(const float* a, const float* b, int64_t n) {
  float part[8] = {};
  int64_t k = 0;
  for (; k + 8 <= n; k += 8)
    for (int u = 0; u < 8; u++) part[u] += a[k + u] * b[k + u];
  float sum = 0;
  for (; k < n; k++) sum += a[k] * b[k];
  for (int u = 0; u < 8; u++) sum += part[u];
  return sum;
}

// Geometry shared by Conv and ConvTranspose: the "image" side has extents `img`, the "column"
// side (the conv output, or the ConvTranspose input) has `cols`; position p on the column side
// and kernel offset k touch image position p*stride + k*dilation - pad_begin. Column positions
// are grouped in "lines" along the innermost spatial dim (lines * line = col_size); the column
// matrix is built a chunk of lines at a time, so its memory stays bounded for any shape.
struct ConvGeom {
  int sp;
  std::vector<int64_t> img, cols, kernel, stride, dil, pad;
  int64_t img_size, col_size, k_size, line, lines;
};

ConvGeom conv_geom(const Node& n, const Shape& img, const Shape& cols, const Shape& w) {
  ConvGeom g;
  g.sp = (int)img.size() - 2;
  g.img.assign(img.begin() + 2, img.end());
  g.cols.assign(cols.begin() + 2, cols.end());
  g.kernel.assign(w.begin() + 2, w.end());
  g.stride = n.ints("strides");
  g.dil = n.ints("dilations");
  g.pad = n.ints("pads");
  g.img_size = numel(g.img);
  g.col_size = numel(g.cols);
  g.k_size = numel(g.kernel);
  g.line = g.cols.back();
  g.lines = g.col_size / g.line;
  return g;
}

// Lines per chunk so that a column matrix of `rows` rows stays under ~64 MB.
int64_t lines_per_chunk(const ConvGeom& g, int64_t rows) {
  constexpr int64_t kChunkFloats = int64_t(1) << 24;
  return std::max<int64_t>(1, kChunkFloats / std::max<int64_t>(1, rows * g.line));
}

// For every (channel c, kernel offset k) row in [r0, r1) of channels*k_size and every
// column-side position p in lines [q0, q1), calls f(row, p - q0*line, image offset) where the
// tap falls inside the image.
template <typename F>
void for_each_tap(const ConvGeom& g, int64_t r0, int64_t r1, int64_t q0, int64_t q1, F f) {
  const int last = g.sp - 1;
  const std::vector<int64_t> img_st = strides_of(g.img);
  const std::vector<int64_t> outer_cols(g.cols.begin(), g.cols.end() - 1);
  for (int64_t r = r0; r < r1; r++) {
    const int64_t ch = r / g.k_size;
    std::vector<int64_t> k(g.sp), p(g.sp - 1);
    for (int64_t rem = r % g.k_size, d = g.sp - 1; d >= 0; d--) {
      k[d] = rem % g.kernel[d];
      rem /= g.kernel[d];
    }
    for (int64_t rem = q0, d = g.sp - 2; d >= 0; d--) {
      p[d] = rem % outer_cols[d];
      rem /= outer_cols[d];
    }
    const int64_t s = g.stride[last], o = k[last] * g.dil[last] - g.pad[last];
    for (int64_t q = q0; q < q1; q++, next_index(p, outer_cols)) {
      int64_t img_off = ch * g.img_size;
      bool inside = true;
      for (int d = 0; d < last; d++) {
        const int64_t i = p[d] * g.stride[d] + k[d] * g.dil[d] - g.pad[d];
        inside = inside && i >= 0 && i < g.img[d];
        img_off += i * img_st[d];
      }
      if (!inside) continue;
      const int64_t pbase = (q - q0) * g.line;
      for (int64_t x = 0; x < g.line; x++) {
        const int64_t i = x * s + o;
        if (i >= 0 && i < g.img[last]) f(r, pbase + x, img_off + i);
      }
    }
  }
}

// col[(c, k), p] = image[c, p*stride + k*dil - pad] (0 outside) for lines [q0, q1); the
// matrix has rows*(q1-q0)*line entries, row-major.
void im2col(const ConvGeom& g, int64_t rows, int64_t q0, int64_t q1, const float* img,
            std::vector<float>& col, bool parallel) {
  const int64_t width = (q1 - q0) * g.line;
  col.assign(rows * width, 0.f);
  auto fill = [&](int64_t r0, int64_t r1) {
    for_each_tap(g, r0, r1, q0, q1,
                 [&](int64_t r, int64_t p, int64_t i) { col[r * width + p] = img[i]; });
  };
  if (parallel)
    parallel_rows(rows, (double)rows * width, fill);
  else
    fill(0, rows);
}

// Whole-node work beyond 2^40 multiply-adds (minutes to hours here) is refused rather than
// run: only a malformed model gets there, and constant folding must not hang on it.
void check_work(const EvalCtx& c, double macs) {
  if (macs > std::ldexp(1.0, 40))
    TLM_NODE_ERROR(c.node) << "needs " << macs
                           << " multiply-adds, too many for the reference interpreter";
}

bool is_pointwise(const ConvGeom& g) {
  for (int d = 0; d < g.sp; d++)
    if (g.kernel[d] != 1 || g.stride[d] != 1 || g.pad[d] != 0 || g.pad[g.sp + d] != 0) return false;
  return true;
}

Tensor pool(const EvalCtx& c, bool is_max) {
  Tensor out(c.out_dtype, c.out_shape);
  const Node& n = c.node;
  const Shape& xs = c.in[0]->shape();
  const int sp = (int)xs.size() - 2;
  const std::vector<int64_t> kernel = n.ints("kernel_shape"), stride = n.ints("strides"),
                             pad = n.ints("pads");
  const std::vector<int64_t> dil = is_max ? n.ints("dilations") : std::vector<int64_t>(sp, 1);
  const bool include_pad = !is_max && n.i("count_include_pad") != 0;
  const std::vector<int64_t> img(xs.begin() + 2, xs.end());
  const std::vector<int64_t> outs(c.out_shape.begin() + 2, c.out_shape.end());
  const std::vector<int64_t> img_st = strides_of(img);
  const int64_t img_size = numel(img), out_size = numel(outs), planes = xs[0] * xs[1];
  check_work(c, (double)planes * out_size * numel(kernel));
  const float* x = c.in[0]->data<float>();
  float* y = out.data<float>();
  parallel_rows(planes, (double)planes * out_size * numel(kernel), [&](int64_t b, int64_t e) {
    for (int64_t plane = b; plane < e; plane++) {
      const float* src = x + plane * img_size;
      std::vector<int64_t> o(sp, 0);
      for (int64_t oi = 0; oi < out_size; oi++, next_index(o, outs)) {
        float mx = -INFINITY;
        double sum = 0;
        int64_t valid = 0, padded = 1;
        std::vector<int64_t> k(sp, 0);
        do {
          int64_t off = 0;
          bool inside = true;
          for (int d = 0; d < sp; d++) {
            const int64_t i = o[d] * stride[d] + k[d] * dil[d] - pad[d];
            inside = inside && i >= 0 && i < img[d];
            off += i * img_st[d];
          }
          if (!inside) continue;
          const float v = src[off];
          mx = std::max(mx, v);
          sum += v;
          valid++;
        } while (next_index(k, kernel));
        if (is_max) {
          y[plane * out_size + oi] = mx;
          continue;
        }
        // The window clipped to the padded input [-pad_begin, in + pad_end), per dim.
        for (int d = 0; d < sp; d++) {
          const int64_t lo = o[d] * stride[d] - pad[d];
          const int64_t hi = std::min(lo + kernel[d], img[d] + pad[sp + d]);
          padded *= hi - lo;
        }
        const int64_t count = include_pad ? padded : valid;
        y[plane * out_size + oi] = count ? (float)(sum / count) : 0.f;
      }
    }
  });
  return out;
}

}  // namespace

Tensor eval_Conv(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const Shape &xs = c.in[0]->shape(), &ws = c.in[1]->shape();
  const ConvGeom g = conv_geom(c.node, xs, c.out_shape, ws);
  const int64_t group = c.node.i("group"), N = xs[0], cin = xs[1], cout = ws[0];
  const int64_t cin_g = cin / group, cout_g = cout / group, kc = cin_g * g.k_size;
  const float* x = c.in[0]->data<float>();
  const float* w = c.in[1]->data<float>();
  const float* bias = c.in.size() > 2 && c.in[2] ? c.in[2]->data<float>() : nullptr;
  float* y = out.data<float>();
  for (int64_t i = 0; i < N * cout; i++)
    std::fill(y + i * g.col_size, y + (i + 1) * g.col_size, bias ? bias[i % cout] : 0.f);
  check_work(c, (double)N * cout * kc * g.col_size);
  const bool pointwise = is_pointwise(g);
  const int64_t chunk = lines_per_chunk(g, kc);
  // One (image, group) pair, a chunk of output lines at a time: im2col, then
  // Y_g[cout_g, chunk] += W_g[cout_g, kc] * col[kc, chunk].
  auto run = [&](int64_t n, int64_t gi, std::vector<float>& col, bool inner_parallel) {
    const float* img = x + (n * cin + gi * cin_g) * g.img_size;
    const float* wg = w + gi * cout_g * kc;
    float* yg = y + (n * cout + gi * cout_g) * g.col_size;
    for (int64_t q0 = 0; q0 < g.lines; q0 += chunk) {
      const int64_t q1 = std::min(g.lines, q0 + chunk), width = (q1 - q0) * g.line;
      const float* b = img + q0 * g.line;  // a pointwise conv reads X as the column matrix
      int64_t ldb = g.col_size;
      if (!pointwise) {
        im2col(g, kc, q0, q1, img, col, inner_parallel);
        b = col.data();
        ldb = width;
      }
      float* yc = yg + q0 * g.line;
      if (inner_parallel)
        gemm_parallel(cout_g, width, kc, wg, kc, b, ldb, yc, g.col_size);
      else
        gemm_acc(cout_g, width, kc, wg, kc, b, ldb, yc, g.col_size);
    }
  };
  const int64_t pairs = N * group;
  if (pairs >= 8) {  // many small problems (depthwise, batches): one pair per task
    const double work = 2.0 * N * cout * kc * g.col_size;
    parallel_rows(pairs, work, [&](int64_t b, int64_t e) {
      std::vector<float> col;
      for (int64_t p = b; p < e; p++) run(p / group, p % group, col, false);
    });
  } else {
    std::vector<float> col;
    for (int64_t p = 0; p < pairs; p++) run(p / group, p % group, col, true);
  }
  return out;
}

namespace {

// Between a blocked layout [groups][n][B] (the lane innermost) and its plain form
// [groups][B][n]: `to_plain` reads the first and writes the second, else the reverse.
void swap_lanes(const float* src, float* dst, int64_t groups, int64_t n, int64_t B, bool to_plain) {
  for (int64_t g = 0; g < groups; g++)
    for (int64_t p = 0; p < n; p++)
      for (int64_t l = 0; l < B; l++) {
        const int64_t blocked = (g * n + p) * B + l, plain = (g * B + l) * n + p;
        dst[to_plain ? plain : blocked] = src[to_plain ? blocked : plain];
      }
}

}  // namespace

// ConvNchwc (graph/shape_infer.cc): the plain Conv on unblocked operands, its output blocked.
Tensor eval_ConvNchwc(const EvalCtx& c) {
  const Shape &xs = c.in[0]->shape(), &ws = c.in[1]->shape();
  const int64_t B = ws.back(), cob = ws[0];
  Tensor w;
  if (ws.size() == 6) {
    // W [Co/B, Ci/B, kh, kw, B_in, B_out] -> [Co, Ci, kh, kw].
    const int64_t cib = ws[1], k = ws[2] * ws[3];
    w = Tensor(DType::F32, {cob * B, cib * B, ws[2], ws[3]});
    const float* src = c.in[1]->data<float>();
    float* dst = w.data<float>();
    for (int64_t o = 0; o < cob; o++)
      for (int64_t i = 0; i < cib; i++)
        for (int64_t p = 0; p < k; p++)
          for (int64_t bi = 0; bi < B; bi++)
            for (int64_t bo = 0; bo < B; bo++)
              dst[((o * B + bo) * cib * B + i * B + bi) * k + p] =
                  src[(((o * cib + i) * k + p) * B + bi) * B + bo];
  } else {
    // W [Co/B, Cg, kh, kw, B] -> [Co, Cg, kh, kw].
    w = Tensor(DType::F32, {cob * B, ws[1], ws[2], ws[3]});
    swap_lanes(c.in[1]->data<float>(), w.data<float>(), cob, ws[1] * ws[2] * ws[3], B, true);
  }
  // X [N, C/B, H, W, B] -> [N, C, H, W] (a plain X is used as it is).
  Tensor x;
  if (xs.size() == 5) {
    x = Tensor(DType::F32, {xs[0], xs[1] * B, xs[2], xs[3]});
    swap_lanes(c.in[0]->data<float>(), x.data<float>(), xs[0] * xs[1], xs[2] * xs[3], B, true);
  }
  Node conv = c.node;
  conv.op = Op::Conv;
  if (!conv.has("group")) conv.attrs["group"] = int64_t{1};
  std::vector<const Tensor*> ins = {xs.size() == 5 ? &x : c.in[0], &w};
  // The bias [Co/B, B] is already [Co] in memory (eval_Conv reads it by channel).
  if (c.in.size() > 2 && c.in[2]) ins.push_back(c.in[2]);
  const Shape plain = {c.out_shape[0], cob * B, c.out_shape[2], c.out_shape[3]};
  Tensor y = eval_Conv(EvalCtx{conv, ins, DType::F32, plain});
  Tensor out(DType::F32, c.out_shape);
  swap_lanes(y.data<float>(), out.data<float>(), plain[0] * cob, plain[2] * plain[3], B, false);
  return out;
}

Tensor eval_ConvTranspose(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const Shape &xs = c.in[0]->shape(), &ws = c.in[1]->shape();
  // The output is the "image" side, the input the "column" side.
  const ConvGeom g = conv_geom(c.node, c.out_shape, xs, ws);
  const int64_t group = c.node.i("group"), N = xs[0], cin = xs[1];
  const int64_t cin_g = cin / group, cout_g = ws[1], cout = cout_g * group;
  const int64_t rows = cout_g * g.k_size;  // (oc, k) rows of the column matrix
  const float* x = c.in[0]->data<float>();
  const float* w = c.in[1]->data<float>();
  const float* bias = c.in.size() > 2 && c.in[2] ? c.in[2]->data<float>() : nullptr;
  float* y = out.data<float>();
  for (int64_t i = 0; i < N * cout; i++)
    std::fill(y + i * g.img_size, y + (i + 1) * g.img_size, bias ? bias[i % cout] : 0.f);
  check_work(c, (double)N * group * rows * cin_g * g.col_size);
  const int64_t chunk = lines_per_chunk(g, rows);
  std::vector<float> wt(rows * cin_g), col;
  for (int64_t gi = 0; gi < group; gi++) {
    // W_g is [cin_g, rows]; transpose it so the column matrix is one gemm: col = W_g^T * X_g.
    const float* wg = w + gi * cin_g * rows;
    for (int64_t ci = 0; ci < cin_g; ci++)
      for (int64_t r = 0; r < rows; r++) wt[r * cin_g + ci] = wg[ci * rows + r];
    for (int64_t n = 0; n < N; n++) {
      const float* xg = x + (n * cin + gi * cin_g) * g.col_size;
      float* yg = y + (n * cout + gi * cout_g) * g.img_size;
      for (int64_t q0 = 0; q0 < g.lines; q0 += chunk) {
        const int64_t q1 = std::min(g.lines, q0 + chunk), width = (q1 - q0) * g.line;
        col.assign(rows * width, 0.f);
        gemm_parallel(rows, width, cin_g, wt.data(), cin_g, xg + q0 * g.line, g.col_size,
                      col.data(), width);
        // col2im: scatter-add each row into its output channel; channels split across threads.
        parallel_rows(cout_g, (double)rows * width, [&](int64_t b, int64_t e) {
          for_each_tap(g, b * g.k_size, e * g.k_size, q0, q1,
                       [&](int64_t r, int64_t p, int64_t i) { yg[i] += col[r * width + p]; });
        });
      }
    }
  }
  return out;
}

Tensor eval_Gemm(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const Node& n = c.node;
  const float alpha = n.f("alpha"), beta = n.f("beta");
  const bool ta = n.i("transA") != 0, tb = n.i("transB") != 0;
  const int64_t M = c.out_shape[0], N = c.out_shape[1];
  const int64_t K = ta ? c.in[0]->shape()[0] : c.in[0]->shape()[1];
  check_work(c, (double)M * N * K);
  const float* a = c.in[0]->data<float>();
  const float* b = c.in[1]->data<float>();
  std::vector<float> at, bt, acc(M * N, 0.f);
  if (ta) a = (at = transposed(*c.in[0])).data();
  if (tb && M <= 8) {
    // B is stored [N, K] (a Linear layer's weight): a few rows of A against each contiguous row
    // of B, instead of transposing a possibly huge weight first.
    parallel_rows(N, 2.0 * M * N * K, [&](int64_t j0, int64_t j1) {
      for (int64_t j = j0; j < j1; j++)
        for (int64_t i = 0; i < M; i++) acc[i * N + j] = dot(a + i * K, b + j * K, K);
    });
  } else {
    if (tb) b = (bt = transposed(*c.in[1])).data();
    gemm_parallel(M, N, K, a, K, b, N, acc.data(), N);
  }
  float* y = out.data<float>();
  const Tensor* C = c.in.size() > 2 ? c.in[2] : nullptr;
  int64_t cr = 1, cc = 1;  // C's extents broadcast over [M, N]
  if (C && C->rank() == 2) cr = C->shape()[0], cc = C->shape()[1];
  if (C && C->rank() == 1) cc = C->shape()[0];
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float v = alpha * acc[i * N + j];
      if (C) v += beta * C->data<float>()[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
      y[i * N + j] = v;
    }
  return out;
}

Tensor eval_MatMul(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  Shape as = c.in[0]->shape(), bs = c.in[1]->shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  // Broadcast batch dims: out batch shape and each operand's batch strides (0 where it is 1).
  const Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  const size_t r = std::max(ab.size(), bb.size());
  Shape batch(r);
  std::vector<int64_t> ast(r, 0), bst(r, 0);
  const std::vector<int64_t> ab_st = strides_of(ab), bb_st = strides_of(bb);
  for (size_t d = 0; d < r; d++) {
    const int64_t da = d < r - ab.size() ? 1 : ab[d - (r - ab.size())];
    const int64_t db = d < r - bb.size() ? 1 : bb[d - (r - bb.size())];
    batch[d] = da == 1 ? db : da;
    if (da != 1) ast[d] = ab_st[d - (r - ab.size())];
    if (db != 1) bst[d] = bb_st[d - (r - bb.size())];
  }
  const int64_t nb = numel(batch);
  check_work(c, (double)nb * M * N * K);
  auto operands = [&](int64_t bi, const float** pa, const float** pb) {
    int64_t oa = 0, ob = 0;
    for (int d = (int)r - 1; d >= 0; d--) {
      const int64_t i = bi % batch[d];
      bi /= batch[d];
      oa += i * ast[d];
      ob += i * bst[d];
    }
    *pa = c.in[0]->data<float>() + oa * M * K;
    *pb = c.in[1]->data<float>() + ob * K * N;
  };
  float* y = out.data<float>();
  if (nb >= 8) {
    parallel_rows(nb, 2.0 * nb * M * N * K, [&](int64_t b, int64_t e) {
      for (int64_t bi = b; bi < e; bi++) {
        const float *pa, *pb;
        operands(bi, &pa, &pb);
        gemm_acc(M, N, K, pa, K, pb, N, y + bi * M * N, N);
      }
    });
  } else {
    for (int64_t bi = 0; bi < nb; bi++) {
      const float *pa, *pb;
      operands(bi, &pa, &pb);
      gemm_parallel(M, N, K, pa, K, pb, N, y + bi * M * N, N);
    }
  }
  return out;
}

Tensor eval_MaxPool(const EvalCtx& c) { return pool(c, true); }
Tensor eval_AveragePool(const EvalCtx& c) { return pool(c, false); }

Tensor eval_GlobalAveragePool(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const Shape& xs = c.in[0]->shape();
  const int64_t planes = xs[0] * xs[1], size = numel(Shape(xs.begin() + 2, xs.end()));
  const float* x = c.in[0]->data<float>();
  for (int64_t p = 0; p < planes; p++) {
    double sum = 0;
    for (int64_t i = 0; i < size; i++) sum += x[p * size + i];
    out.data<float>()[p] = size ? (float)(sum / size) : 0.f;
  }
  return out;
}

}  // namespace tlm
