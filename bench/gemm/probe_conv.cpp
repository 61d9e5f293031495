// Section "conv": cuDNN convolutions of representative ResNet-50 layers,
// forward and backward, with a small verified case per layer type.
#include <cstdio>

#include "probe_sections.h"
#include "verify.h"

namespace nodeprobe::gemm {
namespace {

struct Layer {
  const char* name;
  ConvShape shape;        // batch filled in from the options
  bool input_grad;        // the stem's input is the image: no data gradient in training
};

// ResNet-50: the 7x7/2 stem, a 3x3 64->64 at 56x56, a 1x1 256->64 at 56x56.
const Layer kLayers[] = {
    {"conv1_7x7", {0, 3, 224, 224, 64, 7, 7, 3, 2}, false},
    {"res2_3x3", {0, 64, 56, 56, 64, 3, 3, 1, 1}, true},
    {"res2_1x1", {0, 256, 56, 56, 64, 1, 1, 0, 1}, true},
};

// Small cases of the same kinds for verification against the CPU.
const ConvShape kVerifyShapes[] = {
    {2, 3, 16, 16, 8, 7, 7, 3, 2},
    {2, 8, 8, 8, 8, 3, 3, 1, 1},
    {2, 16, 8, 8, 8, 1, 1, 0, 1},
};

constexpr Precision kConvPrecisions[] = {Precision::kFp16, Precision::kBf16, Precision::kFp32};

std::vector<float> random_rounded(Precision p, std::size_t n, std::uint64_t seed) {
  std::vector<float> v;
  random_inputs(p == Precision::kFp32 ? Precision::kFp32 : p, n, seed, &v);
  return v;
}

std::size_t volume(int a, int b, int c, int d) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c) *
         static_cast<std::size_t>(d);
}

}  // namespace

std::string_view to_string(ConvPass p) {
  switch (p) {
    case ConvPass::kForward: return "forward";
    case ConvPass::kBackwardData: return "backward_data";
    case ConvPass::kBackwardFilter: return "backward_filter";
  }
  return "unknown";
}

