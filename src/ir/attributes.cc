// Attribute getters.
#include "ir/attributes.h"

namespace kiln::ir {

AttrValue const* Attributes::find(std::string const& name) const {
  auto it = m_.find(name);
  return it == m_.end() ? nullptr : &it->second;
}

int64_t Attributes::getInt(std::string const& name, int64_t def) const {
  auto const* v = find(name);
  if (!v) return def;
  if (auto const* i = std::get_if<int64_t>(v)) return *i;
  if (auto const* f = std::get_if<double>(v)) return static_cast<int64_t>(*f);
  return def;
}

double Attributes::getFloat(std::string const& name, double def) const {
  auto const* v = find(name);
  if (!v) return def;
  if (auto const* f = std::get_if<double>(v)) return *f;
  if (auto const* i = std::get_if<int64_t>(v)) return static_cast<double>(*i);
  return def;
}

std::string Attributes::getString(std::string const& name, std::string const& def) const {
  auto const* v = find(name);
  if (!v) return def;
  if (auto const* s = std::get_if<std::string>(v)) return *s;
  return def;
}

std::vector<int64_t> Attributes::getInts(std::string const& name, std::vector<int64_t> const& def) const {
  auto const* v = find(name);
  if (!v) return def;
  if (auto const* l = std::get_if<std::vector<int64_t>>(v)) return *l;
  if (auto const* l = std::get_if<std::vector<double>>(v)) return std::vector<int64_t>(l->begin(), l->end());
  return def;
}

std::vector<double> Attributes::getFloats(std::string const& name, std::vector<double> const& def) const {
  auto const* v = find(name);
  if (!v) return def;
  if (auto const* l = std::get_if<std::vector<double>>(v)) return *l;
  if (auto const* l = std::get_if<std::vector<int64_t>>(v)) return std::vector<double>(l->begin(), l->end());
  return def;
}

}  // namespace kiln::ir
