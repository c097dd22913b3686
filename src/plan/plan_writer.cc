// Plan writer: lays constants out in weights sections, encodes the graph as a flatbuffer, and assembles
// header + section table + 64-byte aligned sections with their XXH3-64 checksums.
#include <xxhash.h>

#include <cstring>

#include "plan/plan.h"
#include "plan/plan_format.h"
#include "plan/plan_generated.h"

namespace kiln::plan {
namespace detail {

uint64_t checksum(void const* data, size_t size) { return XXH3_64bits(data, size); }

bool resealPlan(uint8_t* bytes, size_t size) {
  if (bytes == nullptr || size < headerBytes(0)) return false;
  uint64_t const n = loadLE32(bytes + kOffNumSections);
  if (n > kMaxSections || headerBytes(n) > size) return false;
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t* entry = bytes + kOffTable + i * kSectionEntryBytes;
    uint64_t const offset = loadLE64(entry + 8);
    uint64_t const bytesIn = loadLE64(entry + 16);
    if (offset <= size && bytesIn <= size - offset) storeLE64(entry + 24, checksum(bytes + offset, bytesIn));
  }
  size_t const sumAt = headerBytes(n) - 8;
  storeLE64(bytes + sumAt, checksum(bytes, sumAt));
  return true;
}

Result<HostBuffer> assemblePlan(ContainerInfo const& info, std::vector<SectionSpec> const& sections,
                                MemoryBudget* budget) {
  if (info.kilnVersion.size() > kFixedStringBytes)
    return invalidArgument("kiln version '", info.kilnVersion, "' is longer than ", kFixedStringBytes, " bytes");
  if (info.target.size() > kFixedStringBytes)
    return invalidArgument("target '", info.target, "' is longer than ", kFixedStringBytes, " bytes");
  if (sections.size() > kMaxSections)
    return invalidArgument("a plan holds at most ", kMaxSections, " sections");
  size_t const headerEnd = headerBytes(sections.size());
  std::vector<uint64_t> offsets(sections.size());
  uint64_t end = headerEnd;
  for (size_t s = 0; s < sections.size(); ++s) {
    offsets[s] = alignUp(end, kSectionAlign);
    if (sections[s].size > (uint64_t(1) << 62) || offsets[s] > (uint64_t(1) << 62))
      return invalidArgument("plan section ", s, " is too large");
    end = offsets[s] + sections[s].size;
    for (SectionSpec::Piece const& p : sections[s].pieces)
      if (p.offset > sections[s].size || p.bytes > sections[s].size - p.offset)
        return internalError("plan section ", s, ": a piece lies outside the section");
  }
  if (end > std::numeric_limits<size_t>::max())
    return invalidArgument("the plan is too large for this machine");
  KILN_ASSIGN_OR_RETURN(HostBuffer out, HostBuffer::allocate(static_cast<size_t>(end), "serialized plan", budget));
  auto* bytes = static_cast<uint8_t*>(out.data());  // zero-filled: padding stays zero
  std::memcpy(bytes, kMagic, sizeof(kMagic));
  storeLE16(bytes + kOffMajor, info.formatMajor);
  storeLE16(bytes + kOffMinor, info.formatMinor);
  std::memcpy(bytes + kOffVersion, info.kilnVersion.data(), info.kilnVersion.size());
  std::memcpy(bytes + kOffTarget, info.target.data(), info.target.size());
  storeLE32(bytes + kOffFlags, info.flags);
  storeLE32(bytes + kOffNumSections, static_cast<uint32_t>(sections.size()));
  for (size_t s = 0; s < sections.size(); ++s) {
    uint8_t* section = bytes + offsets[s];
    for (SectionSpec::Piece const& p : sections[s].pieces)
      if (p.bytes)
        std::memcpy(section + p.offset, p.data, p.bytes);
    uint8_t* entry = bytes + kOffTable + s * kSectionEntryBytes;
    storeLE32(entry, sections[s].kind);
    storeLE64(entry + 8, offsets[s]);
    storeLE64(entry + 16, sections[s].size);
    storeLE64(entry + 24, checksum(section, static_cast<size_t>(sections[s].size)));
  }
  storeLE64(bytes + headerEnd - 8, checksum(bytes, headerEnd - 8));
  return out;
}

namespace {

// Deepest nesting of subgraphs written (control flow allows 16; the rest is headroom).
constexpr int kMaxSubgraphDepth = 32;

// True when values and nodes are numbered by position (what a plan stores).
bool isNumbered(ir::Graph const& g) {
  for (size_t i = 0; i < g.values().size(); ++i)
    if (g.values()[i]->id != static_cast<int32_t>(i)) return false;
  for (size_t i = 0; i < g.nodes().size(); ++i)
    if (g.nodes()[i]->id != static_cast<int32_t>(i)) return false;
  return true;
}

// Encodes a graph (and, recursively, the subgraphs of its nodes) into `fbb`, laying constants out in the
// weights sections as they are met: constants in node order, each 64-byte aligned, sections split at the limit.
class GraphEncoder {
 public:
  GraphEncoder(flatbuffers::FlatBufferBuilder& fbb, std::vector<SectionSpec>& sections, uint64_t limit)
      : fbb_(fbb), sections_(sections), limit_(limit) {}

