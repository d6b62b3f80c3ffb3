/*
 * Runs every case of every file in vectors/ through the C API and compares
 * exactly. Usage: test_vectors VECTORS_DIR
 *
 * strings.json's `js_numbers` is for the JavaScript bindings (C has no
 * JavaScript numbers) and is the only part skipped.
 */
#include <cJSON.h>

#include "common.h"

static const char *dir;

static cJSON *load(const char *file) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(2);
  }
  text[n] = '\0';
  fclose(f);
  cJSON *json = cJSON_Parse(text);
  free(text);
  if (!json) {
    fprintf(stderr, "%s is not JSON\n", path);
    exit(2);
  }
  return json;
}

static cJSON *get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static const char *str(const cJSON *obj, const char *key) {
  const cJSON *v = get(obj, key);
  if (!cJSON_IsString(v)) {
    fprintf(stderr, "test data: %s is not a string\n", key);
    exit(2);
  }
  return v->valuestring;
}

/* A JSON number (integers up to 2^53 are exact doubles) or decimal string. */
static uint64_t num(const cJSON *v) {
  if (cJSON_IsString(v)) return dec(v->valuestring);
  if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 9007199254740992.0) {
    fprintf(stderr, "test data: not an exact number\n");
    exit(2);
  }
  return (uint64_t)v->valuedouble;
}

static uint64_t num_of(const cJSON *obj, const char *key) { return num(get(obj, key)); }

/* Reads a layout as every binding does; NULL (and the status) on error. */
static const snowmint_layout *layout_of(const char *text, snowmint_status *st) {
  const snowmint_layout *l = NULL;
  *st = snowmint_layout_parse(text, strlen(text), &l);
  return l;
}

static const char *kind_name(snowmint_field_kind k) {
  switch (k) {
    case SNOWMINT_FIELD_KIND_TIMESTAMP: return "timestamp";
    case SNOWMINT_FIELD_KIND_SEQUENCE: return "sequence";
    case SNOWMINT_FIELD_KIND_NODE: return "node";
  }
  return "?";
}

