//! The Lua scripts of the Redis store. Each runs atomically on the server and
//! reads the clock (`TIME`) and the server's identity (`INFO`) itself, so
//! nothing a client passes in can be stale.

/// Shared head of the scripts: the server's clock in ms (`now`), numbers
/// written as integers (a Lua number would become `1.7e+12`-style text), a
/// slot's record, the server's identity and its eviction policy.
pub(super) const PRELUDE: &str = r"
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function int(n) return string.format('%.0f', n) end
-- A slot's record: nil (bad), {used=false} (no record), or its fields.
-- `epoch` is the marker epoch it was claimed under ('' if it has none).
local function read(key)
  local h = redis.pcall('HMGET', key, 'token', 'counter', 'expires_ms', 'hwm_ms', 'epoch')
  if h.err then return nil, h.err end
  if not h[1] and not h[2] and not h[3] and not h[4] then
    return {used = false, token = '', counter = 0, expires = 0, hwm = 0, epoch = ''}
  end
  local counter, expires, hwm = tonumber(h[2]), tonumber(h[3]), tonumber(h[4])
  if type(h[1]) ~= 'string' or not counter or not expires or not hwm then
    return nil, 'fields token, counter, expires_ms, hwm_ms expected'
  end
  return {used = true, token = h[1], counter = counter, expires = expires, hwm = hwm,
    epoch = h[5] or ''}
end
-- The server's identity: its run_id (new at every start) and replication ID
-- (new when a replica is promoted). nil if INFO does not show them.
local function identity()
  local run = string.match(redis.call('INFO', 'server'), 'run_id:(%x+)')
  local repl = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
  if not run or not repl then return nil end
  return run .. '/' .. repl
end
-- Whether a holder whose record `r` (KEYS[1]) matched its token may still
-- act on it: the space's marker (KEYS[2]) must exist, name this server and
-- carry the epoch the record was claimed under. Else the store lost data
-- since that claim, and the record may be a copy from before a successor's
-- claim (a rollback brings back old records, tokens and counters included).
-- Also returns the marker's fence settings (see `differs`).
local function current(r)
  local m = redis.pcall('HMGET', KEYS[2], 'server', 'epoch', 'max_window_ms', 'max_skew_ms',
    'latency_ms')
  if m.err or not m[1] or not m[2] or m[2] == '' then return false end
  return m[1] == identity() and m[2] == r.epoch, {m[3], m[4], m[5]}
end
-- The fence's settings as recorded (`rec`: max_window_ms, max_skew_ms,
-- latency_ms, as strings; nil if absent) against this caller's (`own`,
-- numbers): the refusal {'settings', recorded..., own...} if any differs,
-- else nil. Every holder of a space must count the fence alike.
local function differs(rec, own)
  for i = 1, 3 do
    if tonumber(rec[i]) ~= own[i] then
      return {'settings', rec[1] or '', rec[2] or '', rec[3] or '',
        int(own[1]), int(own[2]), int(own[3])}
    end
  end
  return nil
end
-- Whether the recorded settings `rec` are all present.
local function complete(rec)
  return tonumber(rec[1]) and tonumber(rec[2]) and tonumber(rec[3])
end
-- Whether they are all present and each at least `own`'s: a fence counted
-- with them covers holders with `own`.
local function covers(rec, own)
  for i = 1, 3 do
    local v = tonumber(rec[i])
    if not v or v < own[i] then return false end
  end
  return true
end
-- The fence's span for settings {max_window_ms, max_skew_ms, latency_ms}.
local function span_of(set)
  return set[1] + 2 * set[2] + set[3]
end
-- The eviction policy if it may evict keys without a TTL (ours), else nil.
-- Whether store time + window is above the caller's bound (an empty bound:
-- none). Checked before any write, so a refusal writes nothing.
local function too_far(window, bound)
  local b = tonumber(bound)
  return b and now + window > b
end
local function evicting()
  local p = string.match(redis.call('INFO', 'memory'), 'maxmemory_policy:([%w%-]+)')
  if not p then return 'unknown' end
  if string.sub(p, 1, 8) == 'allkeys-' then return p end
  return nil
end
";