  Result<flatbuffers::Offset<fb::Graph>> encode(ir::Graph const& g, std::string const& where, int depth) {
    auto const& values = g.values();
    auto const& nodes = g.nodes();
    for (size_t i = 0; i < values.size(); ++i)
      if (values[i]->id != static_cast<int32_t>(i))
        return invalidArgument(where, "tensor '", values[i]->name, "' has id ", values[i]->id, " at position ", i,
                               ": renumber the graph before writing a plan");
    for (size_t i = 0; i < nodes.size(); ++i)
      if (nodes[i]->id != static_cast<int32_t>(i))
        return invalidArgument(where, nodes[i]->describe(), " has id ", nodes[i]->id, " at position ", i,
                               ": renumber the graph before writing a plan");
    // The id of a value this graph owns, or an error naming the node that refers to a foreign one.
    auto valueId = [&](ir::Value const* v, ir::Node const& n) -> Result<int32_t> {
      if (!v)
        return -1;
      if (v->id < 0 || static_cast<size_t>(v->id) >= values.size() || values[v->id].get() != v)
        return invalidArgument(where, n.describe(), " refers to a tensor that is not in the graph");
      return v->id;
    };

    std::vector<flatbuffers::Offset<fb::Value>> fbValues;
    fbValues.reserve(values.size());
    for (auto const& v : values) {
      auto name = fbb_.CreateString(v->name);
      KILN_ASSIGN_OR_RETURN(auto dims, dimsVec(v->shape));
      fb::ValueBuilder vb(fbb_);
      vb.add_name(name);
      vb.add_dtype(static_cast<int32_t>(v->dtype));
      vb.add_dims(dims);
      vb.add_is_input(v->isInput);
      vb.add_is_output(v->isOutput);
      if (v->requestedType)
        vb.add_requested_type(static_cast<int32_t>(*v->requestedType));
      fbValues.push_back(vb.Finish());
    }

    std::vector<flatbuffers::Offset<fb::Node>> fbNodes;
    fbNodes.reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) {
      ir::Node const& n = *nodes[i];
      std::vector<int32_t> ins, outs;
      for (ir::Value const* v : n.inputs) {
        KILN_ASSIGN_OR_RETURN(int32_t id, valueId(v, n));
        ins.push_back(id);
      }
      for (ir::Value const* v : n.outputs) {
        if (!v)
          return invalidArgument(where, n.describe(), " has a missing output");
        KILN_ASSIGN_OR_RETURN(int32_t id, valueId(v, n));
        outs.push_back(id);
      }
      std::vector<flatbuffers::Offset<fb::Attr>> attrs;
      for (auto const& [key, value] : n.attrs.all()) {
        auto k = fbb_.CreateString(key);
        flatbuffers::Offset<flatbuffers::String> s;
        flatbuffers::Offset<flatbuffers::Vector<int64_t>> ints;
        flatbuffers::Offset<flatbuffers::Vector<double>> floats;
        fb::AttrKind kind = fb::AttrKind::Int;
        if (auto const* sv = std::get_if<std::string>(&value)) {
          kind = fb::AttrKind::String;
          s = fbb_.CreateString(*sv);
        } else if (auto const* iv = std::get_if<std::vector<int64_t>>(&value)) {
          kind = fb::AttrKind::Ints;
          ints = fbb_.CreateVector(*iv);
        } else if (auto const* fv = std::get_if<std::vector<double>>(&value)) {
          kind = fb::AttrKind::Floats;
          floats = fbb_.CreateVector(*fv);
        } else if (std::holds_alternative<double>(value)) {
          kind = fb::AttrKind::Float;
        }
        fb::AttrBuilder ab(fbb_);
        ab.add_key(k);
        ab.add_kind(kind);
        if (auto const* i64 = std::get_if<int64_t>(&value))
          ab.add_i(*i64);
        if (auto const* f64 = std::get_if<double>(&value))
          ab.add_f(*f64);
        if (!s.IsNull())
          ab.add_s(s);
        if (!ints.IsNull())
          ab.add_ints(ints);
        if (!floats.IsNull())
          ab.add_floats(floats);
        attrs.push_back(ab.Finish());
      }
      flatbuffers::Offset<fb::WeightRef> weight;
      if (n.constant) {
        KILN_ASSIGN_OR_RETURN(weight, placeConstant(n, where));
      }
      // Subgraphs are finished before this node's table starts (flatbuffers builds no nested tables).
      std::vector<flatbuffers::Offset<fb::Graph>> subs;
      if (!n.subgraphs.empty() && depth >= kMaxSubgraphDepth)
        return invalidArgument(where, n.describe(), ": subgraphs are nested deeper than ", kMaxSubgraphDepth);
      for (size_t k = 0; k < n.subgraphs.size(); ++k) {
        if (!n.subgraphs[k])
          return invalidArgument(where, n.describe(), " has a null subgraph ", k);
        ir::Graph const* sg = n.subgraphs[k].get();
        if (!isNumbered(*sg)) {
          keep_.push_back(sg->clone());
          KILN_RETURN_IF_ERROR(keep_.back()->renumber().withContext(n.describe()));
          sg = keep_.back().get();
        }
        KILN_ASSIGN_OR_RETURN(auto sub, encode(*sg, strCat(where, n.describe(), ", subgraph ", k, ": "), depth + 1));
        subs.push_back(sub);
      }
      flatbuffers::Offset<fb::PluginRecord> plugin;
      bool const isPlugin = n.op == ir::OpType::kPluginV2 || n.op == ir::OpType::kPluginV3;
      if (isPlugin) {
        if (!n.plugin)
          return invalidArgument(where, n.describe(), " has no plugin object");
        KILN_ASSIGN_OR_RETURN(ir::PluginRecord rec, ir::withContext(n.plugin->record(), where + n.describe()));
        auto type = fbb_.CreateString(rec.type);
        auto version = fbb_.CreateString(rec.version);
        auto ns = fbb_.CreateString(rec.ns);
        auto data = fbb_.CreateVector(rec.data);
        fb::PluginRecordBuilder pb(fbb_);
        pb.add_kind(static_cast<int32_t>(rec.kind));
        pb.add_type(type);
        pb.add_version(version);
        pb.add_plugin_namespace(ns);
        pb.add_data(data);
        plugin = pb.Finish();
      }
      auto op = fbb_.CreateString(ir::opName(n.op));
      auto name = fbb_.CreateString(n.name);
      auto insVec = fbb_.CreateVector(ins);
      auto outsVec = fbb_.CreateVector(outs);
      auto attrsVec = fbb_.CreateVector(attrs);
      auto tactic = fbb_.CreateString(n.tactic);
      auto fused = fbb_.CreateVectorOfStrings(n.fusedFrom);
      flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::Graph>>> subsVec;
      if (!subs.empty())
        subsVec = fbb_.CreateVector(subs);
      fb::NodeBuilder nb(fbb_);
      nb.add_op(op);
      nb.add_name(name);
      nb.add_inputs(insVec);
      nb.add_outputs(outsVec);
      nb.add_attrs(attrsVec);
      nb.add_tactic(tactic);
      nb.add_fused_from(fused);
      if (n.precision)
        nb.add_precision(static_cast<int32_t>(*n.precision));
      if (n.constant)
        nb.add_constant(weight);
      if (!subs.empty())
        nb.add_subgraphs(subsVec);
      if (isPlugin)
        nb.add_plugin(plugin);
      fbNodes.push_back(nb.Finish());
    }

