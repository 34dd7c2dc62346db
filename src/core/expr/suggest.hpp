// What to write instead: the messages of the parser's and compiler's errors for a function
// the language lacks or a call with the wrong number of arguments (docs/evaluate.md).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_set>

namespace numfuse::expr::detail {

// "unknown function 'cbrt'", then a way to write it where one is known (a NumPy or C name
// the language spells otherwise, or a function it lacks), else the closest known name
// (one edit per three characters), else nothing more.
std::string unknown_function_message(const std::string& name,
                                     const std::unordered_set<std::string>& known);

// A hint for `function` called with `given` arguments where it takes another count ("" when
// there is none): max(x, y) is the element-wise maximum(x, y).
std::string arity_hint(const std::string& function, std::size_t given);

}  // namespace numfuse::expr::detail
