// Plan summaries for inspection tools (kilnexec --inspect): the header and the graph section's light fields,
// read straight from the verified flatbuffer without rebuilding the graph or touching the weights sections.
#include <algorithm>
#include <cstring>
#include <map>

#include "plan/plan.h"
#include "plan/plan_format.h"
#include "plan/plan_generated.h"

namespace kiln::plan {
namespace {

std::string str(flatbuffers::String const* s) { return s ? s->str() : std::string(); }

std::vector<int64_t> dimsOf(flatbuffers::Vector<int64_t> const* v) {
  std::vector<int64_t> d;
  if (v) d.assign(v->begin(), v->end());
  return d;
}

Dims toDims(flatbuffers::Vector<int64_t> const* v) {
  Dims d{};
  if (!v || v->size() > static_cast<uint32_t>(Dims::MAX_DIMS)) {
    d.nbDims = -1;
    return d;
  }
  d.nbDims = static_cast<int32_t>(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) d.d[i] = v->Get(i);
  return d;
}

std::string dtypeName(int32_t t) {
  bool const known = (t >= 0 && t < EnumMax<DataType>()) || isSupportedType(static_cast<DataType>(t));
  return known ? dataTypeName(static_cast<DataType>(t)) : strCat("type ", t);
}

}  // namespace

Result<uint64_t> planSummaryBytesNeeded(void const* data, size_t size) {
  if (!data && size) return invalidArgument("planSummaryBytesNeeded: null data");
  auto const* bytes = static_cast<uint8_t const*>(data);
  size_t const magicBytes = std::min(size, sizeof(kMagic));
  if (magicBytes && std::memcmp(bytes, kMagic, magicBytes) != 0) return invalidPlan("not a Kiln plan: wrong magic");
  if (size < detail::headerBytes(0)) return uint64_t{detail::headerBytes(0)};
  uint32_t const n = detail::loadLE32(bytes + detail::kOffNumSections);
  if (n > detail::kMaxSections) return invalidPlan("not a Kiln plan: ", n, " sections");
  if (size < detail::headerBytes(n)) return uint64_t{detail::headerBytes(n)};
  KILN_ASSIGN_OR_RETURN(PlanHeader h, readPlanHeader(data, size));
  if (h.sections.empty()) return invalidPlan("the plan has no sections");
  uint64_t const end = h.sections[0].offset + h.sections[0].size;
  if (end < h.sections[0].offset) return invalidPlan("section 0 ends past 2^64");
  return std::max<uint64_t>(end, detail::headerBytes(n));
}

Result<PlanSummary> readPlanSummary(void const* data, size_t size) {
  PlanSummary s;
  KILN_ASSIGN_OR_RETURN(s.header, readPlanHeader(data, size));
  auto const* bytes = static_cast<uint8_t const*>(data);
  auto const& secs = s.header.sections;
  if (secs.empty() || secs[0].kind != "graph") return invalidPlan("section 0 is not the graph");
  s.sectionVerified.assign(secs.size(), false);
  for (size_t i = 0; i < secs.size(); ++i) {
    if (secs[i].kind == "weights") s.weightsBytes += secs[i].size;
    bool const given = secs[i].offset <= size && secs[i].size <= size - secs[i].offset;
    if (!given) continue;
    if (detail::checksum(bytes + secs[i].offset, secs[i].size) != secs[i].checksum)
      return invalidPlan("checksum mismatch in section ", i, " ('", secs[i].kind, "')");
    s.sectionVerified[i] = true;
  }
  if (!s.sectionVerified[0])
    return invalidPlan("truncated: the graph section ends at byte ",
                       secs[0].offset + std::min(secs[0].size, ~secs[0].offset), ", only ", size, " bytes given");
  uint8_t const* graphBytes = bytes + secs[0].offset;
  size_t const graphSize = secs[0].size;
  if (graphSize >= FLATBUFFERS_MAX_BUFFER_SIZE) return invalidPlan("graph section is too large");
  flatbuffers::Verifier verifier(graphBytes, graphSize, 64, static_cast<flatbuffers::uoffset_t>(graphSize / 4 + 64));
  if (!fb::VerifyPlanBuffer(verifier)) return invalidPlan("graph section fails schema verification");
  fb::Plan const* fp = fb::GetPlan(graphBytes);
  fb::Graph const* g = fp->graph();
  if (!g || !g->values() || !g->nodes()) return invalidPlan("the graph section holds no graph");

  s.name = str(fp->name());
  s.builderFlags = fp->builder_flags();
  s.optimizationLevel = fp->optimization_level();
  s.profilingVerbosity = fp->profiling_verbosity();
  s.tacticSources = fp->tactic_sources();
  s.arenaSize = fp->arena_size();

  auto const* values = g->values();
  auto addIO = [&](flatbuffers::Vector<int32_t> const* ids, bool isInput) -> Status {
    if (!ids) return Status::ok();
    for (int32_t id : *ids) {
      if (id < 0 || static_cast<uint32_t>(id) >= values->size())
        return invalidPlan("graph ", isInput ? "input" : "output", " id ", id, " out of range");
      fb::Value const* v = values->Get(static_cast<uint32_t>(id));
      s.io.push_back({str(v->name()), v->dtype(), dimsOf(v->dims()), isInput});
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(addIO(g->inputs(), true));
  KILN_RETURN_IF_ERROR(addIO(g->outputs(), false));

  std::map<std::string, int64_t> precisions, ops;
  for (fb::Node const* n : *g->nodes()) {
    std::string const op = str(n->op());
    if (op == "Constant") {
      ++s.constants;
      continue;
    }
    ++s.layers;
    ++ops[op];
    if (n->plugin()) {
      fb::PluginRecord const& pr = *n->plugin();
      s.plugins.push_back(strCat(str(n->name()), ": ", ir::describePlugin(str(pr.type()), str(pr.version()),
                                                                      str(pr.plugin_namespace()))));
    }
    // A layer's precision is the type of its first output (as IEngineInspector reports it).
    std::string precision = "none";
    if (n->outputs() && n->outputs()->size() > 0) {
      int32_t const id = n->outputs()->Get(0);
      if (id >= 0 && static_cast<uint32_t>(id) < values->size())
        precision = dtypeName(values->Get(static_cast<uint32_t>(id))->dtype());
    }
    ++precisions[precision];
  }
  s.precisions.assign(precisions.begin(), precisions.end());
  s.ops.assign(ops.begin(), ops.end());

  if (fp->profiles()) {
    for (fb::Profile const* fprof : *fp->profiles()) {
      Profile prof;
      if (fprof->inputs())
        for (fb::ProfileShapes const* ps : *fprof->inputs())
          prof.inputs.push_back({str(ps->input()), toDims(ps->min()), toDims(ps->opt()), toDims(ps->max())});
      s.profiles.push_back(std::move(prof));
    }
  }
  return s;
}

}  // namespace kiln::plan
