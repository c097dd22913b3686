// Host tensors for kilnexec and their files: NumPy .npy and .npz (stored or deflated), raw bytes, and the
// conversions of every Kiln element type to double (for printing, JSON and comparisons).
#pragma once

#include <kiln/kiln_base.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kilnexec {

/// A named host tensor: element type, shape and the packed little-endian bytes.
struct Tensor {
  std::string name;
  kiln::DataType type = kiln::DataType::kFLOAT;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;
};

/// Bytes per element; 0 for types kilnexec cannot hold (the packed 4-bit types).
size_t elementSize(kiln::DataType type);

/// Short name, e.g. "float32", "float16", "int64".
std::string typeName(kiln::DataType type);

/// Number of elements of `dims` (1 for a scalar; 0 when an extent is 0 or negative).
int64_t volume(std::vector<int64_t> const& dims);

/// Element `i` of `t` as a double (booleans 0/1; fp16, bf16 and fp8 decoded exactly).
double elementAsDouble(Tensor const& t, size_t i);

/// Every element as a double.
std::vector<double> toDoubles(Tensor const& t);

/// Parses a .npy file (format 1.x, 2.x or 3.x, C order, little-endian or byte-order-free types).
bool readNpy(std::vector<uint8_t> const& file, Tensor& out, std::string& error);

/// Serializes `t` as a .npy file (format 1.0).
std::vector<uint8_t> writeNpy(Tensor const& t);

/// Parses a .npz file (a ZIP of .npy files, stored or deflated, with or without ZIP64 records); each array
/// is named after its entry without ".npy".
bool readNpz(std::vector<uint8_t> const& file, std::vector<Tensor>& out, std::string& error);

/// Serializes `tensors` as a .npz file (stored entries named <name>.npy).
std::vector<uint8_t> writeNpz(std::vector<Tensor> const& tensors);

/// Reads a whole file.
bool readFile(std::string const& path, std::vector<uint8_t>& bytes, std::string& error);

/// Writes a whole file.
bool writeFile(std::string const& path, void const* data, size_t size, std::string& error);

/// Loads the tensor for input `name` from `path`: .npy, .npz (the array named `name`, or the only one) or raw
/// bytes (any other extension; then the size must match `type` x volume(`dims`), and `dims` must be fully
/// known). A .npy/.npz array must have element type `type`; its shape becomes the tensor's.
bool loadTensorFile(std::string const& path, std::string const& name, kiln::DataType type,
                    std::vector<int64_t> const& dims, Tensor& out, std::string& error);

}  // namespace kilnexec
