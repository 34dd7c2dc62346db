// Tokenizer and parser: expression text -> AST (internal to the engine).
//
// Grammar (Python's precedence, lowest first; nothing else is accepted):
//
//   expression := bitor [ compare_op bitor ]          (no chained comparisons)
//   bitor      := bitxor  { "|" bitxor }
//   bitxor     := bitand  { "^" bitand }
//   bitand     := shift   { "&" shift }
//   shift      := sum     { ("<<" | ">>") sum }
//   sum        := term    { ("+" | "-") term }
//   term       := unary   { ("*" | "/" | "//" | "%") unary }
//   unary      := ("-" | "+" | "~") unary | power
//   power      := postfix [ "**" unary ]              (right-associative)
//   postfix    := atom { "." ("real" | "imag") }
//   atom       := NUMBER | BYTES | NAME | "True" | "False" | NAME "(" arguments ")"
//               | "(" expression ")"
//   BYTES      := Python's bytes literal: b'..', b"..", rb'..', b'''..''' (escapes as
//                 Python's), or a str literal '..', r'..', u'..' encoded as ASCII (as
//                 numexpr does; anything else in it, and f-strings, a syntax error)
//   arguments  := expression { "," expression } { "," keyword "=" value }
//
// The parser is recursive descent with an explicit depth limit, so hostile
// input ends in a clean error, never a stack overflow. It never calls into
// Python: there is no eval, compile or ast anywhere in numfuse.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "expr/expr.hpp"

namespace numfuse::expr::detail {

enum class NodeKind : std::uint8_t { number, name, unary, binary, compare, call, attribute, bytes };

struct AstNode {
    NodeKind kind = NodeKind::number;
    int column = 0;
    std::string text;            // name, operator, function, attribute or bytes value
    std::vector<int> args;       // child node indices
    // number: type b (True/False), l (int), d (float) or z (imaginary); an int literal
    // beyond int64 is type d with big_int set, real_value its value rounded (+inf beyond
    // float64's range, where Python's float() raises) and int_value 1 if it is 2^63
    // exactly (-9223372036854775808 is int64's min), else 0
    Type number_type = Type::l;
    bool big_int = false;
    std::int64_t int_value = 0;
    double real_value = 0.0;
    double imag_value = 0.0;
    // call keywords (reductions)
    bool axis_given = false;
    bool axis_none = true;
    std::vector<int> axes;
    bool axis_int = false;  // axis= was one integer, not a tuple (see Stage::axis_int)
    bool keepdims = false;
};

struct Ast {
    std::vector<AstNode> nodes;
    int root = -1;
};

Ast parse_expression(const std::string& text);

// parse_expression(text), shared with the other recent callers that parsed the same
// text: numfuse.compile's object reads the names at construction and compiles at its
// first call, evaluate reads the names and then compiles, and each would otherwise parse
// the text again. The last few texts (up to a few tens of kilobytes each) are kept; an
// error is thrown again by each call, never kept.
std::shared_ptr<const Ast> parse_cached(const std::string& text);

// The number node of a number token (an int, float or imaginary literal as the lexer reads
// it: "12", "0x1f", "1.5e-3", "2j") at `column`; the parser's, and numfuse.jit's formulas'
// (src/python/jit_formula.cpp) for their Python-number literals. A syntax error for digits
// that are not a number.
AstNode number_node(const std::string& token, int column);

// Functions the language knows (elementwise and reductions).
bool is_function_name(const std::string& name) noexcept;
bool is_reduction_name(const std::string& name) noexcept;

}  // namespace numfuse::expr::detail
