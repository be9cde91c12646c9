// The report as one self-contained HTML file: inline CSS and inline SVG plots (no script,
// no network), readable offline and attachable to anything. Plots, each an <svg> with the
// id named here: "plot-threshold" (fast_p@1 against the speedup threshold p, one curve per
// run, as in the talk), "plot-pass-at-k" (pass@k and compiles@k against k),
// "plot-speedup" and "plot-roofline" (per problem, the best correct sample), and
// "plot-outcomes" (the failure taxonomy). Each problem links to its attempts, which show
// every turn's verdict and the kernel source the outcome rests on.
#pragma once
#include <string>
#include <vector>

#include "report/bench_report.h"

namespace mgk::report {

std::string render_html(const std::vector<RunReport>& runs);

// The ids of the plots render_html draws, in page order.
const std::vector<std::string>& html_plot_ids();

}  // namespace mgk::report