/// KEYS[1]: the space's key prefix, KEYS[2]: the store's init key. ARGV:
/// text, slots, prefer (-1: none), ttl_ms, window_ms, token, max_window_ms,
/// skew_ms, allow_eviction ('1'/'0'), max_hwm ('' or absent: no bound),
/// latency_ms, min_now ('' or absent: no bound).
/// Returns {'claimed', slot, counter, prev_hwm, hwm, expires, fence, why}
/// (why: '' when prev_hwm is the record's own, else what raised it to the
/// fence: 'forgot' (no marker, or none of this version: a new, restarted or
/// emptied server) or 'changed' (the marker names another server)),
/// {'full'}, {'badspace', why}, {'badrecord', slot, why}, {'window', max},
/// {'eviction', policy}, {'noidentity'}, {'settings', the marker's
/// max_window_ms, max_skew_ms, latency_ms, then this claim's},
/// {'toofar', now + window_ms, now, max_hwm} or {'tooearly', now, min_now}
/// (nothing written).
///
/// The fence: a holder issues no time unit past its limit,
/// `sent + window_ms + skew_ms + latency_ms` by its own clock, `sent` being
/// its clock when it SENT the call that confirmed the reservation
/// (decide::limit; latency_ms is 0 in this version: limits count from the
/// send time, so neither a slow reply nor what the old server's clock
/// confirmed adds anything). That call was sent before the loss, so before
/// this claim; with the holder's clock within skew_ms of this server's,
/// `sent` <= now + skew_ms, so every limit is at most now + window_ms +
/// 2 * skew_ms + latency_ms: the fence this claim writes (with
/// max_window_ms >= window_ms). Two conditions, both checked: every holder
/// counts with the same settings (the marker records them; a claim or
/// renewal whose settings differ is refused: a holder with a larger
/// skew_ms would reach past a fence counted with a smaller one), and this
/// server's clock is not more than skew_ms behind the claimer's. The skew
/// check read the clock in an earlier call, maybe on another server (a name
/// or address that moved in between): min_now, the claimer's clock when it
/// sent the claim minus skew_ms, is checked here, in the step that reads
/// the clock and writes the fence.
///
/// The marker names the server that wrote the space's records since the
/// last fence; if it is missing, has no epoch, records not all of the
/// settings (written by an older version: what its holders counted is
/// unknown) or names another server (a wipe, a restart, a failover: records
/// may be older than what holders were confirmed), the claim writes a new
/// fence, with the larger of each setting, its own or the marker's, and
/// every slot's `hwm` counts as at least the fence. It also writes a new
/// epoch (this server and the claim's random token): records claimed before
/// carry another, so their holders' renewals and releases answer lost
/// (RENEW, RELEASE).
pub(super) const CLAIM: &str = r"
local base = KEYS[1]
local text, slots, prefer = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local ttl, window, token = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6]
local maxw, skew, allow = tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[9] == '1'
local own = {maxw, skew, tonumber(ARGV[11]) or 0}
if window > maxw then return {'window', int(maxw)} end
if too_far(window, ARGV[10]) then
  return {'toofar', int(now + window), int(now), int(tonumber(ARGV[10]))}
end
local low = tonumber(ARGV[12])
if low and now < low then return {'tooearly', int(now), int(low)} end
local server = identity()
if not server then return {'noidentity'} end
if not allow then
  local p = evicting()
  if p then return {'eviction', p} end
end
local stored = redis.pcall('GET', base .. ':space')
if type(stored) == 'table' then return {'badspace', stored.err or 'not a string'} end
if stored and stored ~= text then
  return {'badspace', 'another slot space is stored under its key'}
end
local m = redis.pcall('HMGET', base .. ':marker', 'server', 'fence_ms', 'max_window_ms', 'epoch',
  'cause', 'max_skew_ms', 'latency_ms')
if m.err then return {'badspace', 'marker: ' .. m.err} end
local rec = {m[3], m[6], m[7]}
local fence, epoch, cause
if m[1] == server and m[4] and m[4] ~= '' and complete(rec) then
  fence, epoch, cause = tonumber(m[2]), m[4], m[5] or 'forgot'
  if not fence then return {'badspace', 'marker: fence_ms expected'} end
  local d = differs(rec, own)
  if d then return d end
