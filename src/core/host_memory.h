// IHostMemory over a HostBuffer: what buildSerializedNetwork and ICudaEngine::serialize return.
#pragma once

#include "core/memory.h"
#include "kiln/kiln_base.h"

namespace kiln {

class HostMemoryImpl final : public IHostMemory {
 public:
  explicit HostMemoryImpl(HostBuffer buf) : buf_(std::move(buf)) {}
  void* data() const noexcept override { return const_cast<void*>(buf_.data()); }
  std::size_t size() const noexcept override { return buf_.size(); }
  DataType type() const noexcept override { return DataType::kUINT8; }

 private:
  HostBuffer buf_;
};

}  // namespace kiln