    std::vector<int32_t> graphInputs, graphOutputs;
    for (ir::Value const* v : g.inputs()) {
      if (!v || v->id < 0 || static_cast<size_t>(v->id) >= values.size() || values[v->id].get() != v)
        return invalidArgument(where, "a graph input is not in the graph");
      graphInputs.push_back(v->id);
    }
    for (ir::Value const* v : g.outputs()) {
      if (!v || v->id < 0 || static_cast<size_t>(v->id) >= values.size() || values[v->id].get() != v)
        return invalidArgument(where, "a graph output is not in the graph");
      graphOutputs.push_back(v->id);
    }
    return fb::CreateGraph(fbb_, fbb_.CreateVector(fbValues), fbb_.CreateVector(fbNodes),
                           fbb_.CreateVector(graphInputs), fbb_.CreateVector(graphOutputs));
  }

  Result<flatbuffers::Offset<flatbuffers::Vector<int64_t>>> dimsVec(Dims const& d) {
    if (d.nbDims < 0 || d.nbDims > Dims::MAX_DIMS)
      return invalidArgument("a shape has rank ", d.nbDims);
    return fbb_.CreateVector(d.d, static_cast<size_t>(d.nbDims));
  }

 private:
  Result<flatbuffers::Offset<fb::WeightRef>> placeConstant(ir::Node const& n, std::string const& where) {
    HostTensor const& t = *n.constant;
    if (dataTypeSize(t.dtype()) == 0)
      return invalidArgument(where, n.describe(), ": weights of type ", dataTypeName(t.dtype()), " cannot be stored");
    KILN_ASSIGN_OR_RETURN(int64_t count, checkedVolume(t.shape()));
    KILN_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(count, dataTypeSize(t.dtype())));
    if (bytes && !t.data())
      return invalidArgument(where, n.describe(), " has weights without data");
    SectionSpec* cur = &sections_.back();
    uint64_t offset = alignUp(cur->size, kWeightAlign);
    if (cur->size > 0 && offset + bytes > limit_) {
      sections_.push_back({static_cast<uint32_t>(SectionKind::kWeights), 0, {}});
      cur = &sections_.back();
      offset = 0;
    }
    uint32_t section = static_cast<uint32_t>(sections_.size() - 1);
    cur->size = offset + bytes;
    if (bytes)
      cur->pieces.push_back({offset, t.data(), bytes});
    KILN_ASSIGN_OR_RETURN(auto dims, dimsVec(t.shape()));
    fb::WeightRefBuilder wb(fbb_);
    wb.add_section(section);
    wb.add_offset(offset);
    wb.add_size(t.bytes());
    wb.add_dtype(static_cast<int32_t>(t.dtype()));
    wb.add_dims(dims);
    return wb.Finish();
  }

