// libFuzzer target: IR text -> ir::parseGraph -> print and parse again (the text form must round-trip:
// print(parse(print(g))) == print(g)) -> topological order and shape/type inference with the reference
// evaluator. A round trip that fails or differs aborts (a bug in the printer or the parser).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "backends/backend.h"
#include "ir/shape_inference.h"
#include "ir/text.h"

extern "C" int LLVMFuzzerTestOneInput(uint8_t const* data, size_t size) {
  // Constants given as data=random(...)/fill(...) are generated at their declared size: keep inputs to shapes
  // the parser's element limit allows (it refuses larger ones by name).
  std::string_view const text(reinterpret_cast<char const*>(data), size);
  auto parsed = kiln::ir::parseGraph(text);
  if (!parsed.isOk()) return 0;
  kiln::ir::Graph& g = *parsed.value();
  kiln::ir::PrintOptions options;
  options.fullConstants = true;
  std::string const printed = kiln::ir::printGraph(g, options);
  auto again = kiln::ir::parseGraph(printed);
  if (!again.isOk()) {
    std::fprintf(stderr, "ir_text_fuzz: the printed graph does not parse: %s\n--- printed:\n%s\n",
                 again.status().message().c_str(), printed.c_str());
    std::abort();
  }
  std::string const reprinted = kiln::ir::printGraph(*again.value(), options);
  if (reprinted != printed) {
    std::fprintf(stderr, "ir_text_fuzz: print(parse(print(g))) != print(g)\n--- first:\n%s\n--- second:\n%s\n",
                 printed.c_str(), reprinted.c_str());
    std::abort();
  }
  kiln::ir::HostEvaluator const eval = kiln::backends::referenceEvaluator();
  (void)kiln::ir::inferGraphInPlace(g, &eval);
  return 0;
}