static void layouts(void) {
  cJSON *root = load("layouts.json");
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, get(root, "cases")) {
    n++;
    const char *name = str(c, "name");
    snowmint_status st;
    const snowmint_layout *l = layout_of(str(c, "layout"), &st);
    if (st == SNOWMINT_STATUS_OK && get(c, "now_ms")) st = snowmint_layout_check_epoch(l, num_of(c, "now_ms"));
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "layouts: %s", name);
      snowmint_layout_free(l);
      continue;
    }
    CHECK_OK(st, "layouts: %s", name);
    if (st != SNOWMINT_STATUS_OK) continue;
    const cJSON *e = get(c, "expect");
    char json[SNOWMINT_LAYOUT_JSON_SIZE];
    size_t written = 0;
    CHECK_OK(snowmint_layout_to_json(l, json, sizeof json, &written), "%s", name);
    CHECK(strcmp(json, str(e, "json")) == 0 && written == strlen(json), "%s: json %s", name, json);
    /* The canonical descriptor reads back to the same layout. */
    const snowmint_layout *back = NULL;
    CHECK_OK(snowmint_layout_from_json(json, written, &back), "%s: read back", name);
    CHECK(snowmint_layout_equal(l, back), "%s: read back differs", name);
    snowmint_layout_free(back);
    CHECK(snowmint_layout_epoch_ms(l) == num_of(e, "epoch_ms"), "%s", name);
    CHECK(snowmint_layout_time_unit_ms(l) == num_of(e, "time_unit_ms"), "%s", name);
    CHECK(snowmint_layout_total_bits(l) == num_of(e, "total_bits"), "%s", name);
    CHECK(snowmint_layout_max_id(l) == num_of(e, "max_id"), "%s", name);
    CHECK(snowmint_layout_time_end_ms(l) == num_of(e, "time_end_ms"), "%s", name);
    CHECK(snowmint_layout_i64_end_ms(l) == num_of(e, "i64_end_ms"), "%s", name);
    CHECK(snowmint_layout_js_safe_end_ms(l) == num_of(e, "js_safe_end_ms"), "%s", name);
    const cJSON *fields = get(e, "fields");
    CHECK(snowmint_layout_field_count(l) == (size_t)cJSON_GetArraySize(fields), "%s: field count", name);
    size_t i = 0, node = 0;
    const cJSON *f;
    cJSON_ArrayForEach(f, fields) {
      snowmint_field field;
      CHECK_OK(snowmint_layout_field(l, i, &field), "%s: field %zu", name, i);
      CHECK(strcmp(field.name, str(f, "name")) == 0, "%s: field %zu name %s", name, i, field.name);
      CHECK(field.bits == num_of(f, "bits"), "%s: field %zu bits", name, i);
      CHECK(field.shift == num_of(f, "shift"), "%s: field %zu shift", name, i);
      CHECK(strcmp(kind_name(field.kind), str(f, "kind")) == 0, "%s: field %zu kind", name, i);
      if (field.kind == SNOWMINT_FIELD_KIND_NODE) {
        const char *node_name = NULL;
        size_t index = 99;
        CHECK_OK(snowmint_layout_node_name(l, node, &node_name), "%s", name);
        CHECK(node_name && strcmp(node_name, field.name) == 0, "%s: node %zu", name, node);
        CHECK_OK(snowmint_layout_node_index(l, field.name, &index), "%s", name);
        CHECK(index == node, "%s: node index of %s", name, field.name);
        node++;
      }
      i++;
    }
    CHECK(snowmint_layout_node_count(l) == node, "%s: node count", name);
    const char *preset = snowmint_layout_preset_name(l);
    const cJSON *want = get(e, "preset_name");
    if (cJSON_IsNull(want)) {
      CHECK(preset == NULL, "%s: preset_name %s", name, preset);
    } else {
      CHECK(preset && strcmp(preset, want->valuestring) == 0, "%s: preset_name", name);
    }
    snowmint_layout_free(l);
  }
  printf("layouts.json: %d cases\n", n);
  cJSON_Delete(root);
}

/* Node values by name from a JSON object, as parallel arrays. */
typedef struct {
  const char *names[16];
  uint64_t values[16];
  size_t count;
} named_nodes;

static named_nodes nodes_of(const cJSON *obj) {
  named_nodes n = {{0}, {0}, 0};
  const cJSON *v;
  cJSON_ArrayForEach(v, obj) {
    if (n.count == 16) break;
    n.names[n.count] = v->string;
    n.values[n.count] = num(v);
    n.count++;
  }
  return n;
}

static void decode_cases(const cJSON *cases) {
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, cases) {
    n++;
    const char *lt = str(c, "layout"), *id_s = str(c, "id");
    snowmint_status st;
    const snowmint_layout *l = layout_of(lt, &st);
    CHECK_OK(st, "decode: layout %s", lt);
    if (!l) continue;
    uint64_t id = dec(id_s);
    snowmint_parts p;
    st = snowmint_decode(l, id, &p);
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "decode %s %s", lt, id_s);
    } else {
      const cJSON *e = get(c, "expect");
      CHECK_OK(st, "decode %s %s", lt, id_s);
      CHECK(p.id == id, "decode %s %s: id", lt, id_s);
      CHECK(p.timestamp_ms == num_of(e, "timestamp_ms"), "decode %s %s: timestamp_ms %" PRIu64, lt, id_s, p.timestamp_ms);
      CHECK(p.sequence == num_of(e, "sequence"), "decode %s %s: sequence", lt, id_s);
      named_nodes want = nodes_of(get(e, "nodes"));
      CHECK(p.node_count == want.count, "decode %s %s: node count", lt, id_s);
      for (size_t i = 0; i < want.count; i++) {
        size_t index = 99;
        CHECK_OK(snowmint_layout_node_index(l, want.names[i], &index), "decode: %s", want.names[i]);
        CHECK(index < p.node_count && p.nodes[index] == want.values[i], "decode %s %s: node %s", lt, id_s, want.names[i]);
      }
      char b32[SNOWMINT_ID_STR_SIZE];
      size_t w = 0;
      CHECK_OK(snowmint_format_id(id, SNOWMINT_FORMAT_BASE32, b32, sizeof b32, &w), "decode base32");
      CHECK(strcmp(b32, str(e, "base32")) == 0, "decode %s %s: base32 %s", lt, id_s, b32);
      uint64_t lo = 0, hi = 0;
      CHECK_OK(snowmint_id_bounds(l, p.timestamp_ms, &lo, &hi), "decode bounds");
      const cJSON *b = get(e, "bounds");
      CHECK(lo == num(cJSON_GetArrayItem(b, 0)) && hi == num(cJSON_GetArrayItem(b, 1)), "decode %s %s: bounds", lt, id_s);
      /* Composing the parts gives the ID back. */
      uint64_t again = 0;
      CHECK_OK(snowmint_compose(l, p.timestamp_ms, p.sequence, p.nodes, p.node_count, &again), "recompose");
      CHECK(again == id, "decode %s %s: recompose %" PRIu64, lt, id_s, again);
    }
    snowmint_layout_free(l);
  }
  printf("ids.json decode: %d cases\n", n);
}

