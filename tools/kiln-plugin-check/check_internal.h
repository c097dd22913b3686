// Helpers the V2 checks (check.cc) and the V3 checks (check_v3.cc) of kiln-plugin-check share: fp16 conversion,
// the types and formats a format combination is made of, sample conversion and comparison, and a device run.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kiln/kiln_plugin.h"
#include "plugins/builtin/common/testing.h"

namespace kiln::plugincheck::detail {

using plugin::testing::HostTensor;

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
/// "fp32", "fp16", ... for messages.
char const* typeName(DataType t);
/// "[1,2,3]".
std::string dimsText(Dims const& d);
bool sameDims(Dims const& a, Dims const& b);

/// One position's choice in a format combination.
struct Choice {
  DataType type;
  TensorFormat format;
};

/// The types and formats offered to supportsFormatCombination, and how many combinations are run at most.
inline constexpr DataType kTypes[] = {DataType::kFLOAT, DataType::kHALF, DataType::kINT32, DataType::kINT8,
                                      DataType::kBF16,  DataType::kBOOL, DataType::kUINT8, DataType::kINT64};
inline constexpr TensorFormat kFormats[] = {TensorFormat::kLINEAR, TensorFormat::kCHW2, TensorFormat::kHWC8,
                                            TensorFormat::kCHW4, TensorFormat::kCHW32};
inline constexpr int32_t kMaxCombinations = 64;

/// Every combination of kTypes x kFormats over `positions` tensors that the plugin accepts, position by position
/// (as the builder asks), at most kMaxCombinations. `accepts(pos, type, format)` writes the choice into position
/// `pos`'s description (earlier positions hold the current prefix's choices) and returns
/// supportsFormatCombination's answer; V2 and V3 plugins differ only there.
template <typename Accepts>
std::vector<std::vector<Choice>> formatCombinations(int32_t positions, Accepts const& accepts) {
  std::vector<std::vector<Choice>> out;
  std::vector<Choice> current;
  auto walk = [&](auto const& self, int32_t pos) -> void {
    if (static_cast<int32_t>(out.size()) >= kMaxCombinations) return;
    if (pos == positions) {
      out.push_back(current);
      return;
    }
    for (TensorFormat f : kFormats) {
      for (DataType t : kTypes) {
        if (!accepts(pos, t, f)) continue;
        current.push_back({t, f});
        self(self, pos + 1);
        current.pop_back();
      }
    }
  };
  walk(walk, 0);
  return out;
}

/// `src` (fp32 or int32 sample data) converted to `type` into `dst`; false when there is no sensible conversion.
bool convert(HostTensor const& src, DataType type, HostTensor& dst);
/// "" when a and b agree within `tol` (relative + absolute; exact for integer types), else the first difference.
std::string compare(HostTensor const& a, HostTensor const& b, float tol);
/// "fp32,fp32 -> fp32" for messages (`nbIn` inputs first).
std::string comboText(std::vector<Choice> const& c, int32_t nbIn);

/// A plugin's enqueue (V2 or a V3 runtime capability's) with device pointers.
using DeviceEnqueue = std::function<int32_t(PluginTensorDesc const*, PluginTensorDesc const*, void const* const*,
                                            void* const*, void*, cudaStream_t)>;
/// Runs `enqueue` on the GPU: inputs `in` copied to the device, outputs shaped like `like` pre-filled with a
/// pattern, `ws` workspace bytes; plain or captured into a CUDA graph and replayed (`graph`); the outputs come back
/// in `out`. Returns "" or ": <what failed>".
std::string runOnDevice(DeviceEnqueue const& enqueue, size_t ws, std::vector<HostTensor> const& in,
                        std::vector<HostTensor> const& like, std::vector<HostTensor>& out, bool graph);

}  // namespace kiln::plugincheck::detail