else
  -- Holders of the lost records may have used the marker's (larger)
  -- settings.
  local set = {}
  for k = 1, 3 do set[k] = math.max(own[k], tonumber(rec[k]) or 0) end
  fence = now + span_of(set)
  -- New at every marker write (the token is random), so no record written
  -- before this one carries it.
  epoch = server .. '/' .. token
  cause = 'forgot'
  if m[1] and m[1] ~= server then cause = 'changed' end
  if not m[1] and not stored and not allow then
    -- A space never claimed on a server `lease init` vouched for since
    -- (same identity, so no restart or failover; a wipe removes the init
    -- key too): no records to lose, the init's own fence is enough.
    -- Trusted only if counted with settings that cover this claim's (an
    -- init key of an older version records none: not trusted).
    local i = redis.pcall('HMGET', KEYS[2], 'server', 'fence_ms', 'max_window_ms',
      'max_skew_ms', 'latency_ms')
    if not i.err and i[1] == server and tonumber(i[2]) and covers({i[3], i[4], i[5]}, own) then
      fence = tonumber(i[2])
      if fence <= now then fence = 0 end
    end
  end
  redis.call('HSET', base .. ':marker', 'server', server, 'fence_ms', int(fence),
    'max_window_ms', int(maxw), 'max_skew_ms', int(skew), 'latency_ms', int(own[3]),
    'epoch', epoch, 'cause', cause)
end
if not stored then redis.call('SET', base .. ':space', text) end
-- A slot's hwm as this claim counts it: never below the fence; with
-- evictions allowed, a missing record may be an evicted one: fenced anew.
local function hwm_of(r)
  if allow and not r.used then return math.max(fence, now + span_of(own)) end
  return math.max(r.hwm, fence)
end
local pick, rec
local function free(r) return r.token == '' or r.expires <= now end
if prefer >= 0 and prefer < slots then
  local r, why = read(base .. ':slot:' .. prefer)
  if not r then return {'badrecord', int(prefer), why} end
  if free(r) then pick, rec = prefer, r end
end
if not pick then
  -- In order, the first free slot whose hwm is behind the clock; else the
  -- free slot with the lowest hwm.
  local ahead, ahead_hwm, ahead_rec
  for i = 0, slots - 1 do
    local r, why = read(base .. ':slot:' .. i)
    if not r then return {'badrecord', int(i), why} end
    if free(r) then
      local h = hwm_of(r)
      if h <= now then pick, rec = i, r; break end
      if not ahead or h < ahead_hwm then ahead, ahead_hwm, ahead_rec = i, h, r end
    end
  end
  if not pick and ahead then pick, rec = ahead, ahead_rec end
end
if not pick then return {'full'} end
local prev = hwm_of(rec)
local counter = rec.counter + 1
local expires = now + ttl
local hwm = math.max(prev, now + window)
redis.call('HSET', base .. ':slot:' .. pick, 'token', token, 'counter', int(counter),
  'expires_ms', int(expires), 'hwm_ms', int(hwm), 'epoch', epoch)
local why = ''
if rec.hwm < prev then why = cause end
return {'claimed', int(pick), int(counter), int(prev), int(hwm), int(expires), int(fence), why}
";

/// KEYS[1]: the slot's hash, KEYS[2]: the space's marker. ARGV: token,
/// counter, ttl_ms, window_ms, max_window_ms, max_hwm, skew_ms, latency_ms
/// (as CLAIM's). Returns {'ok', hwm, expires}, {'lost', counter}, {'lost',
/// counter, 'epoch'} (the store lost data since the claim), {'window', max},
/// {'settings', ...}, {'toofar', ...} (as CLAIM's) or {'badrecord', why}.
pub(super) const RENEW: &str = r"
if tonumber(ARGV[4]) > tonumber(ARGV[5]) then return {'window', ARGV[5]} end
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if r.token ~= ARGV[1] or r.counter ~= tonumber(ARGV[2]) then
  return {'lost', int(r.counter)}
end
local ok, rec = current(r)
if not ok then return {'lost', int(r.counter), 'epoch'} end
local d = differs(rec, {tonumber(ARGV[5]), tonumber(ARGV[7]), tonumber(ARGV[8]) or 0})
if d then return d end
if too_far(tonumber(ARGV[4]), ARGV[6]) then
  return {'toofar', int(now + tonumber(ARGV[4])), int(now), int(tonumber(ARGV[6]))}
