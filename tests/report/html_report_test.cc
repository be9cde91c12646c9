// The HTML report rendered in headless Chromium (Debian's `chromium`, which
// scripts/setup.sh installs): every plot must draw, and a screenshot is kept as a test
// artifact (build/test-artifacts/report-example.png, the one the README shows). The data
// is a synthetic store written through the Store API: two runs, compared with --vs.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/file.h"
#include "process/run.h"
#include "report/bench_report.h"
#include "report/bench_store.h"
#include "report/render_html.h"
#include "support/test_paths.h"

namespace mgk::report {
namespace {

using namespace test;
using results::Verdict;

const char* const kProblems[] = {"collectives/all_gather", "collectives/all_reduce", "collectives/all_to_all",
                                 "collectives/broadcast",  "collectives/gather",     "collectives/reduce",
                                 "collectives/reduce_scatter", "collectives/scatter"};

// Four samples per problem; which succeed and how fast follows a fixed pattern per run, so
// the plots have something to show (these numbers were not measured).
int64_t write_example_run(store::Store& s, const std::string& model, double skill) {
  const int64_t run = begin_bench_run(s, 4, model);
  for (size_t p = 0; p < std::size(kProblems); ++p)
    for (int sample = 0; sample < 4; ++sample) {
      const double x = std::fmod(double(p) * 0.37 + sample * 0.23 + skill, 1.0);
      const std::string tag = model + " " + kProblems[p] + " " + std::to_string(sample);
      std::vector<ScriptTurn> turns = {kernel_turn("int bad(" + tag, verdict(Verdict::kCompileError))};
      if (x < 0.55 * skill + 0.2) {
        const double speed = 0.6 + 2.4 * x * skill;
        turns.push_back(kernel_turn(p % 3 ? register_kernel(tag) : copy_engine_kernel(tag),
                                    timed_correct(speed * 1.1, speed, std::min(0.95, 0.25 + 0.5 * x))));
      } else if (x < 0.75) {
        turns.push_back(kernel_turn(register_kernel(tag), verdict(Verdict::kIncorrect)));
      } else if (x < 0.85) {
        turns.push_back(kernel_turn(register_kernel(tag), verdict(Verdict::kTimeout)));
      }
      record_attempt(s, run, kProblems[p], sample, turns);
    }
  s.finish_run(run, store::Status::kDone);
  return run;
}

std::filesystem::path chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (std::filesystem::exists(p)) return p;
  return {};
}

std::vector<std::string> chromium_argv(const std::filesystem::path& profile) {
  return {chromium().string(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--user-data-dir=" + profile.string()};
}

// What Chromium laid out of each plot: the <svg>'s box and how many of its marks (paths,
// bars, dots) have a non-empty box, measured by a probe script added to a copy of the page.
nlohmann::json drawn_plots(const std::string& html, const std::filesystem::path& dir) {
  const std::string probe = R"(<script>
    const out = {};
    for (const svg of document.querySelectorAll('svg.plot')) {
      const box = svg.getBBox();
      const marks = [...svg.querySelectorAll('path, rect, circle')].filter(e => {
        const b = e.getBBox(); return b.width > 0 || b.height > 0; }).length;
      const texts = [...svg.querySelectorAll('text')].map(t => t.textContent);
      out[svg.id] = {width: box.width, height: box.height, marks: marks, texts: texts};
    }
    const pre = document.createElement('pre');
    pre.textContent = 'PROBE' + JSON.stringify(out) + 'PROBE';
    document.body.appendChild(pre);
  </script>)";
  std::string probed = html;
  probed.insert(probed.rfind("</body>"), probe);
  const auto page = dir / "probed.html";
  std::ofstream(page) << probed;
  std::vector<std::string> argv = chromium_argv(dir / "profile-dom");
  argv.push_back("--dump-dom");
  argv.push_back("file://" + page.string());
  process::ProcessResult r = process::run_tool(argv, std::chrono::seconds(120));
  const size_t a = r.output.find("PROBE{"), b = r.output.rfind("}PROBE");
  if (a == std::string::npos || b == std::string::npos) {
    ADD_FAILURE() << "chromium printed no probe result (exit " << r.exit_code << "):\n" << r.output.substr(0, 4000);
    return nullptr;
  }
  return nlohmann::json::parse(r.output.substr(a + 5, b + 1 - (a + 5)));
}

class HtmlReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (chromium().empty())
      FAIL() << "chromium is not installed: run scripts/setup.sh (it installs Debian's chromium package), "
                "which this test needs to render the HTML report";
  }
  mgk::test::TempDir dir_{"mgk-html"};
  store::Store store_ = store::Store::open(dir_.path() / "mgk.db");
};

