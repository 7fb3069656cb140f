#pragma once
#include <string>

inline std::string spec_path(const std::string& name) {
  return std::string(CUBESIM_SOURCE_DIR) + "/specs/" + name;
}