end
local expires = now + tonumber(ARGV[3])
local hwm = math.max(r.hwm, now + tonumber(ARGV[4]))
redis.call('HSET', KEYS[1], 'expires_ms', int(expires), 'hwm_ms', int(hwm))
return {'ok', int(hwm), int(expires)}
";

/// KEYS[1]: the slot's hash, KEYS[2]: the space's marker. ARGV: token,
/// counter, last_ms. Returns {'ok'}, {'lost', counter}, {'lost', counter,
/// 'epoch'} (as RENEW; the record is left as it is: claims fence it) or
/// {'badrecord', why}.
pub(super) const RELEASE: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if r.token ~= ARGV[1] or r.counter ~= tonumber(ARGV[2]) then
  return {'lost', int(r.counter)}
end
if not current(r) then return {'lost', int(r.counter), 'epoch'} end
redis.call('HSET', KEYS[1], 'token', '', 'expires_ms', int(now), 'hwm_ms', ARGV[3])
return {'ok'}
";

/// KEYS[1]: the slot's hash. ARGV: force ('1' or '0'). Frees the slot if it
/// is expired, or held and `force`; keeps `hwm`. Returns {'free'},
/// {'held'|'expired', counter, expires, hwm, token, done ('1': freed)} or
/// {'badrecord', why}.
pub(super) const RELEASE_SLOT: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if not r.used or r.token == '' then return {'free'} end
local state = 'held'
if r.expires <= now then state = 'expired' end
if state == 'held' and ARGV[1] ~= '1' then
  return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '0'}
end
redis.call('HSET', KEYS[1], 'token', '', 'expires_ms', int(now))
return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '1'}
";

/// KEYS[1]: the store's init key. ARGV: max_window_ms, skew_ms, latency_ms
/// (as CLAIM's), allow_eviction. Vouches for the spaces not yet claimed on
/// this server: keeps the key if it names this server and records settings
/// that cover these (each at least as large), else writes it with a fence
/// at now plus the span of the settings (as CLAIM's fence: a wipe just
/// before may have left live holders, whose limits end before it) and
/// records them. A key of this server counted with smaller settings (or
/// none: an older version) keeps its fence if later and records the larger
/// of each, so it vouches for holders of either. Returns {'kept', fence,
/// now}, {'new', fence, now}, {'eviction', policy} or {'noidentity'}.
pub(super) const INIT: &str = r"
local server = identity()
if not server then return {'noidentity'} end
if ARGV[4] ~= '1' then
  local p = evicting()
  if p then return {'eviction', p} end
end
local own = {tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])}
local i = redis.call('HMGET', KEYS[1], 'server', 'fence_ms', 'max_window_ms', 'max_skew_ms',
  'latency_ms')
local rec = {i[3], i[4], i[5]}
local mine = i[1] == server and tonumber(i[2])
if mine and covers(rec, own) then return {'kept', i[2], int(now)} end
local set = own
if mine then
  set = {}
  for k = 1, 3 do set[k] = math.max(own[k], tonumber(rec[k]) or 0) end
end
local fence = now + span_of(set)
if mine then fence = math.max(fence, tonumber(i[2])) end
redis.call('HSET', KEYS[1], 'server', server, 'fence_ms', int(fence), 'max_window_ms',
  int(set[1]), 'max_skew_ms', int(set[2]), 'latency_ms', int(set[3]))
return {'new', int(fence), int(now)}
";

/// KEYS[1]: a slot record. ARGV[1]: the new hwm. The operator's repair
/// (`Store::release_slot` with a reset): refuses a claim alive by `TIME`,
/// else frees the slot and sets its hwm, in one step. Replies as
/// `RELEASE_SLOT`, with 'idle' for a record nobody held.
pub(super) const RESET_SLOT: &str = r"
local r, why = read(KEYS[1])
if not r then return {'badrecord', why} end
if not r.used then return {'free'} end
local state = 'idle'
if r.token ~= '' then
  state = 'held'
  if r.expires <= now then state = 'expired' end
end
if state == 'held' then
  return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '0'}
end
redis.call('HSET', KEYS[1], 'token', '', 'expires_ms', int(now), 'hwm_ms', ARGV[1])
return {state, int(r.counter), int(r.expires), int(r.hwm), r.token, '1'}
";
