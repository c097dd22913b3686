// Printer and parser of the IR text form (see text.h for the grammar by example).
#include "ir/text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <unordered_set>

namespace kiln::ir {
namespace {

bool isIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isIdentChar(char c) { return isIdentStart(c) || (c >= '0' && c <= '9') || c == '.'; }

// Names that would read as something else when unquoted.
bool isReservedWord(std::string_view s) {
  return s == "_" || s == "input" || s == "output" || s == "graph" || s == "inf" || s == "nan";
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || !isIdentStart(s[0]) || isReservedWord(s)) return false;
  for (char c : s)
    if (!isIdentChar(c)) return false;
  return true;
}

std::string quote(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      case '\r': r += "\\r"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", u);
          r += buf;
        } else {
          r += c;
        }
    }
  }
  return r + "\"";
}

std::string nameText(std::string_view s) { return isIdentifier(s) ? std::string(s) : quote(s); }

// Makes a number text look like a float ("1" -> "1.0").
std::string floatLooking(std::string s) {
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

// Shortest text that reads back as the same float32.
std::string formatFloat32(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[48];
  for (int p = 1; p <= 9; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v) break;
  }
  return floatLooking(buf);
}

std::string typeText(DataType t, Dims const& shape) { return strCat(dataTypeShortName(t), dimsToString(shape)); }

std::string attrText(AttrValue const& v) {
  if (auto const* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto const* f = std::get_if<double>(&v)) return formatFloat(*f);
  if (auto const* s = std::get_if<std::string>(&v)) return quote(*s);
  std::string r = "[";
  if (auto const* l = std::get_if<std::vector<int64_t>>(&v)) {
    for (size_t i = 0; i < l->size(); ++i) r += (i ? "," : "") + std::to_string((*l)[i]);
  } else if (auto const* fl = std::get_if<std::vector<double>>(&v)) {
    for (size_t i = 0; i < fl->size(); ++i) r += (i ? "," : "") + formatFloat((*fl)[i]);
  }
  return r + "]";
}

std::string constantText(HostTensor const& t, bool full) {
  int64_t n = t.count();
  if (!full && n > kMaxInlineConstant) return strCat("<", dataTypeShortName(t.dtype()), " x ", n, ">");
  std::string r = "[";
  for (int64_t i = 0; i < n; ++i) {
    if (i) r += ",";
    if (isFloatType(t.dtype())) r += formatFloat32(static_cast<float>(t.doubleAt(i)));
    else if (t.dtype() == DataType::kUINT64) r += std::to_string(static_cast<uint64_t>(t.intAt(i)));  // same bits
    else r += std::to_string(t.intAt(i));
  }
  return r + "]";
}

void printNode(std::string& out, Node const& n, PrintOptions const& opt) {
  out += "  ";
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    Value const* v = n.outputs[i];
    out += strCat(i ? ", " : "", nameText(v->name), ": ", typeText(v->dtype, v->shape));
  }
  out += strCat(" = ", opName(n.op), " ", quote(n.name), " (");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    out += i ? ", " : "";
    out += n.inputs[i] ? nameText(n.inputs[i]->name) : "_";
  }
  out += ")";
  std::vector<std::string> attrs;
  if (n.op == OpType::kConstant && n.constant) attrs.push_back("data=" + constantText(*n.constant, opt.fullConstants));
  for (auto const& [k, v] : n.attrs.all()) {
    if (n.op == OpType::kConstant && k == "data") continue;
    attrs.push_back(strCat(nameText(k), "=", attrText(v)));
  }
  if (!attrs.empty()) {
    out += " {";
    for (size_t i = 0; i < attrs.size(); ++i) out += (i ? ", " : "") + attrs[i];
    out += "}";
  }
  if (opt.annotations) {
    if (n.precision) out += strCat(" @precision=", dataTypeShortName(*n.precision));
    bool anyRequested = false;
    for (Value const* v : n.outputs) anyRequested |= v->requestedType.has_value();
    if (anyRequested) {
      out += " @out_types=[";
      for (size_t i = 0; i < n.outputs.size(); ++i) {
        out += i ? "," : "";
        out += n.outputs[i]->requestedType ? dataTypeShortName(*n.outputs[i]->requestedType) : "_";
      }
      out += "]";
    }
    if (!n.tactic.empty()) out += " @tactic=" + quote(n.tactic);
    if (!n.fusedFrom.empty()) {
      out += " @fused=[";
      for (size_t i = 0; i < n.fusedFrom.size(); ++i) out += (i ? "," : "") + quote(n.fusedFrom[i]);
      out += "]";
    }
  }
  out += "\n";
}