static void compose_cases(const cJSON *cases) {
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, cases) {
    n++;
    const char *lt = str(c, "layout");
    snowmint_status st;
    const snowmint_layout *l = layout_of(lt, &st);
    CHECK_OK(st, "compose: layout %s", lt);
    if (!l) continue;
    uint64_t ms = num_of(c, "timestamp_ms"), seq = num_of(c, "sequence");
    named_nodes nn = nodes_of(get(c, "nodes"));
    uint64_t id = 0;
    st = snowmint_compose_by_name(l, ms, seq, nn.names, nn.values, nn.count, &id);
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "compose %s %" PRIu64 " seq %" PRIu64, lt, ms, seq);
    } else {
      CHECK_OK(st, "compose %s %" PRIu64, lt, ms);
      CHECK(id == dec(str(c, "expect")), "compose %s %" PRIu64 ": %" PRIu64, lt, ms, id);
      /* The same through node values in node-field order. */
      uint64_t values[SNOWMINT_MAX_NODES] = {0};
      for (size_t i = 0; i < nn.count; i++) {
        size_t index = 0;
        CHECK_OK(snowmint_layout_node_index(l, nn.names[i], &index), "compose: %s", nn.names[i]);
        if (index < SNOWMINT_MAX_NODES) values[index] = nn.values[i];
      }
      uint64_t id2 = 0;
      CHECK_OK(snowmint_compose(l, ms, seq, values, nn.count, &id2), "compose by value");
      CHECK(id2 == id, "compose by value %s", lt);
    }
    snowmint_layout_free(l);
  }
  printf("ids.json compose: %d cases\n", n);
}

static void bounds_cases(const cJSON *cases) {
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, cases) {
    n++;
    const char *lt = str(c, "layout");
    snowmint_status st;
    const snowmint_layout *l = layout_of(lt, &st);
    CHECK_OK(st, "bounds: layout %s", lt);
    if (!l) continue;
    uint64_t ms = num_of(c, "timestamp_ms"), lo = 1, hi = 2;
    st = snowmint_id_bounds(l, ms, &lo, &hi);
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "bounds %s %" PRIu64, lt, ms);
      CHECK(lo == 1 && hi == 2, "bounds: outputs written on error");
    } else {
      const cJSON *e = get(c, "expect");
      CHECK_OK(st, "bounds %s %" PRIu64, lt, ms);
      CHECK(lo == num(cJSON_GetArrayItem(e, 0)) && hi == num(cJSON_GetArrayItem(e, 1)), "bounds %s %" PRIu64, lt, ms);
    }
    snowmint_layout_free(l);
  }
  printf("ids.json bounds: %d cases\n", n);
}