TEST_F(HtmlReport, EveryPlotDrawsInChromiumAndTheScreenshotIsKept) {
  const int64_t a = write_example_run(store_, "anthropic:claude-example", 0.9);
  const int64_t b = write_example_run(store_, "openai:gpt-example", 0.55);
  const std::string html = render_html({build_report(store_, a), build_report(store_, b)});

  // Self-contained: no script, nothing fetched, links only within the page.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find("href=\"http"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#r1-collectives-all_reduce-s0\""), std::string::npos);
  EXPECT_NE(html.find("<details id=\"r1-collectives-all_reduce-s0\">"), std::string::npos);

  nlohmann::json drawn = drawn_plots(html, dir_.path());
  ASSERT_FALSE(drawn.is_null());
  for (const std::string& id : html_plot_ids()) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(drawn.contains(id)) << drawn.dump();
    EXPECT_GT(drawn[id]["width"].get<double>(), 100);
    EXPECT_GT(drawn[id]["height"].get<double>(), 100);
    EXPECT_GT(drawn[id]["marks"].get<int>(), 0) << "a plot with nothing drawn in it";
  }
  // Both runs are in the curves: one legend entry each.
  const std::string threshold = drawn["plot-threshold"]["texts"].dump();
  EXPECT_NE(threshold.find("run 1 anthropic:claude-example"), std::string::npos) << threshold;
  EXPECT_NE(threshold.find("run 2 openai:gpt-example"), std::string::npos) << threshold;
  // Error bars: the intervals of pass@k and of fast_p@1 at the reported p.
  EXPECT_NE(html.find("class=\"error-bar\""), std::string::npos);
  EXPECT_NE(drawn["plot-pass-at-k"]["texts"].dump().find("95% bootstrap intervals"), std::string::npos);
  // A speedup-against-size plot for each problem with a timed correct kernel, sizes as bars.
  int size_plots = 0;
  for (const auto& [id, plot] : drawn.items())
    if (id.rfind("plot-size-speedup-", 0) == 0) {
      ++size_plots;
      EXPECT_GT(plot["marks"].get<int>(), 0) << id;
      EXPECT_NE(plot["texts"].dump().find("large"), std::string::npos) << id << ": the sizes name the bars";
    }
  EXPECT_GT(size_plots, 3) << drawn.dump();
  // Notes wrap inside the plot: no text runs past its svg's right edge.
  for (const auto& [id, plot] : drawn.items())
    for (const auto& t : plot["texts"]) EXPECT_LT(t.get<std::string>().size(), 100u) << id << ": " << t;

  const auto page = mgk::test::artifacts_dir() / "report-example.html";
  const auto shot = mgk::test::artifacts_dir() / "report-example.png";
  std::ofstream(page) << html;
  std::filesystem::remove(shot);
  std::vector<std::string> argv = chromium_argv(dir_.path() / "profile-shot");
  for (std::string arg : {std::string("--hide-scrollbars"), std::string("--window-size=1200,1500"),
                          "--screenshot=" + shot.string(), "file://" + page.string()})
    argv.push_back(arg);
  process::ProcessResult r = process::run_tool(argv, std::chrono::seconds(120));
  ASSERT_TRUE(std::filesystem::exists(shot)) << r.output.substr(0, 4000);
  const std::string png = read_file(shot);
  EXPECT_EQ(png.substr(0, 4), "\x89PNG");
  EXPECT_GT(png.size(), 20000u) << "a blank page compresses to a few KB";
  std::cout << "screenshot: " << shot.string() << "\n";
}

TEST_F(HtmlReport, ARunWithNothingTimedStillDrawsEveryPlotAndSaysWhy) {
  const int64_t run = begin_bench_run(store_, 1);
  record_attempt(store_, run, "collectives/all_reduce", 0, {kernel_turn(register_kernel("s"), shared_correct(2))});
  record_attempt(store_, run, "collectives/broadcast", 0, {kernel_turn("x(", verdict(Verdict::kCompileError))});
  const std::string html = render_html({build_report(store_, run)});
  EXPECT_NE(html.find("checked, not timed: ranks shared a GPU"), std::string::npos);
  nlohmann::json drawn = drawn_plots(html, dir_.path());
  ASSERT_FALSE(drawn.is_null());
  for (const std::string& id : html_plot_ids()) {
    SCOPED_TRACE(id);
    ASSERT_TRUE(drawn.contains(id));
    EXPECT_GT(drawn[id]["width"].get<double>(), 50);
  }
  EXPECT_NE(drawn["plot-threshold"]["texts"].dump().find("no curve: checked, not timed"), std::string::npos);
  EXPECT_NE(drawn["plot-speedup"]["texts"].dump().find("no speedup"), std::string::npos);
  // A plot with nothing to draw is its reason, not an empty frame.
  EXPECT_EQ(drawn["plot-speedup"]["marks"].get<int>(), 0);
  EXPECT_LT(drawn["plot-speedup"]["height"].get<double>(), 100) << "no axes drawn around nothing";
  ASSERT_TRUE(drawn.contains("plot-size-speedup"));
  EXPECT_NE(drawn["plot-size-speedup"]["texts"].dump().find("no timed correct kernel"), std::string::npos);
  EXPECT_GT(drawn["plot-outcomes"]["marks"].get<int>(), 0);
  // The legend names what occurred, not the ten outcomes there are.
  const std::string legend = drawn["plot-outcomes"]["texts"].dump();
  EXPECT_NE(legend.find("did not compile"), std::string::npos) << legend;
  EXPECT_EQ(legend.find("hang"), std::string::npos) << legend;
  EXPECT_EQ(legend.find("infrastructure"), std::string::npos) << legend;
}

}  // namespace
}  // namespace mgk::report
