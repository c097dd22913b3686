// Reference kernel of Shuffle: first transpose, reshape, second transpose, as byte moves (any type). The
// reshaped dims follow from the output shape, so the optional reshape-dims input is not read here.
#include <cstring>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

// True when `perm` is empty (identity) or a permutation of 0..rank-1.
bool validPerm(std::vector<int64_t> const& perm, int32_t rank) {
  if (perm.empty())
    return true;
  if (static_cast<int64_t>(perm.size()) != rank)
    return false;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
      return false;
    seen[static_cast<size_t>(p)] = true;
  }
  return true;
}

int64_t permAt(std::vector<int64_t> const& perm, int32_t i) { return perm.empty() ? i : perm[static_cast<size_t>(i)]; }

Tactic shuffleTactic() {
  return makeTactic(
      "shuffle_reference", ir::OpType::kShuffle,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::vector<int64_t> perm1 = node.attrs.getInts("first_perm");
        std::vector<int64_t> perm2 = node.attrs.getInts("second_perm");
        std::string what = node.describe();
        return makeKernel([perm1, perm2, what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          Dims const& s = x.shape;
          Dims const& o = y.shape;
          if (x.dtype != y.dtype)
            return invalidArgument(what, ": output type differs from input type");
          if (!validPerm(perm1, s.nbDims))
            return invalidArgument(what, ": first_perm does not fit rank ", s.nbDims);
          if (!validPerm(perm2, o.nbDims))
            return invalidArgument(what, ": second_perm does not fit rank ", o.nbDims);
          int64_t n = volume(s);
          if (n != volume(o))
            return invalidArgument(what, ": cannot shuffle ", dimsToString(s), " into ", dimsToString(o));
          auto identity = [](std::vector<int64_t> const& p) {
            for (size_t i = 0; i < p.size(); ++i)
              if (p[i] != static_cast<int64_t>(i))
                return false;
            return true;
          };
          // A pure reshape into the same memory (the builder lets views share their input's buffer).
          if (x.data == y.data && identity(perm1) && identity(perm2))
            return Status::ok();
          Dims t = s;  // after the first transpose
          for (int32_t i = 0; i < s.nbDims; ++i)
            t.d[i] = s.d[permAt(perm1, i)];
          Dims r = o;  // after the reshape, before the second transpose
          for (int32_t i = 0; i < o.nbDims; ++i)
            r.d[permAt(perm2, i)] = o.d[i];
          std::vector<int64_t> sStrides = rowMajorStrides(s), rStrides = rowMajorStrides(r);
          size_t elem = dataTypeSize(x.dtype);
          auto const* src = static_cast<unsigned char const*>(x.data);
          auto* dst = static_cast<unsigned char*>(y.data);
          std::vector<int64_t> oc(static_cast<size_t>(o.nbDims), 0);
          for (int64_t lin = 0; lin < n; ++lin) {
            // Output coordinate -> reshaped linear index (== transposed linear index) -> input offset.
            int64_t rem = lin;
            for (int32_t i = o.nbDims - 1; i >= 0; --i) {
              oc[i] = rem % o.d[i];
              rem /= o.d[i];
            }
            int64_t lr = 0;
            for (int32_t i = 0; i < o.nbDims; ++i)
              lr += oc[i] * rStrides[permAt(perm2, i)];
            int64_t off = 0;
            for (int32_t i = t.nbDims - 1; i >= 0; --i) {
              off += (lr % t.d[i]) * sStrides[permAt(perm1, i)];
              lr /= t.d[i];
            }
            std::memcpy(dst + static_cast<size_t>(lin) * elem, src + static_cast<size_t>(off) * elem, elem);
          }
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return !in.empty() && out.size() == 1 && in[0].dtype == out[0].dtype && dataTypeSize(in[0].dtype) > 0;
      });
}

KILN_REGISTER_TACTIC(shuffleTactic);

}  // namespace
}  // namespace kiln::backends::reference