static void fits_cases(const cJSON *cases) {
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, cases) {
    n++;
    uint64_t id = dec(str(c, "id")), now = num_of(c, "now_ms");
    const cJSON *want = cJSON_GetArrayItem(get(c, "expect"), 0);
    for (size_t i = 0; i < snowmint_preset_count(); i++) {
      const snowmint_layout *l = NULL;
      CHECK_OK(snowmint_layout_preset(snowmint_preset_name(i), &l), "preset %zu", i);
      if (snowmint_is_plausible(l, id, now)) {
        CHECK(want && strcmp(want->valuestring, snowmint_preset_name(i)) == 0, "fits %" PRIu64 ": unexpected %s", id, snowmint_preset_name(i));
        if (want) want = want->next;
      }
      snowmint_layout_free(l);
    }
    CHECK(want == NULL, "fits %" PRIu64 ": %s missing", id, want ? want->valuestring : "");
  }
  printf("ids.json fits: %d cases\n", n);
}

static void ids(void) {
  cJSON *root = load("ids.json");
  decode_cases(get(root, "decode"));
  compose_cases(get(root, "compose"));
  bounds_cases(get(root, "bounds"));
  fits_cases(get(root, "fits"));
  cJSON_Delete(root);
}

static void strings(void) {
  cJSON *root = load("strings.json");
  const cJSON *c;
  int n = 0;
  static const char *const names[] = {"decimal", "base32", "base62"};
  cJSON_ArrayForEach(c, get(root, "encode")) {
    n++;
    uint64_t id = dec(str(c, "id"));
    for (int i = 0; i < 3; i++) {
      snowmint_format fmt;
      CHECK_OK(snowmint_format_from_name(names[i], &fmt), "%s", names[i]);
      char buf[SNOWMINT_ID_STR_SIZE];
      size_t w = 0;
      CHECK_OK(snowmint_format_id(id, fmt, buf, sizeof buf, &w), "encode");
      CHECK(strcmp(buf, str(c, names[i])) == 0 && w == strlen(buf), "encode %" PRIu64 " %s: %s", id, names[i], buf);
      /* Exactly the right size works; one byte less does not. */
      char tight[SNOWMINT_ID_STR_SIZE];
      CHECK_OK(snowmint_format_id(id, fmt, tight, w + 1, &w), "tight buffer");
      CHECK_CODE(snowmint_format_id(id, fmt, tight, w, &w), "buffer_too_small", "short buffer");
      uint64_t back = 0;
      CHECK_OK(snowmint_parse_id(buf, w, fmt, &back), "parse back");
      CHECK(back == id, "round trip %s", buf);
    }
  }
  cJSON_ArrayForEach(c, get(root, "parse")) {
    n++;
    const char *input = str(c, "input"), *fname = str(c, "format");
    snowmint_format fmt;
    snowmint_status st = snowmint_format_from_name(fname, &fmt);
    uint64_t id = 7;
    if (st == SNOWMINT_STATUS_OK) st = snowmint_parse_id(input, strlen(input), fmt, &id);
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "parse %s '%s'", fname, input);
      CHECK(id == 7, "parse: output written on error");
    } else {
      CHECK_OK(st, "parse %s '%s'", fname, input);
      CHECK(id == dec(str(c, "expect")), "parse %s '%s'", fname, input);
    }
  }
  printf("strings.json: %d cases (js_numbers is for JavaScript only)\n", n);
  cJSON_Delete(root);
}

