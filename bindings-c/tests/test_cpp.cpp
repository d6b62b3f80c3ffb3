// The header from C++ (extern "C" guards) and the RAII wrapper snowmint.hpp.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdlib.h>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "snowmint.hpp"

static int failures = 0;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      failures++;                                                      \
      std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)

template <class F>
static std::string code_of(F f) {
  try {
    f();
  } catch (const snowmint::error &e) {
    EXPECT(std::strstr(e.what(), e.code()) != nullptr);
    return e.code();
  }
  return "no exception";
}

int main() {
  // The plain C API works from C++.
  const snowmint_layout *raw = nullptr;
  EXPECT(snowmint_layout_preset("discord", &raw) == SNOWMINT_STATUS_OK);
  EXPECT(snowmint_layout_total_bits(raw) == 64);
  snowmint_layout_free(raw);

  auto twitter = snowmint::layout::preset("twitter");
  EXPECT(twitter.total_bits() == 63);
  EXPECT(twitter.node_count() == 2 && twitter.node_name(1) == "worker");
  EXPECT(twitter.to_json().rfind("{\"epoch_ms\":1288834974657", 0) == 0);
  EXPECT(snowmint::iso8601(twitter.time_end_ms()) == "2080-07-10T17:30:30.209Z");
  auto id = twitter.compose(1656432460105ULL, 0, {1, 3});
  auto parts = twitter.decode(id);
  EXPECT(parts.timestamp_ms == 1656432460105ULL && parts.nodes[0] == 1 && parts.nodes[1] == 3);
  auto [lo, hi] = twitter.id_bounds(1656432460105ULL);
  EXPECT(lo <= id && id <= hi);
  EXPECT(snowmint::format_id(1541815603606036480ULL, SNOWMINT_FORMAT_BASE32) == "1ASD13XH1F800");
  EXPECT(snowmint::parse_id("1asd13xh1f800", SNOWMINT_FORMAT_BASE32) == 1541815603606036480ULL);

  // Public IDs: vectors/mask.json's "twitter, AES-128, tweak 'orders'" case, from bytes and hex.
  {
    std::vector<uint8_t> key(16);
    for (size_t i = 0; i < key.size(); i++) key[i] = static_cast<uint8_t>(i);
    snowmint::id_mask m(twitter, key, {'o', 'r', 'd', 'e', 'r', 's'});
    auto h = snowmint::id_mask::from_hex(twitter, "000102030405060708090a0b0c0d0e0f", "6f7264657273");
    uint64_t pub = m.mask(3074457345618258602ULL);
    EXPECT(snowmint::format_id(pub, SNOWMINT_FORMAT_BASE62) == "9fYFas3V3Oz");
    EXPECT(h.mask(3074457345618258602ULL) == pub && m.unmask(pub) == 3074457345618258602ULL);
    EXPECT(code_of([&] { snowmint::id_mask bad(twitter, std::string_view("short")); }) == "invalid_option");
    EXPECT(code_of([&] { m.unmask(UINT64_MAX); }) == "invalid_id");
  }
  // Errors carry the status and the code.
  EXPECT(code_of([] { snowmint::layout::preset("nope"); }) == "unknown_preset");
  EXPECT(code_of([] { snowmint::layout::parse("{\"epoch_ms\":0}"); }) == "invalid_layout");
  EXPECT(code_of([] { snowmint::layout::preset(nullptr); }) == "null_argument");
  EXPECT(code_of([&] { twitter.compose(0, 0, {1, 3}); }) == "time_before_epoch");
  EXPECT(code_of([&] { snowmint::generator g(twitter, {1}); }) == "missing_node");
  EXPECT(code_of([&] { snowmint::generator g(twitter, {1, 32}); }) == "node_out_of_range");
  // A leased generator: datacenter given, worker from a lease on a directory.
  {
    char dir[] = "/tmp/snowmint-cpp-lease-XXXXXX";
    EXPECT(mkdtemp(dir) != nullptr);
    std::string url = std::string("file:") + dir;
    snowmint_options o{};
    o.lease = url.c_str();
    snowmint::generator g(twitter, {1}, &o);
    auto n = g.nodes();
    EXPECT(n.size() == 2 && n[0] == 1 && n[1] < 32);
    EXPECT(g.lease_json().find("\"field\":\"worker\"") != std::string::npos);
    EXPECT(twitter.decode(g.next_id()).nodes[1] == n[1]);
    g.close();
    EXPECT(code_of([&] { g.next_id(); }) == "lease_expired");
    // The failing call's own message: which store and why.
    o.lease = "file:/proc/snowmint-no-such-dir";
    try {
      snowmint::generator bad(twitter, {1}, &o);
      EXPECT(false);
    } catch (const snowmint::error &e) {
      EXPECT(std::string(e.code()) == "lease_unavailable");
      EXPECT(std::strstr(e.what(), "/proc/snowmint-no-such-dir") != nullptr);
    }
    std::filesystem::remove_all(dir);
  }
  EXPECT(code_of([] { snowmint::parse_id("-1"); }) == "invalid_id");
  try {
    snowmint::layout::preset("nope");
  } catch (const snowmint::error &e) {
    EXPECT(e.status() == SNOWMINT_STATUS_UNKNOWN_PRESET);
  }

  // One generator shared by threads.
  snowmint::generator gen(twitter, {1, 3});
  std::vector<std::vector<uint64_t>> per(3);
  std::vector<std::thread> threads;
  for (auto &v : per) {
    threads.emplace_back([&gen, &v] {
      for (int i = 0; i < 20000; i++) v.push_back(gen.next_id());
    });
  }
  for (auto &t : threads) t.join();
  std::set<uint64_t> all;
  for (auto &v : per) {
    EXPECT(std::is_sorted(v.begin(), v.end()));
    all.insert(v.begin(), v.end());
  }
  EXPECT(all.size() == 60000);
  auto batch = gen.next_ids(500);
  EXPECT(batch.size() == 500 && batch.front() > *all.rbegin());

  // The pure generator.
  snowmint_options opts{};
  opts.sequence_start = "zero";
  snowmint::pure_generator pure(twitter, {1, 3}, &opts);
  auto n = pure.next(1656432460105ULL);
  EXPECT(n.kind == SNOWMINT_NEXT_KIND_ID && n.value == id);

  if (failures) {
    std::fprintf(stderr, "test_cpp: %d FAILED\n", failures);
    return 1;
  }
  std::printf("test_cpp: all passed\n");
  return 0;
}
