// The timing cache: which tactic won the timing for a node signature (target, op, attributes, input and output
// types and shapes at the profile's opt point, and the candidate set), so a rebuild skips timing on a hit.
// ITimingCache is its public face; the bytes are a small self-checking file (--timingCacheFile).
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "kiln/kiln.h"

namespace kiln::builder {

class TimingCacheImpl final : public ITimingCache {
 public:
  TimingCacheImpl() = default;
  /// Reads serialized bytes (empty: an empty cache); errors say what is wrong with them.
  static Result<std::unique_ptr<TimingCacheImpl>> parse(void const* blob, size_t size);

  IHostMemory* serialize() const noexcept override;
  bool combine(ITimingCache const& inputCache, bool ignoreMismatch) noexcept override;
  bool reset() noexcept override;

  std::optional<std::string> lookup(std::string const& key) const;
  void insert(std::string const& key, std::string const& tactic);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> entries_;
};

/// The cache key of a node whose candidates are `cands`, at the shapes of `st`.
std::string timingCacheKey(std::string const& target, ir::Node const& n, ir::ShapeState const& st,
                           std::vector<backends::Tactic const*> const& cands);

}  // namespace kiln::builder
