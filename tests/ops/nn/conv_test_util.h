// Shared by the convolution tests: a case's parameters and a naive direct convolution over 1, 2
// or 3 spatial dims, the reference for Convolution and Convolution_v1.
#pragma once
#include <string>
#include <vector>

#include "op_test_util.h"

namespace symbind::test {

// "(a,b)" / "(a,)" as a tuple parameter.
inline std::string Tup(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

struct ConvCase {
  std::vector<int64_t> kernel, stride, dilate, pad;
  int64_t num_filter = 2, num_group = 1;
  bool no_bias = false;
  ConvCase() = default;
  ConvCase(std::vector<int64_t> k, std::vector<int64_t> s = {}, std::vector<int64_t> d = {},
           std::vector<int64_t> p = {}, int64_t nf = 2, int64_t ng = 1, bool nb = false)
      : kernel(std::move(k)), stride(std::move(s)), dilate(std::move(d)), pad(std::move(p)),
        num_filter(nf), num_group(ng), no_bias(nb) {}
  KwArgs Params() const {
    KwArgs kw = {{"kernel", Tup(kernel)}, {"num_filter", std::to_string(num_filter)},
                 {"num_group", std::to_string(num_group)}, {"no_bias", no_bias ? "True" : "False"}};
    if (!stride.empty()) kw["stride"] = Tup(stride);
    if (!dilate.empty()) kw["dilate"] = Tup(dilate);
    if (!pad.empty()) kw["pad"] = Tup(pad);
    return kw;
  }
  Dims3 K() const { return Align(kernel, 1); }
  Dims3 S() const { return stride.empty() ? Dims3{1, 1, 1} : Align(stride, 1); }
  Dims3 D() const { return dilate.empty() ? Dims3{1, 1, 1} : Align(dilate, 1); }
  Dims3 P() const { return pad.empty() ? Dims3{0, 0, 0} : Align(pad, 0); }
};

inline std::vector<int64_t> Spatial(const TShape& s) {
  return std::vector<int64_t>(s.dims().begin() + 2, s.dims().end());
}

// Direct convolution: out[n,f,o] = b[f] + sum_{c in f's group, k} x[n,c,o*s-p+k*d] w[f,c',k].
inline NDArray NaiveConv(const NDArray& x, const NDArray& w, const NDArray* b, const ConvCase& cc) {
  const TShape& xs = x.shape();
  const int64_t N = xs[0], C = xs[1], F = cc.num_filter, G = cc.num_group;
  Dims3 in = Align(Spatial(xs), 1), k = cc.K(), s = cc.S(), d = cc.D(), p = cc.P(), out;
  for (int i = 0; i < 3; ++i) out[i] = (in[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) / s[i] + 1;
  std::vector<int64_t> os = {N, F};
  for (size_t i = 3 - cc.kernel.size(); i < 3; ++i) os.push_back(out[i]);
  NDArray y{TShape(os)};
  const int64_t Cg = C / G, Fg = F / G;
  int64_t idx = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t f = 0; f < F; ++f)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            double acc = b ? b->GetFlat(f) : 0.0;
            const int64_t gr = f / Fg;
            for (int64_t cl = 0; cl < Cg; ++cl)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    int64_t i0 = o0 * s[0] - p[0] + k0 * d[0], i1 = o1 * s[1] - p[1] + k1 * d[1],
                            i2 = o2 * s[2] - p[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2])
                      continue;
                    int64_t c = gr * Cg + cl;
                    double xv = x.GetFlat((((n * C + c) * in[0] + i0) * in[1] + i1) * in[2] + i2);
                    double wv = w.GetFlat((((f * Cg + cl) * k[0] + k0) * k[1] + k1) * k[2] + k2);
                    acc += xv * wv;
                  }
            y.SetFlat(idx++, static_cast<float>(acc));
          }
  return y;
}

inline TShape WeightShape(const ConvCase& cc, int64_t C) {
  std::vector<int64_t> w = {cc.num_filter, C / cc.num_group};
  w.insert(w.end(), cc.kernel.begin(), cc.kernel.end());
  return TShape(w);
}

}  // namespace symbind::test
