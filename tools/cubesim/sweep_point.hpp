#pragma once
// One sweep point, run in the process that calls run_point() (a sweep worker): the same harness,
// report and error handling as `cubesim run`, but every outcome, a failure included, becomes a
// row instead of an exit code.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emu/progress.hpp"
#include "tools/cubesim/sweep_expand.hpp"

namespace cubesim::cli::sweep {

// The request a worker gets for one point, one JSON object (a line on its stdin).
nlohmann::json point_request(const Definition& def, const Point& point, bool want_report);

// Runs the point of a request and returns {"row": ROW, "report": REPORT or null}. Never throws
// for what the point did: a spec, parameter, kernel-fault or deadlock error is the row's
// status, exit_code and error.
//
// ROW: index, values ({field: value} of the varied fields), kernel, params (all, defaults
// included), overrides (the --set assignments), status (ok, verification_failed, usage_error,
// kernel_fault, deadlock, crashed), exit_code (as `cubesim run` would exit), error ("" when ok),
// then the metrics (metric_columns()) and details.NAME for each number the harness reported.
// `progress` receives the launches' reports (emu/progress.hpp).
nlohmann::json run_point(const nlohmann::json& request, emu::ProgressFn progress = {});

// The row of a point whose worker process died before it answered.
nlohmann::json failed_row(const Point& point, const std::string& status, int exit_code,
                          const std::string& error);

// The metrics a row carries, in CSV order; all numbers but busiest_link and verified.
const std::vector<std::string>& metric_columns();

// Whether `name` can be plotted: a numeric metric or details.NAME.
bool is_numeric_metric(const std::string& name);

// Why a row read back from disk cannot stand for its point ("" when it can): not an object, a
// status or exit code that is not one a finished run gives (a crash is never kept), or a field
// of the wrong type.
std::string row_problem(const nlohmann::json& row);

// The status word of an exit code: 0 ok, 1 verification_failed, 2 usage_error, 3 kernel_fault,
// 4 deadlock.
std::string status_of(int exit_code);

}  // namespace cubesim::cli::sweep
