// Plan reader: checks a plan in a fixed order (magic, major version, header checksum, truncation, layout,
// section checksums, flatbuffer verification, graph consistency) and rebuilds the PlanInfo, constants being
// views into the one copy of the bytes.
#include <algorithm>
#include <cstring>
#include <limits>

#include "plan/plan.h"
#include "plan/plan_format.h"
#include "plan/plan_generated.h"

namespace kiln::plan {
namespace {

using detail::loadLE16;
using detail::loadLE32;
using detail::loadLE64;

std::string kindName(std::string const& kind, size_t index) { return strCat("'", kind, "' ", index); }

std::string sectionKindName(uint32_t kind) {
  switch (kind) {
    case static_cast<uint32_t>(detail::SectionKind::kGraph):
      return "graph";
    case static_cast<uint32_t>(detail::SectionKind::kWeights):
      return "weights";
  }
  return strCat("kind ", kind);
}

std::string fixedString(uint8_t const* p) {
  size_t n = 0;
  while (n < detail::kFixedStringBytes && p[n] != 0)
    ++n;
  return std::string(reinterpret_cast<char const*>(p), n);
}

Result<PlanHeader> parseHeader(uint8_t const* bytes, size_t size) {
  if (size < detail::headerBytes(0))
    return invalidPlan("not a Kiln plan: ", size, " bytes is too small for a header");
  if (std::memcmp(bytes, kMagic, sizeof(kMagic)) != 0)
    return invalidPlan("not a Kiln plan: wrong magic");
  PlanHeader h;
  h.formatMajor = loadLE16(bytes + detail::kOffMajor);
  h.formatMinor = loadLE16(bytes + detail::kOffMinor);
  if (h.formatMajor != kFormatMajor)
    return invalidPlan("plan format ", h.formatMajor, ".x; this Kiln reads ", kFormatMajor, ".x");
  uint32_t n = loadLE32(bytes + detail::kOffNumSections);
  if (n > detail::kMaxSections || detail::headerBytes(n) > size)
    return invalidPlan("truncated: the header with its table of ", n, " sections needs ",
                       detail::headerBytes(std::min(n, detail::kMaxSections + 1)), " bytes, file has ", size);
  size_t const headerEnd = detail::headerBytes(n);
  if (detail::checksum(bytes, headerEnd - 8) != loadLE64(bytes + headerEnd - 8))
    return invalidPlan("header checksum mismatch");
  h.kilnVersion = fixedString(bytes + detail::kOffVersion);
  h.target = fixedString(bytes + detail::kOffTarget);
  h.flags = loadLE32(bytes + detail::kOffFlags);
  h.totalSize = headerEnd;
  for (uint32_t s = 0; s < n; ++s) {
    uint8_t const* e = bytes + detail::kOffTable + s * detail::kSectionEntryBytes;
    PlanHeader::Section sec;
    sec.kind = sectionKindName(loadLE32(e));
    sec.offset = loadLE64(e + 8);
    sec.size = loadLE64(e + 16);
    sec.checksum = loadLE64(e + 24);
    uint64_t end = sec.offset + sec.size;
    if (end < sec.offset)
      end = std::numeric_limits<uint64_t>::max();
    h.totalSize = std::max(h.totalSize, end);
    h.sections.push_back(sec);
  }
  return h;
}

// TensorRT's values plus the Kiln extension types (kFLOAT64 ... kUINT64, past EnumMax<DataType>()).
bool validDataType(int32_t t) { return (t >= 0 && t < EnumMax<DataType>()) || isSupportedType(static_cast<DataType>(t)); }

// The flatbuffers verifier checks the alignment of a vector's length but not of its 8-byte elements: a
// crafted offset could make reads misaligned, so non-empty 8-byte vectors are checked here.
template <typename V>
Status checkAligned(V const* v, std::string const& what) {
  if (v && v->size() > 0 && reinterpret_cast<uintptr_t>(v->Data()) % 8 != 0)
    return invalidPlan("graph section fails schema verification: ", what, " is misaligned");
  return Status::ok();
}

// Shape from a flatbuffer vector; `minDim` is -1 where unknown dims are allowed.
Result<Dims> readDims(flatbuffers::Vector<int64_t> const* v, int64_t minDim, std::string const& what) {
  Dims d{};
  d.nbDims = 0;
  if (!v)
    return d;
  KILN_RETURN_IF_ERROR(checkAligned(v, what + "'s shape"));
  if (v->size() > static_cast<uint32_t>(Dims::MAX_DIMS))
    return invalidPlan(what, " has rank ", v->size(), " (at most ", Dims::MAX_DIMS, ")");
  d.nbDims = static_cast<int32_t>(v->size());
  for (uint32_t i = 0; i < v->size(); ++i) {
    d.d[i] = v->Get(i);
    if (d.d[i] < minDim)
      return invalidPlan(what, " has dimension ", d.d[i]);
  }
  return d;
}

std::string str(flatbuffers::String const* s) { return s ? s->str() : std::string(); }

Status readAttr(fb::Attr const& a, ir::Attributes& attrs, std::string const& where) {
  if (!a.key())
    return invalidPlan(where, " has an attribute without a name");
  std::string key = a.key()->str();
  if (attrs.has(key))
    return invalidPlan(where, " has attribute '", key, "' twice");
  fb::AttrKind kind = a.kind();
  bool const extra = [&] {
    switch (kind) {
      case fb::AttrKind::Int:
        return a.f() != 0.0 || a.s() || a.ints() || a.floats();
      case fb::AttrKind::Float:
        return a.i() != 0 || a.s() || a.ints() || a.floats();
      case fb::AttrKind::String:
        return a.i() != 0 || a.f() != 0.0 || !a.s() || a.ints() || a.floats();
      case fb::AttrKind::Ints:
        return a.i() != 0 || a.f() != 0.0 || a.s() || !a.ints() || a.floats();
      case fb::AttrKind::Floats:
        return a.i() != 0 || a.f() != 0.0 || a.s() || a.ints() || !a.floats();
    }
    return true;
  }();
  if (static_cast<int>(kind) < 0 || static_cast<int>(kind) > static_cast<int>(fb::AttrKind::MAX))
    return invalidPlan(where, ": attribute '", key, "' has unknown kind ", static_cast<int>(kind));
  if (extra)
    return invalidPlan(where, ": attribute '", key, "' holds fields its kind does not use");
  KILN_RETURN_IF_ERROR(checkAligned(a.ints(), strCat(where, " attribute '", key, "'")));
  KILN_RETURN_IF_ERROR(checkAligned(a.floats(), strCat(where, " attribute '", key, "'")));
  switch (kind) {
    case fb::AttrKind::Int:
      attrs.setInt(key, a.i());
      break;
    case fb::AttrKind::Float:
      attrs.setFloat(key, a.f());
      break;
    case fb::AttrKind::String:
      attrs.setString(key, a.s()->str());
      break;
    case fb::AttrKind::Ints:
      attrs.setInts(key, std::vector<int64_t>(a.ints()->begin(), a.ints()->end()));
      break;
    case fb::AttrKind::Floats:
      attrs.set(key, std::vector<double>(a.floats()->begin(), a.floats()->end()));
      break;
  }
  return Status::ok();
}

// Everything a graph needs from the container: the bytes, the section table, and who owns them.
struct Container {
  std::shared_ptr<HostBuffer> owner;
  uint8_t const* bytes = nullptr;
  PlanHeader const* header = nullptr;
};

Result<HostTensor> readWeights(fb::WeightRef const& w, Container const& c, std::string const& where) {
  uint32_t const s = w.section();
  if (s >= c.header->sections.size() || c.header->sections[s].kind != "weights")
    return invalidPlan(where, ": weights refer to section ", s, ", which is not a weights section");
  PlanHeader::Section const& sec = c.header->sections[s];
  if (w.offset() > sec.size || w.size() > sec.size - w.offset())
    return invalidPlan(where, ": weights [", w.offset(), ", +", w.size(), ") lie outside section 'weights' ", s, " of ",
                       sec.size, " bytes");
  if (!validDataType(w.dtype()) || dataTypeSize(static_cast<DataType>(w.dtype())) == 0 ||
      !isSupportedType(static_cast<DataType>(w.dtype())))
    return invalidPlan(where, ": weights have unsupported data type ", w.dtype());
  DataType const dtype = static_cast<DataType>(w.dtype());
  KILN_ASSIGN_OR_RETURN(Dims dims, readDims(w.dims(), 0, where + "'s weights"));
  Result<int64_t> count = checkedVolume(dims);
  Result<size_t> bytes = count.isOk() ? checkedBytes(*count, dataTypeSize(dtype)) : Result<size_t>(count.status());
  if (!bytes.isOk() || *bytes != w.size())
    return invalidPlan(where, ": weights of ", dataTypeName(dtype), " ", dimsToString(dims), " should be ",
                       bytes.isOk() ? strCat(*bytes) : std::string("too many"), " bytes, the plan says ", w.size());
  if (w.offset() % dataTypeSize(dtype) != 0)
    return invalidPlan(where, ": weights at offset ", w.offset(), " are not aligned for ", dataTypeName(dtype));
  return HostTensor::view(c.owner, c.bytes + sec.offset + w.offset(), dtype, dims);
}

// Deepest nesting of subgraphs read (control flow allows 16; the rest is headroom).
constexpr int kMaxSubgraphDepth = 32;

Result<std::unique_ptr<ir::Graph>> readGraph(fb::Graph const& fg, Container const& c, int depth = 0) {
  auto g = std::make_unique<ir::Graph>();
  auto const* fvals = fg.values();
  size_t const nValues = fvals ? fvals->size() : 0;
  size_t const nNodes = fg.nodes() ? fg.nodes()->size() : 0;
  auto valueWhere = [&](size_t i) { return strCat("value ", i, " ('", str(fvals->Get(i)->name()), "')"); };

  // Values are created in id order: inputs through addInput, runs of the others as the outputs of a
  // placeholder node that is removed once the real producers are wired up.
  std::vector<ir::Value*> vals(nValues, nullptr);
  std::vector<ir::Node*> placeholders;
  for (size_t i = 0; i < nValues;) {
    fb::Value const* fv = fvals->Get(i);
    if (fv->is_input()) {
      if (!validDataType(fv->dtype()))
        return invalidPlan(valueWhere(i), " has unknown data type ", fv->dtype());
      KILN_ASSIGN_OR_RETURN(Dims dims, readDims(fv->dims(), -1, valueWhere(i)));
      Result<ir::Value*> v = g->addInput(str(fv->name()), static_cast<DataType>(fv->dtype()), dims);
      if (!v.isOk())
        return invalidPlan(valueWhere(i), ": ", v.status().message());
      vals[i++] = *v;
      continue;
    }
    size_t j = i;
    while (j < nValues && !fvals->Get(j)->is_input())
      ++j;
    ir::Node* p = g->addNode(ir::OpType::kIdentity, "\x01placeholder", {}, static_cast<int>(j - i));
    placeholders.push_back(p);
    for (size_t k = i; k < j; ++k) {
      vals[k] = p->outputs[k - i];
      Status st = g->renameValue(vals[k], str(fvals->Get(k)->name()));
      if (!st.isOk())
        return invalidPlan(valueWhere(k), ": ", st.message());
    }
    i = j;
  }
  for (size_t i = 0; i < nValues; ++i) {
    fb::Value const* fv = fvals->Get(i);
    ir::Value* v = vals[i];
    if (!validDataType(fv->dtype()))
      return invalidPlan(valueWhere(i), " has unknown data type ", fv->dtype());
    v->dtype = static_cast<DataType>(fv->dtype());
    KILN_ASSIGN_OR_RETURN(v->shape, readDims(fv->dims(), -1, valueWhere(i)));
    if (fv->requested_type()) {
      if (!validDataType(*fv->requested_type()))
        return invalidPlan(valueWhere(i), " has unknown requested type ", *fv->requested_type());
      v->requestedType = static_cast<DataType>(*fv->requested_type());
    }
    v->producer = nullptr;
  }

  std::vector<ir::Node*> created;
  created.reserve(nNodes);
  std::vector<int64_t> producedBy(nValues, -1);
  for (size_t k = 0; k < nNodes; ++k) {
    fb::Node const* fn = fg.nodes()->Get(k);
    std::string const where = strCat("node ", k, " ('", str(fn->name()), "')");
    std::string const opStr = str(fn->op());
    std::optional<ir::OpType> op = ir::parseOpName(opStr);
    if (!op)
      return invalidPlan(where, " has unknown op '", opStr, "'");
    std::vector<ir::Value*> ins;
    if (fn->inputs()) {
      for (uint32_t i = 0; i < fn->inputs()->size(); ++i) {
        int32_t id = fn->inputs()->Get(i);
        if (id == -1) {
          ins.push_back(nullptr);
          continue;
        }
        if (id < 0 || static_cast<size_t>(id) >= nValues)
          return invalidPlan(where, ": input ", i, " is value ", id, ", the graph has ", nValues, " values");
        ins.push_back(vals[id]);
      }
    }
    ir::Node* n = g->addNode(*op, str(fn->name()), ins, 0);
    created.push_back(n);
    if (fn->outputs()) {
      for (uint32_t i = 0; i < fn->outputs()->size(); ++i) {
        int32_t id = fn->outputs()->Get(i);
        if (id < 0 || static_cast<size_t>(id) >= nValues)
          return invalidPlan(where, ": output ", i, " is value ", id, ", the graph has ", nValues, " values");
        if (vals[id]->isInput)
          return invalidPlan(where, " produces network input '", vals[id]->name, "'");
        if (producedBy[id] >= 0)
          return invalidPlan("value ", id, " ('", vals[id]->name, "') is produced by node ", producedBy[id], " and by ",
                             where);
        producedBy[id] = static_cast<int64_t>(k);
        vals[id]->producer = n;
        vals[id]->producerOutput = static_cast<int32_t>(i);
        n->outputs.push_back(vals[id]);
      }
    }
    if (fn->attrs())
      for (fb::Attr const* a : *fn->attrs())
        KILN_RETURN_IF_ERROR(readAttr(*a, n->attrs, where));
    n->tactic = str(fn->tactic());
    if (fn->fused_from())
      for (flatbuffers::String const* s : *fn->fused_from())
        n->fusedFrom.push_back(str(s));
    if (fn->precision()) {
      if (!validDataType(*fn->precision()))
        return invalidPlan(where, " has unknown precision ", *fn->precision());
      n->precision = static_cast<DataType>(*fn->precision());
    }
    bool const isConstant = *op == ir::OpType::kConstant;
    if (isConstant != (fn->constant() != nullptr))
      return invalidPlan(where, isConstant ? " is a Constant without weights" : " has weights but is not a Constant");
    if (fn->constant()) {
      KILN_ASSIGN_OR_RETURN(HostTensor t, readWeights(*fn->constant(), c, where));
      if (!n->inputs.empty() || n->outputs.size() != 1)
        return invalidPlan(where, ": a Constant has no inputs and one output");
      ir::Value const* out = n->outputs[0];
      if (out->dtype != t.dtype() || !dimsEqual(out->shape, t.shape()))
        return invalidPlan(where, ": weights of ", dataTypeName(t.dtype()), " ", dimsToString(t.shape()),
                           " do not match its output ", dataTypeName(out->dtype), " ", dimsToString(out->shape));
      // A bool byte other than 0 or 1 is not a value of the type (kernels reading it would be undefined).
      if (t.dtype() == DataType::kBOOL) {
        auto const* b = static_cast<uint8_t const*>(t.data());
        for (size_t i = 0; i < t.bytes(); ++i)
          if (b[i] > 1) return invalidPlan(where, ": bool weights hold the byte ", static_cast<int>(b[i]), " at element ", i);
      }
      n->constant = std::move(t);
    }
    bool const isPlugin = *op == ir::OpType::kPluginV2 || *op == ir::OpType::kPluginV3;
    if (isPlugin != (fn->plugin() != nullptr))
      return invalidPlan(where, isPlugin ? " is a plugin layer without a plugin record" : " has a plugin record but is not a plugin layer");
    if (fn->plugin()) {
      fb::PluginRecord const& pr = *fn->plugin();
      ir::PluginRecord rec;
      int32_t const want = *op == ir::OpType::kPluginV2 ? 2 : 3;
      if (pr.kind() != want)
        return invalidPlan(where, ": plugin record of kind ", pr.kind(), " (", want, " expected)");
      rec.kind = static_cast<ir::PluginKind>(pr.kind());
      rec.type = str(pr.type());
      rec.version = str(pr.version());
      rec.ns = str(pr.plugin_namespace());
      if (rec.type.empty())
        return invalidPlan(where, ": plugin record without a plugin type");
      if (pr.data())
        rec.data.assign(pr.data()->begin(), pr.data()->end());
      // Resolved to a plugin object through the registry when the engine loads (runtime/plugins.cc).
      n->plugin = ir::PluginInstance::fromRecord(std::move(rec), n->name);
      // Format 1.3: a V3 plugin's output-shape expressions and workspace, as the build computed them (older plans
      // have neither; their plugins are asked, as before).
      if (n->attrs.has("plugin_shapes")) {
        if (*op != ir::OpType::kPluginV3) return invalidPlan(where, ": plugin_shapes on a plugin that is not V3");
        int64_t nShape = n->attrs.getInt("num_shape_inputs", 0);
        if (nShape < 0 || static_cast<size_t>(nShape) > n->inputs.size())
          return invalidPlan(where, ": ", nShape, " shape inputs of ", n->inputs.size(), " inputs");
        KILN_ASSIGN_OR_RETURN(
            ir::PluginShapeProgram program,
            ir::withContext(ir::PluginShapeProgram::decode(n->attrs.getInts("plugin_shapes"),
                                                           static_cast<int32_t>(n->inputs.size() - nShape),
                                                           static_cast<int32_t>(nShape),
                                                           static_cast<int32_t>(n->outputs.size())),
                            where));
        n->plugin->setShapeProgram(std::make_shared<ir::PluginShapeProgram const>(std::move(program)));
      }
      if (n->attrs.has("plugin_workspace") && (n->attrs.getInt("plugin_workspace", -1) < 0 ||
                                               n->attrs.getInt("plugin_workspace", 0) > (int64_t{1} << 40)))
        return invalidPlan(where, ": plugin_workspace of ", n->attrs.getInt("plugin_workspace", -1), " bytes");
    }
    if (fn->subgraphs() && fn->subgraphs()->size() > 0) {
      if (depth >= kMaxSubgraphDepth)
        return invalidPlan(where, ": subgraphs are nested deeper than ", kMaxSubgraphDepth);
      for (uint32_t si = 0; si < fn->subgraphs()->size(); ++si) {
        fb::Graph const* sub = fn->subgraphs()->Get(si);
        if (!sub)
          return invalidPlan(where, ": subgraph ", si, " is missing");
        Result<std::unique_ptr<ir::Graph>> sg = readGraph(*sub, c, depth + 1);
        if (!sg.isOk())
          return sg.status().withContext(strCat(where, ", subgraph ", si));
        n->subgraphs.push_back(std::move(sg).value());
      }
    }
  }
  for (ir::Node* p : placeholders)
    g->removeNode(p);

  // Graph inputs are the values marked so, in id order; outputs keep the written order.
  std::vector<int32_t> marked;
  for (size_t i = 0; i < nValues; ++i)
    if (vals[i]->isInput)
      marked.push_back(static_cast<int32_t>(i));
  std::vector<int32_t> listed;
  if (fg.inputs())
    listed.assign(fg.inputs()->begin(), fg.inputs()->end());
  if (listed != marked)
    return invalidPlan("the graph's input list does not match the values marked as inputs");
  std::vector<bool> isOut(nValues, false);
  if (fg.outputs()) {
    for (int32_t id : *fg.outputs()) {
      if (id < 0 || static_cast<size_t>(id) >= nValues)
        return invalidPlan("graph output is value ", id, ", the graph has ", nValues, " values");
      if (isOut[id])
        return invalidPlan("value ", id, " ('", vals[id]->name, "') is listed twice as a graph output");
      isOut[id] = true;
      g->markOutput(vals[id]);
    }
  }
  for (size_t i = 0; i < nValues; ++i)
    if (isOut[i] != fvals->Get(i)->is_output())
      return invalidPlan(valueWhere(i), "'s output mark does not match the graph's output list");

  Status st = g->renumber();
  if (!st.isOk())
    return invalidPlan("graph: ", st.message());
  for (size_t k = 0; k < nNodes; ++k)
    if (g->nodes()[k].get() != created[k])
      return invalidPlan("the graph's nodes are not in topological order (node ", k, " '", created[k]->name, "')");
  for (size_t i = 0; i < nValues; ++i)
    if (g->values()[i].get() != vals[i])
      return internalError("plan reader: value ids moved");
  return g;
}

Status checkArenaRange(int64_t offset, int64_t size, int64_t arena, std::string const& what) {
  if (offset < -1 || size < 0)
    return invalidPlan(what, " has offset ", offset, " and size ", size);
  if (offset >= 0 && (offset > arena || size > arena - offset))
    return invalidPlan(what, " [", offset, ", +", size, ") lies outside the arena of ", arena, " bytes");
  return Status::ok();
}

Status readPlanFields(fb::Plan const& fp, PlanInfo& info) {
  ir::Graph const& g = *info.graph;
  info.name = str(fp.name());
  info.builderFlags = fp.builder_flags();
  info.optimizationLevel = fp.optimization_level();
  info.profilingVerbosity = fp.profiling_verbosity();
  info.tacticSources = fp.tactic_sources();
  info.arenaSize = fp.arena_size();
  if (info.arenaSize < 0)
    return invalidPlan("arena size ", info.arenaSize);
  if (fp.profiles()) {
    for (uint32_t p = 0; p < fp.profiles()->size(); ++p) {
      fb::Profile const* fprof = fp.profiles()->Get(p);
      Profile prof;
      if (fprof->inputs()) {
        for (fb::ProfileShapes const* s : *fprof->inputs()) {
          ProfileShapes ps;
          ps.input = str(s->input());
          std::string const where = strCat("profile ", p, " input '", ps.input, "'");
          ir::Value const* v = g.findValue(ps.input);
          if (!v || !v->isInput)
            return invalidPlan(where, " is not a network input");
          KILN_ASSIGN_OR_RETURN(ps.min, readDims(s->min(), 0, where + " min"));
          KILN_ASSIGN_OR_RETURN(ps.opt, readDims(s->opt(), 0, where + " opt"));
          KILN_ASSIGN_OR_RETURN(ps.max, readDims(s->max(), 0, where + " max"));
          if (ps.min.nbDims != ps.opt.nbDims || ps.opt.nbDims != ps.max.nbDims)
            return invalidPlan(where, ": min/opt/max have different ranks");
          for (int32_t i = 0; i < ps.min.nbDims; ++i)
            if (ps.min.d[i] > ps.opt.d[i] || ps.opt.d[i] > ps.max.d[i])
              return invalidPlan(where, ": min <= opt <= max does not hold in dimension ", i);
          prof.inputs.push_back(std::move(ps));
        }
      }
      info.profiles.push_back(std::move(prof));
    }
  }
  size_t const nValues = g.values().size(), nNodes = g.nodes().size();
  KILN_RETURN_IF_ERROR(checkAligned(fp.placements(), "placements"));
  KILN_RETURN_IF_ERROR(checkAligned(fp.workspace_offsets(), "workspace offsets"));
  KILN_RETURN_IF_ERROR(checkAligned(fp.workspace_sizes(), "workspace sizes"));
  if (fp.placements()) {
    if (fp.placements()->size() != nValues && fp.placements()->size() != 0)
      return invalidPlan(fp.placements()->size(), " placements for ", nValues, " values");
    for (uint32_t i = 0; i < fp.placements()->size(); ++i) {
      fb::Placement const* p = fp.placements()->Get(i);
      KILN_RETURN_IF_ERROR(checkArenaRange(p->offset(), p->size(), info.arenaSize,
                                           strCat("placement of value ", i, " ('", g.values()[i]->name, "')")));
      info.placements.push_back({p->offset(), p->size()});
    }
  }
  if (fp.io_formats()) {
    for (fb::IOFormat const* f : *fp.io_formats()) {
      if (f->value() < 0 || static_cast<size_t>(f->value()) >= nValues)
        return invalidPlan("an I/O format names value ", f->value(), " of ", nValues);
      ir::Value const* v = g.values()[static_cast<size_t>(f->value())].get();
      if (!v->isInput && !v->isOutput)
        return invalidPlan("value '", v->name, "' has an I/O format but is not a network input or output");
      if (f->format() < 0 || f->format() >= EnumMax<TensorFormat>())
        return invalidPlan("I/O tensor '", v->name, "' has unknown format ", f->format());
      if (!info.ioFormats.emplace(f->value(), static_cast<TensorFormat>(f->format())).second)
        return invalidPlan("I/O tensor '", v->name, "' has two formats");
    }
  }
  if (fp.workspace_offsets())
    info.workspaceOffsets.assign(fp.workspace_offsets()->begin(), fp.workspace_offsets()->end());
  if (fp.workspace_sizes())
    info.workspaceSizes.assign(fp.workspace_sizes()->begin(), fp.workspace_sizes()->end());
  if (info.workspaceOffsets.size() != info.workspaceSizes.size() ||
      (info.workspaceOffsets.size() != nNodes && !info.workspaceOffsets.empty()))
    return invalidPlan(info.workspaceOffsets.size(), " workspace offsets and ", info.workspaceSizes.size(),
                       " sizes for ", nNodes, " nodes");
  for (size_t i = 0; i < info.workspaceOffsets.size(); ++i)
    KILN_RETURN_IF_ERROR(checkArenaRange(info.workspaceOffsets[i], info.workspaceSizes[i], info.arenaSize,
                                         strCat("workspace of ", g.nodes()[i]->describe())));
  return Status::ok();
}

}  // namespace

Result<PlanHeader> readPlanHeader(void const* data, size_t size) {
  if (!data && size)
    return invalidArgument("readPlanHeader: null data");
  static uint8_t const kEmpty = 0;
  return parseHeader(data ? static_cast<uint8_t const*>(data) : &kEmpty, size);
}

Result<PlanInfo> readPlan(void const* data, size_t size, MemoryBudget* budget) {
  if (!data && size)
    return invalidArgument("readPlan: null data");
  KILN_ASSIGN_OR_RETURN(HostBuffer copy, HostBuffer::allocate(size, "plan", budget));
  if (size)
    std::memcpy(copy.data(), data, size);
  Container c;
  c.owner = std::make_shared<HostBuffer>(std::move(copy));
  c.bytes = static_cast<uint8_t const*>(c.owner->data());
  KILN_ASSIGN_OR_RETURN(PlanHeader header, parseHeader(c.bytes, size));
  c.header = &header;
  auto const& secs = header.sections;

  for (size_t s = 0; s < secs.size(); ++s)
    if (secs[s].offset > size || secs[s].size > size - secs[s].offset)
      return invalidPlan("truncated: section ", s, " ends at byte ",
                         secs[s].offset + std::min<uint64_t>(secs[s].size, ~secs[s].offset), ", file has ", size);
  // Sections lie in order at the next 64-byte boundary, the gaps zero: every byte of a plan is checked.
  uint64_t end = detail::headerBytes(secs.size());
  for (size_t s = 0; s < secs.size(); ++s) {
    uint64_t const expect = alignUp(end, detail::kSectionAlign);
    if (secs[s].offset != expect)
      return invalidPlan("section ", s, " starts at byte ", secs[s].offset, ", expected ", expect);
    for (uint64_t b = end; b < expect; ++b)
      if (c.bytes[b] != 0)
        return invalidPlan("nonzero padding at byte ", b, " before section ", s);
    end = secs[s].offset + secs[s].size;
  }
  if (secs.empty() || secs[0].kind != "graph")
    return invalidPlan("section 0 is not the graph");
  for (size_t s = 1; s < secs.size(); ++s)
    if (secs[s].kind == "graph")
      return invalidPlan("section ", s, " is a second graph section");
  for (size_t s = 0; s < secs.size(); ++s)
    if (detail::checksum(c.bytes + secs[s].offset, secs[s].size) != secs[s].checksum)
      return invalidPlan("checksum mismatch in section ", kindName(secs[s].kind, s));

  uint8_t const* graphBytes = c.bytes + secs[0].offset;
  size_t const graphSize = secs[0].size;
  if (graphSize >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return invalidPlan("graph section is too large");
  flatbuffers::Verifier verifier(graphBytes, graphSize, 64, static_cast<flatbuffers::uoffset_t>(graphSize / 4 + 64));
  if (!fb::VerifyPlanBuffer(verifier))
    return invalidPlan("graph section fails schema verification");
  fb::Plan const* fp = fb::GetPlan(graphBytes);
  if (!fp->graph())
    return invalidPlan("the graph section holds no graph");

  PlanInfo info;
  info.kilnVersion = header.kilnVersion;
  info.target = header.target;
  KILN_ASSIGN_OR_RETURN(info.graph, readGraph(*fp->graph(), c));
  KILN_RETURN_IF_ERROR(readPlanFields(*fp, info));
  return info;
}

}  // namespace kiln::plan
