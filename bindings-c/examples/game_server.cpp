// A game server minting entity IDs from several threads with snowmint.
//
// Layout: timestamp 41 bits of ms | server 12 bits | sequence 10 bits = 63
// bits, so every ID is a positive int64_t / SQL BIGINT. 4096 servers, 1024
// IDs per ms per server (about a million per second), for 69 years from the
// epoch.
//
// The layout suggested in the article this started from, 37 bits of time +
// 20 of server + 16 of sequence, needs 73 bits and does not fit in 64:
// snowmint refuses it with invalid_layout (shown below).
//
// Build: g++ -std=c++17 game_server.cpp $(pkg-config --cflags --libs snowmint) -pthread
// Run:   ./game_server [SERVER_ID]
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "snowmint.hpp"

// Epoch 2024-01-01T00:00:00Z: time bits are not spent on the years before launch.
static const char *GAME_LAYOUT =
    R"({"epoch_ms":1704067200000,"fields":[["timestamp",41],["server",12],["sequence",10]]})";

enum entity_kind { PLAYER, MONSTER, ITEM, PROJECTILE, KINDS };
static const char *KIND_NAMES[KINDS] = {"player", "monster", "item", "projectile"};

int main(int argc, char **argv) {
  uint64_t server = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 7;
  try {
    try {
      snowmint::layout::parse(R"({"epoch_ms":0,"fields":[["timestamp",37],["server",20],["sequence",16]]})");
    } catch (const snowmint::error &e) {
      std::printf("the 37+20+16 layout: %s\n", e.code());
    }

    auto layout = snowmint::layout::parse(GAME_LAYOUT);
    std::printf("layout %s (%u bits)\n", layout.to_json().c_str(), layout.total_bits());
    std::printf("IDs run out at %s; they fit int64_t until %s\n",
                snowmint::iso8601(layout.time_end_ms()).c_str(),
                snowmint::iso8601(layout.i64_end_ms()).c_str());

    // Clock steps back of up to 5 ms are waited out (the default); a burst
    // above 1024 IDs in one ms borrows up to 2 ms ahead instead of waiting.
    snowmint_options options{};
    options.sequence_exhausted = "borrow:2";
    snowmint::generator ids(layout, {server}, &options);

    // Four simulation threads spawn entities; one generator serves them all.
    const int threads = 4, per_thread = 25000;
    std::vector<std::vector<uint64_t>> spawned(threads);
    std::atomic<int> counts[KINDS] = {};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; t++) {
      pool.emplace_back([&, t] {
        for (int i = 0; i < per_thread; i++) {
          spawned[t].push_back(ids.next_id());
          counts[(t + i) % KINDS]++;
        }
      });
    }
    for (auto &t : pool) t.join();

    size_t total = 0;
    for (auto &v : spawned) total += v.size();
    std::printf("server %llu spawned %zu entities:", (unsigned long long)server, total);
    for (int k = 0; k < KINDS; k++) std::printf(" %d %ss", counts[k].load(), KIND_NAMES[k]);
    std::printf("\n");

    uint64_t last = spawned[0].back();
    auto parts = layout.decode(last);
    std::printf("last entity of thread 0: %llu = %s, server %llu, sequence %llu, at %s\n",
                (unsigned long long)last, snowmint::format_id(last, SNOWMINT_FORMAT_BASE32).c_str(),
                (unsigned long long)parts.nodes[0], (unsigned long long)parts.sequence,
                snowmint::iso8601(parts.timestamp_ms).c_str());
    if (parts.nodes[0] != server) return 1;
  } catch (const snowmint::error &e) {
    std::fprintf(stderr, "game_server: %s\n", e.what());
    return 1;
  }
  return 0;
}
