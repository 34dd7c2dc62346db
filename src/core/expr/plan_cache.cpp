// The LRU cache of compiled plans and the compiler's public entry points.
#include <algorithm>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "expr/compiler_internal.hpp"
#include "expr/operation.hpp"

namespace numfuse::expr {
namespace {

using detail::NodeKind;

// ------------------------------------------------------------------ cache
struct PlanCache {
    std::mutex mutex;
    std::size_t capacity = 256;
    std::list<std::pair<std::string, std::shared_ptr<const Plan>>> entries;  // most recent first
    std::unordered_map<std::string, decltype(entries)::iterator> index;
};

PlanCache& plan_cache() {
    static PlanCache cache;
    return cache;
}

// A plan depends on the text, the level, each input's type, weakness, element size
// (bytes), integer dtype and a Python int's class (its NumPy range checks); with
// `values`, on the Python ints' values too (Plan::value_keyed).
std::string cache_key(const std::string& text, const std::vector<InputSpec>& inputs,
                      core::Level level, bool values) {
    std::string key = text;
    key.push_back('\0');
    key += std::to_string(static_cast<int>(level));
    key.push_back(values ? 'V' : 'C');
    for (const auto& spec : inputs) {
        key += spec.name;
        key.push_back(':');
        key.push_back(type_letter(spec.type));
        key.push_back(spec.weak ? 'w' : 's');
        if (spec.type == Type::s) key += std::to_string(spec.item);
        key.push_back(static_cast<char>('a' + static_cast<int>(spec.int_dtype)));
        if (spec.weak && spec.int_range != PyIntRange::unknown) {
            key += std::to_string(python_int_class(spec.int_range, spec.int_value));
            if (values) key += "=" + std::to_string(spec.int_value);
        }
        key.push_back(';');
    }
    return key;
}

}  // namespace

std::vector<std::string> expression_names(const std::string& text) {
    return expression_names(*detail::parse_cached(text));
}

std::vector<std::string> expression_names(const detail::Ast& ast) {
    std::vector<std::string> names;
    for (const auto& node : ast.nodes) {
        if (node.kind == NodeKind::name &&
            std::find(names.begin(), names.end(), node.text) == names.end()) {
            names.push_back(node.text);
        }
    }
    return names;
}

namespace {

// `ast`: the caller's AST of `text` (cached_plan_of_tree), else null (the text is parsed).
std::shared_ptr<const Plan> compile_at(const std::string& text,
                                       const std::vector<InputSpec>& inputs, core::Level level,
                                       const detail::Ast* ast = nullptr) {
    if (ast != nullptr) return detail::Compiler(text, *ast, inputs, level).compile();
    return detail::Compiler(text, inputs, level).compile();
}

}  // namespace

std::shared_ptr<const Plan> compile_plan(const std::string& text,
                                         const std::vector<InputSpec>& inputs) {
    return compile_at(text, inputs, core::active_level());
}

std::shared_ptr<const Plan> compile_plan_of_tree(const std::string& text, const detail::Ast& ast,
                                                 const std::vector<InputSpec>& inputs) {
    return compile_at(text, inputs, core::active_level(), &ast);
}

namespace {

std::shared_ptr<const Plan> cache_find(PlanCache& cache, const std::string& key) {
    std::lock_guard<std::mutex> lock(cache.mutex);
    const auto found = cache.index.find(key);
    if (found == cache.index.end()) return nullptr;
    cache.entries.splice(cache.entries.begin(), cache.entries, found->second);
    return found->second->second;
}

// The entry present under `key`, else `plan`, now entered.
std::shared_ptr<const Plan> cache_insert(PlanCache& cache, std::string key,
                                         std::shared_ptr<const Plan> plan) {
    std::lock_guard<std::mutex> lock(cache.mutex);
    const auto found = cache.index.find(key);
    if (found != cache.index.end()) return found->second->second;
    cache.entries.emplace_front(key, plan);
    cache.index.emplace(std::move(key), cache.entries.begin());
    while (cache.entries.size() > cache.capacity) {
        cache.index.erase(cache.entries.back().first);
        cache.entries.pop_back();
    }
    return plan;
}

}  // namespace

std::shared_ptr<const Plan> cached_plan(const std::string& text,
                                        const std::vector<InputSpec>& inputs) {
    return cached_plan_of_tree(text, nullptr, inputs);
}

std::shared_ptr<const Plan> cached_plan_of_tree(const std::string& text, const detail::Ast* ast,
                                                const std::vector<InputSpec>& inputs) {
    PlanCache& cache = plan_cache();
    // The level read once: the key and the folding agree even if set_level runs meanwhile.
    const core::Level level = core::active_level();
    const std::string key = cache_key(text, inputs, level, false);
    // Keyed by the Python ints' classes; a value-keyed plan found there stands for the
    // others of its kind (whether a plan is value-keyed depends on the classes only):
    // the plan for these values is keyed by them.
    std::shared_ptr<const Plan> plan = cache_find(cache, key);
    if (plan && !plan->value_keyed) return plan;
    if (plan) {
        std::string values_key = cache_key(text, inputs, level, true);
        if (std::shared_ptr<const Plan> exact = cache_find(cache, values_key)) return exact;
        return cache_insert(cache, std::move(values_key), compile_at(text, inputs, level, ast));
    }
    // Compile outside the lock: two threads may compile the same text once
    // each; the second insert simply finds the entry present.
    plan = compile_at(text, inputs, level, ast);
    if (!plan->value_keyed) return cache_insert(cache, key, plan);
    cache_insert(cache, key, plan);  // stands for the kind (the entry there may be another's)
    return cache_insert(cache, cache_key(text, inputs, level, true), plan);
}

void set_cache_capacity(std::size_t entries) {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.capacity = entries < 1 ? 1 : entries;
    while (cache.entries.size() > cache.capacity) {
        cache.index.erase(cache.entries.back().first);
        cache.entries.pop_back();
    }
}

std::size_t cache_size() {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    return cache.entries.size();
}

void clear_cache() {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    cache.entries.clear();
    cache.index.clear();
}

}  // namespace numfuse::expr
