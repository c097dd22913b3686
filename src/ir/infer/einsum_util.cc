// Einsum equation parsing (see einsum_util.h).
#include "ir/infer/einsum_util.h"

#include <algorithm>
#include <cctype>

namespace kiln::ir {
namespace {

constexpr int32_t kLetterLabels = 52;

int32_t letterLabel(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

// A term split into letters with the position of its ellipsis (-1: none).
struct Term {
  std::vector<int32_t> letters;
  int32_t ellipsisAt = -1;
};

Result<Term> parseTerm(std::string const& t, std::string const& eq) {
  Term term;
  for (size_t i = 0; i < t.size();) {
    if (t[i] == '.') {
      if (t.compare(i, 3, "...") != 0 || term.ellipsisAt >= 0)
        return invalidArgument("einsum equation '", eq, "': malformed ellipsis in term '", t, "'");
      term.ellipsisAt = static_cast<int32_t>(term.letters.size());
      i += 3;
      continue;
    }
    int32_t l = letterLabel(t[i]);
    if (l < 0) return invalidArgument("einsum equation '", eq, "': invalid character '", std::string(1, t[i]), "'");
    term.letters.push_back(l);
    ++i;
  }
  return term;
}

std::string stripSpaces(std::string const& s) {
  std::string r;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) r.push_back(c);
  return r;
}

struct Split {
  std::vector<Term> inputs;
  bool explicitOutput = false;
  Term output;
};

Result<Split> split(std::string const& equation) {
  std::string eq = stripSpaces(equation);
  Split s;
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  if (arrow != std::string::npos) {
    s.explicitOutput = true;
    std::string rhs = eq.substr(arrow + 2);
    if (rhs.find("->") != std::string::npos || rhs.find(',') != std::string::npos)
      return invalidArgument("einsum equation '", equation, "': malformed output term");
    KILN_ASSIGN_OR_RETURN(s.output, parseTerm(rhs, equation));
  }
  if (lhs.find('-') != std::string::npos || lhs.find('>') != std::string::npos)
    return invalidArgument("einsum equation '", equation, "': malformed '->'");
  size_t start = 0;
  while (true) {
    size_t comma = lhs.find(',', start);
    KILN_ASSIGN_OR_RETURN(Term t, parseTerm(lhs.substr(start, comma - start), equation));
    s.inputs.push_back(std::move(t));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return s;
}

}  // namespace

Status checkEinsumEquation(std::string const& equation) {
  Result<Split> s = split(equation);
  return s.isOk() ? Status::ok() : s.status();
}

Result<EinsumSpec> parseEinsum(std::string const& equation, std::vector<Dims> const& shapes) {
  KILN_ASSIGN_OR_RETURN(Split s, split(equation));
  if (s.inputs.size() != shapes.size())
    return invalidArgument("einsum equation '", equation, "' has ", s.inputs.size(), " input terms for ", shapes.size(),
                           " inputs");
  // Ellipsis rank of each input, and the largest.
  std::vector<int32_t> ellRank(shapes.size(), 0);
  int32_t maxEll = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    int32_t letters = static_cast<int32_t>(s.inputs[i].letters.size());
    int32_t e = shapes[i].nbDims - letters;
    if (e < 0 || (e > 0 && s.inputs[i].ellipsisAt < 0))
      return invalidArgument("einsum equation '", equation, "': term ", i, " has ", letters,
                             " labels for an input of rank ", shapes[i].nbDims);
    ellRank[i] = e;
    maxEll = std::max(maxEll, e);
  }
  EinsumSpec spec;
  spec.extents.assign(static_cast<size_t>(kLetterLabels + maxEll), -2);  // -2: label unused
  std::vector<int32_t> count(spec.extents.size(), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    Term const& t = s.inputs[i];
    std::vector<int32_t> labels;
    for (size_t p = 0; p <= t.letters.size(); ++p) {
      if (static_cast<int32_t>(p) == t.ellipsisAt)
        for (int32_t j = 0; j < ellRank[i]; ++j) labels.push_back(kLetterLabels + maxEll - ellRank[i] + j);
      if (p < t.letters.size()) labels.push_back(t.letters[p]);
    }
    for (size_t ax = 0; ax < labels.size(); ++ax) {
      int32_t l = labels[ax];
      int64_t d = shapes[i].d[ax];
      int64_t& e = spec.extents[static_cast<size_t>(l)];
      ++count[static_cast<size_t>(l)];
      bool ell = l >= kLetterLabels;
      if (e == -2 || e == -1 || (ell && e == 1 && d >= 0)) {
        if (e != -1 || d >= 0) e = d;
      } else if (d >= 0 && d != e && !(ell && d == 1)) {
        return invalidArgument("einsum equation '", equation, "': extents ", e, " and ", d,
                               " of one label differ (input ", i, " axis ", ax, ")");
      }
    }
    spec.inputLabels.push_back(std::move(labels));
  }
  std::vector<bool> inOutput(spec.extents.size(), false);
  if (s.explicitOutput) {
    Term const& t = s.output;
    if (t.ellipsisAt >= 0 && maxEll == 0 &&
        std::none_of(s.inputs.begin(), s.inputs.end(), [](Term const& x) { return x.ellipsisAt >= 0; }))
      return invalidArgument("einsum equation '", equation, "': the output has an ellipsis but no input has");
    for (size_t p = 0; p <= t.letters.size(); ++p) {
      if (static_cast<int32_t>(p) == t.ellipsisAt)
        for (int32_t j = 0; j < maxEll; ++j) spec.outputLabels.push_back(kLetterLabels + j);
      if (p < t.letters.size()) {
        int32_t l = t.letters[p];
        if (count[static_cast<size_t>(l)] == 0)
          return invalidArgument("einsum equation '", equation, "': output label '",
                                 std::string(1, l < 26 ? char('a' + l) : char('A' + l - 26)), "' is in no input");
        if (inOutput[static_cast<size_t>(l)])
          return invalidArgument("einsum equation '", equation, "': output label repeated");
        spec.outputLabels.push_back(l);
      }
      if (!spec.outputLabels.empty()) inOutput[static_cast<size_t>(spec.outputLabels.back())] = true;
    }
    for (int32_t l : spec.outputLabels) inOutput[static_cast<size_t>(l)] = true;
  } else {
    for (int32_t j = 0; j < maxEll; ++j) spec.outputLabels.push_back(kLetterLabels + j);
    // ASCII order: 'A'..'Z' (labels 26..51) before 'a'..'z' (0..25).
    for (int32_t l = 26; l < kLetterLabels; ++l)
      if (count[static_cast<size_t>(l)] == 1) spec.outputLabels.push_back(l);
    for (int32_t l = 0; l < 26; ++l)
      if (count[static_cast<size_t>(l)] == 1) spec.outputLabels.push_back(l);
    for (int32_t l : spec.outputLabels) inOutput[static_cast<size_t>(l)] = true;
  }
  if (spec.outputLabels.size() > static_cast<size_t>(Dims::MAX_DIMS))
    return invalidArgument("einsum equation '", equation, "': the output would have rank ", spec.outputLabels.size());
  for (size_t l = 0; l < spec.extents.size(); ++l)
    if (count[l] > 0 && !inOutput[l]) spec.summedLabels.push_back(static_cast<int32_t>(l));
  return spec;
}

}  // namespace kiln::ir
