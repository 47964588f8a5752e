#include "model/checkpoint.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <random>

#include "games/quote.h"
#include "model/folded_net.h"
#include "util/file_io.h"

namespace oppidum::model {
namespace {

constexpr std::uint32_t kFlagGlobalPooling = 1u;
constexpr std::uint32_t kFlagScoreHead = 2u;
constexpr std::uint32_t kMaxNameLength = 1u << 20;  // bounds strings before allocating them
constexpr std::uint32_t kMaxRank = 8;

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// Little-endian writer into a byte string (util's encoding, as every framed file's).
class Writer {
 public:
  void u32(std::uint32_t v) { util::put_le(out_, v, 4); }
  void i32(std::int32_t v) { util::put_le(out_, static_cast<std::uint32_t>(v), 4); }
  void u64(std::uint64_t v) { util::put_le(out_, v, 8); }
  void i64(std::int64_t v) { util::put_le(out_, static_cast<std::uint64_t>(v), 8); }
  void bytes(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  void floats(const std::vector<float>& v) {
    if (host_is_little_endian()) {
      bytes(v.data(), v.size() * sizeof(float));
      return;
    }
    for (float f : v) {
      std::uint32_t u;
      std::memcpy(&u, &f, 4);
      u32(u);
    }
  }
  void patch_u64(std::size_t at, std::uint64_t v) {
    std::string le;
    util::put_le(le, v, 8);
    out_.replace(at, 8, le);
  }
  std::size_t size() const { return out_.size(); }
  std::string& buffer() { return out_; }

 private:
  std::string out_;
};

// Bounds-checked little-endian reader; every failure names the file and the offset.
class Reader {
 public:
  Reader(const char* data, std::size_t size, const std::string& source)
      : data_(data), size_(size), source_(source) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw CheckpointError("checkpoint " + source_ + ": " + what + " (at byte " +
                          std::to_string(pos_) + ")");
  }
  void need(std::size_t n, const char* what) const {
    if (n > size_ - pos_)
      fail(std::string("truncated or damaged: ") + what + " needs " + std::to_string(n) +
           " bytes, " + std::to_string(size_ - pos_) + " left");
  }
  std::uint64_t le(int n, const char* what) {  // n <= 8
    need(static_cast<std::size_t>(n), what);
    const std::uint64_t v = util::get_le(std::string_view(data_, size_), pos_, n);
    pos_ += static_cast<std::size_t>(n);
    return v;
  }
  void skip(std::size_t n, const char* what) {
    need(n, what);
    pos_ += n;
  }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(le(4, what)); }
  std::int32_t i32(const char* what) { return static_cast<std::int32_t>(u32(what)); }
  std::uint64_t u64(const char* what) { return le(8, what); }
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(u64(what)); }
  std::string str(const char* what) {
    const std::uint32_t n = u32(what);
    if (n > kMaxNameLength) fail(std::string(what) + " has an implausible length " + std::to_string(n));
    need(n, what);
    std::string s(data_ + pos_, n);
    pos_ += n;
    return s;
  }
  void floats(std::vector<float>& out, std::size_t count, const char* what) {
    if (count > (size_ - pos_) / 4)
      fail(std::string("truncated or damaged: ") + what + " needs " + std::to_string(count) +
           " floats, " + std::to_string(size_ - pos_) + " bytes left");
    out.resize(count);
    if (count == 0) return;  // (memcpy of nothing may not be given a null pointer)
    if (host_is_little_endian()) {
      std::memcpy(out.data(), data_ + pos_, count * 4);
      pos_ += count * 4;
      return;
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t u = u32(what);
      std::memcpy(&out[i], &u, 4);
    }
  }
  std::size_t pos() const { return pos_; }

 private:
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  const std::string& source_;
};

