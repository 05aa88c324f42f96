// The check every bad-input test makes: the call throws edgeattn::Error, and its message names
// the argument, what was expected and what came.
#ifndef EDGEATTN_TESTS_EXPECT_ERROR_H_
#define EDGEATTN_TESTS_EXPECT_ERROR_H_

#include <initializer_list>
#include <string>

#include <gtest/gtest.h>

#include "edgeattn/edgeattn.hpp"

namespace edgeattn {
namespace testing_support {

// Runs fn, expects an edgeattn::Error whose message contains every fragment.
template <class Fn>
void ExpectError(const Fn& fn, std::initializer_list<const char*> fragments) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown; expected " << *fragments.begin();
  } catch (const Error& e) {
    for (const char* f : fragments) {
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos)
          << "message '" << e.what() << "' lacks '" << f << "'";
    }
  }
}

}  // namespace testing_support
}  // namespace edgeattn

#endif  // EDGEATTN_TESTS_EXPECT_ERROR_H_