static void generate(void) {
  cJSON *root = load("generate.json");
  const cJSON *c;
  int n = 0, steps = 0;
  cJSON_ArrayForEach(c, get(root, "cases")) {
    n++;
    const char *name = str(c, "name");
    snowmint_status st;
    const snowmint_layout *l = layout_of(str(c, "layout"), &st);
    CHECK_OK(st, "generate %s: layout", name);
    if (!l) continue;
    const cJSON *o = get(c, "options");
    snowmint_options opts = {0};
    const cJSON *v;
    if ((v = get(o, "clock_backwards"))) opts.clock_backwards = v->valuestring;
    if ((v = get(o, "sequence_exhausted"))) opts.sequence_exhausted = v->valuestring;
    if ((v = get(o, "sequence_start"))) opts.sequence_start = v->valuestring;
    if ((v = get(o, "seed"))) opts.seed = num(v);
    if ((v = get(o, "resume_after"))) {
      opts.has_resume_after = true;
      opts.resume_after = num(v);
    }
    named_nodes nn = nodes_of(get(c, "nodes"));
    snowmint_pure_generator *g = NULL;
    st = snowmint_pure_generator_new_by_name(l, nn.names, nn.values, nn.count, &opts, &g);
    snowmint_layout_free(l);
    if (get(c, "error")) {
      CHECK_CODE(st, str(c, "error"), "generate %s", name);
      CHECK(g == NULL, "generate %s: output written on error", name);
      continue;
    }
    CHECK_OK(st, "generate %s", name);
    if (!g) continue;
    const cJSON *s;
    int k = 0;
    cJSON_ArrayForEach(s, get(c, "steps")) {
      steps++;
      const cJSON *reserve = cJSON_GetObjectItemCaseSensitive(s, "reserve_until_ms");
      if (reserve) {
        int has = !cJSON_IsNull(reserve);
        CHECK_OK(snowmint_pure_generator_reserve_until(g, has, has ? num(reserve) : 0),
                 "generate %s step %d: reserve", name, k);
        k++;
        continue;
      }
      uint64_t now = num_of(s, "now_ms");
      snowmint_next next = {SNOWMINT_NEXT_KIND_ID, 0};
      st = snowmint_pure_generator_next(g, now, &next);
      if (get(s, "error")) {
        CHECK_CODE(st, str(s, "error"), "generate %s step %d", name, k);
      } else if (get(s, "retry_at")) {
        CHECK_OK(st, "generate %s step %d", name, k);
        CHECK(next.kind == SNOWMINT_NEXT_KIND_RETRY_AT && next.value == num_of(s, "retry_at"),
              "generate %s step %d: kind %d value %" PRIu64, name, k, (int)next.kind, next.value);
      } else {
        CHECK_OK(st, "generate %s step %d", name, k);
        CHECK(next.kind == SNOWMINT_NEXT_KIND_ID && next.value == dec(str(s, "id")),
              "generate %s step %d: kind %d value %" PRIu64, name, k, (int)next.kind, next.value);
      }
      k++;
    }
    snowmint_pure_generator_free(g);
  }
  printf("generate.json: %d cases, %d steps\n", n, steps);
  cJSON_Delete(root);
}

static void codes(void) {
  cJSON *root = load("codes.json");
  const cJSON *c;
  int n = 0;
  cJSON_ArrayForEach(c, get(root, "codes")) {
    n++;
    int found = -1;
    for (int s = 0; s < 1000; s++) {
      if (strcmp(snowmint_status_code(s), c->valuestring) == 0) {
        CHECK(found < 0, "code %s has two statuses", c->valuestring);
        found = s;
      }
    }
    CHECK(found >= 1 && found < 100, "code %s has no core status (%d)", c->valuestring, found);
    if (found >= 0) {
      CHECK(strcmp(snowmint_status_str(found), "unknown status") != 0, "code %s has no message", c->valuestring);
    }
  }
  printf("codes.json: %d codes\n", n);
  cJSON_Delete(root);
}

/* Hex to bytes (independent of the library's hex reader); returns the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
  size_t n = strlen(hex) / 2;
  if (n > cap) {
    fprintf(stderr, "test data: hex too long\n");
    exit(2);
  }
  for (size_t i = 0; i < n; i++) {
    unsigned int b = 0;
    if (sscanf(hex + 2 * i, "%2x", &b) != 1) {
      fprintf(stderr, "test data: bad hex %s\n", hex);
      exit(2);
    }
    out[i] = (uint8_t)b;
  }
  return n;
}

/* mask.json: every pair through a mask made from bytes and one made from hex,
 * and every error case. */
