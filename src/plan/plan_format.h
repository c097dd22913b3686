// Internal to src/plan: the fixed binary layout of a plan's header and section table, little-endian
// load/store helpers, and the writer entry point with a settable weights-section size (for tests).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "plan/plan.h"

namespace kiln::plan::detail {

// Header layout (all little-endian):
//   0  magic "KILNPLAN"            8 bytes
//   8  format major, minor         uint16 each
//  12  kiln version                16 bytes, NUL-padded
//  28  target                      16 bytes, NUL-padded
//  44  flags                       uint32 (none defined yet; written as 0, ignored when read)
//  48  number of sections          uint32
//  52  reserved                    uint32, 0
//  56  section table: per section kind uint32, reserved uint32, offset uint64, size uint64, XXH3-64 uint64
//  ..  XXH3-64 of every header byte before it
// Sections follow, each at the next 64-byte boundary after the previous one; the gaps are zero bytes.
inline constexpr size_t kFixedStringBytes = 16;
inline constexpr size_t kOffMajor = 8;
inline constexpr size_t kOffMinor = 10;
inline constexpr size_t kOffVersion = 12;
inline constexpr size_t kOffTarget = 28;
inline constexpr size_t kOffFlags = 44;
inline constexpr size_t kOffNumSections = 48;
inline constexpr size_t kOffTable = 56;
inline constexpr size_t kSectionEntryBytes = 32;
inline constexpr size_t kSectionAlign = 64;
inline constexpr size_t kWeightAlign = 64;
/// More sections than this is not a plan this code wrote (keeps size arithmetic far from overflow).
inline constexpr uint32_t kMaxSections = 1u << 20;
/// Weights go into sections of at most this many bytes (one constant larger than it gets its own section).
inline constexpr uint64_t kDefaultWeightsSectionLimit = uint64_t(1) << 30;

enum class SectionKind : uint32_t { kGraph = 1, kWeights = 2 };

/// Bytes of a header with `n` sections, checksum included (before the padding to the first section).
inline constexpr size_t headerBytes(size_t n) { return kOffTable + n * kSectionEntryBytes + 8; }

inline void storeLE16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
inline void storeLE32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
inline void storeLE64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    p[i] = uint8_t(v >> (8 * i));
}
inline uint16_t loadLE16(uint8_t const* p) { return uint16_t(p[0] | (uint16_t(p[1]) << 8)); }
inline uint32_t loadLE32(uint8_t const* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= uint32_t(p[i]) << (8 * i);
  return v;
}
inline uint64_t loadLE64(uint8_t const* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

/// XXH3-64 of `size` bytes.
uint64_t checksum(void const* data, size_t size);

/// What the header says besides the section table.
struct ContainerInfo {
  uint16_t formatMajor = kFormatMajor;
  uint16_t formatMinor = kFormatMinor;
  std::string kilnVersion;
  std::string target;
  uint32_t flags = 0;
};

/// One section to write: its kind, size, and the byte ranges copied into it (the rest is zero).
struct SectionSpec {
  struct Piece {
    uint64_t offset = 0;
    void const* data = nullptr;
    size_t bytes = 0;
  };
  uint32_t kind = 0;
  uint64_t size = 0;
  std::vector<Piece> pieces;
};

/// Lays out header, section table and sections (with checksums) into one buffer charged to `budget`.
/// Tests use it to build plans whose sections hold anything.
Result<HostBuffer> assemblePlan(ContainerInfo const& info, std::vector<SectionSpec> const& sections,
                                MemoryBudget* budget);

/// Recomputes the checksums of `bytes` in place: of every section the table places inside the bytes, then of
/// the header. For tests and fuzzers that change a plan's contents and want the change to reach the checks
/// behind the checksums (schema, graph). False, changing nothing, when the bytes cannot hold the header.
bool resealPlan(uint8_t* bytes, size_t size);

/// writePlan with the weights-section size limit given (tests use small limits to get several sections).
Result<HostBuffer> writePlanWithLimit(PlanInfo const& plan, MemoryBudget* budget, uint64_t weightsSectionLimit);

}  // namespace kiln::plan::detail
