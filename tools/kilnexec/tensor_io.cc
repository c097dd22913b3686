// NumPy .npy/.npz and raw tensor files for kilnexec, and element decoding (fp16, bf16, fp8 E4M3 included).
#include "tensor_io.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <map>

namespace kilnexec {
namespace {

using kiln::DataType;

uint16_t le16(uint8_t const* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(uint8_t const* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}
uint64_t le64(uint8_t const* p) { return uint64_t(le32(p)) | uint64_t(le32(p + 4)) << 32; }
void put16(std::vector<uint8_t>& b, uint16_t v) {
  b.push_back(uint8_t(v));
  b.push_back(uint8_t(v >> 8));
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
  put16(b, uint16_t(v));
  put16(b, uint16_t(v >> 16));
}

double halfToDouble(uint16_t h) {
  int const exp = (h >> 10) & 0x1f;
  int const mant = h & 0x3ff;
  double const sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(mant + 1024, exp - 25);
}

double bf16ToDouble(uint16_t b) {
  uint32_t const bits = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// E4M3 (bias 7, no infinities, S.1111.111 is NaN).
double fp8ToDouble(uint8_t v) {
  int const exp = (v >> 3) & 0xf;
  int const mant = v & 7;
  double const sign = (v & 0x80) ? -1.0 : 1.0;
  if (exp == 15 && mant == 7) return std::nan("");
  if (exp == 0) return sign * std::ldexp(mant, -9);
  return sign * std::ldexp(mant + 8, exp - 10);
}

struct Descr {
  char const* npy;
  DataType type;
};
// NumPy's descr strings for the types Kiln has ('<' little-endian, '|' byte-order free). bfloat16 and fp8 have
// no NumPy type; they are read and written as raw 16/8-bit patterns (<u2, |u1) only through raw files.
constexpr Descr kDescrs[] = {
    {"<f4", DataType::kFLOAT}, {"<f2", DataType::kHALF},   {"|i1", DataType::kINT8},   {"<i4", DataType::kINT32},
    {"|b1", DataType::kBOOL},  {"|u1", DataType::kUINT8},  {"<i8", DataType::kINT64},  {"<f8", DataType::kFLOAT64},
    {"<i2", DataType::kINT16}, {"<u2", DataType::kUINT16}, {"<u4", DataType::kUINT32}, {"<u8", DataType::kUINT64},
};

// The value of key `key` in a NumPy header dict (Python literal syntax), e.g. "'<f4'", "False", "(2, 3)".
std::string dictValue(std::string const& header, std::string const& key) {
  auto k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  auto colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ') ++i;
  if (i >= header.size()) return "";
  char const open = header[i];
  char const close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
  size_t end = header.find(close, i + 1);
  if (end == std::string::npos) end = header.find('}', i);
  if (end == std::string::npos) return "";
  return header.substr(i, end - i + (close == ',' ? 0 : 1));
}

bool inflateRaw(uint8_t const* src, size_t srcSize, size_t outSize, std::vector<uint8_t>& out) {
  out.assign(outSize, 0);
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) return false;
  zs.next_in = const_cast<Bytef*>(src);
  zs.avail_in = static_cast<uInt>(srcSize);
  zs.next_out = out.data();
  zs.avail_out = static_cast<uInt>(outSize);
  int const rc = inflate(&zs, Z_FINISH);
  inflateEnd(&zs);
  return rc == Z_STREAM_END && zs.total_out == outSize;
}

}  // namespace

size_t elementSize(DataType type) {
  switch (type) {
    case DataType::kFLOAT:
      return 4;
    case DataType::kHALF:
      return 2;
    case DataType::kINT8:
      return 1;
    case DataType::kINT32:
      return 4;
    case DataType::kBOOL:
      return 1;
    case DataType::kUINT8:
      return 1;
    case DataType::kFP8:
      return 1;
    case DataType::kBF16:
      return 2;
    case DataType::kINT64:
      return 8;
    case DataType::kINT4:
      return 0;
    case DataType::kFP4:
      return 0;
    case DataType::kE8M0:
      return 1;
    case DataType::kFLOAT64:
      return 8;
    case DataType::kINT16:
      return 2;
    case DataType::kUINT16:
      return 2;
    case DataType::kUINT32:
      return 4;
    case DataType::kUINT64:
      return 8;
  }
  return 0;
}

std::string typeName(DataType type) {
  switch (type) {
    case DataType::kFLOAT:
      return "float32";
    case DataType::kHALF:
      return "float16";
    case DataType::kINT8:
      return "int8";
    case DataType::kINT32:
      return "int32";
    case DataType::kBOOL:
      return "bool";
    case DataType::kUINT8:
      return "uint8";
    case DataType::kFP8:
      return "fp8e4m3";
    case DataType::kBF16:
      return "bfloat16";
    case DataType::kINT64:
      return "int64";
    case DataType::kINT4:
      return "int4";
    case DataType::kFP4:
      return "fp4";
    case DataType::kE8M0:
      return "e8m0";
    case DataType::kFLOAT64:
      return "float64";
    case DataType::kINT16:
      return "int16";
    case DataType::kUINT16:
      return "uint16";
    case DataType::kUINT32:
      return "uint32";
    case DataType::kUINT64:
      return "uint64";
  }
  return "type" + std::to_string(static_cast<int>(type));
}

int64_t volume(std::vector<int64_t> const& dims) {
  int64_t v = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
    v *= d;
  }
  return v;
}

double elementAsDouble(Tensor const& t, size_t i) {
  uint8_t const* p = t.bytes.data() + i * elementSize(t.type);
  switch (t.type) {
    case DataType::kFLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case DataType::kFLOAT64: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case DataType::kHALF:
      return halfToDouble(le16(p));
    case DataType::kBF16:
      return bf16ToDouble(le16(p));
    case DataType::kFP8:
      return fp8ToDouble(*p);
    case DataType::kE8M0:
      return *p == 0xff ? std::nan("") : std::ldexp(1.0, int(*p) - 127);
    case DataType::kINT8:
      return static_cast<int8_t>(*p);
    case DataType::kUINT8:
      return *p;
    case DataType::kBOOL:
      return *p ? 1.0 : 0.0;
    case DataType::kINT16:
      return static_cast<int16_t>(le16(p));
    case DataType::kUINT16:
      return le16(p);
    case DataType::kINT32:
      return static_cast<int32_t>(le32(p));
    case DataType::kUINT32:
      return le32(p);
    case DataType::kINT64:
      return static_cast<double>(static_cast<int64_t>(le64(p)));
    case DataType::kUINT64:
      return static_cast<double>(le64(p));
    case DataType::kINT4:
      return 0;
    case DataType::kFP4:
      return 0;
  }
  return 0;
}

std::vector<double> toDoubles(Tensor const& t) {
  size_t const es = elementSize(t.type);
  size_t const n = es ? t.bytes.size() / es : 0;
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = elementAsDouble(t, i);
  return v;
}

bool readNpy(std::vector<uint8_t> const& file, Tensor& out, std::string& error) {
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0) {
    error = "not a .npy file (no \\x93NUMPY magic)";
    return false;
  }
  int const major = file[6];
  size_t headerLen = 0, start = 0;
  if (major == 1) {
    headerLen = le16(file.data() + 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (file.size() < 12) {
      error = "truncated .npy header";
      return false;
    }
    headerLen = le32(file.data() + 8);
    start = 12;
  } else {
    error = ".npy format version " + std::to_string(major) + " is not supported";
    return false;
  }
  if (headerLen > file.size() - start) {
    error = "truncated .npy header";
    return false;
  }
  std::string const header(reinterpret_cast<char const*>(file.data() + start), headerLen);
  std::string descr = dictValue(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  if (descr.size() == 3 && descr[0] == '=') descr[0] = '<';
  if (descr == "<b1" || descr == "=b1") descr = "|b1";
  if (descr == "<i1") descr = "|i1";
  if (descr == "<u1") descr = "|u1";
  bool found = false;
  for (auto const& d : kDescrs)
    if (descr == d.npy) {
      out.type = d.type;
      found = true;
    }
  if (!found) {
    error = "array type '" + descr + "' is not one Kiln has (big-endian, complex, strings and objects are not)";
    return false;
  }
  if (dictValue(header, "fortran_order") != "False") {
    error = "Fortran-order arrays are not supported (save a C-order array)";
    return false;
  }
  std::string shape = dictValue(header, "shape");
  if (shape.size() < 2 || shape.front() != '(') {
    error = "no shape in the .npy header";
    return false;
  }
  out.dims.clear();
  std::string num;
  for (char c : shape.substr(1)) {
    if (c >= '0' && c <= '9') {
      num += c;
    } else if (c == ',' || c == ')') {
      if (!num.empty()) {
        if (num.size() > 15) {
          error = "absurd dimension in the .npy shape";
          return false;
        }
        out.dims.push_back(std::stoll(num));
      }
      num.clear();
    } else if (c != ' ' && c != 'L') {
      error = "bad .npy shape '" + shape + "'";
      return false;
    }
  }
  size_t const dataStart = start + headerLen;
  int64_t const n = out.dims.empty() ? 1 : volume(out.dims);
  bool const zeroSized = !out.dims.empty() && n == 0;
  uint64_t const need = static_cast<uint64_t>(zeroSized ? 0 : n) * elementSize(out.type);
  if (file.size() - dataStart != need) {
    error = "the .npy data has " + std::to_string(file.size() - dataStart) + " bytes, its shape needs " +
            std::to_string(need);
    return false;
  }
  out.bytes.assign(file.begin() + static_cast<std::ptrdiff_t>(dataStart), file.end());
  return true;
}

std::vector<uint8_t> writeNpy(Tensor const& t) {
  char const* descr = "|u1";
  for (auto const& d : kDescrs)
    if (d.type == t.type) descr = d.npy;
  if (t.type == DataType::kBF16) descr = "<u2";  // raw bit patterns: NumPy has no bfloat16
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 ? "," : i + 1 < t.dims.size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that magic + length + header + '\n' is a multiple of 64.
  size_t const total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  put16(b, static_cast<uint16_t>(header.size()));
  b.insert(b.end(), header.begin(), header.end());
  b.insert(b.end(), t.bytes.begin(), t.bytes.end());
  return b;
}

bool readNpz(std::vector<uint8_t> const& file, std::vector<Tensor>& out, std::string& error) {
  // Find the end-of-central-directory record (the last 0x06054b50 within the last 64 KiB + 22 bytes).
  size_t const n = file.size();
  if (n < 22) {
    error = "not a .npz file (too small for a ZIP archive)";
    return false;
  }
  size_t eocd = std::string::npos;
  for (size_t i = n - 22 + 1; i-- > 0 && n - i <= 65557;)
    if (le32(file.data() + i) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd == std::string::npos) {
    error = "not a .npz file (no ZIP end-of-central-directory record)";
    return false;
  }
  uint64_t entries = le16(file.data() + eocd + 10);
  uint64_t cdOffset = le32(file.data() + eocd + 16);
  // ZIP64: the locator sits right before the EOCD and points at the ZIP64 EOCD record.
  if ((cdOffset == 0xffffffffu || entries == 0xffff) && eocd >= 20 && le32(file.data() + eocd - 20) == 0x07064b50) {
    uint64_t const z = le64(file.data() + eocd - 20 + 8);
    if (z > n - 56 || le32(file.data() + z) != 0x06064b50) {
      error = "bad ZIP64 end-of-central-directory record";
      return false;
    }
    entries = le64(file.data() + z + 32);
    cdOffset = le64(file.data() + z + 48);
  }
  size_t p = cdOffset;
  out.clear();
  for (uint64_t e = 0; e < entries; ++e) {
    if (p > n - 46 || le32(file.data() + p) != 0x02014b50) {
      error = "bad ZIP central directory entry " + std::to_string(e);
      return false;
    }
    uint16_t const method = le16(file.data() + p + 10);
    uint32_t const crc = le32(file.data() + p + 16);
    uint64_t compSize = le32(file.data() + p + 20), size = le32(file.data() + p + 24);
    uint16_t const nameLen = le16(file.data() + p + 28), extraLen = le16(file.data() + p + 30),
                   commentLen = le16(file.data() + p + 32);
    uint64_t localOffset = le32(file.data() + p + 42);
    if (p + 46 + nameLen + extraLen > n) {
      error = "truncated ZIP central directory";
      return false;
    }
    std::string name(reinterpret_cast<char const*>(file.data() + p + 46), nameLen);
    // ZIP64 extra field: the 64-bit values of the fields that hold 0xffffffff, in order.
    for (size_t x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen;) {
      uint16_t const id = le16(file.data() + x), len = le16(file.data() + x + 2);
      if (id == 1) {
        size_t q = x + 4;
        if (size == 0xffffffffu && q + 8 <= x + 4 + len) size = le64(file.data() + q), q += 8;
        if (compSize == 0xffffffffu && q + 8 <= x + 4 + len) compSize = le64(file.data() + q), q += 8;
        if (localOffset == 0xffffffffu && q + 8 <= x + 4 + len) localOffset = le64(file.data() + q);
      }
      x += 4 + len;
    }
    p += 46 + nameLen + extraLen + commentLen;
    if (localOffset > n - 30 || le32(file.data() + localOffset) != 0x04034b50) {
      error = "bad ZIP local header for '" + name + "'";
      return false;
    }
    uint64_t const dataStart =
        localOffset + 30 + le16(file.data() + localOffset + 26) + le16(file.data() + localOffset + 28);
    if (dataStart > n || compSize > n - dataStart || size > (uint64_t(1) << 40)) {
      error = "truncated ZIP entry '" + name + "'";
      return false;
    }
    std::vector<uint8_t> content;
    if (method == 0) {
      content.assign(file.begin() + static_cast<std::ptrdiff_t>(dataStart),
                     file.begin() + static_cast<std::ptrdiff_t>(dataStart + compSize));
    } else if (method == 8) {
      if (!inflateRaw(file.data() + dataStart, compSize, size, content)) {
        error = "could not inflate ZIP entry '" + name + "'";
        return false;
      }
    } else {
      error = "ZIP entry '" + name + "' uses compression method " + std::to_string(method) +
              " (only stored and deflated are supported)";
      return false;
    }
    if (static_cast<uint32_t>(crc32(0L, content.data(), static_cast<uInt>(content.size()))) != crc) {
      error = "CRC mismatch in ZIP entry '" + name + "'";
      return false;
    }
    Tensor t;
    std::string err;
    if (!readNpy(content, t, err)) {
      error = "'" + name + "': " + err;
      return false;
    }
    if (name.size() > 4 && name.substr(name.size() - 4) == ".npy") name.resize(name.size() - 4);
    t.name = name;
    out.push_back(std::move(t));
  }
  return true;
}

std::vector<uint8_t> writeNpz(std::vector<Tensor> const& tensors) {
  std::vector<uint8_t> zip, central;
  for (Tensor const& t : tensors) {
    std::vector<uint8_t> const data = writeNpy(t);
    std::string const name = t.name + ".npy";
    uint32_t const crc = static_cast<uint32_t>(crc32(0L, data.data(), static_cast<uInt>(data.size())));
    uint32_t const offset = static_cast<uint32_t>(zip.size());
    put32(zip, 0x04034b50);
    put16(zip, 20);    // version needed
    put16(zip, 0);     // flags
    put16(zip, 0);     // stored
    put16(zip, 0);     // time
    put16(zip, 0x21);  // date: 1980-01-01
    put32(zip, crc);
    put32(zip, static_cast<uint32_t>(data.size()));
    put32(zip, static_cast<uint32_t>(data.size()));
    put16(zip, static_cast<uint16_t>(name.size()));
    put16(zip, 0);
    zip.insert(zip.end(), name.begin(), name.end());
    zip.insert(zip.end(), data.begin(), data.end());

    put32(central, 0x02014b50);
    put16(central, 20);  // version made by
    put16(central, 20);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put16(central, 0x21);
    put32(central, crc);
    put32(central, static_cast<uint32_t>(data.size()));
    put32(central, static_cast<uint32_t>(data.size()));
    put16(central, static_cast<uint16_t>(name.size()));
    put16(central, 0);  // extra
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0);  // external attributes
    put32(central, offset);
    central.insert(central.end(), name.begin(), name.end());
  }
  uint32_t const cdOffset = static_cast<uint32_t>(zip.size());
  zip.insert(zip.end(), central.begin(), central.end());
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, static_cast<uint16_t>(tensors.size()));
  put16(zip, static_cast<uint16_t>(tensors.size()));
  put32(zip, static_cast<uint32_t>(central.size()));
  put32(zip, cdOffset);
  put16(zip, 0);
  return zip;
}