static void masks(void) {
  cJSON *root = load("mask.json");
  const cJSON *c;
  cJSON_ArrayForEach(c, get(root, "cases")) {
    const char *name = str(c, "name");
    snowmint_status st;
    const snowmint_layout *l = layout_of(str(c, "layout"), &st);
    CHECK_OK(st, "%s: layout", name);
    uint8_t key[64], tweak[64];
    size_t key_len = unhex(str(c, "key"), key, sizeof key);
    size_t tweak_len = unhex(str(c, "tweak"), tweak, sizeof tweak);
    const snowmint_mask *m[2] = {NULL, NULL};
    CHECK_OK(snowmint_mask_new(l, key, key_len, tweak_len ? tweak : NULL, tweak_len, &m[0]), "%s: new", name);
    CHECK_OK(snowmint_mask_new_hex(l, str(c, "key"), str(c, "tweak"), &m[1]), "%s: new_hex", name);
    snowmint_layout_free(l);
    const cJSON *p;
    cJSON_ArrayForEach(p, get(c, "pairs")) {
      uint64_t id = num_of(p, "id"), pub = num_of(p, "public");
      for (int k = 0; k < 2; k++) {
        uint64_t got = 0, back = 0;
        CHECK_OK(snowmint_mask_mask(m[k], id, &got), "%s: mask %" PRIu64, name, id);
        CHECK(got == pub, "%s: mask %" PRIu64 " = %" PRIu64, name, id, got);
        CHECK_OK(snowmint_mask_unmask(m[k], pub, &back), "%s: unmask", name);
        CHECK(back == id, "%s: unmask %" PRIu64 " = %" PRIu64, name, pub, back);
      }
      char buf[SNOWMINT_ID_STR_SIZE];
      size_t n = 0;
      CHECK_OK(snowmint_format_id(pub, SNOWMINT_FORMAT_BASE32, buf, sizeof buf, &n), "%s: base32", name);
      CHECK(strcmp(buf, str(p, "base32")) == 0, "%s: base32 %s", name, buf);
      CHECK_OK(snowmint_format_id(pub, SNOWMINT_FORMAT_BASE62, buf, sizeof buf, &n), "%s: base62", name);
      CHECK(strcmp(buf, str(p, "base62")) == 0, "%s: base62 %s", name, buf);
    }
    snowmint_mask_free(m[0]);
    snowmint_mask_free(m[1]);
  }
  cJSON_ArrayForEach(c, get(root, "errors")) {
    const char *name = str(c, "name"), *op = str(c, "op"), *code = str(c, "error");
    snowmint_status st;
    const snowmint_layout *l = layout_of(str(c, "layout"), &st);
    CHECK_OK(st, "%s: layout", name);
    uint8_t key[64], tweak[64];
    size_t key_len = unhex(str(c, "key"), key, sizeof key);
    size_t tweak_len = unhex(str(c, "tweak"), tweak, sizeof tweak);
    const snowmint_mask *m = NULL;
    st = snowmint_mask_new(l, key, key_len, tweak, tweak_len, &m);
    if (strcmp(op, "new") == 0) {
      CHECK_CODE(st, code, "%s", name);
      CHECK(m == NULL, "%s: no mask written", name);
      CHECK_CODE(snowmint_mask_new_hex(l, str(c, "key"), str(c, "tweak"), &m), code, "%s (hex)", name);
    } else {
      CHECK_OK(st, "%s: new", name);
      uint64_t out = 12345;
      uint64_t v = num_of(c, "value");
      st = strcmp(op, "mask") == 0 ? snowmint_mask_mask(m, v, &out) : snowmint_mask_unmask(m, v, &out);
      CHECK_CODE(st, code, "%s", name);
      CHECK(out == 12345, "%s: output untouched", name);
    }
    snowmint_mask_free(m);
    snowmint_layout_free(l);
  }
  cJSON_Delete(root);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  layouts();
  ids();
  strings();
  generate();
  codes();
  masks();
  return finish("test_vectors");
}