void run_conv_section(SectionEnv& env, DeviceRun& d) {
  if (const std::string why = env.backend.conv_unavailable_reason(); !why.empty()) {
    add_check(env.r, check_id(d, "conv"), Status::kSkip, "not run", "cuDNN convolutions").detail = why;
    d.data["conv"] = {{"skipped", why}};
    return;
  }
  Json rows = Json::array();
  for (Precision p : kConvPrecisions) {
    const std::string pn(to_string(p));
    if (p == Precision::kBf16) {
      if (const std::string why = env.backend.unsupported_reason(d.dev, p); !why.empty()) {
        add_check(env.r, check_id(d, "conv." + pn), Status::kSkip, "not supported", pn + " conv")
            .detail = why;
        continue;
      }
    }
    for (const Layer& layer : kLayers) {
      ConvShape sh = layer.shape;
      sh.n = env.opt.conv_batch;
      for (ConvPass pass : {ConvPass::kForward, ConvPass::kBackwardData, ConvPass::kBackwardFilter}) {
        if (pass == ConvPass::kBackwardData && !layer.input_grad) continue;
        const std::string what = std::string(layer.name) + "." + pn + "." + std::string(to_string(pass));
        Timing t;
        try {
          t = env.backend.time_conv(d.dev, sh, p, pass, env.opt.conv_warmup, env.opt.conv_reps);
        } catch (const std::exception& e) {
          // One layer cuDNN cannot run (e.g. no algorithm for this layout)
          // must not hide the others; a CUDA fault still surfaces as error.
          const bool unsupported = std::string(e.what()).find("NOT_SUPPORTED") != std::string::npos ||
                                   std::string(e.what()).find("no algorithm ran") != std::string::npos;
          add_check(env.r, check_id(d, "conv." + what), unsupported ? Status::kSkip : Status::kError,
                    e.what(), "cuDNN runs the layer");
          rows.push_back({{"layer", layer.name}, {"precision", pn},
                          {"pass", std::string(to_string(pass))}, {"error", e.what()}});
          if (!unsupported) throw;
          continue;
        }
        std::vector<double> tf;
        for (double s : t.seconds) tf.push_back(sh.flops() / s / 1e12);
        const double median = add_sampled_metric(env.r, "conv.tflops", tf,
                                                 {{"gpu", d.label()}, {"layer", layer.name},
                                                  {"precision", pn}, {"pass", std::string(to_string(pass))},
                                                  {"batch", std::to_string(sh.n)}})
                                  .value;
        rows.push_back({{"layer", layer.name}, {"precision", pn},
                        {"pass", std::string(to_string(pass))}, {"tflops", median},
                        {"algo", t.algo}, {"workspace_bytes", t.workspace},
                        {"layout", p == Precision::kFp32 ? "NCHW" : "NHWC"}});
      }
    }
    // Verification: every kind of layer, all three passes.
    const Layout layout = p == Precision::kFp32 ? Layout::kNchw : Layout::kNhwc;
    const Tolerance tol = conv_tolerance(p);
    std::string first_failure;
    bool unverified = false;  // cuDNN could not run a verification case
    std::string unverified_note;
    std::size_t compared = 0;
    std::uint64_t seed = 0xc0f0;
    for (const ConvShape& sh : kVerifyShapes) {
      const auto x = random_rounded(p, volume(sh.n, sh.c, sh.h, sh.w), ++seed);
      const auto w = random_rounded(p, volume(sh.k, sh.c, sh.r, sh.s), ++seed);
      const auto dy = random_rounded(p, volume(sh.n, sh.k, sh.p(), sh.q()), ++seed);
      ConvOutputs out;
      try {
        out = env.backend.run_conv(d.dev, sh, p, x, w, dy);
      } catch (const std::exception& e) {
        if (std::string(e.what()).find("no algorithm ran") == std::string::npos) throw;
        if (unverified_note.empty()) unverified_note = std::string("not verified: ") + e.what();
        unverified = true;
        continue;
      }
      const struct {
        const char* what;
        const std::vector<float>& got;
        RefResult ref;
        int terms;
      } cases[] = {
          {"forward", out.y, conv_forward_ref(sh, layout, x, w), sh.terms_forward()},
          {"backward_data", out.dx, conv_backward_data_ref(sh, layout, w, dy), sh.terms_backward_data()},
          {"backward_filter", out.dw, conv_backward_filter_ref(sh, layout, x, dy), sh.terms_backward_filter()},
      };
      for (const auto& c : cases) {
        const Comparison cmp = compare_results(c.got, c.ref, static_cast<std::size_t>(c.terms), tol);
        compared += cmp.n;
        if (!cmp.ok() && first_failure.empty()) {
          char buf[96];
          std::snprintf(buf, sizeof buf, "%s %dx%dx%dx%d k%d %dx%d: ", c.what, sh.n, sh.c, sh.h,
                        sh.w, sh.k, sh.r, sh.s);
          first_failure = buf + cmp.describe();
        }
      }
    }
    // A wrong result wins over a case cuDNN could not run.
    const Status vs = !first_failure.empty() ? Status::kFail : unverified ? Status::kSkip : Status::kPass;
    add_check(env.r, check_id(d, "conv.verify." + pn), vs,
              vs == Status::kPass ? "matches the CPU reference"
              : vs == Status::kSkip ? "not verified" : "differs from the CPU reference",
              "forward, backward data and backward filter within " + pn + " rounding",
              vs != Status::kFail ? "" : "the GPU computes wrong convolutions: check `dmesg` for "
                                         "Xid errors, reset or replace the GPU",
              "gpu.compute_wrong")
        .detail = !first_failure.empty() ? first_failure
                  : unverified           ? unverified_note
                                         : std::to_string(compared) + " elements compared";
  }
  d.data["conv"] = rows;
}

}  // namespace nodeprobe::gemm