// ---------------------------------------------------------------------------------------------------------
// Parser

// A number as written: integer or floating point.
struct Number {
  bool isFloat = false;
  int64_t i = 0;
  bool isBig = false;  // an integer above INT64_MAX, in `u` (only uint64 constants take it)
  uint64_t u = 0;
  double f = 0;
  double asDouble() const { return isFloat ? f : isBig ? static_cast<double>(u) : static_cast<double>(i); }
};

// How a Constant's data was written.
struct DataSpec {
  enum Kind { kList, kRandom, kFill } kind = kList;
  std::vector<Number> list;
  uint64_t seed = 0;
  Number fill;
};

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<std::unique_ptr<Graph>> run() {
    g_ = std::make_unique<Graph>();
    skipBlankLines();
    KILN_RETURN_IF_ERROR(expectWord("graph"));
    KILN_RETURN_IF_ERROR(expectChar('{'));
    KILN_RETURN_IF_ERROR(endOfLine());
    for (;;) {
      skipBlankLines();
      if (atEnd()) return error("missing '}' at the end of the graph");
      if (peek() == '}') {
        ++pos_;
        ++col_;
        KILN_RETURN_IF_ERROR(endOfLine());
        skipBlankLines();
        if (!atEnd()) return error("text after the end of the graph");
        break;
      }
      KILN_RETURN_IF_ERROR(statement());
    }
    return std::move(g_);
  }

 private:
  // --- characters
  bool atEnd() const { return pos_ >= s_.size(); }
  char peek(size_t k = 0) const { return pos_ + k < s_.size() ? s_[pos_ + k] : '\0'; }
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skipSpaces() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\r')) advance();
    if (peek() == '#')
      while (!atEnd() && peek() != '\n') advance();
  }
  void skipBlankLines() {
    for (;;) {
      skipSpaces();
      if (atEnd() || peek() != '\n') return;
      advance();
    }
  }
  template <typename... Args>
  Status errorAt(int line, int col, Args const&... args) const {
    return invalidArgument("line ", line, ", column ", col, ": ", args...);
  }
  template <typename... Args>
  Status error(Args const&... args) const {
    return errorAt(line_, col_, args...);
  }
  std::string describeHere() const {
    if (atEnd()) return "the end of the text";
    if (peek() == '\n') return "the end of the line";
    return strCat("'", peek(), "'");
  }
  Status expectChar(char c) {
    skipSpaces();
    if (peek() != c) return error("expected '", c, "', found ", describeHere());
    advance();
    return Status::ok();
  }
  bool acceptChar(char c) {
    skipSpaces();
    if (peek() != c) return false;
    advance();
    return true;
  }
  Status endOfLine() {
    skipSpaces();
    if (atEnd()) return Status::ok();
    if (peek() != '\n') return error("expected the end of the line, found ", describeHere());
    advance();
    return Status::ok();
  }

  // --- tokens
  bool peekIdent() {
    skipSpaces();
    return isIdentStart(peek());
  }
  std::string ident() {
    size_t b = pos_;
    while (!atEnd() && isIdentChar(peek())) advance();
    return std::string(s_.substr(b, pos_ - b));
  }
  Status expectWord(std::string_view w) {
    skipSpaces();
    int l = line_, c = col_;
    std::string got = peekIdent() ? ident() : std::string();
    if (got != w) return errorAt(l, c, "expected '", w, "'");
    return Status::ok();
  }
  Result<std::string> quoted() {
    skipSpaces();
    if (peek() != '"') return error("expected a quoted string, found ", describeHere());
    advance();
    std::string r;
    for (;;) {
      if (atEnd() || peek() == '\n') return error("unterminated string");
      char c = peek();
      advance();
      if (c == '"') break;
      if (c != '\\') {
        r += c;
        continue;
      }
      if (atEnd()) return error("unterminated string");
      char e = peek();
      advance();
      switch (e) {
        case 'n': r += '\n'; break;
        case 't': r += '\t'; break;
        case 'r': r += '\r'; break;
        case '"': r += '"'; break;
        case '\\': r += '\\'; break;
        case 'x': {
          int v = 0;
          for (int k = 0; k < 2; ++k) {
            char h = peek();
            int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                                                     : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) return error("bad \\x escape in string");
            v = v * 16 + d;
            advance();
          }
          r += static_cast<char>(v);
          break;
        }
        default: return error("unknown escape '\\", e, "' in string");
      }
    }
    return r;
  }
  // An identifier or a quoted string.
  Result<std::string> name(char const* what) {
    skipSpaces();
    if (peek() == '"') return quoted();
    if (!isIdentStart(peek())) return error("expected ", what, ", found ", describeHere());
    return ident();
  }
  // allowBig: integers past INT64_MAX are accepted (into Number::u; uint64 constant data only).
  Result<Number> number(bool allowBig = false) {
    skipSpaces();
    int l = line_, c = col_;
    size_t b = pos_;
    if (peek() == '-' || peek() == '+') advance();
    Number n;
    if (isIdentStart(peek())) {
      std::string w = ident();
      bool neg = s_[b] == '-';
      if (w == "inf") n.f = neg ? -INFINITY : INFINITY;
      else if (w == "nan") n.f = NAN;
      else return errorAt(l, c, "expected a number, found '", w, "'");
      n.isFloat = true;
      return n;
    }
    bool digits = false;
    while (std::isdigit(static_cast<unsigned char>(peek()))) digits = (advance(), true);
    if (peek() == '.') {
      n.isFloat = true;
      advance();
      while (std::isdigit(static_cast<unsigned char>(peek()))) digits = (advance(), true);
    }
    if (!digits) return errorAt(l, c, "expected a number");
    if (peek() == 'e' || peek() == 'E') {
      n.isFloat = true;
      advance();
      if (peek() == '-' || peek() == '+') advance();
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return errorAt(l, c, "bad exponent in number");
      while (std::isdigit(static_cast<unsigned char>(peek()))) advance();
    }
    std::string t(s_.substr(b, pos_ - b));
    errno = 0;
    if (n.isFloat) {
      n.f = std::strtod(t.c_str(), nullptr);
    } else {
      n.i = std::strtoll(t.c_str(), nullptr, 10);
      if (errno == ERANGE && t[0] != '-') {
        errno = 0;
        n.u = std::strtoull(t.c_str(), nullptr, 10);
        n.isBig = errno != ERANGE && allowBig;
        if (!allowBig) errno = ERANGE;
      }
      if (errno == ERANGE) return errorAt(l, c, "integer ", t, " is out of range");
    }
    return n;
  }
  bool peekNumber() {
    skipSpaces();
    char c = peek();
    return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' ||
           (isIdentStart(c) && (s_.substr(pos_, 3) == "inf" || s_.substr(pos_, 3) == "nan") &&
            !isIdentChar(peek(3)));
  }
  Result<DataType> dtype() {
    skipSpaces();
    int l = line_, c = col_;
    if (!isIdentStart(peek())) return error("expected a data type, found ", describeHere());
    std::string w = ident();
    auto t = parseDataType(w);
    if (!t.isOk()) return errorAt(l, c, "unknown data type '", w, "'");
    return *t;
  }
  // "f32[1,3,-1]"
  Status type(DataType& t, Dims& d) {
    KILN_ASSIGN_OR_RETURN(t, dtype());
    KILN_RETURN_IF_ERROR(expectChar('['));
    d = Dims{};
    d.nbDims = 0;
    if (acceptChar(']')) return Status::ok();
    for (;;) {
      skipSpaces();
      int l = line_, c = col_;
      KILN_ASSIGN_OR_RETURN(Number n, number());
      if (n.isFloat || n.i < -1) return errorAt(l, c, "a dimension must be an integer >= -1");
      if (d.nbDims == Dims::MAX_DIMS) return errorAt(l, c, "more than ", Dims::MAX_DIMS, " dimensions");
      d.d[d.nbDims++] = n.i;
      if (acceptChar(']')) return Status::ok();
      if (!acceptChar(',')) return error("expected ',' or ']', found ", describeHere());
    }
  }
  Result<Value*> valueRef() {
    skipSpaces();
    int l = line_, c = col_;
    KILN_ASSIGN_OR_RETURN(std::string n, name("a tensor name"));
    Value* v = g_->findValue(n);
    if (!v) return errorAt(l, c, "unknown tensor '", n, "' (tensors must be defined before use)");
    return v;
  }

  // --- attributes
  Result<AttrValue> attrValue() {
    skipSpaces();
    if (peek() == '"') {
      KILN_ASSIGN_OR_RETURN(std::string s, quoted());
      return AttrValue(std::move(s));
    }
    if (peek() == '[') {
      KILN_ASSIGN_OR_RETURN(std::vector<Number> l, numberList());
      bool anyFloat = false;
      for (auto const& n : l) anyFloat |= n.isFloat;
      if (anyFloat) {
        std::vector<double> r;
        for (auto const& n : l) r.push_back(n.asDouble());
        return AttrValue(std::move(r));
      }
      std::vector<int64_t> r;
      for (auto const& n : l) r.push_back(n.i);
      return AttrValue(std::move(r));
    }
    if (!peekNumber()) return error("expected an attribute value, found ", describeHere());
    KILN_ASSIGN_OR_RETURN(Number n, number());
    return n.isFloat ? AttrValue(n.f) : AttrValue(n.i);
  }
  Result<std::vector<Number>> numberList(bool allowBig = false) {
    KILN_RETURN_IF_ERROR(expectChar('['));
    std::vector<Number> r;
    if (acceptChar(']')) return r;
    for (;;) {
      KILN_ASSIGN_OR_RETURN(Number n, number(allowBig));
      r.push_back(n);
      if (acceptChar(']')) return r;
      KILN_RETURN_IF_ERROR(expectChar(','));
    }
  }
  Result<DataSpec> dataSpec() {
    skipSpaces();
    DataSpec d;
    if (peek() == '[') {
      KILN_ASSIGN_OR_RETURN(d.list, numberList(true));
      return d;
    }
    if (peek() == '<')
      return error("constant data printed as a summary cannot be parsed (print with PrintOptions::fullConstants)");
    int l = line_, c = col_;
    std::string w = peekIdent() ? ident() : std::string();
    if (w == "random") {
      d.kind = DataSpec::kRandom;
      KILN_RETURN_IF_ERROR(expectChar('('));
      skipSpaces();
      int nl = line_, nc = col_;
      KILN_ASSIGN_OR_RETURN(Number n, number());
      if (n.isFloat || n.i < 0) return errorAt(nl, nc, "random() needs a non-negative integer seed");
      d.seed = static_cast<uint64_t>(n.i);
      KILN_RETURN_IF_ERROR(expectChar(')'));
      return d;
    }
    if (w == "fill") {
      d.kind = DataSpec::kFill;
      KILN_RETURN_IF_ERROR(expectChar('('));
      KILN_ASSIGN_OR_RETURN(d.fill, number(true));
      KILN_RETURN_IF_ERROR(expectChar(')'));
      return d;
    }
    return errorAt(l, c, "expected constant data: [...], random(SEED) or fill(V)");
  }

  Result<HostTensor> makeData(DataSpec const& d, DataType t, Dims const& shape, int l, int c) {
    if (!dimsKnown(shape)) return errorAt(l, c, "a constant needs a fully known shape, not ", dimsToString(shape));
    if (!isSupportedType(t)) return errorAt(l, c, "constants of type ", dataTypeName(t), " are not supported");
    auto vol = checkedVolume(shape);
    if (!vol.isOk()) return errorAt(l, c, vol.status().message());
    if (*vol > kMaxTextConstantElements)
      return errorAt(l, c, "a constant of ", *vol, " elements (shape ", dimsToString(shape),
                     ") is larger than the text form makes (", kMaxTextConstantElements, ")");
    if (d.kind == DataSpec::kRandom) return makeRandomTensor(t, shape, d.seed);
    if (d.kind == DataSpec::kList && static_cast<int64_t>(d.list.size()) != *vol)
      return errorAt(l, c, "constant data has ", d.list.size(), " values for shape ", dimsToString(shape), " (",
                     *vol, " elements)");
    KILN_ASSIGN_OR_RETURN(HostTensor out, HostTensor::allocate(t, shape, "IR text constant"));
    KILN_RETURN_IF_ERROR(dispatchType(t, [&](auto tag) {
      using S = decltype(tag);
      S* p = static_cast<S*>(out.mutableData());
      for (int64_t i = 0; i < *vol; ++i) {
        Number const& n = d.kind == DataSpec::kFill ? d.fill : d.list[static_cast<size_t>(i)];
        if constexpr (kIsFloatStorage<S> || std::is_same_v<S, bool>) {
          p[i] = fromDouble<S>(n.asDouble());
        } else {
          // Range checks in the signed domain, except for uint64, whose maximum int64 cannot hold.
          constexpr bool kU64 = std::is_same_v<S, uint64_t>;
          if (n.isFloat) {
            p[i] = fromDouble<S>(n.f);
          } else if (n.isBig) {
            if (!kU64) return errorAt(l, c, "value ", n.u, " does not fit in ", dataTypeName(t));
            p[i] = static_cast<S>(n.u);
          } else if (n.i < static_cast<int64_t>(std::numeric_limits<S>::min()) ||
                     (!kU64 && n.i > static_cast<int64_t>(std::numeric_limits<S>::max()))) {
            return errorAt(l, c, "value ", n.i, " does not fit in ", dataTypeName(t));
          } else {
            p[i] = static_cast<S>(n.i);
          }
        }
      }
      return Status::ok();
    }));
    return out;
  }

  // --- statements
  Status statement() {
    int l = line_, c = col_;
    if (peekIdent()) {
      size_t save = pos_;
      int sl = line_, sc = col_;
      std::string w = ident();
      if (w == "input") return inputLine(l, c);
      if (w == "output") return outputLine();
      pos_ = save;
      line_ = sl;
      col_ = sc;
    }
    return nodeLine();
  }

  Status inputLine(int l, int c) {
    KILN_ASSIGN_OR_RETURN(std::string n, name("an input name"));
    KILN_RETURN_IF_ERROR(expectChar(':'));
    DataType t;
    Dims d;
    KILN_RETURN_IF_ERROR(type(t, d));
    auto v = g_->addInput(n, t, d);
    if (!v.isOk()) return errorAt(l, c, v.status().message());
    return endOfLine();
  }

  Status outputLine() {
    KILN_ASSIGN_OR_RETURN(Value * v, valueRef());
    if (v->isOutput) return error("tensor '", v->name, "' is marked as an output twice");
    g_->markOutput(v);
    return endOfLine();
  }

  struct OutDecl {
    std::string name;
    DataType dtype;
    Dims shape;
    int line, col;
  };

  Status nodeLine() {
    std::vector<OutDecl> outs;
    std::unordered_set<std::string> seen;
    for (;;) {
      skipSpaces();
      OutDecl o{};
      o.line = line_;
      o.col = col_;
      KILN_ASSIGN_OR_RETURN(o.name, name("a tensor name, 'input' or 'output'"));
      if (g_->findValue(o.name) || seen.count(o.name))
        return errorAt(o.line, o.col, "tensor '", o.name, "' is defined twice");
      seen.insert(o.name);
      KILN_RETURN_IF_ERROR(expectChar(':'));
      KILN_RETURN_IF_ERROR(type(o.dtype, o.shape));
      outs.push_back(std::move(o));
      if (!acceptChar(',')) break;
    }
    KILN_RETURN_IF_ERROR(expectChar('='));
    skipSpaces();
    int ol = line_, oc = col_;
    if (!isIdentStart(peek())) return error("expected an op name, found ", describeHere());
    std::string opText = ident();
    auto op = parseOpName(opText);
    if (!op) return errorAt(ol, oc, "unknown op '", opText, "'");
    KILN_ASSIGN_OR_RETURN(std::string nodeName, quoted());
    KILN_RETURN_IF_ERROR(expectChar('('));
    std::vector<Value*> ins;
    if (!acceptChar(')')) {
      for (;;) {
        skipSpaces();
        if (peek() == '_' && !isIdentChar(peek(1))) {
          advance();
          ins.push_back(nullptr);
        } else {
          KILN_ASSIGN_OR_RETURN(Value * v, valueRef());
          ins.push_back(v);
        }
        if (acceptChar(')')) break;
        KILN_RETURN_IF_ERROR(expectChar(','));
      }
    }
    Attributes attrs;
    std::optional<DataSpec> data;
    int dl = 0, dc = 0;
    if (acceptChar('{')) {
      if (!acceptChar('}')) {
        for (;;) {
          skipSpaces();
          int al = line_, ac = col_;
          KILN_ASSIGN_OR_RETURN(std::string key, name("an attribute name"));
          if (attrs.has(key) || (key == "data" && data)) return errorAt(al, ac, "attribute '", key, "' given twice");
          KILN_RETURN_IF_ERROR(expectChar('='));
          if (*op == OpType::kConstant && key == "data") {
            dl = al;
            dc = ac;
            KILN_ASSIGN_OR_RETURN(data, dataSpec());
          } else {
            KILN_ASSIGN_OR_RETURN(AttrValue v, attrValue());
            attrs.set(key, std::move(v));
          }
          if (acceptChar('}')) break;
          KILN_RETURN_IF_ERROR(expectChar(','));
        }
      }
    }
    // Annotations.
    std::optional<DataType> precision;
    std::vector<std::optional<DataType>> outTypes;
    std::string tactic;
    std::vector<std::string> fused;
    while (acceptChar('@')) {
      int al = line_, ac = col_;
      std::string key = peekIdent() ? ident() : std::string();
      KILN_RETURN_IF_ERROR(expectChar('='));
      if (key == "precision") {
        KILN_ASSIGN_OR_RETURN(precision, dtype());
      } else if (key == "tactic") {
        KILN_ASSIGN_OR_RETURN(tactic, quoted());
      } else if (key == "fused") {
        KILN_RETURN_IF_ERROR(expectChar('['));
        if (!acceptChar(']')) {
          for (;;) {
            KILN_ASSIGN_OR_RETURN(std::string f, quoted());
            fused.push_back(std::move(f));
            if (acceptChar(']')) break;
            KILN_RETURN_IF_ERROR(expectChar(','));
          }
        }
      } else if (key == "out_types") {
        KILN_RETURN_IF_ERROR(expectChar('['));
        for (;;) {
          skipSpaces();
          if (peek() == '_' && !isIdentChar(peek(1))) {
            advance();
            outTypes.push_back(std::nullopt);
          } else {
            KILN_ASSIGN_OR_RETURN(DataType t, dtype());
            outTypes.push_back(t);
          }
          if (acceptChar(']')) break;
          KILN_RETURN_IF_ERROR(expectChar(','));
        }
        if (outTypes.size() != outs.size())
          return errorAt(al, ac, "@out_types has ", outTypes.size(), " entries for ", outs.size(), " outputs");
      } else {
        return errorAt(al, ac, "unknown annotation '@", key, "' (expected precision, tactic, fused or out_types)");
      }
    }
    KILN_RETURN_IF_ERROR(endOfLine());

    Node* n = nullptr;
    if (*op == OpType::kConstant) {
      if (!data) return errorAt(ol, oc, "Constant '", nodeName, "' needs data=...");
      if (!ins.empty()) return errorAt(ol, oc, "Constant '", nodeName, "' takes no inputs");
      if (outs.size() != 1) return errorAt(ol, oc, "Constant '", nodeName, "' has exactly one output");
      KILN_ASSIGN_OR_RETURN(HostTensor t, makeData(*data, outs[0].dtype, outs[0].shape, dl, dc));
      n = g_->addConstant(nodeName, std::move(t));
    } else {
      n = g_->addNode(*op, nodeName, ins, static_cast<int>(outs.size()));
    }
    n->attrs = std::move(attrs);
    n->precision = precision;
    n->tactic = std::move(tactic);
    n->fusedFrom = std::move(fused);
    for (size_t i = 0; i < outs.size(); ++i) {
      Value* v = n->outputs[i];
      KILN_RETURN_IF_ERROR(g_->renameValue(v, outs[i].name));
      v->dtype = outs[i].dtype;
      v->shape = outs[i].shape;
      if (!outTypes.empty()) v->requestedType = outTypes[i];
    }
    return Status::ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  std::unique_ptr<Graph> g_;
};

}  // namespace

