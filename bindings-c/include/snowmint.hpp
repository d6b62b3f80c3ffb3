// snowmint.hpp: a thin, header-only C++17 wrapper over snowmint.h.
//
// RAII handles (move-only) and exceptions: every non-OK status becomes a
// snowmint::error carrying the status and its stable code ("invalid_layout",
// "null_argument", ...). Everything else is the C API, unchanged.
#ifndef SNOWMINT_HPP
#define SNOWMINT_HPP

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "snowmint.h"

namespace snowmint {

namespace detail {
// The failing call's own message (with its values: which ID, which store and
// why), else the status's message; both end with the code in brackets.
inline std::string message_of(snowmint_status status) {
  char buf[1024];
  size_t n = 0;
  if (snowmint_last_error_message(buf, sizeof buf, &n) == SNOWMINT_STATUS_OK && n > 0)
    return std::string(buf, n);
  return std::string(snowmint_status_str(status)) + " [" + snowmint_status_code(status) + "]";
}
}  // namespace detail

// An error from the library: status() is the C status, code() the stable
// cross-language code, what() the failing call's message with the code.
class error : public std::runtime_error {
 public:
  explicit error(snowmint_status status)
      : std::runtime_error(detail::message_of(status)), status_(status) {}
  snowmint_status status() const noexcept { return status_; }
  const char *code() const noexcept { return snowmint_status_code(status_); }

 private:
  snowmint_status status_;
};

// Throws for every status but OK.
inline void check(snowmint_status status) {
  if (status != SNOWMINT_STATUS_OK) throw error(status);
}

namespace detail {
struct layout_free {
  void operator()(const snowmint_layout *p) const noexcept { snowmint_layout_free(p); }
};
struct generator_free {
  void operator()(const snowmint_generator *p) const noexcept { snowmint_generator_free(p); }
};
struct pure_free {
  void operator()(snowmint_pure_generator *p) const noexcept { snowmint_pure_generator_free(p); }
};
struct mask_free {
  void operator()(const snowmint_mask *p) const noexcept { snowmint_mask_free(p); }
};
}  // namespace detail

class layout {
 public:
  // A preset ("twitter", ...) or a JSON descriptor, as every binding reads layouts.
  static layout parse(std::string_view text) {
    const snowmint_layout *p = nullptr;
    check(snowmint_layout_parse(text.data(), text.size(), &p));
    return layout(p);
  }
  static layout preset(const char *name) {
    const snowmint_layout *p = nullptr;
    check(snowmint_layout_preset(name, &p));
    return layout(p);
  }

  const snowmint_layout *get() const noexcept { return p_.get(); }
  uint64_t epoch_ms() const noexcept { return snowmint_layout_epoch_ms(get()); }
  uint64_t time_unit_ms() const noexcept { return snowmint_layout_time_unit_ms(get()); }
  uint32_t total_bits() const noexcept { return snowmint_layout_total_bits(get()); }
  uint64_t max_id() const noexcept { return snowmint_layout_max_id(get()); }
  uint64_t time_end_ms() const noexcept { return snowmint_layout_time_end_ms(get()); }
  uint64_t i64_end_ms() const noexcept { return snowmint_layout_i64_end_ms(get()); }
  uint64_t js_safe_end_ms() const noexcept { return snowmint_layout_js_safe_end_ms(get()); }
  size_t node_count() const noexcept { return snowmint_layout_node_count(get()); }
  std::string node_name(size_t i) const {
    const char *name = nullptr;
    check(snowmint_layout_node_name(get(), i, &name));
    return name;
  }
  std::string to_json() const {
    char buf[SNOWMINT_LAYOUT_JSON_SIZE];
    size_t n = 0;
    check(snowmint_layout_to_json(get(), buf, sizeof buf, &n));
    return std::string(buf, n);
  }
  snowmint_parts decode(uint64_t id) const {
    snowmint_parts parts;
    check(snowmint_decode(get(), id, &parts));
    return parts;
  }
  uint64_t compose(uint64_t time_ms, uint64_t sequence, std::initializer_list<uint64_t> nodes) const {
    uint64_t id = 0;
    check(snowmint_compose(get(), time_ms, sequence, nodes.begin(), nodes.size(), &id));
    return id;
  }
  std::pair<uint64_t, uint64_t> id_bounds(uint64_t time_ms) const {
    uint64_t lo = 0, hi = 0;
    check(snowmint_id_bounds(get(), time_ms, &lo, &hi));
    return {lo, hi};
  }

