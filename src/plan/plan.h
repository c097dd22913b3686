// Plan files: what a built engine is (the optimized graph with tactic choices, weights, profiles, memory
// plan) and its binary form: header (magic KILNPLAN, format version, kiln version, target, flags, section
// table with offset/size/XXH3-64 per section, the header's own checksum), then 64-byte aligned sections:
// the graph as a verified flatbuffer, then weights in sections of their own.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/memory.h"
#include "ir/graph.h"

namespace kiln::plan {

inline constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 1;  // 1.1: Node.subgraphs (If/Loop)

/// min/opt/max of one input for one optimization profile.
struct ProfileShapes {
  std::string input;
  Dims min{}, opt{}, max{};
};
struct Profile {
  std::vector<ProfileShapes> inputs;  // one per network input (static inputs too)
};

/// Where a value lives during execution.
struct Placement {
  int64_t offset = -1;  // byte offset in the activation arena; -1: not in the arena (I/O, constant)
  int64_t size = 0;     // bytes reserved (at the largest profile shape)
};

/// Everything an engine is made of. The graph is renumbered: value/node ids index the vectors below.
struct PlanInfo {
  std::string name;            // network name
  std::string target = "cpu";  // "cpu" or "sm_XX"
  std::string kilnVersion;     // "0.1.0"
  uint32_t builderFlags = 0;   // BuilderFlags the plan was built with
  int32_t optimizationLevel = 0;
  int32_t profilingVerbosity = 0;  // ProfilingVerbosity
  uint32_t tacticSources = 0;
  std::vector<Profile> profiles;
  std::vector<Placement> placements;      // indexed by Value::id
  std::vector<int64_t> workspaceOffsets;  // indexed by Node::id: scratch offset in the arena (-1: none)
  std::vector<int64_t> workspaceSizes;    // indexed by Node::id
  int64_t arenaSize = 0;                  // bytes of device memory a context needs
  std::unique_ptr<ir::Graph> graph;       // nodes carry tactic names; Constant nodes carry weights
};

/// Summary of a plan read from its header alone (no body): for inspection tools.
struct PlanHeader {
  uint16_t formatMajor = 0, formatMinor = 0;
  std::string kilnVersion;
  std::string target;
  uint32_t flags = 0;
  struct Section {
    std::string kind;  // "graph" or "weights"
    uint64_t offset = 0, size = 0, checksum = 0;
  };
  std::vector<Section> sections;
  uint64_t totalSize = 0;
};

/// Serializes a plan. The output buffer is charged to `budget` when given.
Result<HostBuffer> writePlan(PlanInfo const& plan, MemoryBudget* budget = nullptr);

/// Reads and verifies a plan: refuses (kInvalidPlan, message saying which) a wrong magic, another format
/// major version, a truncated file, a section checksum or header checksum mismatch, a flatbuffer that fails
/// verification, or a graph that does not hold together (bad ids, unknown op, weights outside their
/// section). The bytes are copied once; weights are views into that copy.
Result<PlanInfo> readPlan(void const* data, size_t size, MemoryBudget* budget = nullptr);

/// Reads only the header (and checks its checksum).
Result<PlanHeader> readPlanHeader(void const* data, size_t size);

}  // namespace kiln::plan
