#pragma once
// The message of the error of type E that f() throws; a test failure if it throws none.
#include <gtest/gtest.h>

#include <string>

template <typename E, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}
