// Plan files: what a built engine is (the optimized graph with tactic choices, weights, profiles, memory
// plan) and its binary form: header (magic KILNPLAN, format version, kiln version, target, flags, section
// table with offset/size/XXH3-64 per section, the header's own checksum), then 64-byte aligned sections:
// the graph as a verified flatbuffer, then weights in sections of their own.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/memory.h"
#include "ir/graph.h"

namespace kiln::plan {

inline constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'P', 'L', 'A', 'N'};
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 4;  // 1.1: Node.subgraphs (If/Loop); 1.2: Node.plugin;
                                              // 1.3: V3 plugin attributes plugin_shapes, plugin_workspace;
                                              // 1.4: Plan.io_formats

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
  // Network inputs/outputs whose binding is not kLINEAR, by Value::id (a Reformat next to each converts).
  std::map<int32_t, TensorFormat> ioFormats;
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

/// What inspection tools show of a plan without loading it: the header plus the light fields of the graph
/// section (names, types, profiles, precisions, tactics). Weights sections are neither read nor needed.
struct PlanSummary {
  PlanHeader header;
  std::vector<bool> sectionVerified;  // per section: its checksum was checked (false: its bytes were not given)
  std::string name;
  uint32_t builderFlags = 0;
  int32_t optimizationLevel = 0;
  int32_t profilingVerbosity = 0;
  uint32_t tacticSources = 0;
  struct Tensor {
    std::string name;
    int32_t dtype = 0;          // kiln::DataType
    std::vector<int64_t> dims;  // -1: known at run time
    bool isInput = false;
  };
  std::vector<Tensor> io;  // inputs, then outputs
  std::vector<Profile> profiles;
  int64_t layers = 0;     // nodes other than Constant
  int64_t constants = 0;  // Constant nodes
  std::vector<std::pair<std::string, int64_t>> precisions;  // layer count per precision name
  std::vector<std::pair<std::string, int64_t>> ops;         // layer count per op name
  std::vector<std::string> plugins;                         // per plugin layer: "layer: plugin 'T' version 'V' namespace 'N'"
  int64_t arenaSize = 0;
  uint64_t weightsBytes = 0;  // sum of the weights sections' sizes
};

/// How many leading bytes of a plan readPlanSummary() needs, judged from the `size` bytes given: a number
/// larger than `size` means "give me at least this many and ask again"; at most `size` means enough. Fails
/// (kInvalidPlan) if the bytes already given are not the start of a Kiln plan header.
Result<uint64_t> planSummaryBytesNeeded(void const* data, size_t size);

/// Reads the header and the graph section (checksum and schema verified) of a plan whose first `size` bytes
/// are given; weights sections past `size` are neither needed nor read. Refuses, naming the reason, a bad
/// header or a graph section that is missing, corrupt or fails verification.
Result<PlanSummary> readPlanSummary(void const* data, size_t size);

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
