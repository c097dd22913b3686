// Timing cache entries, their key and their file form: "KILNTC01", entry count, (key, tactic) strings with
// 32-bit lengths, then the XXH3-64 of everything before it.
#include "builder/timing_cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "core/host_memory.h"
#include "ir/op.h"

namespace kiln::builder {
namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'T', 'C', '0', '1'};

void putU32(std::string& s, uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::string attrText(ir::AttrValue const& v) {
  return std::visit(
      [](auto const& x) -> std::string {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t> || std::is_same_v<X, double>) return strCat(x);
        else if constexpr (std::is_same_v<X, std::string>) return x;
        else {
          std::string r = "[";
          for (auto const& e : x) r += strCat(e, ",");
          return r + "]";
        }
      },
      v);
}

}  // namespace

Result<std::unique_ptr<TimingCacheImpl>> TimingCacheImpl::parse(void const* blob, size_t size) {
  auto c = std::make_unique<TimingCacheImpl>();
  if (size == 0) return c;
  if (!blob) return invalidArgument("timing cache: null data for ", size, " bytes");
  auto const* p = static_cast<uint8_t const*>(blob);
  if (size < sizeof kMagic + 4 + 8 || std::memcmp(p, kMagic, sizeof kMagic) != 0)
    return invalidArgument("timing cache: not a Kiln timing cache (bad magic or too short: ", size, " bytes)");
  uint64_t sum = 0;
  std::memcpy(&sum, p + size - 8, 8);
  if (XXH3_64bits(p, size - 8) != sum) return invalidArgument("timing cache: checksum mismatch (corrupt file)");
  size_t off = sizeof kMagic, end = size - 8;
  auto u32 = [&](uint32_t& v) -> bool {
    if (end - off < 4) return false;
    v = static_cast<uint32_t>(p[off]) | static_cast<uint32_t>(p[off + 1]) << 8 | static_cast<uint32_t>(p[off + 2]) << 16 |
        static_cast<uint32_t>(p[off + 3]) << 24;
    off += 4;
    return true;
  };
  auto str = [&](std::string& s) -> bool {
    uint32_t n = 0;
    if (!u32(n) || end - off < n) return false;
    s.assign(reinterpret_cast<char const*>(p + off), n);
    off += n;
    return true;
  };
  uint32_t count = 0;
  if (!u32(count)) return invalidArgument("timing cache: truncated");
  for (uint32_t i = 0; i < count; ++i) {
    std::string k, v;
    if (!str(k) || !str(v)) return invalidArgument("timing cache: entry ", i, " is truncated");
    c->entries_[k] = v;
  }
  if (off != end) return invalidArgument("timing cache: ", end - off, " stray bytes after the entries");
  return c;
}

IHostMemory* TimingCacheImpl::serialize() const noexcept {
  std::string s(kMagic, sizeof kMagic);
  {
    std::lock_guard<std::mutex> lock(mu_);
    putU32(s, static_cast<uint32_t>(entries_.size()));
    for (auto const& [k, v] : entries_) {
      putU32(s, static_cast<uint32_t>(k.size()));
      s += k;
      putU32(s, static_cast<uint32_t>(v.size()));
      s += v;
    }
  }
  uint64_t sum = XXH3_64bits(s.data(), s.size());
  s.append(reinterpret_cast<char const*>(&sum), 8);
  auto buf = HostBuffer::allocate(s.size(), "serialized timing cache");
  if (!buf) return nullptr;
  std::memcpy(buf->data(), s.data(), s.size());
  return new (std::nothrow) HostMemoryImpl(std::move(buf).value());
}

bool TimingCacheImpl::combine(ITimingCache const& inputCache, bool ignoreMismatch) noexcept {
  auto const* other = dynamic_cast<TimingCacheImpl const*>(&inputCache);
  if (!other || other == this) return other == this;
  std::map<std::string, std::string> copy;
  {
    std::lock_guard<std::mutex> lock(other->mu_);
    copy = other->entries_;
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [k, v] : copy) entries_.emplace(k, std::move(v));  // existing entries win
  return true;
}

bool TimingCacheImpl::reset() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  entries_.clear();
  return true;
}

std::optional<std::string> TimingCacheImpl::lookup(std::string const& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void TimingCacheImpl::insert(std::string const& key, std::string const& tactic) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[key] = tactic;
}

size_t TimingCacheImpl::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

std::string timingCacheKey(std::string const& target, ir::Node const& n, ir::ShapeState const& st,
                           std::vector<backends::Tactic const*> const& cands) {
  std::string k = strCat(target, "|", ir::opName(n.op), "|");
  for (auto const& [name, v] : n.attrs.all()) k += strCat(name, "=", attrText(v), ";");
  k += "|in:";
  for (ir::Value const* v : n.inputs) {
    if (!v) {
      k += "-;";
      continue;
    }
    k += strCat(dataTypeName(st.info[v->id].dtype), dimsToString(st.info[v->id].shape),
                v->producer && v->producer->op == ir::OpType::kConstant ? "c" : "", ";");
  }
  k += "|out:";
  for (ir::Value const* v : n.outputs) k += strCat(dataTypeName(st.info[v->id].dtype), dimsToString(st.info[v->id].shape), ";");
  k += "|tactics:";
  std::vector<std::string> names;
  for (auto const* t : cands) names.push_back(t->name);
  std::sort(names.begin(), names.end());
  for (auto const& nm : names) k += nm + ",";
  return k;
}

}  // namespace kiln::builder