bool readFile(std::string const& path, std::vector<uint8_t>& bytes, std::string& error) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::streamsize const size = in.tellg();
  if (size < 0) {
    error = "cannot read '" + path + "'";
    return false;
  }
  in.seekg(0);
  bytes.resize(static_cast<size_t>(size));
  if (size && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return true;
}

bool writeFile(std::string const& path, void const* data, size_t size, std::string& error) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out.write(static_cast<char const*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

bool loadTensorFile(std::string const& path, std::string const& name, DataType type, std::vector<int64_t> const& dims,
                    Tensor& out, std::string& error) {
  std::vector<uint8_t> bytes;
  if (!readFile(path, bytes, error)) return false;
  auto endsWith = [&](char const* ext) {
    size_t const l = std::strlen(ext);
    return path.size() >= l && path.compare(path.size() - l, l, ext) == 0;
  };
  std::string err;
  if (endsWith(".npy") || endsWith(".npz")) {
    if (endsWith(".npy")) {
      if (!readNpy(bytes, out, err)) {
        error = path + ": " + err;
        return false;
      }
    } else {
      std::vector<Tensor> arrays;
      if (!readNpz(bytes, arrays, err)) {
        error = path + ": " + err;
        return false;
      }
      Tensor const* pick = nullptr;
      for (auto const& a : arrays)
        if (a.name == name) pick = &a;
      if (!pick && arrays.size() == 1) pick = &arrays[0];
      if (!pick) {
        error = path + ": no array named '" + name + "'";
        return false;
      }
      out = *pick;
    }
    out.name = name;
    if (out.type != type) {
      error = path + ": input '" + name + "' is " + typeName(type) + " but the array is " + typeName(out.type);
      return false;
    }
    return true;
  }
  // Raw bytes: the tensor's shape must be known.
  for (int64_t d : dims)
    if (d < 0) {
      error = path + ": raw input '" + name + "' has a dynamic shape; give it with --shapes (or use .npy)";
      return false;
    }
  uint64_t const need = static_cast<uint64_t>(dims.empty() ? 1 : volume(dims)) * elementSize(type);
  if (bytes.size() != need) {
    error = path + ": raw input '" + name + "' needs " + std::to_string(need) + " bytes (" + typeName(type) + " " +
            std::to_string(dims.empty() ? 1 : volume(dims)) + " elements), the file has " +
            std::to_string(bytes.size());
    return false;
  }
  out.name = name;
  out.type = type;
  out.dims = dims;
  out.bytes = std::move(bytes);
  return true;
}

}  // namespace kilnexec