std::size_t element_count(const std::vector<std::int64_t>& shape) {
  std::size_t n = 1;
  for (std::int64_t d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

}  // namespace

const NamedTensor* Checkpoint::find(std::string_view name) const {
  for (const NamedTensor& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const NamedTensor& Checkpoint::tensor(std::string_view name,
                                      const std::vector<std::int64_t>& shape) const {
  const NamedTensor* t = find(name);
  if (t == nullptr)
    throw CheckpointError("checkpoint has no tensor " + std::string(name));
  if (t->shape != shape)
    throw CheckpointError("checkpoint tensor " + std::string(name) + " has shape " +
                          shape_to_string(t->shape) + ", expected " + shape_to_string(shape));
  return *t;
}

void check_tensors(const Checkpoint& checkpoint, const std::string& source) {
  const auto fail = [&source](const std::string& what) {
    throw CheckpointError("checkpoint " + source + ": " + what);
  };
  // The shape first, within bounds no game comes near: the tensor shapes are products of it.
  constexpr int kMaxSide = 4096, kMaxActions = 1 << 24;
  const auto& in = checkpoint.input;
  if (in.planes <= 0 || in.planes > kMaxSide || in.height <= 0 || in.height > kMaxSide ||
      in.width <= 0 || in.width > kMaxSide || checkpoint.num_actions <= 0 ||
      checkpoint.num_actions > kMaxActions)
    fail("invalid input shape " + std::to_string(in.planes) + "x" + std::to_string(in.height) +
         "x" + std::to_string(in.width) + " or action count " +
         std::to_string(checkpoint.num_actions));
  std::vector<TensorSpec> specs;
  try {
    specs = network_tensor_specs(checkpoint.config, checkpoint.input, checkpoint.num_actions);
  } catch (const std::invalid_argument& e) {
    fail(e.what());
  }
  for (const TensorSpec& spec : specs) {
    const NamedTensor* t = checkpoint.find(spec.name);
    if (t == nullptr)
      fail("tensor " + spec.name + " is missing (network " + checkpoint.config.to_string() + ")");
    if (t->shape != spec.shape)
      fail("tensor " + spec.name + " has shape " + shape_to_string(t->shape) + ", the network " +
           checkpoint.config.to_string() + " needs " + shape_to_string(spec.shape));
    if (t->data.size() != element_count(t->shape))
      fail("tensor " + spec.name + " holds " + std::to_string(t->data.size()) +
           " values for shape " + shape_to_string(t->shape));
    for (std::size_t i = 0; i < t->data.size(); ++i)
      if (!std::isfinite(t->data[i]))
        fail("tensor " + spec.name + " holds a non-finite value (" + std::to_string(t->data[i]) +
             ") at index " + std::to_string(i) + "; a network with NaN or infinite weights is " +
             "never written or loaded");
  }
  if (checkpoint.tensors.size() != specs.size()) {
    for (const NamedTensor& t : checkpoint.tensors) {
      bool known = false;
      for (const TensorSpec& spec : specs) known = known || spec.name == t.name;
      if (!known)
        fail("unexpected tensor \"" + quote_input(t.name) + "\" for network " +
           checkpoint.config.to_string());
    }
    fail("duplicate tensor names");
  }
}

std::string serialize_checkpoint(const Checkpoint& c) {
  check_tensors(c, "being written for " + c.game);
  Writer w;
  w.bytes(kCheckpointMagic, sizeof kCheckpointMagic);
  w.u32(kCheckpointFormatVersion);
  const std::size_t length_at = w.size();
  w.u64(0);  // content length, patched below
  w.str(c.game);
  w.u32(static_cast<std::uint32_t>(c.encoding_version));
  w.i32(c.input.planes);
  w.i32(c.input.height);
  w.i32(c.input.width);
  w.i32(c.num_actions);
  w.i32(c.config.blocks);
  w.i32(c.config.filters);
  w.i32(c.config.policy_channels);
  w.i32(c.config.value_channels);
  w.i32(c.config.value_hidden);
  w.u32((c.config.global_pooling ? kFlagGlobalPooling : 0u) |
        (c.config.score_head ? kFlagScoreHead : 0u));
  w.i64(c.step);
  w.str(c.metadata);
  w.u32(static_cast<std::uint32_t>(c.tensors.size()));
  for (const NamedTensor& t : c.tensors) {
    w.str(t.name);
    w.u32(static_cast<std::uint32_t>(t.shape.size()));
    for (std::int64_t d : t.shape) w.i64(d);
    w.floats(t.data);
  }
  w.patch_u64(length_at, w.size());
  const std::uint32_t crc = util::crc32(w.buffer().data(), w.size());
  w.u32(crc);
  return std::move(w.buffer());
}

namespace {

constexpr std::size_t kHeaderBytes = 20;  // magic, format version, content length

// Checks the magic, the format version and that the content length the header declares fits a
// file of `file_size` bytes, from the first `available` bytes; returns that length.
std::uint64_t checked_content_length(const char* bytes, std::size_t available,
                                     std::uint64_t file_size, const std::string& source) {
  Reader r(bytes, std::min(available, kHeaderBytes), source);
  if (available < sizeof kCheckpointMagic ||
      std::memcmp(bytes, kCheckpointMagic, sizeof kCheckpointMagic) != 0)
    throw CheckpointError("checkpoint " + source +
                          ": not an oppidum checkpoint (the file does not start with OPPIDUMC)");
  r.le(8, "magic");
  const std::uint32_t version = r.u32("format version");
  if (version != kCheckpointFormatVersion)
    throw CheckpointError("checkpoint " + source + ": format version " + std::to_string(version) +
                          ", this program reads version " +
                          std::to_string(kCheckpointFormatVersion));
  const std::uint64_t length = r.u64("content length");
  if (length > file_size || length + 4 != file_size)
    throw CheckpointError("checkpoint " + source + ": truncated or damaged: the header says " +
                          std::to_string(length) + " bytes before the 4-byte check, the file has " +
                          std::to_string(file_size) + " bytes in all");
  return length;
}

}  // namespace

std::uint64_t max_checkpoint_bytes(const NetConfig& config, PlaneShape input, int num_actions) {
  // As serialize_checkpoint writes it: the header (magic, format version, content length), the
  // game's name, its encoding version, the input shape and action count, the five sizes of the
  // config, its flags, the step, the metadata, the tensor count, the tensors and the CRC-32.
  std::uint64_t n = kHeaderBytes + (4 + kMaxNameLength) + 4 + 4 * 4 + 5 * 4 + 4 + 8 +
                    (4 + kMaxNameLength) + 4;
  for (const TensorSpec& spec : network_tensor_specs(config, input, num_actions))
    n += 4 + spec.name.size() + 4 + 8 * spec.shape.size() + 4 * element_count(spec.shape);
  return n + 4;
}

Checkpoint parse_checkpoint(const char* bytes, std::size_t size, const std::string& source) {
  const std::uint64_t length = checked_content_length(bytes, size, size, source);
  std::uint32_t stored_crc = 0;
  for (int i = 0; i < 4; ++i)
    stored_crc |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[length + i]))
                  << (8 * i);
  if (util::crc32(bytes, static_cast<std::size_t>(length)) != stored_crc)
    throw CheckpointError("checkpoint " + source +
                          ": damaged: the CRC-32 of the content does not match the stored one");

  Reader body(bytes, static_cast<std::size_t>(length), source);
  body.skip(20, "header");
  Checkpoint c;
  c.game = body.str("game name");
  c.encoding_version = static_cast<int>(body.u32("encoding version"));
  c.input.planes = body.i32("input planes");
  c.input.height = body.i32("input height");
  c.input.width = body.i32("input width");
  c.num_actions = body.i32("action count");
  c.config.blocks = body.i32("blocks");
  c.config.filters = body.i32("filters");
  c.config.policy_channels = body.i32("policy channels");
  c.config.value_channels = body.i32("value channels");
  c.config.value_hidden = body.i32("value hidden");
  const std::uint32_t flags = body.u32("flags");
  if ((flags & ~(kFlagGlobalPooling | kFlagScoreHead)) != 0)
    body.fail("unknown flags " + std::to_string(flags));
  c.config.global_pooling = (flags & kFlagGlobalPooling) != 0;
  c.config.score_head = (flags & kFlagScoreHead) != 0;
  c.step = body.i64("step");
  // A training step counts up from 0; 2^53 steps would take longer than anyone trains.
  if (c.step < 0 || c.step > (std::int64_t{1} << 53))
    body.fail("training step " + std::to_string(c.step) + " is not 0..2^53");
  c.metadata = body.str("metadata");
  const std::uint32_t count = body.u32("tensor count");
  if (count > 100000) body.fail("implausible tensor count " + std::to_string(count));
  c.tensors.resize(count);
  for (NamedTensor& t : c.tensors) {
    t.name = body.str("tensor name");
    const std::uint32_t rank = body.u32("tensor rank");
    if (rank > kMaxRank)
      body.fail("tensor \"" + quote_input(t.name) + "\" has rank " + std::to_string(rank));
    std::size_t n = 1;
    for (std::uint32_t k = 0; k < rank; ++k) {
      const std::int64_t d = body.i64("tensor dimension");
      if (d < 0 || d > (std::int64_t{1} << 31))
        body.fail("tensor \"" + quote_input(t.name) + "\" has dimension " + std::to_string(d));
      t.shape.push_back(d);
      n *= static_cast<std::size_t>(d);
      if (n > size) body.fail("tensor \"" + quote_input(t.name) + "\" is larger than the file");
    }
    body.floats(t.data, n, "tensor data");
  }
  if (body.pos() != length)
    body.fail(std::to_string(length - body.pos()) + " unexpected bytes after the last tensor");
  check_tensors(c, source);
  // A network whose batch norm folds into NaN or infinity (a negative variance, a scale beyond
  // float's range) computes nothing: refused here, naming the file, not by whoever uses it.
  try {
    (void)fold_batch_norm(c);
  } catch (const CheckpointError& e) {
    const std::string what = e.what();
    const std::string prefix = "checkpoint: ";
    throw CheckpointError("checkpoint " + source + ": " +
                          (what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what));
  }
  return c;
}

void save_checkpoint(const Checkpoint& checkpoint, const std::string& path) {
  const std::string bytes = serialize_checkpoint(checkpoint);
  try {
    util::write_file_atomically(path, bytes.data(), bytes.size());
  } catch (const std::runtime_error& e) {
    throw CheckpointError(std::string("checkpoint: ") + e.what());
  }
}

Checkpoint load_checkpoint(const std::string& path) {
  try {
    util::RegularFileReader file(path, kMaxCheckpointBytes);
    // The header first: a foreign or truncated file is refused before anything is allocated for it.
    char head[kHeaderBytes];
    const std::size_t got = file.read(head, sizeof head);
    checked_content_length(head, got, file.size(), path);
    std::vector<char> bytes;
    try {
      bytes.resize(static_cast<std::size_t>(file.size()));
    } catch (const std::bad_alloc&) {
      throw CheckpointError("checkpoint " + path + ": not enough memory to read its " +
                            std::to_string(file.size()) + " bytes");
    }
    std::memcpy(bytes.data(), head, got);
    const std::size_t rest = file.read(bytes.data() + got, bytes.size() - got);
    if (got + rest != bytes.size() || file.read(head, 1) != 0)
      throw CheckpointError("checkpoint " + path + ": changed size while it was read");
    try {
      return parse_checkpoint(bytes.data(), bytes.size(), path);
    } catch (const std::bad_alloc&) {
      throw CheckpointError("checkpoint " + path + ": not enough memory to load its " +
                            std::to_string(file.size()) + " bytes of tensors");
    }
  } catch (const util::FileAccessError& e) {
    // Not a CheckpointError: the file may be intact, and a run never takes it for damaged (a
    // resume would go back to an older network, or rewrite the file).
    throw util::FileAccessError("checkpoint: " + std::string(e.what()));
  } catch (const util::FileError& e) {
    throw CheckpointError("checkpoint: " + std::string(e.what()));
  }
}

void check_compatible(const Checkpoint& c, const Game& game, const std::string& path,
                      const NetConfig* expected) {
  if (c.game != game.name())
    throw CheckpointError("checkpoint " + path + " was trained for \"" + quote_input(c.game) +
                          "\", not " +
                          game.name());
  std::string bad;
  const auto mismatch = [&bad](const std::string& what) {
    if (!bad.empty()) bad += "; ";
    bad += what;
  };
  if (c.encoding_version != game.encoding_version())
    mismatch("encoding version " + std::to_string(c.encoding_version) + ", this program's " +
             game.name() + " encoding is version " + std::to_string(game.encoding_version()));
  const PlaneShape in = game.input_shape();
  if (c.input.planes != in.planes || c.input.height != in.height || c.input.width != in.width)
    mismatch("input planes " + std::to_string(c.input.planes) + "x" +
             std::to_string(c.input.height) + "x" + std::to_string(c.input.width) + ", expected " +
             std::to_string(in.planes) + "x" + std::to_string(in.height) + "x" +
             std::to_string(in.width));
  if (c.num_actions != game.num_actions())
    mismatch(std::to_string(c.num_actions) + " actions, expected " +
             std::to_string(game.num_actions()));
  if (expected != nullptr && c.config != *expected)
    mismatch("network " + c.config.to_string() + ", expected " + expected->to_string());
  if (!bad.empty()) throw CheckpointError("checkpoint " + path + " does not fit: " + bad);
}

Checkpoint load_checkpoint(const std::string& path, const Game& game, const NetConfig* expected) {
  Checkpoint c = load_checkpoint(path);
  check_compatible(c, game, path, expected);
  return c;
}

Checkpoint random_checkpoint(const Game& game, const NetConfig& config, std::uint64_t seed) {
  Checkpoint c;
  c.game = game.name();
  c.encoding_version = game.encoding_version();
  c.input = game.input_shape();
  c.num_actions = game.num_actions();
  c.config = config;
  c.metadata = "random weights, seed " + std::to_string(seed);
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng](float lo, float hi) {
    return lo + (hi - lo) * static_cast<float>(rng() >> 40) / static_cast<float>(1 << 24);
  };
  for (TensorSpec& spec : network_tensor_specs(config, c.input, c.num_actions)) {
    NamedTensor t;
    t.name = std::move(spec.name);
    t.shape = std::move(spec.shape);
    t.data.resize(element_count(t.shape));
    const auto ends_with = [&t](const char* suffix) {
      const std::size_t n = std::strlen(suffix);
      return t.name.size() >= n && t.name.compare(t.name.size() - n, n, suffix) == 0;
    };
    float lo = -0.1f;
    float hi = 0.1f;
    if (ends_with("running_var")) {
      lo = 0.5f, hi = 2.0f;
    } else if (ends_with("running_mean")) {
      lo = -0.5f, hi = 0.5f;
    } else if (t.shape.size() >= 2) {  // conv or linear weight: variance 1 / fan-in
      const float fan_in = static_cast<float>(t.data.size() / static_cast<std::size_t>(t.shape[0]));
      hi = std::sqrt(3.0f / fan_in);
      lo = -hi;
    } else if (t.name.find(".bn") != std::string::npos && ends_with("weight")) {
      lo = 0.5f, hi = 1.5f;
    }
    for (float& v : t.data) v = uniform(lo, hi);
    c.tensors.push_back(std::move(t));
  }
  return c;
}

}  // namespace oppidum::model