  flatbuffers::FlatBufferBuilder& fbb_;
  std::vector<SectionSpec>& sections_;
  uint64_t limit_;
  std::vector<std::unique_ptr<ir::Graph>> keep_;  // renumbered copies of subgraphs that needed it
};

}  // namespace

Result<HostBuffer> writePlanWithLimit(PlanInfo const& plan, MemoryBudget* budget, uint64_t weightsSectionLimit) {
  if (!plan.graph)
    return invalidArgument("the plan has no graph");
  std::vector<SectionSpec> sections(1);
  sections[0].kind = static_cast<uint32_t>(SectionKind::kGraph);
  sections.push_back({static_cast<uint32_t>(SectionKind::kWeights), 0, {}});
  flatbuffers::FlatBufferBuilder fbb(4096);
  GraphEncoder encoder(fbb, sections, weightsSectionLimit);
  KILN_ASSIGN_OR_RETURN(auto graph, encoder.encode(*plan.graph, "", 0));
  auto dimsVec = [&](Dims const& d) { return encoder.dimsVec(d); };

  std::vector<flatbuffers::Offset<fb::Profile>> profiles;
  for (Profile const& p : plan.profiles) {
    std::vector<flatbuffers::Offset<fb::ProfileShapes>> shapes;
    for (ProfileShapes const& s : p.inputs) {
      auto in = fbb.CreateString(s.input);
      KILN_ASSIGN_OR_RETURN(auto mn, dimsVec(s.min));
      KILN_ASSIGN_OR_RETURN(auto op, dimsVec(s.opt));
      KILN_ASSIGN_OR_RETURN(auto mx, dimsVec(s.max));
      shapes.push_back(fb::CreateProfileShapes(fbb, in, mn, op, mx));
    }
    profiles.push_back(fb::CreateProfile(fbb, fbb.CreateVector(shapes)));
  }
  std::vector<fb::Placement> placements;
  placements.reserve(plan.placements.size());
  for (Placement const& p : plan.placements)
    placements.emplace_back(p.offset, p.size);

  auto name = fbb.CreateString(plan.name);
  auto profilesVec = fbb.CreateVector(profiles);
  auto placementsVec = fbb.CreateVectorOfStructs(placements);
  auto wsOffsets = fbb.CreateVector(plan.workspaceOffsets);
  auto wsSizes = fbb.CreateVector(plan.workspaceSizes);
  std::vector<fb::IOFormat> ioFormats;
  for (auto const& [id, f] : plan.ioFormats)
    if (f != TensorFormat::kLINEAR) ioFormats.emplace_back(id, static_cast<int32_t>(f));
  auto ioFormatsVec = fbb.CreateVectorOfStructs(ioFormats);
  fb::PlanBuilder pb(fbb);
  pb.add_graph(graph);
  pb.add_name(name);
  pb.add_builder_flags(plan.builderFlags);
  pb.add_optimization_level(plan.optimizationLevel);
  pb.add_profiling_verbosity(plan.profilingVerbosity);
  pb.add_tactic_sources(plan.tacticSources);
  pb.add_profiles(profilesVec);
  pb.add_placements(placementsVec);
  pb.add_workspace_offsets(wsOffsets);
  pb.add_workspace_sizes(wsSizes);
  pb.add_arena_size(plan.arenaSize);
  if (!ioFormats.empty()) pb.add_io_formats(ioFormatsVec);
  fbb.Finish(pb.Finish());

  sections[0].size = fbb.GetSize();
  sections[0].pieces.push_back({0, fbb.GetBufferPointer(), fbb.GetSize()});
  ContainerInfo info;
  info.kilnVersion = plan.kilnVersion;
  info.target = plan.target;
  return assemblePlan(info, sections, budget);
}

}  // namespace detail

Result<HostBuffer> writePlan(PlanInfo const& plan, MemoryBudget* budget) {
  return detail::writePlanWithLimit(plan, budget, detail::kDefaultWeightsSectionLimit);
}

}  // namespace kiln::plan
