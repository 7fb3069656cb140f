#pragma once
// A kernel's parameters: ParamSpecs of each type for its KernelInfo, and typed access to the
// validated values its harness receives.

#include <cstdint>
#include <string>
#include <vector>

#include "components/dtype.hpp"
#include "kernels/registry.hpp"

namespace cubesim::kernels {

ParamSpec int_param(std::string name, std::int64_t default_value, std::int64_t min,
                    std::int64_t max, std::string help);
ParamSpec real_param(std::string name, double default_value, double min, double max,
                     std::string help);
ParamSpec choice_param(std::string name, std::string default_value,
                       std::vector<std::string> choices, std::string help);
ParamSpec bool_param(std::string name, bool default_value, std::string help);
// A dtype parameter named "dtype" over the given choices.
ParamSpec dtype_param(DType default_value, std::vector<DType> choices, std::string help);

std::int64_t get_int(const Params& p, const char* name);
double get_real(const Params& p, const char* name);
std::string get_string(const Params& p, const char* name);
DType get_dtype(const Params& p, const char* name = "dtype");

}  // namespace cubesim::kernels
