// Tokenizer: expression text -> tokens (internal to the parser, parser.cpp).
//
// Python's lexical rules for what the grammar (parser.hpp) accepts: names, number
// literals, bytes and str literals (decoded here), operators. Anything else -- Python
// keywords, names starting with '__', non-ASCII text, subscripts -- is a syntax error
// (ExprError, ErrorKind::syntax) with the offending column.
#pragma once

#include <string>
#include <vector>

namespace numfuse::expr::detail {

enum class TokenKind { number, name, bytes, op, end };

// An operator's characters as one number (op_code("**")), so that the parser tells
// operators apart by an integer compare instead of string compares.
constexpr unsigned op_code(const char* op) noexcept {
    return op[0] == '\0' ? 0u
                         : static_cast<unsigned char>(op[0]) |
                               (op[1] == '\0' ? 0u : static_cast<unsigned>(op[1]) << 8);
}

struct Token {
    TokenKind kind = TokenKind::end;
    std::string text;  // a bytes literal's value, escapes decoded
    int column = 0;
    unsigned op = 0;  // TokenKind::op: op_code(text); else 0
};

// The tokens of `text`, ending with one TokenKind::end token at column text.size().
std::vector<Token> tokenize(const std::string& text);

// Throws ExprError(ErrorKind::syntax, message, column).
[[noreturn]] void syntax_error(const std::string& message, int column);

}  // namespace numfuse::expr::detail
