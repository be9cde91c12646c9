// A CPU model of the MoE forward chains' bound against their mutants: fused_moe_fwd_lora
// (R = 8) and the non-Lora family (moe_ep_wide, moe_ep_balanced, fused_moe_fwd, moe_ep_narrow:
// R = 0), at the specs' input distributions. Per output element: the exact value (fp64), the
// oracle's scale as problems/moe/moe_oracle.cuh computes it, and, against 2 u factor scale,
// the reference's bf16 roundings, fp32 throughout, and the mutants' bugs (GELU for SiLU, the
// down bias missing, the top-K renormalised, experts round robin, the softmax skipping expert
// 0). It prints per implementation the worst err/bound, the best and median call's worst, and
// the share of elements over the bound. It found the twenty-third session's thin catches
// (bench/RESULTS.md) and matches that visit's GPU numbers where both exist (non-Lora pkb:
// gelu_for_silu 2.90-3.04 here, 3.04-3.05 measured).
//
// Build: g++ -O2 -std=c++20 -o /tmp/moe-margins scripts/models/moe_mutant_margins.cc
// Run:   /tmp/moe-margins N I E EL W R CALLS TOKENS_PER_CALL SEED [key=value ...]
//   the dims of a preset at world W (E, EL from the spec; TOKENS_PER_CALL the rows of one call,
//   e.g. tiny's 8 per rank x W), then the input ranges (uniform +-value) and the model's knobs:
//   wg bg wu bu wd bd (the MLP), ag Bg au Bu ad Bd (the adapters), gbias (router bias +-int),
//   lam (the random walk's lambda), walk=1 (non-Lora I-term as a random walk), deriv=1
//   (|silu'(g)| + u e_g / 4 in place of the oracle's 1.1), slack (the 3|y| term), factor.
//   The defaults are moe_ep_wide's ranges; fused_moe_fwd_lora's (its pkb at W = 2):
//   /tmp/moe-margins 1024 128 8 4 2 8 8 64 1 wg=0.0625 bg=0.015625 wu=0.0625 bu=0.015625 wd=0.125 bd=0.0078125
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

constexpr double kU = 1.0 / 256;
float bf16(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b += 0x7fff + ((b >> 16) & 1);
  b &= 0xffff0000u;
  float y;
  std::memcpy(&y, &b, 4);
  return y;
}
double fp32_accumulation(int64_t n) { return std::fmin(double(n), 4 * std::sqrt(double(n))) * std::ldexp(1.0, -24) / kU; }

struct Ranges {
  double wg = 0.03125, bg = 0.03125, wu = 0.03125, bu = 0.03125, wd = 0.08838834764831845, bd = 0.08838834764831845;
  double ag = 0.0625, Bg = 0.625, au = 0.0625, Bu = 0.625, ad = 0.125, Bd = 0.625;
  int gbias = 64;
  double lam = 4;       // random-walk lambda (Lora, and non-Lora when walk)
  bool walk = false;    // non-Lora: random walk over I instead of worst case
  int slack = 3;        // the "3|y|" term
  bool deriv = false;   // |silu'(g)| + 0.25 u e_g instead of 1.1
};

struct Mlp {
  int N, I, R;
  std::vector<float> Wg, bg, Wu, bu, Wd, bd, Ag, Bg, Au, Bu, Ad, Bd;
};

std::vector<float> uni(std::mt19937& g, size_t n, double a) {
  std::uniform_real_distribution<double> d(-a, a);
  std::vector<float> v(n);
  for (auto& x : v) x = bf16(float(d(g)));
  return v;
}

Mlp make_mlp(std::mt19937& g, int N, int I, int R, const Ranges& r) {
  Mlp m{N, I, R};
  m.Wg = uni(g, size_t(I) * N, r.wg), m.bg = uni(g, I, r.bg), m.Wu = uni(g, size_t(I) * N, r.wu), m.bu = uni(g, I, r.bu);
  m.Wd = uni(g, size_t(N) * I, r.wd), m.bd = uni(g, N, r.bd);
  if (R) {
    m.Ag = uni(g, size_t(R) * N, r.ag), m.Bg = uni(g, size_t(I) * R, r.Bg), m.Au = uni(g, size_t(R) * N, r.au);
    m.Bu = uni(g, size_t(I) * R, r.Bu), m.Ad = uni(g, size_t(R) * I, r.ad), m.Bd = uni(g, size_t(N) * R, r.Bd);
  }
  return m;
}

double silu(double v) { return v / (1 + std::exp(-v)); }
float gelu_tanh(float g) { return 0.5f * g * (1.0f + tanhf(0.7978845608f * (g + 0.044715f * g * g * g))); }

