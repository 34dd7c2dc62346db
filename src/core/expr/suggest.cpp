#include "expr/suggest.hpp"

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

namespace numfuse::expr::detail {
namespace {

struct Alternative {
    const char* name;
    const char* write;
};

// Names people bring from NumPy, C or other libraries, and what the language has for them.
// A function that the language gains later is simply known, and its row here is never read.
constexpr Alternative alternatives[] = {
    {"square", "x**2"},
    {"asin", "arcsin(x)"},
    {"acos", "arccos(x)"},
    {"atan", "arctan(x)"},
    {"atan2", "arctan2(y, x)"},
    {"asinh", "arcsinh(x)"},
    {"acosh", "arccosh(x)"},
    {"atanh", "arctanh(x)"},
    {"ln", "log(x)"},
    {"fabs", "abs(x)"},
    {"sigmoid", "expit(x)"},
    {"clip", "minimum(maximum(x, low), high)"},
    {"amax", "max(x) (a reduction) or maximum(x, y) (element-wise)"},
    {"amin", "min(x) (a reduction) or minimum(x, y) (element-wise)"},
    {"fmax", "maximum(x, y)"},
    {"fmin", "minimum(x, y)"},
};

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            diagonal = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
        }
    }
    return row[b.size()];
}

}  // namespace

std::string unknown_function_message(const std::string& name,
                                     const std::unordered_set<std::string>& known) {
    std::string message = "unknown function '" + name + "'";
    for (const Alternative& alternative : alternatives) {
        if (name == alternative.name) return message + "; write " + alternative.write;
    }
    // The closest known name; ties go to the alphabetically first, so the message does not
    // depend on the set's order.
    std::string best;
    std::size_t best_distance = 3;
    for (const std::string& candidate : known) {
        const std::size_t distance = edit_distance(name, candidate);
        if (distance < best_distance || (distance == best_distance && candidate < best)) {
            best = candidate;
            best_distance = distance;
        }
    }
    // One edit per three characters (at least one): 'lg' -> 'log', not 'foo' -> 'cos'.
    const std::size_t allowed = std::max<std::size_t>(1, name.size() / 3);
    if (!best.empty() && best_distance <= allowed) message += "; did you mean '" + best + "'?";
    return message;
}

std::string arity_hint(const std::string& function, std::size_t given) {
    if (given == 2 && (function == "max" || function == "min")) {
        return "; " + function + "() reduces one array (axis= picks the axes): for the " +
               "element-wise " + function + "imum of two arrays write " + function + "imum(x, y)";
    }
    return "";
}

}  // namespace numfuse::expr::detail