std::string formatFloat(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[48];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return floatLooking(buf);
}

std::string printGraph(Graph const& g, PrintOptions options) {
  std::string out = "graph {\n";
  for (Value const* v : g.inputs())
    out += strCat("  input ", nameText(v->name), ": ", typeText(v->dtype, v->shape), "\n");
  std::vector<Node*> order;
  auto topo = g.topoOrder();
  if (topo.isOk()) {
    order = std::move(topo).value();
  } else {
    for (auto const& n : g.nodes()) order.push_back(n.get());
  }
  for (Node const* n : order) printNode(out, *n, options);
  for (Value const* v : g.outputs()) out += strCat("  output ", nameText(v->name), "\n");
  return out + "}\n";
}

Result<std::unique_ptr<Graph>> parseGraph(std::string_view text) { return Parser(text).run(); }

Result<HostTensor> makeRandomTensor(DataType dtype, Dims const& shape, uint64_t seed) {
  KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(dtype, shape, "random tensor"));
  // splitmix64 to spread the seed, then xorshift64*.
  uint64_t z = seed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  uint64_t state = (z ^ (z >> 31)) | 1;
  auto next = [&state] {
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return state * 0x2545f4914f6cdd1dull;
  };
  int64_t n = t.count();
  KILN_RETURN_IF_ERROR(dispatchType(dtype, [&](auto tag) {
    using S = decltype(tag);
    S* p = static_cast<S*>(t.mutableData());
    for (int64_t i = 0; i < n; ++i) {
      uint64_t r = next();
      if constexpr (kIsFloatStorage<S>) {
        // 24 random bits: exact in float32, so the value is in [-1, 1) before rounding to the type.
        p[i] = fromDouble<S>(static_cast<double>(r >> 40) * (1.0 / 8388608.0) - 1.0);
      } else if constexpr (std::is_same_v<S, bool>) {
        p[i] = (r >> 63) != 0;
      } else if constexpr (std::is_same_v<S, uint8_t>) {
        p[i] = static_cast<S>(r >> 60);
      } else {
        p[i] = static_cast<S>(static_cast<int64_t>(r >> 60) - 8);
      }
    }
    return Status::ok();
  }));
  return t;
}

}  // namespace kiln::ir