// Exact y (fp64) and the oracle's e_y + slack |y| (the per-slot scale before p).
void exact_mlp(const Mlp& m, const std::vector<float>& x, const Ranges& rg, std::vector<double>& y,
               std::vector<double>& sc) {
  const int N = m.N, I = m.I, R = m.R;
  const double accN = fp32_accumulation(N), accI = fp32_accumulation(I), accR = R ? fp32_accumulation(R) : 0;
  std::vector<double> av(I), ea(I);
  std::vector<double> xg(R), qg(R), xu(R), qu(R);
  for (int k = 0; k < R; ++k) {
    double s1 = 0, m1 = 0, s2 = 0, m2 = 0;
    for (int n = 0; n < N; ++n) {
      s1 += x[n] * double(m.Ag[k * N + n]), m1 += std::fabs(x[n] * double(m.Ag[k * N + n]));
      s2 += x[n] * double(m.Au[k * N + n]), m2 += std::fabs(x[n] * double(m.Au[k * N + n]));
    }
    xg[k] = s1, qg[k] = accR * std::fabs(s1) + std::fabs(s1) + accN * m1;
    xu[k] = s2, qu[k] = accR * std::fabs(s2) + std::fabs(s2) + accN * m2;
  }
  for (int i = 0; i < I; ++i) {
    double gs = 0, gm = 0, us = 0, um = 0;
    for (int n = 0; n < N; ++n) {
      const double a = x[n] * double(m.Wg[size_t(i) * N + n]), b = x[n] * double(m.Wu[size_t(i) * N + n]);
      gs += a, gm += std::fabs(a), us += b, um += std::fabs(b);
    }
    double gv = gs + m.bg[i], uv = us + m.bu[i];
    double eg = std::fabs(gv) + accN * (gm + std::fabs(m.bg[i]));
    double eu = std::fabs(uv) + accN * (um + std::fabs(m.bu[i]));
    if (R) {
      double GL = 0, GLe = 0, UL = 0, ULe = 0;
      for (int k = 0; k < R; ++k) {
        GL += xg[k] * m.Bg[i * R + k], GLe += qg[k] * std::fabs(m.Bg[i * R + k]);
        UL += xu[k] * m.Bu[i * R + k], ULe += qu[k] * std::fabs(m.Bu[i * R + k]);
      }
      gv += GL, uv += UL;
      eg += std::fabs(gv) + std::fabs(GL) + GLe;
      eu += std::fabs(uv) + std::fabs(UL) + ULe;
    }
    const double s = silu(gv);
    av[i] = s * uv;
    const double sg = 1 / (1 + std::exp(-gv)), d1 = std::fabs(sg * (1 + gv * (1 - sg)));
    const double es = std::fabs(s) + (rg.deriv ? d1 + 0.25 * kU * eg : 1.1) * eg;
    ea[i] = std::fabs(av[i]) + std::fabs(uv) * es + std::fabs(s) * eu;
  }
  std::vector<double> xd(R), qd(R);
  for (int k = 0; k < R; ++k) {
    double s = 0, mg = 0, sq = 0;
    for (int i = 0; i < I; ++i) {
      const double w = m.Ad[k * I + i];
      s += av[i] * w, mg += std::fabs(av[i] * w), sq += ea[i] * ea[i] * w * w;
    }
    xd[k] = s, qd[k] = accR * std::fabs(s) + std::fabs(s) + accI * mg + rg.lam * std::sqrt(sq);
  }
  y.assign(N, 0), sc.assign(N, 0);
  for (int n = 0; n < N; ++n) {
    double Y = 0, mg = 0, sq = 0, worst = 0;
    for (int i = 0; i < I; ++i) {
      const double w = m.Wd[size_t(n) * I + i];
      Y += av[i] * w, mg += std::fabs(av[i] * w), sq += ea[i] * ea[i] * w * w, worst += ea[i] * std::fabs(w);
    }
    double Ey;
    if (R || rg.walk) Ey = accI * mg + rg.lam * std::sqrt(sq);
    else Ey = accI * mg + worst;
    double yv = Y + m.bd[n];
    double ey = Ey + accI * std::fabs(m.bd[n]) + std::fabs(yv);
    if (R) {
      double DL = 0, DLe = 0;
      for (int k = 0; k < R; ++k) DL += xd[k] * m.Bd[n * R + k], DLe += qd[k] * std::fabs(m.Bd[n * R + k]);
      ey += std::fabs(DL) + DLe;
      yv += DL;
      ey += std::fabs(yv);
    }
    y[n] = yv, sc[n] = ey + rg.slack * std::fabs(yv);
  }
}

