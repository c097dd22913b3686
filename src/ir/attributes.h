// Node attributes: a sorted map from name to int, float, string, int list or float list.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "core/status.h"

namespace kiln::ir {

using AttrValue = std::variant<int64_t, double, std::string, std::vector<int64_t>, std::vector<double>>;

class Attributes {
 public:
  void set(std::string const& name, AttrValue v) { m_[name] = std::move(v); }
  void setInt(std::string const& name, int64_t v) { m_[name] = v; }
  void setFloat(std::string const& name, double v) { m_[name] = v; }
  void setInts(std::string const& name, std::vector<int64_t> v) { m_[name] = std::move(v); }
  void setString(std::string const& name, std::string v) { m_[name] = std::move(v); }
  void erase(std::string const& name) { m_.erase(name); }
  bool has(std::string const& name) const { return m_.count(name) != 0; }
  AttrValue const* find(std::string const& name) const;

  /// Typed getters with a default when the attribute is absent (an int read as float converts).
  int64_t getInt(std::string const& name, int64_t def = 0) const;
  double getFloat(std::string const& name, double def = 0.0) const;
  std::string getString(std::string const& name, std::string const& def = {}) const;
  std::vector<int64_t> getInts(std::string const& name, std::vector<int64_t> const& def = {}) const;
  std::vector<double> getFloats(std::string const& name, std::vector<double> const& def = {}) const;

  std::map<std::string, AttrValue> const& all() const { return m_; }
  bool operator==(Attributes const& o) const { return m_ == o.m_; }

 private:
  std::map<std::string, AttrValue> m_;
};

}  // namespace kiln::ir