 private:
  explicit layout(const snowmint_layout *p) : p_(p) {}
  std::unique_ptr<const snowmint_layout, detail::layout_free> p_;
};

// Thread-safe: share one generator (by reference) between threads.
class generator {
 public:
  generator(const layout &l, std::initializer_list<uint64_t> nodes,
            const snowmint_options *options = nullptr) {
    const snowmint_generator *p = nullptr;
    check(snowmint_generator_new(l.get(), nodes.begin(), nodes.size(), options, &p));
    p_.reset(p);
  }
  generator(const layout &l, const std::vector<uint64_t> &nodes,
            const snowmint_options *options = nullptr) {
    const snowmint_generator *p = nullptr;
    check(snowmint_generator_new(l.get(), nodes.data(), nodes.size(), options, &p));
    p_.reset(p);
  }
  const snowmint_generator *get() const noexcept { return p_.get(); }
  uint64_t next_id() const {
    uint64_t id = 0;
    check(snowmint_generator_next_id(get(), &id));
    return id;
  }
  std::vector<uint64_t> next_ids(size_t n) const {
    std::vector<uint64_t> ids(n);
    check(snowmint_generator_next_ids(get(), ids.data(), n));
    return ids;
  }
  // The node values in use, in node-field order (a leased one included).
  std::vector<uint64_t> nodes() const {
    std::vector<uint64_t> v(SNOWMINT_MAX_NODES);
    size_t n = 0;
    check(snowmint_generator_nodes(get(), v.data(), v.size(), &n));
    v.resize(n);
    return v;
  }
  // The lease as JSON ("null" without one).
  std::string lease_json() const {
    std::string s(4096, '\0');
    size_t n = 0;
    check(snowmint_generator_lease_json(get(), s.data(), s.size(), &n));
    s.resize(n);
    return s;
  }
  // Releases the lease (the destructor does too, ignoring a failure).
  void close() const { check(snowmint_generator_close(get())); }

 private:
  std::unique_ptr<const snowmint_generator, detail::generator_free> p_;
};

// The pure generator: the caller passes the time. Not thread-safe.
class pure_generator {
 public:
  pure_generator(const layout &l, std::initializer_list<uint64_t> nodes,
                 const snowmint_options *options = nullptr) {
    snowmint_pure_generator *p = nullptr;
    check(snowmint_pure_generator_new(l.get(), nodes.begin(), nodes.size(), options, &p));
    p_.reset(p);
  }
  snowmint_next next(uint64_t now_ms) {
    snowmint_next n;
    check(snowmint_pure_generator_next(p_.get(), now_ms, &n));
    return n;
  }

 private:
  std::unique_ptr<snowmint_pure_generator, detail::pure_free> p_;
};

// Public IDs (NIST FF1 over the layout's bits): mask() gives an ID's public
// ID, unmask() the ID back. Key of 16 (AES-128) or 32 (AES-256) bytes, as
// bytes or (from_hex) as hex text. Immutable: share it between threads.
class id_mask {
 public:
  id_mask(const layout &l, std::string_view key, std::string_view tweak = {}) {
    const snowmint_mask *p = nullptr;
    check(snowmint_mask_new(l.get(), reinterpret_cast<const uint8_t *>(key.data()), key.size(),
                            reinterpret_cast<const uint8_t *>(tweak.data()), tweak.size(), &p));
    p_.reset(p);
  }
  id_mask(const layout &l, const std::vector<uint8_t> &key, const std::vector<uint8_t> &tweak = {}) {
    const snowmint_mask *p = nullptr;
    check(snowmint_mask_new(l.get(), key.data(), key.size(), tweak.data(), tweak.size(), &p));
    p_.reset(p);
  }
  static id_mask from_hex(const layout &l, const char *key_hex, const char *tweak_hex = nullptr) {
    const snowmint_mask *p = nullptr;
    check(snowmint_mask_new_hex(l.get(), key_hex, tweak_hex, &p));
    return id_mask(p);
  }
  const snowmint_mask *get() const noexcept { return p_.get(); }
  uint64_t mask(uint64_t id) const {
    uint64_t out = 0;
    check(snowmint_mask_mask(get(), id, &out));
    return out;
  }
  uint64_t unmask(uint64_t public_id) const {
    uint64_t out = 0;
    check(snowmint_mask_unmask(get(), public_id, &out));
    return out;
  }

 private:
  explicit id_mask(const snowmint_mask *p) : p_(p) {}
  std::unique_ptr<const snowmint_mask, detail::mask_free> p_;
};

inline std::string format_id(uint64_t id, snowmint_format format = SNOWMINT_FORMAT_DECIMAL) {
  char buf[SNOWMINT_ID_STR_SIZE];
  size_t n = 0;
  check(snowmint_format_id(id, format, buf, sizeof buf, &n));
  return std::string(buf, n);
}

inline uint64_t parse_id(std::string_view text, snowmint_format format = SNOWMINT_FORMAT_DECIMAL) {
  uint64_t id = 0;
  check(snowmint_parse_id(text.data(), text.size(), format, &id));
  return id;
}

// Unix milliseconds as ISO-8601 UTC ("2016-04-30T11:18:25.796Z").
inline std::string iso8601(uint64_t ms) {
  char buf[SNOWMINT_ISO8601_SIZE];
  size_t n = 0;
  check(snowmint_iso8601(ms, buf, sizeof buf, &n));
  return std::string(buf, n);
}

}  // namespace snowmint

#endif