// mode: 0 reference bf16 roundings, 1 fp32 throughout (no rounding). act: 0 silu, 1 gelu. bias: down bias on.
std::vector<float> impl_mlp(const Mlp& m, const std::vector<float>& x, int mode, int act, bool bias) {
  const int N = m.N, I = m.I, R = m.R;
  auto rb = [&](float v) { return mode == 0 ? bf16(v) : v; };
  std::vector<float> xg(R), xu(R), a(I);
  for (int k = 0; k < R; ++k) {
    float s1 = 0, s2 = 0;
    for (int n = 0; n < N; ++n) s1 += x[n] * m.Ag[k * N + n], s2 += x[n] * m.Au[k * N + n];
    xg[k] = rb(s1), xu[k] = rb(s2);
  }
  for (int i = 0; i < I; ++i) {
    float gs = 0, us = 0;
    for (int n = 0; n < N; ++n) gs += x[n] * m.Wg[size_t(i) * N + n], us += x[n] * m.Wu[size_t(i) * N + n];
    float g = rb(gs + m.bg[i]), u = rb(us + m.bu[i]);
    if (R) {
      float GL = 0, UL = 0;
      for (int k = 0; k < R; ++k) GL += xg[k] * m.Bg[i * R + k], UL += xu[k] * m.Bu[i * R + k];
      g = rb(g + rb(GL)), u = rb(u + rb(UL));
    }
    const float s = act == 0 ? g / (1.0f + expf(-g)) : gelu_tanh(g);
    a[i] = rb(rb(s) * u);
  }
  std::vector<float> xd(R);
  for (int k = 0; k < R; ++k) {
    float s = 0;
    for (int i = 0; i < I; ++i) s += a[i] * m.Ad[k * I + i];
    xd[k] = rb(s);
  }
  std::vector<float> y(N);
  for (int n = 0; n < N; ++n) {
    float Y = 0;
    for (int i = 0; i < I; ++i) Y += a[i] * m.Wd[size_t(n) * I + i];
    float v = rb(Y + (bias ? m.bd[n] : 0.0f));
    if (R) {
      float DL = 0;
      for (int k = 0; k < R; ++k) DL += xd[k] * m.Bd[n * R + k];
      v = rb(v + rb(DL));
    }
    y[n] = v;
  }
  return y;
}

struct Stat {
  double worst = 0;
  long over = 0, total = 0;
  std::vector<double> call_worst;
};

