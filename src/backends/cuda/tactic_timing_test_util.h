// gpu tests that print how long each CUDA tactic takes on one node (device time, the median of event-timed graph
// replays of 16 captured runs after a warm-up): figures for people choosing kernels, never asserted on (the builder's
// timing decides).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "backends/cuda/cuda_test_util.h"

namespace kiln::cudatest {

/// Device milliseconds of one `enqueue()` (which enqueues one run on cs; false: it could not), `runs` figures in
/// ascending order, timed as the runtime's graphs run it: kGraphRuns enqueues captured into one graph, each replay
/// between two events (no host launch inside the timed span; one untimed replay first uploads the graph); where the
/// capture fails, each enqueue between two events. Empty when an enqueue, a replay or the events fail.
template <typename F>
std::vector<float> timeEnqueues(cudaStream_t cs, F const& enqueue, int runs) {
  constexpr int kGraphRuns = 16;
  cudaGraphExec_t exec = nullptr;
  if (cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    bool ok = true;
    for (int i = 0; i < kGraphRuns && ok; ++i) ok = enqueue();
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(cs, &graph) == cudaSuccess && ok && graph)
      if (cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) exec = nullptr;
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    if (exec) cudaGraphLaunch(exec, cs);  // untimed: uploads the graph
  }
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  bool ok = cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess;
  std::vector<float> ms;
  for (int i = 0; ok && i < runs; ++i) {
    ok = cudaEventRecord(e0, cs) == cudaSuccess && (exec ? cudaGraphLaunch(exec, cs) == cudaSuccess : enqueue()) &&
         cudaEventRecord(e1, cs) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess;
    float v = 0;
    ok = ok && cudaEventElapsedTime(&v, e0, e1) == cudaSuccess;
    if (ok) ms.push_back(exec ? v / kGraphRuns : v);
  }
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  if (exec) cudaGraphExecDestroy(exec);
  if (!ok) ms.clear();
  std::sort(ms.begin(), ms.end());
  return ms;
}

/// Runs every non-fallback CUDA tactic supporting `node` (inputs and outputs as `in` / `out`, every one present
/// and of known shape) `runs` times (graph replays of 16 runs, per run) on device buffers filled with `fillByte`
/// patterns, and prints each one's median time and the rate of `bytesMoved`. Fails the test where a tactic cannot be
/// created or enqueued.
inline void printTacticTimes(ir::Node const& node, std::vector<ir::TensorInfo> const& in,
                             std::vector<ir::TensorInfo> const& out, double bytesMoved, int runs = 20) {
  backends::DeviceBackend* dev = device();
  void* stream = *dev->createStream();
  auto cs = static_cast<cudaStream_t>(stream);
  std::vector<backends::DeviceBuffer> bufs;
  backends::LaunchContext ctx;
  backends::DeviceStream ds(dev, stream);
  ctx.stream = &ds;
  // Small positive values (0x30 bytes: fp16 0.13, bf16 6.4e-10, fp32 6.4e-10) keep every activation finite.
  auto buffer = [&](ir::TensorInfo const& t, int fill) -> void* {
    size_t bytes = static_cast<size_t>(volume(t.shape)) * dataTypeSize(t.dtype);
    auto b = backends::DeviceBuffer::allocate(dev, bytes, "timing buffer");
    EXPECT_TRUE(b.isOk());
    if (!b.isOk()) return nullptr;
    EXPECT_TRUE(dev->fill(b->data(), fill, bytes, stream).isOk());
    bufs.push_back(std::move(*b));
    return bufs.back().data();
  };
  for (auto const& t : in) ctx.inputs.push_back({buffer(t, 0x30), t.dtype, t.shape});
  for (auto const& t : out) ctx.outputs.push_back({buffer(t, 0), t.dtype, t.shape});
  for (backends::Tactic const* tac :
       backends::TacticRegistry::instance().candidates(node, in, out, DeviceType::kGPU, ~0u)) {
    if (backends::isHostFallback(*tac)) continue;
    auto k = tac->create(node);
    EXPECT_TRUE(k.isOk()) << tac->name << ": " << k.status().toString();
    if (!k.isOk()) continue;
    size_t ws = (*k)->workspaceSize(in, out);
    auto wsb = backends::DeviceBuffer::allocate(dev, ws, "timing workspace");
    EXPECT_TRUE(wsb.isOk());
    if (!wsb.isOk()) continue;
    ctx.workspace = wsb->data();
    ctx.workspaceSize = ws;
    Status s = (*k)->enqueue(ctx);  // warm-up: plans, heuristics, first-launch costs
    EXPECT_TRUE(s.isOk()) << tac->name << ": " << s.toString();
    EXPECT_TRUE(dev->synchronize(stream).isOk());
    if (!s.isOk()) continue;
    Status last = Status::ok();
    std::vector<float> const ms = timeEnqueues(
        cs,
        [&] {
          last = (*k)->enqueue(ctx);
          return last.isOk();
        },
        runs);
    EXPECT_FALSE(ms.empty()) << tac->name << ": " << (last.isOk() ? "graph replay or event failed" : last.toString());
    if (ms.empty()) continue;
    float med = ms[ms.size() / 2];
    std::printf("[ bench ]   %-42s %9.3f ms %6.2f TB/s\n", tac->name.c_str(), static_cast<double>(med),
                bytesMoved / (static_cast<double>(med) * 1e-3) / 1e12);
  }
  bufs.clear();
  dev->destroyStream(stream);
}

}  // namespace kiln::cudatest