int main(int argc, char** argv) {
  // args: N I E EL W R calls tokens_per_call seed [key=value ...]
  if (argc < 10) {
    std::fprintf(stderr, "usage: N I E EL W R calls tokens seed [k=v]\n");
    return 2;
  }
  const int N = atoi(argv[1]), I = atoi(argv[2]), E = atoi(argv[3]), EL = atoi(argv[4]), W = atoi(argv[5]),
            R = atoi(argv[6]), calls = atoi(argv[7]), T = atoi(argv[8]);
  const uint32_t seed = atoi(argv[9]);
  const int K = 2, G = W;
  Ranges rg;
  double factor = 2;
  for (int i = 10; i < argc; ++i) {
    std::string s = argv[i];
    auto eq = s.find('=');
    std::string k = s.substr(0, eq);
    double v = atof(s.c_str() + eq + 1);
    if (k == "wg") rg.wg = v; else if (k == "bg") rg.bg = v; else if (k == "wu") rg.wu = v; else if (k == "bu") rg.bu = v;
    else if (k == "wd") rg.wd = v; else if (k == "bd") rg.bd = v; else if (k == "ag") rg.ag = v; else if (k == "Bg") rg.Bg = v;
    else if (k == "au") rg.au = v; else if (k == "Bu") rg.Bu = v; else if (k == "ad") rg.ad = v; else if (k == "Bd") rg.Bd = v;
    else if (k == "lam") rg.lam = v; else if (k == "walk") rg.walk = v != 0; else if (k == "factor") factor = v;
    else if (k == "deriv") rg.deriv = v != 0; else if (k == "slack") rg.slack = int(v); else if (k == "gbias") rg.gbias = int(v);
    else { std::fprintf(stderr, "unknown %s\n", k.c_str()); return 2; }
  }
  std::mt19937 gen(seed);
  const char* names[] = {"reference", "fp32", "gelu_for_silu", "down_bias_missing", "topk_renormalised",
                         "experts_round_robin", "softmax_skips_0"};
  const int NI = 7;
  std::vector<Stat> st(NI);
  double rms_y = 0, rms_g = 0;
  long ny = 0;
  for (int c = 0; c < calls; ++c) {
    std::vector<Mlp> mlps;
    for (int q = 0; q < W; ++q) mlps.push_back(make_mlp(gen, N, I, R, rg));
    // the router of rank 0 (any rank: same distribution)
    std::uniform_int_distribution<int> d3(-1, 1), db(-rg.gbias, rg.gbias);
    std::vector<int> gw(size_t(E) * N), gb(E);
    for (auto& v : gw) v = d3(gen);
    for (auto& v : gb) v = db(gen);
    std::vector<double> cw(NI, 0);
    for (int t = 0; t < T; ++t) {
      std::vector<float> x(N);
      for (auto& v : x) v = float(d3(gen));
      std::vector<float> l(E);
      float mx = -INFINITY;
      for (int e = 0; e < E; ++e) {
        int s = gb[e];
        for (int n = 0; n < N; ++n) s += int(x[n]) * gw[size_t(e) * N + n];
        l[e] = bf16(float(s));
        mx = std::max(mx, l[e]);
      }
      double dsum = 0;
      float fsum = 0, fsum1 = 0;
      for (int e = 0; e < E; ++e) dsum += std::exp(double(l[e]) - mx), fsum += expf(l[e] - mx);
      for (int e = 1; e < E; ++e) fsum1 += expf(l[e] - mx);
      int sel[2];
      int first = -1;
      for (int j = 0; j < K; ++j) {
        int best = -1;
        for (int e = 0; e < E; ++e)
          if (e != first && (best < 0 || l[e] > l[best])) best = e;
        sel[j] = first = best;
      }
      double pe[2];
      float pb[2], pr[2], p5[2];
      for (int j = 0; j < K; ++j) {
        pe[j] = std::exp(double(l[sel[j]]) - mx) / dsum;
        pb[j] = bf16(expf(l[sel[j]] - mx) / fsum);
        p5[j] = bf16(expf(l[sel[j]] - mx) / fsum1);
      }
      const float kept = pb[0] + pb[1];
      for (int j = 0; j < K; ++j) pr[j] = bf16(pb[j] / kept);
      // per slot: exact, scale, and implementations
      std::vector<double> ex(N, 0), sc(N, 0);
      std::vector<std::vector<float>> yref(K), yf32(K), ygelu(K), ynob(K), yrr(K);
      for (int j = 0; j < K; ++j) {
        const Mlp& m = mlps[sel[j] / EL];
        std::vector<double> y, s;
        exact_mlp(m, x, rg, y, s);
        for (int n = 0; n < N; ++n) ex[n] += pe[j] * y[n], sc[n] += pe[j] * s[n];
        for (int n = 0; n < N; ++n) rms_y += y[n] * y[n];
        ny += N;
        yref[j] = impl_mlp(m, x, 0, 0, true);
        yf32[j] = impl_mlp(m, x, 1, 0, true);
        ygelu[j] = impl_mlp(m, x, 0, 1, true);
        ynob[j] = impl_mlp(m, x, 0, 0, false);
        const int rr = sel[j] % G;
        yrr[j] = rr == sel[j] / EL ? yref[j] : impl_mlp(mlps[rr], x, 0, 0, true);
      }
      auto combine = [&](const std::vector<std::vector<float>>& y, const float* p, int n, bool round) {
        float acc = 0;
        for (int j = 0; j < K; ++j) acc = round ? bf16(acc + bf16(p[j] * y[j][n])) : acc + p[j] * y[j][n];
        return double(bf16(acc));
      };
      for (int n = 0; n < N; ++n) {
        const double bound = factor * kU * sc[n];
        double got[NI] = {combine(yref, pb, n, true), combine(yf32, pb, n, false), combine(ygelu, pb, n, true),
                          combine(ynob, pb, n, true),  combine(yref, pr, n, true),  combine(yrr, pb, n, true),
                          combine(yref, p5, n, true)};
        for (int k = 0; k < NI; ++k) {
          const double r = std::fabs(got[k] - ex[n]) / bound;
          cw[k] = std::max(cw[k], r);
          st[k].over += r > 1;
          st[k].total++;
        }
      }
    }
    for (int k = 0; k < NI; ++k) st[k].worst = std::max(st[k].worst, cw[k]), st[k].call_worst.push_back(cw[k]);
  }
  std::printf("N=%d I=%d E=%d EL=%d W=%d R=%d calls=%d tokens/call=%d  rms(y)=%.3g\n", N, I, E, EL, W, R, calls, T,
              std::sqrt(rms_y / ny));
  for (int k = 0; k < NI; ++k) {
    auto cwv = st[k].call_worst;
    std::sort(cwv.begin(), cwv.end());
    std::printf("  %-20s worst %8.3f  min-call-worst %8.3f  median-call-worst %8.3f  over %6.2f%%\n", names[k],
                st[k].worst, cwv.front(), cwv[cwv.size() / 2], 100.0 * st[k].over / st[k].total);
  }
}
